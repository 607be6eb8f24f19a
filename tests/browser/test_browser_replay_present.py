"""The Replay tab in Present mode, in a real browser (Debian's Chromium, Playwright) at 1920x1080, 1440x900 and
1920x1080 at 150 % (a 1280x720 CSS viewport at device pixel ratio 1.5), with 1, 4 and 10 methods, CASCADE among
them: after a run, with the clock at the step where CASCADE drafted its tallest tree and CASCADE picked, the page
does not scroll (document height <= viewport), the synchronized picture, the draft tree and Play / Pause are inside
the viewport, the tree's text is >= 16 CSS px (tree_picture.TEXT scaled by displayed / natural width), the topmost
element at the centre of the picture and of the tree is that picture, and the caption and the tree's legend are
neither clipped nor broken inside a word. Then a click on a lane's cell docks the inspector: its verdict is in view,
the page still does not scroll, and the picture, the tree and Play stay in view, none under the column (the tree is
not held to 16 px then); its × folds the column and the tree is back at >= 16 px. Screenshots: the test's tmp
directory (and SPECVIZ_SCREENSHOTS, as tests/browser/test_browser_present.py)."""
import time
from functools import lru_cache

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from specviz.engine.registry import METHODS
from specviz.render import tree_picture
from tests.browser.test_browser_bench import after_run
from tests.browser.test_browser_lecture import BROKEN, overlaps
from tests.browser.test_browser_present import VIEWS, clipped, in_view, save, served  # noqa: F401 (fixture)
from tests.render.test_tree_picture import page_traces
from tests.support.apptools import module_gradio_tmp  # noqa: F401 (fixture: the server outlives single tests)
from tests.support.cases import diagonal

FPS = "shipped"     # app.build_demo's own frame rate (tests/browser/test_browser_present.served): read after runs

COUNTS = {1: ["cascade"], 4: ["ar", "sjd", "csd", "cascade"], 10: list(METHODS)}


@lru_cache(maxsize=1)
def tallest_clock() -> int:
    """The clock at which the served page's CASCADE run shows its tallest tree (its step k - 1): the run the page makes
    with the app's defaults on tiny_backend(codes=16, grid=12), repeated (the engine is deterministic)."""
    t = page_traces()[0]
    tall = max((tree_picture.size(lay)[1], s) for s in range(len(t.steps)) if (lay := tree_picture.tree_layout(t, s)))
    return tall[1] + 1


TOP = "s => { const e = document.querySelector(s), r = e.getBoundingClientRect();" \
      " return document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) === e; }"
TEXTS = "#replay_caption, #replay_tree_legend"


def measure(page) -> dict:
    """What the test asserts, as numbers (the report's before / after)."""
    tree = page.locator("#replay_tree img").first
    w, nw = tree.evaluate("e => [e.clientWidth, e.naturalWidth]")
    room = page.evaluate("() => { const b = document.querySelector('#replay_body').getBoundingClientRect(), "
                         "r = document.querySelector('#replay_right').getBoundingClientRect(), "
                         "t = document.querySelector('#replay_tree img').getBoundingClientRect(); "
                         "return [b.width - 240 - 12, innerHeight - 6 - b.top - (r.height - t.height)]; }")
    return {"doc_h": page.evaluate("document.documentElement.scrollHeight"), "room": room,
            "tree": tree.bounding_box(), "picture": page.locator("#replay_image img").first.bounding_box(),
            "tree_px": tree_picture.TEXT * w / nw}


def open_replay(page, method: str, k: int) -> None:
    """The Replay tab at clock k with `method`'s step details, its tree drawn."""
    page.click("#tab_replay-button")
    page.wait_for_function("k => { const r = document.querySelector('#replay_step input[type=range]');"
                           " return r && Number(r.max) >= k; }", arg=k)   # the run's clock has reached the slider
    box = page.locator("#replay_step input[type=number]")
    box.fill(str(k))
    box.press("Enter")                                  # present.JS: Enter commits the number box
    page.get_by_text(f"Clock: target forward {k} of").first.wait_for()
    radio = page.locator("#replay_method label").filter(has_text=method).first
    if not radio.locator("input").is_checked():
        radio.click()
    page.wait_for_function("() => { const i = document.querySelector('#replay_tree img'); "
                           "return i && i.complete && i.naturalWidth > 0; }")
    page.locator("#replay_tree_legend .sv-tree-legend").wait_for()




@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("view,count", diagonal(VIEWS, COUNTS))
def test_replay_fits_one_screen_in_present_mode(served, tmp_path, view, count):  # noqa: F811 (the fixture)
    browser, url = served
    h = VIEWS[view][1]
    page = after_run(browser, url, view, COUNTS[count])
    open_replay(page, "cascade", tallest_clock())
    page.evaluate("document.activeElement.blur()")     # `p` toggles Present mode outside a text field
    page.keyboard.press("p")
    page.wait_for_function("document.body.classList.contains('sv-present')")
    time.sleep(1.2)                                     # the lanes fold, picture and tree are sized (replay_fit.JS)
    save(page, tmp_path, f"replay_present_{view}_{count}")
    got, where = measure(page), f"{view}, {count} methods"
    print(where, got)
    assert got["doc_h"] <= h, f"{where}: Present mode scrolls ({got})"
    for sel in ("#replay_image img", "#replay_tree img", "#replay_play"):
        assert in_view(page, sel), f"{where}: {sel} is not inside the viewport ({got})"
    assert got["tree_px"] >= 16, where
    for sel in ("#replay_image img", "#replay_tree img"):
        assert page.evaluate(TOP, sel), f"{where}: something lies over the centre of {sel}"
    assert page.evaluate(BROKEN, TEXTS) == [], where
    assert not clipped(page, TEXTS), where
    inspect_a_cell(page)                                # the inspector docks beside the tab, covering neither picture
    save(page, tmp_path, f"replay_present_inspected_{view}_{count}")
    docked, got = page.locator("#inspector").bounding_box(), measure(page)
    print(where, "inspected", got)
    assert in_view(page, "#sv-verdict") and got["doc_h"] <= h, f"{where}, inspected ({got})"
    for sel in ("#replay_image img", "#replay_tree img", "#replay_play"):
        assert in_view(page, sel) and not overlaps(docked, page.locator(sel).bounding_box()), f"{where}: {sel}"
    page.click("#inspector .sv-close")                  # the column folds: the tree is back at >= 16 px
    time.sleep(1.0)
    again = measure(page)
    assert again["tree_px"] >= 16 and again["doc_h"] <= h and in_view(page, "#replay_tree img"), f"{where}: {again}"
    page.close()


def inspect_a_cell(page) -> None:
    """Click the replay picture until a lane's cell is inspected (its lanes' places depend on the method count)."""
    pic = page.locator("#replay_image img").first
    for fy, fx in ((0.7, 0.12), (0.7, 0.5), (0.4, 0.08), (0.85, 0.5), (0.55, 0.3)):
        box = pic.bounding_box()
        page.mouse.click(box["x"] + box["width"] * fx, box["y"] + box["height"] * fy)
        try:
            page.locator("#sv-verdict").wait_for(timeout=3000)
            break
        except PlaywrightTimeout:
            continue
    page.locator("#sv-verdict").wait_for()
    time.sleep(1.0)                                     # the column docks, picture and tree are sized again
