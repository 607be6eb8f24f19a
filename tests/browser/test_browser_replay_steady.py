"""Replay in Present mode holds still while it plays, in a real browser (Debian's Chromium, Playwright) at
1920x1080, 1440x900 and 1920x1080 at 150 %: over 50 ticks of Play (CASCADE's trees picked, so the tree changes size
from step to step) the synchronized picture and the tree keep one displayed width (replay_tab pads every step picture
to the run's largest; replay_fit.JS sizes the layout once), and no Gradio progress text lies over the caption.
Prints the widths seen (the report's before / after)."""
import time

import pytest

from tests.browser.test_browser_bench import after_run
from tests.browser.test_browser_present import VIEWS, save, served  # noqa: F401 (fixture)
from tests.support.apptools import module_gradio_tmp  # noqa: F401 (fixture: the server outlives single tests)
from tests.support.cases import one

FPS = "shipped"     # app.build_demo's own frame rate (tests/browser/test_browser_present.served): read after runs

TICKS = 50
# per clock value: the clock, the picture's and the tree's displayed widths, and any visible progress text (Gradio's
# status trackers: "processing | 0.1s", eta bars) whose box meets the caption's
SAMPLE = """() => { const q = s => document.querySelector(s), w = s => q(s) ? q(s).getBoundingClientRect().width : -1;
  const cap = q('#replay_caption').getBoundingClientRect();
  const sel = '.progress-text, .eta-bar, .progress-level, .meta-text, .meta-text-center';
  const over = [...document.querySelectorAll(sel)]
    .filter(e => { const r = e.getBoundingClientRect(), s = getComputedStyle(e);
      return r.width > 0 && s.visibility !== 'hidden' && s.display !== 'none' && r.left < cap.right &&
             cap.left < r.right && r.top < cap.bottom && cap.top < r.bottom; })
    .map(e => (e.closest('[id]') || {}).id + ' ' + e.className + ': ' + e.textContent.trim());
  return [q('#replay_step input[type=number]').value, w('#replay_image img'), w('#replay_tree img'), over]; }"""


def play(page, ticks: int = TICKS) -> dict:
    """Press Play; one sample per clock value until `ticks` values were seen (or Play stopped at the end)."""
    page.click("#replay_play")
    seen, t0 = {}, time.time()
    while len(seen) < ticks and time.time() - t0 < 420:
        k, pic, tree, over = page.evaluate(SAMPLE)
        if k not in seen or over:
            seen.setdefault(k, (pic, tree, []))[2].extend(over)
        if page.locator("#replay_play").inner_text().strip() == "Play" and len(seen) > 2:
            break
        time.sleep(0.03)
    return seen


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("view", one(VIEWS, "1920x1080"))
def test_replay_holds_still_while_it_plays(served, tmp_path, view):  # noqa: F811 (the fixture)
    browser, url = served
    page = after_run(browser, url, view, ["ar", "sjd", "csd", "cascade"])
    page.click("#tab_replay-button")
    page.locator("#replay_method label").filter(has_text="cascade").first.click()
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("p")
    page.wait_for_function("document.body.classList.contains('sv-present')")
    time.sleep(1.0)
    seen = play(page)
    save(page, tmp_path, f"replay_playing_{view}")
    pics = sorted({round(v[0], 1) for v in seen.values()})
    trees = sorted({round(v[1], 1) for v in seen.values()})
    print(view, f"{len(seen)} clock values; picture widths {pics}; tree widths {trees}")
    assert len(seen) >= TICKS, (view, len(seen))
    assert len(pics) == 1 and pics[0] > 0, (view, pics)
    assert len(trees) == 1 and trees[0] > 0, (view, trees)
    assert [(k, v[2]) for k, v in seen.items() if v[2]] == [], view
    page.close()
