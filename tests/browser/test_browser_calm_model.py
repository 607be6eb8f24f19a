"""A calm screen's scripts on bare pages in Chromium (no server: a few seconds), with the app's own JavaScript and CSS:
- the waiting line (app/serving.WAIT_JS): a status line whose Gradio tracker says "queue: 1/1 | 0.3s" reads
  "waiting for another run (0 s)", then "(1 s)", "(2 s)"; Gradio's text is hidden; when the tracker says
  "processing" the line goes and the status's own words come back;
- the steady status line and the single scroll (app/pinned.JS): after a commit (Enter in a knob's box) the status line
  shrinks, grows and gains its outcome line and the lanes below it do not move; the page scrolls once to bring the
  lanes into view (not again when the status outgrows its reserve), and never after the user turned the wheel,
  however the status grows afterwards (the page's own scroll anchoring is off there: every move of scrollY is a
  script's).
The served app is checked by tests/browser/test_browser_wait.py and test_browser_steady.py; these are the mutation
check's detectors (tests/mutation/mutants_calm.py)."""
import os
import time

import pytest

from specviz.app import pinned, serving
from tests.browser.test_browser import ARGS, CHROMIUM

STATUS = """<html><head><style>{css}</style></head><body style="margin:0;font:15px sans-serif">
<div id="status" style="position:relative;width:400px">
 <div data-testid="status-tracker" class="wrap"><div class="progress-text">{tracker}</div></div>
 <div class="html-container"><div class="prose"><div class="sv-status">All done: 12 ticks.</div></div></div>
</div></body></html>"""


def _browser(p):
    return p.chromium.launch(executable_path=CHROMIUM, args=ARGS)


def _sync():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not found (apt-get install -y chromium)")
    return pytest.importorskip("playwright.sync_api", reason="playwright is not installed").sync_playwright


def _line(page) -> tuple:
    """(the wait line's words or None, whether the status's own words show, whether Gradio's text shows)."""
    return page.evaluate("""() => { const s = document.querySelector('#status'), w = s.querySelector('.sv-wait');
      const vis = e => !!e && getComputedStyle(e).visibility === 'visible' && getComputedStyle(e).display !== 'none'
                       && e.getBoundingClientRect().height > 0;
      const own = s.querySelector('.html-container'), gradio = s.querySelector('.progress-text');
      return [w ? w.textContent : null, vis(own), vis(gradio)];
    }""")


@pytest.mark.browser
def test_a_queued_page_says_it_waits_and_counts_the_seconds():
    with _sync()() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 800, "height": 400})
            page.set_content(STATUS.format(css=serving.WAIT_CSS, tracker="queue: 1/1 | 0.3s"))
            page.evaluate(f"({serving.WAIT_JS})()")
            seen = [_line(page)]
            for _ in range(2):
                time.sleep(1.05)
                page.evaluate("() => { document.querySelector('.progress-text').textContent = "
                              "'queue: 1/1 | ' + (performance.now() / 1000).toFixed(1) + 's'; }")   # Gradio's eta
                seen.append(_line(page))
            page.evaluate("() => { document.querySelector('.progress-text').textContent = 'processing | 0.1s'; }")
            time.sleep(0.3)
            seen.append(_line(page))
        finally:
            browser.close()
    words = serving.WAIT_WORDS
    assert seen == [[words.format(s=0), False, False], [words.format(s=1), False, False],
                    [words.format(s=2), False, False], [None, True, False]], seen


LANES = """<html style="overflow-anchor:none"><head><style>{css}</style></head>
<body style="margin:0;font:15px sans-serif">
<div style="height:{above}px">intro</div>
<div class="block" id="lam"><input type="number" value="0.5"><input type="range" min="0" max="10" value="0.5"></div>
<div id="main" style="width:420px">
 <div id="status"><div class="html-container"><div class="prose"><div class="sv-status">All done: 144 ticks of
 the common clock in 2.9 s.</div>
 </div></div></div>
 <div id="lanes" style="display:grid">
  <div id="lane_csd"><div id="title_csd"><div class="sv-lane-title">CSD</div></div>
   <div style="width:100px;height:100px;background:#888"></div>
   <div id="stats_csd"><div class="sv-lane"><div class="sv-knobs">λ 0.5 · δ 0.5</div>144/144 tokens</div></div></div>
  <div id="lane_ar"><div id="title_ar"><div class="sv-lane-title">AR</div></div>
   <div style="width:100px;height:100px;background:#888"></div>
   <div id="stats_ar"><div class="sv-lane"><div class="sv-knobs">no knobs</div>144/144 tokens</div></div></div>
 </div>
 <div id="tabs" style="height:3000px">tabs</div>
</div></body></html>"""
RUNNING = ("<div class='sv-status'>Clock: tick 9 — each method still running makes one target forward per tick · "
           "running: ar, csd · memory in use 0.48 GiB · process peak 0.48 GiB</div>")
DONE = ("<div class='sv-status'>All done: 144 ticks of the common clock in 3.1 s.</div><div class='sv-outcome' "
        "id='sv-outcome'>Re-run, step compression before → predicted → <b>achieved</b>: csd 1.27× → 1.31× → "
        "<b>1.30×</b> · not tuned by these knobs: ar 1.00×</div>")


def _status(page, html: str) -> None:
    page.evaluate("h => { document.querySelector('#status .prose').innerHTML = h; }", html)
    time.sleep(0.25)                                                 # the layout script runs on the next frame


def _where(page) -> list:
    return page.evaluate("() => [window.scrollY, document.querySelector('#lane_csd').getBoundingClientRect().top]")


def _commit(page) -> None:
    page.click("#lam input[type=number]")
    page.keyboard.press("Enter")
    time.sleep(0.3)


@pytest.mark.browser
def test_a_commit_keeps_the_lanes_still_while_the_status_line_changes():
    with _sync()() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 800, "height": 900})
            page.set_content(LANES.format(css=pinned.CSS, above=60))
            page.evaluate(f"({pinned.JS})()")
            time.sleep(0.3)
            _commit(page)
            seen = [_where(page)]
            for html in (RUNNING, "<div class='sv-status'>Clock: tick 10.</div>", DONE):
                _status(page, html)
                seen.append(_where(page))
        finally:
            browser.close()
    assert len({tuple(s) for s in seen}) == 1, f"[scrollY, lane top] after the commit, then per status: {seen}"


@pytest.mark.browser
def test_one_scroll_per_commit_and_none_after_the_wheel():
    with _sync()() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 800, "height": 400})
            page.set_content(LANES.format(css=pinned.CSS, above=300))   # the lanes end below the screen
            page.evaluate(f"({pinned.JS})()")
            time.sleep(0.3)
            _commit(page)
            brought = page.evaluate("() => document.querySelector('#lanes').getBoundingClientRect().bottom")
            y = page.evaluate("() => window.scrollY")
            _status(page, RUNNING + DONE + DONE)                    # taller than reserved: the lanes go down
            y1 = page.evaluate("() => window.scrollY")               # and stay there (one scroll per action)
            page.mouse.move(600, 200)
            page.mouse.wheel(0, 120)                                 # the reader scrolls on
            time.sleep(0.4)
            y2 = page.evaluate("() => window.scrollY")
            for html in (RUNNING, DONE, (RUNNING + DONE) * 2):       # taller and taller: the lanes go down
                _status(page, html)
            y3 = page.evaluate("() => window.scrollY")
            # a commit with the status and the lanes in view (nothing to scroll yet), the wheel, then the status
            page = browser.new_page(viewport={"width": 800, "height": 900})
            page.set_content(LANES.format(css=pinned.CSS, above=60))
            page.evaluate(f"({pinned.JS})()")
            time.sleep(0.3)
            y4 = page.evaluate("() => window.scrollY")
            _commit(page)
            y5 = page.evaluate("() => window.scrollY")
            page.mouse.move(600, 200)
            page.mouse.wheel(0, 200)
            time.sleep(0.4)
            y6 = page.evaluate("() => window.scrollY")
            for html in (RUNNING, DONE):
                _status(page, html)
            y7 = page.evaluate("() => window.scrollY")
        finally:
            browser.close()
    assert y > 0 and brought <= 400, f"the commit did not bring the lanes into view (scrollY {y}, bottom {brought})"
    assert y1 == y, f"a second scroll for one commit: {y} -> {y1}"
    assert y2 > y, "the wheel did not scroll"
    assert y3 == y2, f"the page scrolled after the user did: {y2} -> {y3}"
    assert y5 == y4 and y6 > y5, f"the lanes were in view: no scroll ({y4} -> {y5}); the wheel scrolls ({y6})"
    assert y7 == y6, f"the page scrolled after the user did: {y6} -> {y7}"
