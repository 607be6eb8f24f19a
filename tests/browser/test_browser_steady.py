"""A calm screen on the served app (app/pinned.py, app/serving.py, app/follow.py), in Chromium at 1920x1080, 1440x900
and 1920x1080 at 150 % with the default 4 methods, a user who does not scroll:
- after a typed commit (λ := 2, Enter) the page may scroll once to bring the lanes into view; from then on, over the
  whole re-run (until its outcome line is on the status line), window.scrollY and CSD's lane top stay within 2 px,
  sampled at every animation frame (before: the lanes moved 21-42 px as the status line lost and gained lines);
- from Generate to the end of that re-run, no Gradio progress text ("processing | 0.4s", "queue: 1/1") lies over a
  caption: the status line's words, a lane's title or its count line, sampled at every animation frame (their boxes
  must not intersect while the progress text is visible: Gradio's tracker takes no pointer events, so elementFromPoint
  would see through it)."""
import time

import pytest

import app
from tests.browser.test_browser import ARGS, CHROMIUM, RUN_MS
from tests.browser.test_browser_present import VIEWS, save
from tests.support.apptools import module_gradio_tmp, tiny_backend  # noqa: F401 (fixture: one cache dir)
from tests.support.cases import one

# at every frame: [scrollY, CSD's lane top, the captions a visible Gradio progress text lies over]
SAMPLE = """() => { window.svSeen = []; const go = () => {
  const vis = e => { const c = getComputedStyle(e), r = e.getBoundingClientRect();
                     return c.visibility === 'visible' && c.display !== 'none' && +c.opacity > 0 && r.width > 0; };
  const texts = [...document.querySelectorAll('[data-testid=status-tracker] :is(.progress-text, .meta-text,'
                                              + ' .meta-text-center)')].filter(e => e.textContent.trim() && vis(e));
  const caps = [...document.querySelectorAll('#status .sv-status, #status .sv-wait, .sv-lane-title, .sv-count')]
    .filter(vis);
  const over = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const hits = [];
  for (const t of texts) for (const c of caps) if (over(t.getBoundingClientRect(), c.getBoundingClientRect()))
    hits.push(`${t.textContent.trim()} over ${c.className}: ${c.textContent.trim().slice(0, 30)}`);
  const lane = document.querySelector('#lane_csd');
  window.svSeen.push([window.scrollY, lane ? lane.getBoundingClientRect().top : null, hits]);
  if (!window.svStop) requestAnimationFrame(go); }; go(); }"""


@pytest.fixture(scope="module")
def served():
    import os  # noqa: PLC0415 - only to skip without Chromium
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not found (apt-get install -y chromium)")
    sync = pytest.importorskip("playwright.sync_api", reason="playwright is not installed").sync_playwright
    backend, _, _ = tiny_backend(codes=16, grid=12, delay=0.02)        # a run of a few seconds: frames to sample
    demo = app.build_demo(backend, fps=20)
    _, url, _ = demo.launch(prevent_thread_lock=True, quiet=True, **app.STYLE)
    with sync() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser, url
        finally:
            browser.close()
            demo.close()


@pytest.mark.browser
@pytest.mark.parametrize("view", one(VIEWS, "1920x1080@150%"))
def test_a_commit_moves_nothing_and_no_progress_text_covers_a_caption(served, tmp_path, view):
    browser, url = served
    w, h, dpr = VIEWS[view]
    page = browser.new_page(viewport={"width": w, "height": h}, device_scale_factor=dpr)
    page.set_default_timeout(120_000)
    page.goto(url)
    page.locator("#lanes").wait_for()
    page.evaluate(SAMPLE)
    page.click("#generate")
    page.locator("#status").filter(has_text="All done").wait_for(timeout=RUN_MS)
    time.sleep(1)
    box = page.locator("#lam input[type=number]")
    box.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("2")
    page.keyboard.press("Enter")
    time.sleep(0.3)                                                   # the commit's one scroll, if any
    start = page.evaluate("() => window.svSeen.length")
    page.locator("#status .sv-outcome").wait_for()
    time.sleep(0.5)
    seen = page.evaluate("() => { window.svStop = true; return window.svSeen; }")
    assert page.locator("#stats_csd .sv-knobs").inner_text().startswith("λ 2 ")
    save(page, tmp_path, f"steady_{view}")
    page.close()
    run = seen[start:]
    ys, tops = [s[0] for s in run], [s[1] for s in run]
    assert len(run) > 10, f"too few frames sampled ({len(run)})"
    assert max(ys) - min(ys) <= 2 and max(tops) - min(tops) <= 2, \
        f"{view}: scrollY {min(ys)}..{max(ys)}, lane top {min(tops)}..{max(tops)} over the re-run"
    covered = [h for s in seen for h in s[2]]
    assert covered == [], f"{view}: {len(covered)} frames with progress text over a caption, e.g. {covered[:3]}"
