"""The app in a real browser (Debian's Chromium driven by Playwright): generate, heatmaps, inspector, Stop.
Screenshots (1280x800) land in the test's tmp directory. Skips cleanly without /usr/bin/chromium or playwright."""
import os
import re
import time

import pytest

import app
from tests.support.apptools import tiny_backend

CHROMIUM = "/usr/bin/chromium"
RUN_MS = 300_000            # the wait for a run's "All done": every method on a loaded two-core machine took > 90 s
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture()
def page_and_model(tmp_path):
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not found (apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install playwright)")
    backend, slow, _ = tiny_backend(codes=8, grid=6)
    demo = app.build_demo(backend, fps=20, export_root=str(tmp_path / "exports"))
    _, url, _ = demo.launch(prevent_thread_lock=True, quiet=True, **app.STYLE)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.set_default_timeout(30_000)
        page.goto(url)
        try:
            yield page, slow
        finally:
            browser.close()
            demo.close()


def shot(page, tmp_path, name, **kw):
    page.screenshot(path=str(tmp_path / f"{name}.png"), **kw)


def natural_click(page, selector, nx, ny):
    """Click an <img> at natural-pixel coordinates (what gr.Image.select reports)."""
    img = page.locator(selector)
    box = img.bounding_box()
    nw, nh = img.evaluate("e => [e.naturalWidth, e.naturalHeight]")
    page.mouse.click(box["x"] + nx * box["width"] / nw, box["y"] + ny * box["height"] / nh)


@pytest.mark.browser
def test_generate_inspect_and_stop_in_chromium(page_and_model, tmp_path):
    page, slow = page_and_model
    page.locator("#prompt textarea").fill("   ")                    # bad input: one clear message, no traceback
    page.click("#generate")
    page.get_by_text("prompt must be a non-empty text").first.wait_for()
    assert "Traceback" not in page.content()
    time.sleep(0.5)                                                # the toast slides in
    shot(page, tmp_path, "0_error")
    page.locator("#prompt textarea").fill("a blue house on the right, a starry night sky over water")
    page.click("#generate")
    page.locator("#img_ar img").wait_for()
    page.locator("#status").filter(has_text="All done").wait_for(timeout=RUN_MS)
    page.locator("#map_entropy img").wait_for()
    page.locator("#img_csd img").scroll_into_view_if_needed()
    shot(page, tmp_path, "1_generated")
    assert page.locator("#stats_ar").inner_text().count("done at forward 36") == 1

    from specviz.render import draw
    x0, y0 = draw.layout(4)[1]                                   # the sjd panel of the entropy composite
    c = draw.cell_px((6, 6))
    page.locator("#map_entropy img").scroll_into_view_if_needed()
    natural_click(page, "#map_entropy img", x0 + 2.5 * c, y0 + 1.5 * c)
    page.locator("#inspector").filter(has_text="sjd · row 1, column 2").wait_for()
    assert "q(x) target" in page.locator("#inspector").inner_text()
    shot(page, tmp_path, "2_inspector")
    page.click("#tab_decision-button")
    page.locator("#map_decision img").wait_for()
    shot(page, tmp_path, "3_decisions")

    lam = page.locator("#lam input[type=range]")                   # drag λ: instant preview, then a re-run
    lam.scroll_into_view_if_needed()
    box = lam.bounding_box()
    page.mouse.move(box["x"] + 0.1 * box["width"], box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + 0.7 * box["width"], box["y"] + box["height"] / 2, steps=5)
    page.locator("#preview_table").filter(has_text="Preview: an estimate").wait_for()
    page.mouse.up()
    page.locator("#preview_image img").wait_for()
    shot(page, tmp_path, "4_preview")
    page.locator("#status").filter(has_text="All done").wait_for(timeout=RUN_MS)

    slow.delay = 0.08                                              # a slow run, so Stop lands mid-way
    page.click("#generate")
    page.locator("#stats_ar").filter(has_text=re.compile(r"● forward [3-9]")).wait_for()
    page.click("#stop")
    time.sleep(0.5)
    frozen = page.locator("#stats_ar").inner_text()
    time.sleep(1.0)
    assert page.locator("#stats_ar").inner_text() == frozen and "done" not in frozen
    page.locator("#status").filter(has_text="Stopped").wait_for(timeout=60000)   # the stop's own update, queued
    #                                                  (behind the run's last frames: 20 s ran out once under -n 2 load)
    shot(page, tmp_path, "5_stopped")
    slow.delay = 0.0
    page.click("#generate")
    page.locator("#stats_ar").filter(has_text="done at forward 36").wait_for()
    page.locator("#status").filter(has_text="All done").wait_for(timeout=RUN_MS)
    shot(page, tmp_path, "6_after_stop", full_page=True)

    page.keyboard.press("Escape")                                  # the floating inspector closes: nothing covered
    assert not page.locator("#inspector .sv-insp").first.is_visible()
    page.click("#tab_export-button")                               # export, then open the written traces again
    page.click("#export")
    page.locator("#files a").first.wait_for()
    traces = sorted(str(p) for p in (tmp_path / "exports").glob("specviz-*/*_trace.json"))
    assert len(traces) == 4
    page.locator("#open_files input[type=file]").set_input_files(traces)
    page.locator("#open_files a").nth(3).wait_for()                    # all four uploaded
    page.click("#open")
    page.locator("#status").filter(has_text="Opened traces of ar, sjd, csd, mcsjd").wait_for()
    page.click("#tab_maps-button")
    page.locator("#map_decision img").wait_for()                   # the decisions map tab is still selected
    shot(page, tmp_path, "7_opened", full_page=True)
