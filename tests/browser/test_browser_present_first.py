"""Present mode before and after the first click, in a real browser (Debian's Chromium, Playwright) at 1920x1080,
1440x900 and 1920x1080 at 150 % (a 1280x720 CSS viewport at device pixel ratio 1.5), with 1, 4 and 10 methods:

- before any click the inspector's column takes no room: nothing of it is shown and the lanes span the whole race
  column (their right edge at #main's), so the lane pictures use the width;
- the four sliders lie inside the viewport and the browser gives each one the point at its centre (reachable
  without scrolling the page);
- no text of the controls is cut: each knob's label shows its short name whole (λ, δ, τ_pos, τ_seq, Noise), its
  full label the tooltip;
- the maps draw the run's first relaxed lane (present.lead_lane): a click on the map's panel inspects that lane's
  cell;
- after the click the inspector's column is shown, its verdict in view, and a click on a lane's cell still inspects
  the cell clicked (row 6, column 9 of the second lane, or of the only one).
Prints the lane widths and slider boxes (the report's before / after). Screenshots as test_browser_present.py."""
import time

import pytest

from specviz.analysis.cards import cards
from specviz.app.present import lead_lane
from specviz.engine.registry import ui_knobs
from specviz.render import draw
from tests.browser.test_browser_bench import COUNTS, after_run
from tests.browser.test_browser_present import VIEWS, in_view, save, served  # noqa: F401 (fixture)
from tests.support.apptools import module_gradio_tmp  # noqa: F401 (fixture: the server outlives single tests)
from tests.support.cases import diagonal

FPS = "shipped"     # app.build_demo's own frame rate (tests/browser/test_browser_present.served): read after runs

GRID, ROW, COL = 12, 6, 9                      # the served fixture's grid (tiny_backend(codes=16, grid=12))
SLIDERS = ("lam", "delta", "tau_pos", "tau_seq")
REACHABLE = """(id) => { const e = document.querySelector('#' + id + ' input[type=range]');
  const r = e.getBoundingClientRect();
  return [r.left, r.top, r.right, r.bottom, document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2)
          === e]; }"""
CUT = """() => [...document.querySelectorAll('#controls *')].filter(e => e.offsetParent && !e.children.length
  && e.textContent.trim() && e.scrollWidth > e.clientWidth + 1).map(e => e.textContent.trim())"""
SHOWN = """() => Object.fromEntries([...document.querySelectorAll('#controls [data-testid=block-info]')]
  .filter(e => e.offsetParent).map(e => [e.title || e.textContent.trim(),
   getComputedStyle(e, '::before').content.replace(/^"|"$/g, '')]))"""


def click_cell(page, sel: str, origin=(0, 0), size=None) -> None:
    """Click the centre of cell (ROW, COL) of the picture at `sel` (its panel at `origin`, `size` px, picture px)."""
    img = page.locator(sel).first
    nw = img.evaluate("e => e.naturalWidth")
    size = size or nw
    box = img.bounding_box()
    k, c = box["width"] / nw, size / GRID
    page.mouse.click(box["x"] + (origin[0] + (COL + 0.5) * c) * k, box["y"] + (origin[1] + (ROW + 0.5) * c) * k)


def inspected(page, before: str | None) -> tuple[str, int]:
    page.wait_for_function("t => { const e = document.querySelector('#inspector .sv-insp'); "
                           "return e && e.outerHTML !== t; }", arg=before)
    insp = page.locator("#inspector .sv-insp").first
    return insp.get_attribute("data-method"), int(insp.get_attribute("data-pos"))


@pytest.mark.browser
@pytest.mark.parametrize("view,count", diagonal(VIEWS, COUNTS))
def test_present_mode_gives_the_lanes_the_width_until_a_click(served, tmp_path, view, count):  # noqa: F811
    browser, url = served
    methods, (w, h, _) = COUNTS[count], VIEWS[view]
    page = after_run(browser, url, view, methods)
    page.locator("#present input[type=checkbox]").click()
    page.wait_for_function("document.body.classList.contains('sv-present')")
    time.sleep(1.5)                                                    # the maps redraw, the lanes are fitted
    save(page, tmp_path, f"present_first_{view}_{count}")
    where = f"{view}, {count} methods"
    main, lanes = page.locator("#main").bounding_box(), page.locator("#lanes").bounding_box()
    widths = page.evaluate("() => [...document.querySelectorAll('#lanes img')].map(i => i.getBoundingClientRect()"
                           ".width).filter(x => x > 0)")
    sliders = {k: page.evaluate(REACHABLE, k) for k in SLIDERS}
    print(where, "lane widths", widths, "sliders", sliders)
    assert page.locator("#inspector").bounding_box() is None, f"{where}: the inspector takes room before a click"
    assert lanes["x"] + lanes["width"] >= main["x"] + main["width"] - 1, (where, lanes, main)
    assert len(widths) == len(methods), where          # COUNTS[10]: every registered method (12)
    for k, (left, top, right, bottom, mine) in sliders.items():
        assert left >= 0 and top >= 0 and right <= w and bottom <= h and mine, f"{where}: slider {k} out of reach"
    assert page.evaluate(CUT) == [], f"{where}: control text cut"
    shown = page.evaluate(SHOWN)
    assert {k.label: k.short for k in ui_knobs("setup") + ui_knobs("main")}.items() <= shown.items(), (where, shown)
    lead = lead_lane(methods, cards())
    click_cell(page, "#map_entropy img", draw.layout(1)[0], draw.PANEL)   # the map draws the first relaxed lane
    assert inspected(page, None) == (lead, ROW * GRID + COL), where
    page.locator("#sv-verdict").wait_for()
    time.sleep(1.0)                                                    # the column docks, the lanes are fitted again
    assert page.locator("#inspector").bounding_box()["width"] > 300 and in_view(page, "#sv-verdict"), where
    other = methods[1] if len(methods) > 1 else methods[0]
    before = page.locator("#inspector .sv-insp").first.evaluate("e => e.outerHTML")
    page.locator(f"#img_{other} img").scroll_into_view_if_needed()
    click_cell(page, f"#img_{other} img")
    if other == lead:                                                  # the same cell again: the same fragment
        time.sleep(1.5)
        got = (page.locator("#inspector .sv-insp").first.get_attribute("data-method"),
               int(page.locator("#inspector .sv-insp").first.get_attribute("data-pos")))
    else:
        got = inspected(page, before)
    assert got == (other, ROW * GRID + COL), where
    save(page, tmp_path, f"present_first_inspected_{view}_{count}")
    page.close()
