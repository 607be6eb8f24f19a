"""The tuning bench in a real browser (Debian's Chromium, Playwright) at 1920x1080, 1440x900 and 1920x1080 at 150 %
(a 1280x720 CSS viewport at device pixel ratio 1.5), with 1, 4 and 10 methods: after a slider release, an Enter
commit and an arrow-key commit, the status, the lanes and the predicted-vs-achieved line are inside the viewport;
each lane's header line shows the knob values of its run; a typed value out of range is clamped in the box, said so
beside the control, and the run (lane headers, History rows) uses the clamped value. Screenshots: the test's tmp
directory (and SPECVIZ_SCREENSHOTS, as tests/browser/test_browser_present.py)."""
import re
import time

import pytest

from specviz.engine.registry import METHODS, get
from tests.browser.test_browser import RUN_MS
from tests.browser.test_browser_present import VIEWS, clipped, in_view, page_trace, save, served  # noqa: F401
from tests.support.cases import diagonal

FPS = "shipped"     # app.build_demo's own frame rate (tests/browser/test_browser_present.served): read after runs

COUNTS = {1: ["csd"], 4: ["ar", "sjd", "mcsjd", "csd"], 10: list(METHODS)}
RESULTS = ("#status", "#lanes", "#sv-outcome")


def choose(page, methods) -> None:
    """Tick exactly `methods` in the method list (labels matched whole: 'SJD' is not 'MC-SJD')."""
    for m in METHODS:
        lab = page.locator("#methods label").filter(has_text=re.compile(rf"^\s*{re.escape(get(m).label)}\s*$")).first
        lab.scroll_into_view_if_needed()
        if lab.locator("input").is_checked() != (m in methods):
            lab.click()
    page.wait_for_function("n => [...document.querySelectorAll('#lanes > div')]"
                           ".filter(c => getComputedStyle(c).display !== 'none').length === n", arg=len(methods))


def after_run(browser, url, view: str, methods):
    """A new page at `view` (VIEWS) with exactly `methods` ticked, after one finished run."""
    w, h, dpr = VIEWS[view]
    page = browser.new_page(viewport={"width": w, "height": h}, device_scale_factor=dpr)
    page.set_default_timeout(90_000)
    page.goto(url)
    choose(page, methods)
    page.click("#generate")
    page.locator("#status").filter(has_text="All done").wait_for(timeout=RUN_MS)
    return page


def caption(method: str, **knobs) -> str:
    """The lane header line the page must show for `method` run with `knobs` (render/knob_text.py, tags dropped)."""
    from specviz.analysis.cards import cards
    from specviz.engine.config import RunConfig
    from specviz.render import knob_text
    text = knob_text.knob_caption(method, RunConfig(method=method, **knobs).to_dict(), cards())
    return re.sub("<[^>]+>", "", text) or "no knobs"


def rerun_done(page, lam: float) -> None:
    """Wait for the re-run at λ = lam: its status (with the predicted-vs-achieved line) and CSD's lane header."""
    page.wait_for_function(
        "want => { const s = document.querySelector('#status'), k = document.querySelector('#stats_csd .sv-knobs');"
        " return s.innerText.includes('All done') && document.querySelector('#sv-outcome') && k && "
        "k.innerText.startsWith(want); }", arg=f"λ {lam:g} ", timeout=RUN_MS)
    time.sleep(0.4)                                                   # the lane grid settles


def results_in_view(page, where: str) -> None:
    for sel in RESULTS:
        assert in_view(page, sel), f"{where}: {sel} is not inside the viewport"


def box_value(page, name: str) -> float:
    return float(page.locator(f"#{name} input[type=number]").input_value())


@pytest.mark.browser
@pytest.mark.parametrize("view,count", diagonal(VIEWS, COUNTS))
def test_results_stay_in_view_after_every_kind_of_commit(served,  # noqa: F811 (the fixture)
                                                           tmp_path, view, count):
    browser, url = served
    methods = COUNTS[count]
    page = after_run(browser, url, view, methods)
    time.sleep(0.6)                                                   # the lane grid settles
    # every lane's text inside its column (twelve normal-layout lanes of 75 px at 150 % overlapped their neighbours)
    assert not clipped(page, ".sv-lane-title, .sv-lane"), f"{view}, {count} methods: lane text overflows"
    lam = page.locator("#lam input[type=range]")                      # 1. a slider release
    lam.scroll_into_view_if_needed()
    box = lam.bounding_box()
    page.mouse.move(box["x"] + 0.05 * box["width"], box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + 0.3 * box["width"], box["y"] + box["height"] / 2, steps=4)
    page.mouse.up()
    released = box_value(page, "lam")
    assert released != 0.5
    rerun_done(page, released)
    results_in_view(page, f"{view}, {count} methods, after a release")
    number = page.locator("#lam input[type=number]")                  # 2. Enter in the box, a value out of range
    number.fill("1e9")
    number.press("Enter")
    rerun_done(page, 10)
    assert box_value(page, "lam") == 10
    note = page.locator("#lam .sv-clamp")
    assert "1e9 is outside 0–10: set to 10" in note.inner_text() and in_view(page, "#lam .sv-clamp")
    results_in_view(page, f"{view}, {count} methods, after Enter")
    page.locator("#lam input[type=range]").focus()                    # 3. an arrow key, committed after a pause
    page.keyboard.press("ArrowLeft")
    rerun_done(page, 9.95)
    assert box_value(page, "lam") == 9.95
    results_in_view(page, f"{view}, {count} methods, after an arrow key")
    for m in methods:                                                 # every lane header: its run's knob values
        assert page.locator(f"#stats_{m} .sv-knobs").inner_text().strip() == caption(m, lam=9.95), m
    assert page.locator(".toast-message-item:visible").count() == 0     # nothing refused, nothing stacked
    save(page, tmp_path, f"bench_{view}_{count}")
    page.close()


@pytest.mark.browser
def test_typed_values_out_of_range_are_clamped_and_the_box_the_run_and_history_agree(served, tmp_path):  # noqa: F811
    """λ = -5 and δ = 2 typed and committed: the boxes show 0 and 1, one line beside each says so, the lane header
    and the History rows of the re-runs carry those values, and no error was raised."""
    from specviz.analysis import history as hist
    browser, url = served
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.set_default_timeout(90_000)
    page.goto(url)
    page.click("#generate")
    page.locator("#status").filter(has_text="All done").wait_for(timeout=RUN_MS)
    delta = page.locator("#delta input[type=number]")
    delta.fill("2")
    delta.press("Enter")
    page.wait_for_function("() => document.querySelector('#stats_csd .sv-knobs').innerText.includes('δ 1') && "
                           "document.querySelector('#status').innerText.includes('All done')", timeout=RUN_MS)
    assert box_value(page, "delta") == 1
    assert "2 is outside 0–1: set to 1" in page.locator("#delta .sv-clamp").inner_text()
    lam = page.locator("#lam input[type=number]")
    lam.fill("-5")
    lam.press("Enter")
    rerun_done(page, 0)
    assert box_value(page, "lam") == 0 and "-5 is outside 0–10: set to 0" in page.locator("#lam .sv-clamp").inner_text()
    assert page.locator("#stats_csd .sv-knobs").inner_text().strip() == caption("csd", lam=0, delta=1)
    assert page.locator(".toast-message-item:visible").count() == 0
    page.click("#tab_history-button")
    page.get_by_text("rerun").first.wait_for()
    time.sleep(1)
    cells = [x.strip() for x in page.locator("#hist_table").inner_text().split("\n") if x.strip()]
    width = len(hist.Row.HEADERS)
    rows = [cells[i:i + width] for i in range(width, len(cells), width)]
    lam_at, delta_at = hist.Row.HEADERS.index("λ"), hist.Row.HEADERS.index("δ")
    csd = {int(r[0]): (float(r[lam_at]), float(r[delta_at])) for r in rows if r[2] == "csd"}
    assert sorted(csd.values()) == [(0.0, 1.0), (0.5, 0.5), (0.5, 1.0)]       # generate, δ re-run, λ re-run
    last = max(csd)
    want = hist.row_of(page_trace("csd", lam=0.0, delta=1.0), last, "rerun").cells()
    got = next(r for r in rows if int(r[0]) == last and r[2] == "csd")
    assert [float(x) for x in got[3:-2]] == pytest.approx([float(x) for x in want[3:-2]], abs=1e-9)
    assert got[-1] == str(want[-1])                                           # changed vs AR: not compared
    save(page, tmp_path, "bench_clamped_history")
    page.close()
