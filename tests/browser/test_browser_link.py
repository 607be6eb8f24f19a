"""A setting in the URL, as a person uses it (Chromium at 1920x1080): a link with prompt, seed, methods, noise, λ
and δ opens the page with those controls and runs once, and the run's traces carry exactly those settings; an
out-of-range λ is clamped with the typed value's line; Copy link writes a link that opens the same page again."""
import json
import os
import time
from urllib.parse import quote, urlsplit

import pytest

import app
from tests.browser.test_browser import ARGS, CHROMIUM, RUN_MS
from tests.support.apptools import module_gradio_tmp, tiny_backend  # noqa: F401 (fixture: one cache dir for the server)

SETTING = {"prompt": "a purple mountain, a starry night sky over water", "seed": 5, "methods": ["ar", "sjd", "csd"],
           "noise": "keyed", "lam": 0.35, "delta": 0.45}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not found (apt-get install -y chromium)")
    sync = pytest.importorskip("playwright.sync_api", reason="playwright is not installed").sync_playwright
    exports = tmp_path_factory.mktemp("exports")
    demo = app.build_demo(tiny_backend(codes=16, grid=8)[0], fps=20, export_root=str(exports))
    _, url, _ = demo.launch(prevent_thread_lock=True, quiet=True, **app.STYLE)
    with sync() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser, url, exports
        finally:
            browser.close()
            demo.close()


def shown(page) -> dict:
    """The controls as the page shows them."""
    return {"prompt": page.locator("#prompt textarea").input_value(),
            "seed": int(page.locator("#seed input").input_value()),
            "methods": [m for m in app.METHODS if page.locator("#methods input[type=checkbox]").nth(
                app.METHODS.index(m)).is_checked()],
            "noise": next(v for v in ("papers", "keyed") if page.locator("#noise input[value=%s]" % v).is_checked()),
            "lam": float(page.locator("#lam input[type=number]").input_value()),
            "delta": float(page.locator("#delta input[type=number]").input_value())}


def exported_configs(page, exports, before: set) -> dict:
    page.click("#tab_export-button")
    page.click("#export")
    page.locator("#files a").first.wait_for()
    time.sleep(0.3)
    new = [p for p in exports.glob("specviz-*/*_trace.json") if p.parent not in before]
    return {json.loads(p.read_text())["config"]["method"]: json.loads(p.read_text())["config"] for p in new}


def history_runs(page) -> set:
    """(run, method) of every row of the History table."""
    from specviz.analysis import history as hist
    page.click("#tab_history-button")
    page.locator("#hist_table").scroll_into_view_if_needed()
    page.wait_for_function("document.querySelector('#hist_table').innerText.includes('generate')")
    time.sleep(0.5)
    cells = [x.strip() for x in page.locator("#hist_table").inner_text().split("\n") if x.strip()]
    width = len(hist.Row.HEADERS)
    return {(int(r[0]), r[2]) for r in (cells[i:i + width] for i in range(width, len(cells), width))}


def link_of(setting: dict) -> str:
    return "?" + "&".join(f"{k}={quote(','.join(v) if isinstance(v, list) else str(v))}" for k, v in setting.items())


@pytest.mark.browser
def test_a_link_opens_the_page_in_its_setting_runs_once_and_copy_link_round_trips(served):
    browser, url, exports = served
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    page.set_default_timeout(60_000)
    page.goto(url.rstrip("/") + "/" + link_of(SETTING))
    page.get_by_text("All done").first.wait_for(timeout=RUN_MS)
    assert shown(page) == SETTING
    for m in app.METHODS:                                        # the lanes are the link's methods
        assert page.locator(f"#lane_{m}").is_visible() == (m in SETTING["methods"]), m
    configs = exported_configs(page, exports, set())
    assert sorted(configs) == sorted(SETTING["methods"])
    for m, cfg in configs.items():
        assert (cfg["prompt"], cfg["seed"], cfg.get("noise", "papers"), cfg["lam"], cfg["delta"]) == \
            (SETTING["prompt"], SETTING["seed"], SETTING["noise"], SETTING["lam"], SETTING["delta"]), m
    assert history_runs(page) == {(1, m) for m in SETTING["methods"]}       # the link ran once
    page.locator("#lam input[type=number]").fill("0.6")          # change a knob, then share
    page.keyboard.press("Enter")
    page.get_by_text("All done").first.wait_for(timeout=RUN_MS)
    time.sleep(0.5)
    page.click("#tab_export-button")
    page.click("#copy_link")
    page.wait_for_function("document.querySelector('#link textarea, #link input').value.startsWith('http')")
    copied = page.locator("#link textarea, #link input").first.input_value()
    assert page.url == copied                                     # the address bar says it too
    other = browser.new_page(viewport={"width": 1920, "height": 1080})
    other.set_default_timeout(60_000)
    other.goto(copied)
    other.get_by_text("All done").first.wait_for(timeout=RUN_MS)
    assert shown(other) == SETTING | {"lam": 0.6}
    assert history_runs(other) == {(1, m) for m in SETTING["methods"]}
    assert urlsplit(copied).path == urlsplit(url).path
    other.close()
    page.close()


@pytest.mark.browser
def test_an_out_of_range_value_in_a_link_is_clamped_with_one_line(served):
    browser, url, _ = served
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.set_default_timeout(60_000)
    page.goto(url.rstrip("/") + "/?lam=99&bogus=1&methods=ar,csd")
    page.get_by_text("All done").first.wait_for(timeout=RUN_MS)
    toast = page.locator(".toast-message-item").last.inner_text()
    assert "lam=99 is outside 0–10: set to 10, and the run uses 10." in toast
    assert "bogus is not a setting of this page: ignored." in toast
    assert float(page.locator("#lam input[type=number]").input_value()) == 10
    page.close()
