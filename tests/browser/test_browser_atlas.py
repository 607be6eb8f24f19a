"""The Atlas tab in a real browser (Chromium via Playwright, same setup as test_browser.py): build the default small
atlas, see the headline table, the claims, both figures and the downloads; then with keyed noise, the paired table
against AR. Screenshots: <tmp>/atlas.png, <tmp>/atlas_keyed.png."""
import re

import pytest

from tests.browser.test_browser import page_and_model, shot  # noqa: F401 (the fixture is used by name)
from tests.browser.test_browser_present import clipped


@pytest.mark.browser
def test_atlas_tab_in_chromium(page_and_model, tmp_path):  # noqa: F811
    page, _ = page_and_model
    page.click("#tab_atlas-button")
    page.locator("#at_go").click()
    page.locator("#at_files a").nth(5).wait_for(timeout=240_000)         # JSONL, JSON, 2 PNG, 2 PDF
    table = page.locator("#at_table")
    table.filter(has_text="cascade").wait_for()
    page.locator("#at_plot").scroll_into_view_if_needed()
    shot(page, tmp_path, "atlas", full_page=True)
    cells = table.inner_text().split("\n")
    assert [c for c in cells if c in ("ar", "sjd", "csd", "cascade")] == ["ar", "sjd", "csd", "cascade"]
    assert "relaxed in low detail %" in table.inner_text()
    assert "CSD relaxes where the target is uncertain" in page.locator("#at_claims").inner_text()
    names = page.locator("#at_files").inner_text().replace("\n", "")
    assert all(n in names for n in ("atlas.jsonl", "atlas.json", "atlas.png", "atlas_maps.pdf")), names
    assert page.locator("#at_plot img, #at_plot canvas, #at_plot svg").count() >= 1
    assert "Traceback" not in page.content()


def shown_table(page, selector) -> dict:
    """{method: [cell texts]} of the Markdown table the page shows at `selector`, and the header texts."""
    head = page.locator(f"{selector} thead th").all_inner_texts()
    body = page.eval_on_selector_all(f"{selector} tbody tr", "rs => rs.map(r => [...r.cells].map(c => c.innerText))")
    return {r[0].strip(): [c.strip() for c in r[1:]] for r in body}, [h.strip() for h in head]


BROKEN_JS = """els => els.flatMap(e => {   // words split across lines (a break at a hyphen is fine), cells on 2+ lines
  const out = [], walk = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode())
    for (const m of n.data.matchAll(/[^\\s-]+/g)) {
      const r = document.createRange(); r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
      if (new Set([...r.getClientRects()].map(b => Math.round(b.top))).size > 1) out.push('word ' + m[0]);
    }
  const r = document.createRange(); r.selectNodeContents(e);
  if (e.tagName === 'TD' && new Set([...r.getClientRects()].map(b => Math.round(b.top))).size > 1)
    out.push('cell ' + e.innerText);
  return out; })"""


def broken(page, selector) -> list:
    """Words of `selector`'s elements split across two lines, and table cells (td) on more than one line."""
    return page.eval_on_selector_all(selector, BROKEN_JS)


def mean_se(values) -> str:
    """The cell the table must show for these per-image values: mean ± stdev/√n, 2 decimals ('' for none)."""
    import math
    import statistics
    if not values:
        return ""
    se = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.2f} ± {se:.2f}"


@pytest.mark.browser
def test_atlas_tab_keyed_noise_in_chromium(page_and_model, tmp_path):  # noqa: F811
    """Noise = keyed: the paired table against AR (tokens changed and PSNR, mean ± SE) appears, its numbers are the
    saved rows' (atlas.jsonl read back), the lossless methods show 0 changed on every image, the maps gain
    "changed vs AR", and nothing of it is clipped or covered. Screenshot: <tmp>/atlas_keyed.png."""
    import json

    from specviz.analysis import atlas, atlas_paired, atlas_run
    from specviz.render import atlas_fig
    page, _ = page_and_model
    page.click("#tab_atlas-button")
    page.locator("#at_noise input[value=keyed]").check()
    page.locator("#at_go").click()
    page.locator("#at_files a").nth(7).wait_for(timeout=240_000)         # JSONL, JSON, 3 PNG, 3 PDF
    page.locator("#at_paired table").filter(has_text="cascade").wait_for()
    page.locator("#at_paired").scroll_into_view_if_needed()
    shot(page, tmp_path, "atlas_keyed")
    shot(page, tmp_path, "atlas_keyed_full", full_page=True)

    rows = atlas_run.read_rows(next((tmp_path / "exports").glob("specviz-*/atlas.jsonl")))
    assert len(rows) == 4 * 6 and all(r["noise"] == "keyed" for r in rows)
    table, head = shown_table(page, "#at_paired")
    assert head == ["method"] + [t for _, t in atlas_paired.SUMMARY]
    assert list(table) == ["ar", "sjd", "csd", "cascade"]
    col = {k: i for i, (k, _) in enumerate(atlas_paired.SUMMARY)}
    for m, cells in table.items():                                    # every shown number from the saved rows
        mine = [r for r in rows if r["spec"] == m]
        assert cells[col["images"]] == str(len(mine)) == "6"
        assert cells[col["changed"]] == mean_se([r["changed"] for r in mine]), m
        assert cells[col["psnr"]] == mean_se([r["psnr"] for r in mine if r["psnr"] is not None]), m
        assert cells[col["mean_abs"]] == mean_se([r["mean_abs"] for r in mine]), m
        assert cells[col["changed_images"]] == str(sum(r["changed"] > 0 for r in mine)), m
    for m in ("ar", "sjd"):                                           # lossless: AR's image on every image
        assert table[m][col["changed"]] == "0.00 ± 0.00" and table[m][col["identical_share"]] == "1.00"
        assert table[m][col["psnr"]] == "" and all(r["changed"] == 0 for r in rows if r["spec"] == m)
    relaxed = [table[m][col["psnr"]] for m in ("csd", "cascade") if table[m][col["changed_images"]] != "0"]
    assert relaxed and all(re.fullmatch(r"\d+\.\d\d ± \d+\.\d\d", c) for c in relaxed), relaxed

    result = atlas.aggregate(rows)                                    # the maps figure has the "changed" column
    assert json.loads(next((tmp_path / "exports").glob("specviz-*/atlas.json")).read_text())["paired"] == \
        json.loads(json.dumps(result["paired"]))
    w, h = page.locator("#at_maps img").first.evaluate("e => [e.naturalWidth, e.naturalHeight]")
    fw, fh = atlas_fig.maps_figure(result).get_size_inches()
    assert atlas_fig.map_keys(result)[-1] == "changed" and abs(w / h - fw / fh) < 0.02 * fw / fh

    for sel in ("#at_paired table", "#at_maps img"):                  # nothing clipped or covered
        page.locator(sel).first.scroll_into_view_if_needed()
        assert page.locator(sel).first.is_visible()
        box = page.locator(sel).first.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= page.viewport_size["width"] + 1, (sel, box)
        assert page.locator(sel).first.evaluate(
            "e => { const r = e.getBoundingClientRect(), t = document.elementFromPoint(r.x + r.width / 2,"
            " r.y + Math.min(r.height / 2, 20)); return e === t || e.contains(t); }"), f"{sel} is covered"
    assert clipped(page, "#at_paired th, #at_paired td, #at_paired .prose") == []
    assert broken(page, "#at_paired th, #at_paired td") == []        # "cascade", not "ca / sc / ad / e"
    assert "Traceback" not in page.content()
