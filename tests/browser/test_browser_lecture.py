"""The lecture hall in a real browser (Debian's Chromium, Playwright) at 1920x1080, 1440x900 and 1920x1080 at 150 %
(a 1280x720 CSS viewport at device pixel ratio 1.5), with 1, 4 and 10 methods, as a person sees it:

- normal layout, after a click on a cell: the inspector is docked beside the race (it covers no lane image and no
  control), its verdict in view (also after scrolling the page to its end), its close visible;
- Present mode: the page does not scroll (document height <= viewport); the lanes, the map and the verdict are in
  view; the map's labels are >= 16 CSS px (it draws the inspected lane); at 1920x1080 the verdict and the lane titles
  are >= 24 CSS px;
- in both: the topmost element at the centre of every cell of every lane image (and, in Present mode, of the map's
  panel) is the image itself; no title, table or verdict is clipped or broken inside a word;
- the prompt box shows its whole text in Present mode, and still after the window is resized.
Screenshots: the test's tmp directory (and SPECVIZ_SCREENSHOTS, as tests/browser/test_browser_present.py)."""
import time

import pytest

from specviz.render import draw
from tests.browser.test_browser_bench import COUNTS, after_run
from tests.browser.test_browser_present import NO_CLIP, VIEWS, clipped, in_view, label_px, save, served  # noqa: F401
from tests.support.cases import diagonal

FPS = "shipped"     # app.build_demo's own frame rate (tests/browser/test_browser_present.served): read after runs

GRID = 12                                          # the served fixture: tiny_backend(codes=16, grid=12)
TEXTS = ".sv-lane-title, .sv-verdict, #inspector .sv-t td, #inspector .sv-t th, .sv-lane"

# cells of `sel` whose centre is not topped by the image itself: [element id, row, col, what is on top]
COVERED = """([sel, n, x0, y0, size]) => { const out = [];
  for (const img of document.querySelectorAll(sel)) {
    const r = img.getBoundingClientRect(); if (!r.width) continue;
    const k = r.width / img.naturalWidth, c = size * k / n;
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
      const x = r.left + x0 * k + (j + .5) * c, y = r.top + y0 * k + (i + .5) * c, e = document.elementFromPoint(x, y);
      if (e !== img) out.push([img.closest('[id]').id, i, j, e ? (e.id || String(e.className) || e.tagName) : null]);
    } }
  return out; }"""

# words (split at spaces and hyphens) laid out on more than one line
BROKEN = """(sel) => { const bad = [];
  for (const el of document.querySelectorAll(sel)) {
    const w = document.createTreeWalker(el, NodeFilter.SHOW_TEXT); let node;
    while ((node = w.nextNode())) { const re = /[^\\s\\-]+/g; let m;
      while ((m = re.exec(node.data))) { const r = document.createRange();
        r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
        const tops = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top)));
        if (tops.size > 1) bad.push(m[0]); } } }
  return bad; }"""


def covered_cells(page, sel: str, origin=(0, 0), size=None) -> list:
    """Cells of the pictures at `sel` (the panel at `origin` in picture px, `size` px square; default: the whole
    picture) whose centre the browser does not give to the picture."""
    size = size or page.locator(sel).first.evaluate("e => e.naturalWidth")
    return page.evaluate(COVERED, [sel, GRID, origin[0], origin[1], size])


def px(page, sel: str) -> float:
    return page.locator(sel).first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")


def overlaps(a, b) -> bool:
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"] or a["y"] + a["height"] <= b["y"]
                or b["y"] + b["height"] <= a["y"])


def shown_map(page) -> str:
    return "#map_entropy img"




# the prompt box shows its whole text (Present mode's narrower column wraps it onto more lines)
PROMPT_WHOLE = ("(() => { const t = document.querySelector('#prompt textarea');"
                " return t.scrollHeight <= t.clientHeight + 2; })()")


# the lane grid's columns and picture size (app/pinned.py's fit writes both)
LANE_GRID = ("() => { const l = document.querySelector('#lanes');"
             " return [l.style.gridTemplateColumns, parseFloat(l.style.getPropertyValue('--sv-img'))]; }")


@pytest.mark.browser
@pytest.mark.parametrize("view,count", diagonal(VIEWS, COUNTS))
def test_the_lecture_hall(served, tmp_path, view, count):  # noqa: F811 (the fixture)
    browser, url = served
    h, methods = VIEWS[view][1], COUNTS[count]
    page = after_run(browser, url, view, methods)
    time.sleep(0.6)
    first = page.locator(f"#img_{methods[0]} img")
    first.scroll_into_view_if_needed()
    box = first.bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.55, box["y"] + box["height"] * 0.45)
    page.locator("#sv-verdict").wait_for()
    time.sleep(0.8)
    save(page, tmp_path, f"docked_{view}_{count}")
    where = f"{view}, {count} methods"
    assert in_view(page, "#sv-verdict") and page.locator("#inspector .sv-close").is_visible(), where
    docked = page.locator("#inspector").bounding_box()
    for sel in ("#lanes", "#controls"):
        assert not overlaps(docked, page.locator(sel).bounding_box()), f"{where}: the inspector covers {sel}"
    assert covered_cells(page, "#lanes img") == [], where
    assert page.evaluate(BROKEN, TEXTS) == [], where
    assert not clipped(page, NO_CLIP), where
    page.mouse.wheel(0, 3000)                                         # the docked column sticks to the window
    time.sleep(0.5)
    assert in_view(page, "#sv-verdict"), f"{where}: the verdict scrolls away with the page"

    page.keyboard.press("p")
    page.wait_for_function("document.body.classList.contains('sv-present')")
    time.sleep(1.2)                                                   # the maps redraw for the lane, the grid fits
    save(page, tmp_path, f"present_{view}_{count}")
    assert page.evaluate("document.documentElement.scrollHeight") <= h, f"{where}: Present mode scrolls"
    for sel in ("#lanes", shown_map(page), "#sv-verdict", "#status"):
        assert in_view(page, sel), f"{where} present: {sel} is not inside the viewport"
    assert label_px(page, shown_map(page)) >= 16, where
    if view == "1920x1080":
        assert px(page, "#sv-verdict") >= 24 and px(page, ".sv-lane-title") >= 24, where
    assert covered_cells(page, "#lanes img") == [], where
    assert covered_cells(page, shown_map(page), draw.layout(1)[0], draw.PANEL) == [], where
    assert page.evaluate(BROKEN, TEXTS) == [], where
    assert not clipped(page, NO_CLIP), where
    assert page.evaluate(PROMPT_WHOLE), f"{where}: the prompt box cuts the prompt"
    cols, size = page.evaluate(LANE_GRID)
    for tab in ("summary", "history"):                                # tabs whose pictures are no map
        page.click(f"#tab_{tab}-button")
        time.sleep(0.8)
        now = page.evaluate(LANE_GRID)
        assert now[0] == cols and now[1] >= size, f"{where}, {tab} tab: lanes {now} (Heatmaps: {cols}, {size} px)"
    page.close()


RESIZES = [("1920x1080", (1440, 900)), ("1440x900", (1920, 1080)), ("1920x1080", (1280, 720))]


@pytest.mark.browser
def test_the_prompt_box_keeps_its_whole_text_when_the_window_is_resized(served):  # noqa: F811 (the fixture)
    """Present mode on, then the window resized (a laptop unplugged from the projector): the prompt box is re-fitted
    to its text (Gradio sizes it only on input; before, at 1440x900 after a resize its last line was cut)."""
    browser, url = served
    got = []
    for view, (w, h) in RESIZES:
        vw, vh, dpr = VIEWS[view]
        page = browser.new_page(viewport={"width": vw, "height": vh}, device_scale_factor=dpr)
        page.goto(url + "?present=1")
        page.wait_for_function("document.body.classList.contains('sv-present')")
        time.sleep(1.0)
        before = page.evaluate(PROMPT_WHOLE)
        page.set_viewport_size({"width": w, "height": h})
        time.sleep(1.2)
        got.append((view, (w, h), before, page.evaluate(PROMPT_WHOLE)))
        page.close()
    assert got == [(v, s, True, True) for v, s in RESIZES], got
