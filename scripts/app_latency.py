"""Latency of the served app against the engine's own race, in one run and as ratios.

    python scripts/app_latency.py [--runs 5] [--threads 1] [--sets four all] [--browser] [--json out.json]

Starts `python app.py --threads N` on a free port and drives `/generate` through gradio_client with the app's defaults
(RunConfig() knobs, seed 0) for the default four methods and for every registered method: time to the first streamed
output and end to end, with `download_files=False` and with a default client (which downloads every file of every
streamed update; the app streams gradio_client callers a lean stream,
specviz/app/stream.py); and the same configs in-process
through `race.race(...)` at the app's page frame rate (frames rendered, as the app does for a page): time to the
first frame and to the last; and the race rendering only its first and final frame (the engine's own time). One
warm-up run each, then --runs rounds that alternate the app and in-process runs (a busy machine slows all alike);
medians. --browser adds one run in Chromium (Playwright, /usr/bin/chromium): click Generate -> status "All done",
default four methods. Prints a Markdown table, then one JSON line with every measurement. CPU s: the app process's CPU
time per run, and this process's for the in-process races; on a busy machine wall times favour whichever process the
scheduler favours, CPU times do not."""
from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

import app  # noqa: E402
from specviz.app.catalogue import default_catalogue  # noqa: E402
from specviz.app.configs import make_configs  # noqa: E402
from specviz.app.handlers import GEN_INPUTS, GEN_OUTPUTS  # noqa: E402
from specviz.app.race import race  # noqa: E402
from specviz.app.serving import cpu_seconds, served_app  # noqa: E402
from specviz.engine.config import RunConfig  # noqa: E402
from specviz.engine.registry import METHODS  # noqa: E402

SETS = {"four": list(app.DEFAULT_METHODS), "all": list(METHODS)}
KNOB_VALUES = {k: getattr(RunConfig(), k) for k in GEN_INPUTS if k not in ("model", "methods")}   # the app's defaults
FPS = inspect.signature(app.build_demo).parameters["fps"].default
BARE_FPS = 1e-9                     # race() then renders only its first and final frame: the engine's own time
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu"]


def api_args(methods: list) -> list:
    """/generate's positional inputs: GEN_INPUTS in order, then the map opacity."""
    return [{**KNOB_VALUES, "model": "scenes", "methods": methods}[k] for k in GEN_INPUTS] + [1.0]


def timed(stream) -> tuple[float, float, int, object]:
    """Consume an iterator: (seconds to its first item, seconds to its end, items, last item)."""
    t0, first, n, last = time.perf_counter(), None, 0, None
    for item in stream:
        n, last = n + 1, item
        first = time.perf_counter() - t0 if first is None else first
    return first, time.perf_counter() - t0, n, last


def interleaved(fns: dict, runs: int) -> dict:
    """One warm-up call of each, then `runs` rounds calling each once, so that both sides see the same load."""
    for fn in fns.values():
        fn()
    out = {k: [] for k in fns}
    for _ in range(runs):
        for k, fn in fns.items():
            out[k].append(fn())
    return out


def through_client(client, methods: list, pid: int):
    """One /generate call: (first output s, end s, updates, ticks, app CPU s)."""
    def once():
        cpu0 = cpu_seconds(pid)
        job = client.submit(*api_args(methods), api_name="/generate")
        first, end, n, last = timed(job)
        cpu = cpu_seconds(pid) - cpu0
        status = str(last[GEN_OUTPUTS.index("status")]) if last else ""
        done = re.search(r"All done: (\d+) ticks", status)
        if not done:
            raise RuntimeError(f"/generate did not finish: {status or job.exception()}")
        return first, end, n, int(done.group(1)), cpu
    return once


def in_process(model, factory, methods: list, fps: float = FPS):
    cfgs = make_configs(methods, model="scenes", **KNOB_VALUES)
    def once():
        cpu0 = time.process_time()
        first, end, n, last = timed(race(model, factory, cfgs, fps=fps))
        return first, end, n, last.tick, time.process_time() - cpu0
    return once


def in_browser(url: str) -> dict:
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.set_default_timeout(180_000)
            page.goto(url)
            page.locator("#generate").wait_for()
            t0 = time.perf_counter()
            page.click("#generate")
            page.locator("#status").filter(has_text="All done").wait_for()
            return {"click_to_all_done_s": round(time.perf_counter() - t0, 3),
                    "status_line": page.locator("#status").inner_text().strip()}
        finally:
            browser.close()


def median(rows: list[tuple], i: int) -> float:
    return round(statistics.median(r[i] for r in rows), 3)


def report(runs: dict, browser: dict | None, meta: dict) -> str:
    lines = ["| methods | app first output s | app end to end s | default client: first output s | default client: "
             "end to end s | race first frame s | race end to end s | race, first + last frame only s | "
             "updates app / race frames | end to end app / race | default client / app | default client / race | "
             "app / race first + last | CPU s app / default client / race / first + last |", "|---" * 14 + "|"]
    out = {"meta": meta, "sets": {}}
    for name, both in runs.items():
        a, d, r, b = both["app"], both["default"], both["race"], both["bare"]
        if len({run[3] for run in a + d + r + b}) != 1:           # same configs, same seed: the same clock everywhere
            raise RuntimeError(f"{name}: app and in-process runs disagree on the ticks: {both}")
        row = {"app_first_s": median(a, 0), "app_end_s": median(a, 1), "race_first_s": median(r, 0),
               "race_end_s": median(r, 1), "bare_end_s": median(b, 1), "app_updates": median(a, 2),
               "race_frames": median(r, 2), "cpu_s": [median(a, 4), median(d, 4), median(r, 4), median(b, 4)],
               "default_first_s": median(d, 0), "default_end_s": median(d, 1)}
        row["end_ratio"] = round(row["app_end_s"] / row["race_end_s"], 2)
        row["bare_ratio"] = round(row["app_end_s"] / row["bare_end_s"], 2)
        row["first_ratio"] = round(row["app_first_s"] / row["race_first_s"], 2)
        row["default_vs_app"] = round(row["default_end_s"] / row["app_end_s"], 2)
        row["default_vs_race"] = round(row["default_end_s"] / row["race_end_s"], 2)
        lines.append(f"| {name}: {' '.join(SETS[name])} | {row['app_first_s']} | {row['app_end_s']} | "
                     f"{row['default_first_s']} | {row['default_end_s']} | "
                     f"{row['race_first_s']} | {row['race_end_s']} | {row['bare_end_s']} | {row['app_updates']:g} / "
                     f"{row['race_frames']:g} | {row['end_ratio']} | {row['default_vs_app']} | "
                     f"{row['default_vs_race']} | {row['bare_ratio']} | {' / '.join(map(str, row['cpu_s']))} |")
        out["sets"][name] = row | {"app_runs": a, "default_runs": d, "race_runs": r, "bare_runs": b}
    if browser:
        lines.append(f"\nChromium, default four methods: click Generate -> 'All done' "
                     f"{browser['click_to_all_done_s']} s (status line: {browser['status_line']})")
        out["browser"] = browser
    return "\n".join(lines) + "\n" + json.dumps(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="measured runs per configuration (after one warm-up)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads, in the app and in-process")
    ap.add_argument("--sets", nargs="+", choices=list(SETS), default=list(SETS))
    ap.add_argument("--browser", action="store_true", help="also one Chromium run (Playwright)")
    ap.add_argument("--json", default=None, help="also write the JSON line to this file")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    load0 = round(os.getloadavg()[0], 2)               # other work on the machine skews every number
    from gradio_client import Client
    model, factory = default_catalogue().load("scenes")         # what the app's default backend loads
    runs, browser = {}, None
    log = Path(tempfile.gettempdir()) / "app_latency_app.log"
    with served_app("--threads", str(args.threads), log_path=log) as (proc, url):
        client = Client(url, verbose=False, download_files=False)
        default = Client(url, verbose=False)                        # downloads every file, as a user's client does
        try:
            for name in args.sets:
                runs[name] = interleaved({"app": through_client(client, SETS[name], proc.pid),
                                          "default": through_client(default, SETS[name], proc.pid),
                                          "race": in_process(model, factory, SETS[name]),
                                          "bare": in_process(model, factory, SETS[name], BARE_FPS)}, args.runs)
        finally:
            client.close()
            default.close()
        if args.browser:
            browser = in_browser(url)
    meta = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "runs": args.runs, "threads": args.threads,
            "fps": FPS, "api_fps": app.API_FPS, "cpus": os.cpu_count(),
            "loadavg_1min_start_end": [load0, round(os.getloadavg()[0], 2)], "knobs": KNOB_VALUES}
    text = report(runs, browser, meta)
    print(text)
    if args.json:
        Path(args.json).write_text(text.rsplit("\n", 1)[1] + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
