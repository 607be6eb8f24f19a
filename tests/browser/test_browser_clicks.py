"""Every click inspects the cell under the pointer (app/clicks.py), in a real browser (Debian's Chromium, Playwright):
the centres of cells (0, 0), (0, 15), (15, 0), (15, 15) and (6, 9) of a 16 x 16 lane, clicked on the picture shown at
420, 360 and 240 CSS px (a 240 px PNG), at the page's own size at 1920x1080, 1440x900 and 1920x1080 at 150 % with
4 methods, and in Present mode (the lane and the entropy map) — the inspector names each cell and the magenta ring
is drawn round it. The same check, run on the app served without the correction (Gradio 6.31's own mapping), finds
wrong cells: the mutant of tests/mutation/mutants_clicks.py on the served app."""
import os
import time

import pytest

import app
from specviz.render import draw
from tests.browser.test_browser import ARGS, CHROMIUM, RUN_MS
from tests.browser.test_browser_bench import choose
from tests.browser.test_browser_present import VIEWS, ring_at, save
from tests.support.cases import one

GRID = (16, 16)
CELLS = [(0, 0), (0, 15), (15, 0), (15, 15), (6, 9)]


def serve(style: dict):
    """(demo, url) of the app on a 16 x 16 tiny model, served with `style` (app.STYLE or a mutant's)."""
    from tests.support.apptools import tiny_backend
    backend, _, _ = tiny_backend(codes=16, grid=GRID[0])
    demo = app.build_demo(backend, fps=20)
    _, url, _ = demo.launch(prevent_thread_lock=True, quiet=True, **style)
    return demo, url


@pytest.fixture(scope="module")
def chromium():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not found (apt-get install -y chromium)")
    sync = pytest.importorskip("playwright.sync_api", reason="playwright is not installed").sync_playwright
    with sync() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="module")
def served(chromium):
    demo, url = serve(app.STYLE)
    try:
        yield chromium, url
    finally:
        demo.close()


def run_page(browser, url, view="1920x1080", methods=("csd",)):
    w, h, dpr = VIEWS[view]
    page = browser.new_page(viewport={"width": w, "height": h}, device_scale_factor=dpr)
    page.set_default_timeout(90_000)
    page.goto(url)
    choose(page, list(methods))
    page.click("#generate")
    page.locator("#status").filter(has_text="All done").wait_for(timeout=RUN_MS)
    time.sleep(0.5)
    return page


def inspected(page, before: str | None) -> tuple[str, int] | None:
    """(method, position) the inspector names once it changed from `before` (its outerHTML), else what it names."""
    try:
        page.wait_for_function("b => { const e = document.querySelector('#inspector .sv-insp');"
                               " return e && e.outerHTML !== b; }", arg=before or "", timeout=4000)
    except Exception:                                            # noqa: BLE001 - unchanged: read what it shows
        pass
    el = page.locator("#inspector .sv-insp").first
    if not el.count():
        return None
    return el.get_attribute("data-method"), int(el.get_attribute("data-pos"))


def ringed(page, selector: str, pos: int, wait_s: float = 8.0) -> bool:
    """The picture at `selector` shows the ring round cell `pos` within `wait_s` (the ring follows the click)."""
    t0 = time.time()
    while True:
        if ring_at(page, selector, pos, GRID):
            return True
        if time.time() - t0 > wait_s:
            return False
        time.sleep(0.3)


def click_cells(page, selector: str, method: str, where, ring: str | None = None) -> list:
    """Click the centre of each cell of CELLS on the picture at `selector`; `where(box, natural, r, c)` -> the page
    point of that centre. The wrong answers [(cell, inspected, ringed)] (the ring checked on `ring`, when given)."""
    wrong = []
    for r, c in CELLS:
        img = page.locator(selector)
        img.scroll_into_view_if_needed()
        time.sleep(0.3)                                          # a click docks the inspector: the layout settles
        box = img.bounding_box()
        natural = img.evaluate("e => [e.naturalWidth, e.naturalHeight]")
        before = page.locator("#inspector .sv-insp").first.evaluate("e => e.outerHTML") \
            if page.locator("#inspector .sv-insp").count() else None
        page.mouse.click(*where(box, natural, r, c))
        got = inspected(page, before)
        pos = r * GRID[1] + c
        ok_ring = ringed(page, ring, pos) if ring and got == (method, pos) else got == (method, pos)
        if got != (method, pos) or not ok_ring:
            wrong.append(((r, c), got and divmod(got[1], GRID[1]), ok_ring))
    return wrong


def lane_centre(box, natural, r, c):
    return box["x"] + (c + 0.5) * box["width"] / GRID[1], box["y"] + (r + 0.5) * box["height"] / GRID[0]


def map_centre(box, natural, r, c):
    """The centre of cell (r, c) in the first panel of a map composite (draw.layout), shown at box's size."""
    x0, y0 = draw.layout(1)[0]
    cell = draw.cell_px(GRID)
    sx, sy = box["width"] / natural[0], box["height"] / natural[1]
    return box["x"] + (x0 + (c + 0.5) * cell) * sx, box["y"] + (y0 + (r + 0.5) * cell) * sy


def lane_sizes(page, sizes=(420, 360, 240)) -> dict:
    """{shown px: wrong answers} for CSD's lane shown at each of `sizes` CSS px."""
    out = {}
    for s in sizes:
        page.add_style_tag(content=f"#lanes #img_csd img {{width: {s}px !important; height: {s}px !important;}}")
        time.sleep(0.3)
        assert page.locator("#img_csd img").bounding_box()["width"] == pytest.approx(s, abs=0.5)
        out[s] = click_cells(page, "#img_csd img", "csd", lane_centre, ring="#img_csd img")
    return out


@pytest.mark.browser
def test_every_click_inspects_and_rings_the_cell_under_the_pointer_at_420_360_and_240_px(served, tmp_path):
    browser, url = served
    page = run_page(browser, url)
    assert page.locator("#img_csd img").evaluate("e => e.naturalWidth") == 240
    wrong = lane_sizes(page)
    save(page, tmp_path, "clicks_240")
    assert wrong == {420: [], 360: [], 240: []}
    page.close()


@pytest.mark.browser
@pytest.mark.parametrize("view", one(VIEWS, "1920x1080"))
def test_clicks_hit_their_cell_at_the_pages_own_lane_size(served, tmp_path, view):
    """4 methods, the lanes as the page fits them at each screen size (the newcomer's first click included)."""
    browser, url = served
    page = run_page(browser, url, view, ("ar", "sjd", "mcsjd", "csd"))
    shown = page.locator("#img_csd img").bounding_box()["width"]
    assert click_cells(page, "#img_csd img", "csd", lane_centre, ring="#img_csd img") == [], f"shown at {shown} px"
    save(page, tmp_path, f"clicks_{view}")
    page.close()


@pytest.mark.browser
def test_present_mode_clicks_on_a_lane_and_on_a_map_hit_their_cell(served, tmp_path):
    browser, url = served
    page = run_page(browser, url)
    page.locator("#present input[type=checkbox]").check()
    page.wait_for_function("() => document.body.classList.contains('sv-present')")
    time.sleep(1)
    lane = page.locator("#img_csd img").bounding_box()["width"]
    assert lane > 240, f"Present mode shows the lane at {lane} px: no scale to correct"
    assert click_cells(page, "#img_csd img", "csd", lane_centre, ring="#img_csd img") == []
    page.add_style_tag(content="body.sv-present #tabs #map_entropy img {height: 560px !important;}")
    time.sleep(0.5)
    m = page.locator("#map_entropy img")
    assert m.bounding_box()["width"] > m.evaluate("e => e.naturalWidth"), "the map is not shown above its size"
    assert click_cells(page, "#map_entropy img", "csd", map_centre, ring="#img_csd img") == []
    save(page, tmp_path, "clicks_present")
    page.close()


@pytest.mark.browser
def test_without_the_correction_the_same_clicks_inspect_wrong_cells(chromium, tmp_path):
    """The mutant 'the scale correction dropped' (tests/mutation/mutants_clicks.py), applied to the served app: the
    hit-test above finds wrong cells at 420 and 360 px and none at 240 px (where Gradio's own mapping is right)."""
    from tests.mutation.mutants_clicks import without_correction
    demo, url = serve(without_correction(app.STYLE))
    try:
        page = run_page(chromium, url)
        wrong = lane_sizes(page)
        page.close()
    finally:
        demo.close()
    assert len(wrong[420]) == len(CELLS) and len(wrong[360]) == len(CELLS) and wrong[240] == [], wrong
