"""One run per typed value (app/commit.py), in a real browser (Debian's Chromium, Playwright) at 1440x900 with the
default 4 methods: four typed commits — λ 2 (Enter), λ 3.5 (Tab), λ 0.7 (Enter), δ 0.3 (Enter), each typed the usual
way (a click into the box, select-all, Delete, the digits) — make exactly four re-runs, each sent with the value its
box shows, each shown in CSD's lane header, and four History rows; an emptied box raises no toast and runs nothing,
and a box emptied then left gets its value back without a run."""
import json
import os
import time

import pytest

import app
from specviz.analysis import history as hist
from tests.browser.test_browser import ARGS, CHROMIUM, RUN_MS
from tests.browser.test_browser_present import save

COMMITS = [("lam", "2", "Enter"), ("lam", "3.5", "Tab"), ("lam", "0.7", "Enter"), ("delta", "0.3", "Enter")]


@pytest.fixture(scope="module")
def served():
    from tests.support.apptools import tiny_backend
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not found (apt-get install -y chromium)")
    sync = pytest.importorskip("playwright.sync_api", reason="playwright is not installed").sync_playwright
    backend, _, _ = tiny_backend(codes=16, grid=12)
    demo = app.build_demo(backend, fps=20)
    _, url, _ = demo.launch(prevent_thread_lock=True, quiet=True, **app.STYLE)
    with sync() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser, url, demo
        finally:
            browser.close()
            demo.close()


def reruns_of(demo) -> tuple[set, dict]:
    """The fn indices of the slider re-run events and {knob: index of its value in their inputs}."""
    cfg = demo.get_config_file()
    ids = {b.elem_id: i for i, b in demo.blocks.items() if getattr(b, "elem_id", None) in ("lam", "delta")}
    deps = [d for d in cfg["dependencies"] if (d.get("api_name") or "").startswith("rerun")]
    return {d["id"] for d in deps}, {k: deps[0]["inputs"].index(i) for k, i in ids.items()}


def toasts(page) -> list:
    return [t.strip() for t in page.locator(".toast-message-item").all_inner_texts()]


def empty_box(page, name: str):
    box = page.locator(f"#{name} input[type=number]")
    box.scroll_into_view_if_needed()
    box.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    return box


@pytest.mark.browser
def test_four_typed_commits_make_four_runs_each_with_the_value_shown(served, tmp_path):
    browser, url, demo = served
    fns, at = reruns_of(demo)
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.set_default_timeout(90_000)
    sent = []
    page.on("request", lambda r: sent.append(json.loads(r.post_data)) if "queue/join" in r.url and r.method == "POST"
            else None)
    page.goto(url)
    page.click("#generate")
    page.locator("#status").filter(has_text="All done").wait_for(timeout=RUN_MS)
    time.sleep(1)
    runs = lambda: [d for d in sent if d["fn_index"] in fns]            # noqa: E731 - read at each step
    want = {"lam": 0.5, "delta": 0.5}
    for k, (name, value, key) in enumerate(COMMITS, start=1):
        box = empty_box(page, name)
        time.sleep(1.5)                                                 # an emptied box: nothing sent, no toast
        assert toasts(page) == [] and len(runs()) == k - 1, f"commit {k}: the empty box sent a run or a toast"
        page.keyboard.type(value, delay=80)
        page.keyboard.press(key)
        want[name] = float(value)
        page.wait_for_function(
            "w => { const s = document.querySelector('#status'), t = document.querySelector('#stats_csd .sv-knobs');"
            " return s.innerText.includes('All done') && t && t.innerText.startsWith(w); }",
            arg=f"λ {want['lam']:g} · δ {want['delta']:g}")
        time.sleep(1.5)                                                 # a second run would have been sent by now
        assert float(box.input_value()) == float(value)
        got = runs()
        assert len(got) == k, f"commit {k} ({name} = {value}, {key}): {len(got)} runs in all"
        assert [got[-1]["data"][at["lam"]], got[-1]["data"][at["delta"]]] == [want["lam"], want["delta"]]
    assert toasts(page) == []
    box = empty_box(page, "lam")                                        # emptied and left: its value back, no run
    page.keyboard.press("Tab")
    time.sleep(1.5)
    assert box.input_value() == "0.7" and len(runs()) == 4 and toasts(page) == []
    page.click("#tab_history-button")
    page.get_by_text("rerun").first.wait_for()
    time.sleep(1)
    cells = [x.strip() for x in page.locator("#hist_table").inner_text().split("\n") if x.strip()]
    width = len(hist.Row.HEADERS)
    rows = [cells[i:i + width] for i in range(width, len(cells), width)]
    lam_at, delta_at = hist.Row.HEADERS.index("λ"), hist.Row.HEADERS.index("δ")
    csd = sorted((int(r[0]), r[1], float(r[lam_at]), float(r[delta_at])) for r in rows if r[2] == "csd")
    assert [c[1:] for c in csd] == [("generate", 0.5, 0.5), ("rerun", 2, 0.5), ("rerun", 3.5, 0.5),
                                    ("rerun", 0.7, 0.5), ("rerun", 0.7, 0.3)]
    save(page, tmp_path, "commits_history")
    page.close()
