"""A waiting user sees it (app/serving.WAIT_JS), on the served app in Chromium at 1920x1080, 1440x900 and 1920x1080 at
150 %: two pages in two browser contexts (two users); A starts a run, then B does. Runs share one model (concurrency
limit 1), so B's run waits in Gradio's queue: B's status line reads "waiting for another run (N s)" with N
counting up the whole seconds from 0 (sampled every 0.2 s), Gradio's own "queue: 1/1" text is not shown, and A's page
never says it waits; once A's run ends B's run starts: the wait line goes, B's status line counts ticks and B's lanes
paint (CSD's picture is drawn). Before: B's status line was empty for the whole of A's run, only Gradio's faint
"queue: 1/1 | 0.3s" at its edge."""
import re
import time

import pytest

from specviz.app import serving
from tests.browser.test_browser import RUN_MS
from tests.browser.test_browser_present import VIEWS, save
from tests.browser.test_browser_steady import served  # noqa: F401 (fixture: the app, runs of a few seconds)
from tests.support.apptools import module_gradio_tmp  # noqa: F401 (fixture: one cache dir)
from tests.support.cases import one

WAITING = re.compile(re.escape(serving.WAIT_WORDS).replace(r"\{s\}", r"(\d+)"))
READ = """() => { const s = document.querySelector('#status'), t = s.querySelector('.progress-text');
  const shown = t && getComputedStyle(t).visibility === 'visible' && t.textContent.trim();
  return [s.innerText.trim(), shown || ''];}"""


@pytest.mark.browser
@pytest.mark.parametrize("view", one(VIEWS, "1440x900"))
def test_the_second_user_sees_the_wait_counting_then_the_run(served, tmp_path, view):  # noqa: F811
    browser, url = served
    w, h, dpr = VIEWS[view]
    pages = []
    for _ in range(2):
        ctx = browser.new_context(viewport={"width": w, "height": h}, device_scale_factor=dpr)
        page = ctx.new_page()
        page.set_default_timeout(120_000)
        page.goto(url)
        page.locator("#generate").wait_for()
        pages.append(page)
    a, b = pages
    a.click("#generate")
    a.locator("#status").filter(has_text="Clock").wait_for()
    b.click("#generate")
    seen_a, seen_b, shot = [], [], False
    t0 = time.time()
    while time.time() - t0 < 120:
        seen_a.append(a.evaluate(READ))
        text, gradio = b.evaluate(READ)
        seen_b.append((text, gradio))
        if WAITING.fullmatch(text) and not shot and time.time() - t0 > 1.2:
            save(b, tmp_path, f"wait_{view}")
            shot = True
        if text.startswith(("Clock", "All done")):
            break
        time.sleep(0.2)
    b.locator("#status").filter(has_text="All done").wait_for(timeout=RUN_MS)
    painted = b.evaluate("() => { const i = document.querySelector('#img_csd img');"
                         " return !!i && i.complete && i.naturalWidth > 0; }")
    final = b.evaluate(READ)[0]
    for page in pages:
        page.context.close()
    waits = [int(m.group(1)) for m in (WAITING.fullmatch(t) for t, _ in seen_b) if m]
    assert waits, f"{view}: B's status line never said it waits: {seen_b[:5]}"
    assert waits == sorted(waits) and waits[0] == 0 and waits[-1] >= 1, f"{view}: the seconds {waits}"
    assert not [g for _, g in seen_b if g.startswith("queue")], f"{view}: Gradio's queue text shows: {seen_b[:5]}"
    assert not [t for t, _ in seen_a if WAITING.search(t)], f"{view}: A's page said it waits"
    assert seen_b[-1][0].startswith(("Clock", "All done")), f"{view}: B's run never started: {seen_b[-3:]}"
    assert painted and final.startswith("All done") and not WAITING.search(final), (view, painted, final)
