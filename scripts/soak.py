"""Soak test of the served app: N consecutive runs through gradio_client, watching the server.

    python scripts/soak.py [--runs 200] [--threads 1] [--seed 0] [--cache-age 60] [--fast] [--json out.json]
                           [--trace-memory] [--log app.log]

Starts `python app.py` (specviz.serving.served_app) with its own GRADIO_TEMP_DIR and drives one session the way a
user does, run after run: /generate with two methods drawn from the registry and random λ, δ, τ_pos, τ_seq, seed and
CASCADE budget; two slider previews; every 3rd run a slider re-run (the page's stream); every 4th an opacity change
(with an inspected cell ringed in the maps), a replay step and a Play tick; every 5th an export (zip, figures,
videos); every 7th the last export's traces opened again (/open_traces); every 11th a run cancelled after its first
update. The page's own events are called as the page calls them (by their event index, in the same session as
/generate). Files are not downloaded (`download_files=False`):
the subject is the server.

After each run it records the server's resident memory (VmRSS), open file descriptors, files under its temp dir and
the errors of that run; at the end it prints a table (every run up to 30, then every 10th), the least-squares slope
of RSS over runs 20..N (MB per run), RSS(N) / RSS(20), and one JSON line with everything.

Temp files are bounded by the pruning rule: Gradio deletes the app's cached files older than `age` every `age / 4`
seconds (app.py delete_cache) and every export deletes export folders older than `age` (specviz/render/exports.py).
The app
serves with age 3600 s; the soak passes a short one (SPECVIZ_CACHE_AGE_S, default 60 s) so that pruning happens
within it, and checks after every run that no file older than age + age / 4 + 10 s is left (`stale_files`, expected
0; every export file is also handed to Gradio, which ages it like its own).

--trace-memory counts the server's live Python objects by type after run 20 (or the first) and after the last run
and prints the types whose counts grew (gc; SPECVIZ_TRACEMALLOC=gc, specviz/app/serving.py); --tracemalloc also traces
allocations (about 3x slower) and prints the 15 allocation sites that grew most.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import statistics
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specviz.app.handlers import GEN_INPUTS as KNOBS  # noqa: E402
from specviz.app.handlers import GEN_OUTPUTS, PREVIEWED  # noqa: E402
from specviz.app.serving import served_app  # noqa: E402
from specviz.core import owned  # noqa: E402
from specviz.engine.config import RunConfig  # noqa: E402
from specviz.engine.registry import METHODS  # noqa: E402

FAST = ("ar", "sjd", "mcsjd", "csd")                    # --fast: the chain methods that take about a second each
BASE = 20                                               # the slope and the ratio start at this run
EVERY = {"rerun": 3, "opacity": 4, "export": 5, "open": 7, "cancel": 11}     # run i does it when i % n == 0


# -- the server, from /proc --------------------------------------------------------------------------------------------
def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def temp_files(root: Path) -> list[Path]:
    """The app's files in its temp dir: not the soak's own (soak-*), nor the marks of the app's own folders
    (core/owned.MARK: each goes with its folder at the first export after the pruning age; the root's at exit)."""
    return [p for p in root.rglob("*") if p.is_file() and not p.name.startswith("soak-") and p.name != owned.MARK]


THEIRS = "a,b\n1,2\n"


def bystander(base: Path) -> Path:
    """A folder the app did not make, named like the app's, two hours old, with a file: it must survive the soak
    (its file's name starts with soak-, so it is not counted as one of the app's temp files). Returns the file."""
    f = base / "specviz-my-experiments" / "soak-results.csv"
    f.parent.mkdir(parents=True)
    f.write_text(THEIRS)
    old = time.time() - 7200
    os.utime(f, (old, old))
    os.utime(f.parent, (old, old))
    return f


def stale_files(files: list[Path], after: float, slack: float = 10.0) -> int:
    """Files older (by ctime, as Gradio ages them) than the pruning rule lets any file get, plus `slack`."""
    now, n = time.time(), 0
    for p in files:
        try:
            n += now - p.stat().st_ctime > after + slack
        except FileNotFoundError:                       # pruned while we looked
            pass
    return n


def slope(xs: list, ys: list) -> float:
    """Least-squares slope of ys against xs."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else 0.0


# -- the session -------------------------------------------------------------------------------------------------------
class Session:
    """One gradio_client session that also calls the page's own (private) events, as the page does."""

    def __init__(self, url: str):
        from gradio_client import Client
        self.client = Client(url, verbose=False, download_files=False)
        cfg = self.client.config
        elem = {c["id"]: c.get("props", {}).get("elem_id") for c in cfg["components"]}
        self.events = {(elem.get(t[0]), t[1]): d["id"] for d in cfg["dependencies"] for t in d["targets"]}

    def page(self, elem_id: str, event: str, *args):
        """Call the page's `event` of `elem_id` (State inputs are the session's, as for the page)."""
        i = self.events[(elem_id, event)]
        self.client.endpoints[i].is_valid = True        # gradio_client refuses private events by default
        return self.client.submit(*args, fn_index=i)

    def close(self):
        self.client.close()


def gen_args(knobs: dict) -> list:
    return [knobs[k] for k in KNOBS] + [1.0]


def draw_knobs(rng: random.Random, pool) -> dict:
    return asdict(RunConfig()) | {                          # every knob, quiet ones too (the page sends them all)
        "model": "scenes", "methods": rng.sample(list(pool), 2), "seed": rng.randrange(1000),
        "lam": rng.choice([0.0, 0.25, 0.5, 1.0, 2.0, 4.0]), "delta": round(rng.uniform(0.3, 0.95), 2),
        "tau_pos": round(rng.uniform(0.6, 0.95), 2), "tau_seq": round(rng.uniform(0.6, 0.95), 2),
        "cascade_budget": rng.choice([0.5, 1.0])}


def finished(job, what: str) -> list:
    out = job.result()
    if what.startswith(("generate", "rerun", "open")):
        status = str(out[GEN_OUTPUTS.index("status")])
        if "All done" not in status and "Opened" not in status and "opened" not in status:
            raise RuntimeError(f"{what}: unexpected status {status[:120]!r}")
    return out


def one_run(s: Session, i: int, rng: random.Random, pool, state: dict, every: dict = EVERY) -> list[str]:
    """Run i's actions; returns its errors (one line each)."""
    errors = []

    def act(what, fn):
        try:
            return fn()
        except Exception as e:                              # noqa: BLE001 - every failure is one reported error
            errors.append(f"{what}: {type(e).__name__}: {str(e)[:200]}")
            return None

    knobs = draw_knobs(rng, pool)
    act("generate", lambda: finished(s.client.submit(*gen_args(knobs), api_name="/generate"), "generate"))
    for _ in range(2):                                      # slider previews (moving, not released)
        moved = {k: knobs[k] for k in PREVIEWED} | {"lam": rng.choice([0.5, 1.0, 3.0]),
                                                     "delta": round(rng.uniform(0.3, 0.95), 2)}
        act("preview", lambda m=moved: s.page("lam", "input", *[m[k] for k in PREVIEWED], 1.0).result())
    if i % every["rerun"] == 0:                             # a slider released: the page's re-run stream
        knobs["lam"] = rng.choice([0.5, 1.0, 2.0])
        act("rerun", lambda: finished(s.page("lam", "release", *gen_args(knobs)), "rerun"))
    if i % every["opacity"] == 0:                           # the maps redrawn with an inspected cell ringed
        cell = f"<div class='sv-insp' data-method='{knobs['methods'][0]}' data-pos='{rng.randrange(256)}'>"
        act("opacity", lambda: s.page("opacity", "change", round(rng.uniform(0.2, 1.0), 2), cell).result())
        act("replay", lambda: s.page("replay_step", "change", knobs["methods"][0], 1).result())
        act("play", lambda: s.page(None, "tick", knobs["methods"][0], 5).result())   # one tick of the Play timer
    if i % every["export"] == 0:
        files = act("export", lambda: s.page("export", "click").result())
        if files:                                           # keep the traces, as a user downloads them
            keep = state["dir"] / f"export-{i}"
            keep.mkdir()
            paths = [Path(f["path"] if isinstance(f, dict) else f) for f in files]
            kept = []
            for p in [p for p in paths if p.name.endswith("_trace.json")]:
                with contextlib.suppress(FileNotFoundError):    # an export slower than the pruning age: its first
                    kept.append(str(shutil.copy(p, keep)))      # files may be swept already (the rule at work)
            state["traces"] = kept or state.get("traces")
    if i % every["open"] == 0 and state.get("traces"):
        from gradio_client import handle_file
        act("open", lambda: finished(s.client.submit([handle_file(p) for p in state["traces"]], 1.0,
                                                     api_name="/open_traces"), "open"))
    if i % every["cancel"] == 0:
        def cancel():
            job = s.client.submit(*gen_args(draw_knobs(rng, pool)), api_name="/generate")
            for _ in job:                                   # its first streamed update
                break
            job.cancel()
            deadline = time.monotonic() + 30
            while not job.done() and time.monotonic() < deadline:
                time.sleep(0.05)
        act("cancel", cancel)
    return errors


# -- tracemalloc in the server -----------------------------------------------------------------------------------------
def memory_snapshot(pid: int, path: Path, timeout: float = 60.0) -> dict | None:
    """Ask the server (started with SPECVIZ_TRACEMALLOC set) for its counts: SIGUSR1, then wait for `path`."""
    path.unlink(missing_ok=True)
    os.kill(pid, signal.SIGUSR1)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists() and path.with_suffix(".done").exists():
            path.with_suffix(".done").unlink()
            return json.loads(path.read_text())
        time.sleep(0.2)
    return None


def memory_growth(a: dict, b: dict) -> str:
    lines = [f"live Python objects: {a['objects']} -> {b['objects']}"]
    if a.get("snapshot") and b.get("snapshot"):
        import tracemalloc
        snap_a = tracemalloc.Snapshot.load(a["snapshot"])
        snap_b = tracemalloc.Snapshot.load(b["snapshot"])
        lines.append("allocation sites that grew most (tracemalloc, traceback depth 8, innermost frame first):")
        for st in snap_b.compare_to(snap_a, "traceback")[:15]:
            frames = " <- ".join(f"{Path(f.filename).name}:{f.lineno}" for f in st.traceback[:4])
            lines.append(f"  {st.size_diff / 1024:+9.1f} KiB {st.count_diff:+7d} blocks  {frames}")
    grew = sorted(((n, b["types"].get(n, 0) - a["types"].get(n, 0)) for n in b["types"]), key=lambda t: -t[1])
    lines.append("object types whose counts grew (gc): " + ", ".join(f"{n} +{d}" for n, d in grew[:15] if d > 0))
    return "\n".join(lines)


# -- the soak ----------------------------------------------------------------------------------------------------------
def soak(runs: int, threads: int = 1, seed: int = 0, cache_age: int = 60, pool=tuple(METHODS),
         log_path: str | None = None, trace_memory: str = "", progress=None, every: dict = EVERY) -> dict:
    """Drive the served app for `runs` runs; returns {"rows": [...per run...], "summary": {...}, "memory": str}."""
    progress = progress or (lambda line: print(line, flush=True))
    rng = random.Random(seed)
    tmp = Path(tempfile.mkdtemp(prefix="specviz-soak-"))
    env = {"GRADIO_TEMP_DIR": str(tmp / "gradio"), "SPECVIZ_CACHE_AGE_S": str(cache_age)}
    if trace_memory:
        env |= {"SPECVIZ_TRACEMALLOC": trace_memory, "SPECVIZ_TRACEMALLOC_FILE": str(tmp / "soak-mem.json")}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)                                  # the child inherits them
    rows, snaps, state = [], {}, {"dir": tmp / "soak-downloads"}
    state["dir"].mkdir()
    theirs = bystander(tmp / "gradio")                       # somebody else's folder, named like ours, 2 h old
    stale_after = cache_age + cache_age / 4
    try:
        with served_app("--threads", str(threads), log_path=log_path) as (proc, url):
            s = Session(url)
            try:
                t_start = time.monotonic()
                for i in range(1, runs + 1):
                    t0 = time.monotonic()
                    errors = one_run(s, i, rng, pool, state, every)
                    if proc.poll() is not None:
                        errors.append(f"server exited with code {proc.returncode}")
                    files = temp_files(tmp / "gradio")
                    took = time.monotonic() - t0
                    # the app's own export folders (core/owned.py) go at the first export after the age, not by
                    # Gradio's sweep: their files are aged by that rule (tests/app/test_own_files.py), not this one
                    stale = stale_files([f for f in files if not any(q.name.startswith("specviz-app-")
                                                                     for q in f.parents)], stale_after)
                    row = {"run": i, "seconds": round(took, 2), "rss_mb": round(rss_mb(proc.pid), 1),
                           "fds": open_fds(proc.pid), "temp_files": len(files), "stale_files": stale,
                           "errors": errors, "elapsed_s": round(time.monotonic() - t_start, 1)}
                    rows.append(row)
                    progress(f"run {i}: {row['seconds']} s, RSS {row['rss_mb']} MB, fds {row['fds']}, "
                             f"temp files {row['temp_files']} (stale {stale}), errors {len(errors)}"
                             + (f": {errors}" if errors else ""))
                    if trace_memory and i in (min(BASE, runs), runs):
                        snaps[i] = memory_snapshot(proc.pid, tmp / "soak-mem.json")
            finally:
                s.close()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    result = {"rows": rows, "summary": summarize(rows, cache_age) | {"bystander_kept": theirs.read_text() == THEIRS},
              "temp_dir": str(tmp)}
    if len(snaps) == 2 and all(snaps.values()):
        a, b = (snaps[k] for k in sorted(snaps))
        result["memory"] = memory_growth(a, b)
    return result


def summarize(rows: list, cache_age: int) -> dict:
    base = [r for r in rows if r["run"] >= BASE] or rows
    xs, ys = [r["run"] for r in base], [r["rss_mb"] for r in base]
    return {"runs": len(rows), "errors": sum(len(r["errors"]) for r in rows),
            "rss_slope_mb_per_run": round(slope(xs, ys), 4) if len(base) > 1 else 0.0,
            "rss_first_mb": rows[0]["rss_mb"], "rss_base_mb": base[0]["rss_mb"], "rss_last_mb": rows[-1]["rss_mb"],
            "rss_last_over_base": round(rows[-1]["rss_mb"] / base[0]["rss_mb"], 4),
            "rss_max_mb": max(r["rss_mb"] for r in rows),
            **window_growth(rows),
            "fds_min_max": [min(r["fds"] for r in rows), max(r["fds"] for r in rows)],
            "fds_base_last": [base[0]["fds"], rows[-1]["fds"]],
            "temp_files_max": max(r["temp_files"] for r in rows), "temp_files_last": rows[-1]["temp_files"],
            "stale_files_max": max(r["stale_files"] for r in rows), "cache_age_s": cache_age,
            "seconds_total": rows[-1]["elapsed_s"], "seconds_median": statistics.median(r["seconds"] for r in rows)}


def window_growth(rows: list, first=(10, 30), last=20) -> dict:
    """Mean RSS over runs 10..30 and over the last `last` runs, and the growth between them in percent."""
    a = [r["rss_mb"] for r in rows if first[0] <= r["run"] <= first[1]]
    b = [r["rss_mb"] for r in rows[-last:]]
    if len(rows) < first[1] + last or not a:
        return {}
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    return {"rss_mean_10_30_mb": round(ma, 1), f"rss_mean_last{last}_mb": round(mb, 1),
            "rss_growth_pct": round(100 * (mb / ma - 1), 2)}


def table(rows: list) -> str:
    lines = ["| run | s | RSS MB | fds | temp files | stale | errors |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["run"] <= 30 or r["run"] % 10 == 0 or r["errors"] or r is rows[-1]:
            lines.append(f"| {r['run']} | {r['seconds']} | {r['rss_mb']} | {r['fds']} | {r['temp_files']} | "
                         f"{r['stale_files']} | {len(r['errors'])} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1, help="torch threads in the app")
    ap.add_argument("--seed", type=int, default=0, help="seeds the draw of methods, knobs and seeds")
    ap.add_argument("--cache-age", type=int, default=60, help="the pruning age in seconds (the app serves 3600)")
    ap.add_argument("--fast", action="store_true", help=f"draw methods from {', '.join(FAST)} only")
    ap.add_argument("--trace-memory", action="store_true", help="count the server's objects by type; print what grew")
    ap.add_argument("--tracemalloc", action="store_true", help="also trace allocations in the server (slow)")
    ap.add_argument("--log", default=None, help="the server's output goes here")
    ap.add_argument("--json", default=None, help="also write the JSON line to this file")
    args = ap.parse_args(argv)
    res = soak(args.runs, args.threads, args.seed, args.cache_age, FAST if args.fast else tuple(METHODS),
               args.log, "1" if args.tracemalloc else "gc" if args.trace_memory else "")
    meta = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpus": os.cpu_count(),
            "loadavg": [round(x, 2) for x in os.getloadavg()], "args": vars(args)}
    print(table(res["rows"]))
    sm = res["summary"]
    print(f"\n{sm['runs']} runs in {sm['seconds_total']} s, {sm['errors']} errors; RSS {sm['rss_first_mb']} MB "
          f"after run 1, {sm['rss_base_mb']} MB after run {BASE}, {sm['rss_last_mb']} MB after run {sm['runs']} "
          f"(x{sm['rss_last_over_base']}; slope over runs {BASE}..{sm['runs']}: {sm['rss_slope_mb_per_run']} "
          "MB/run); "
          f"fds {sm['fds_min_max'][0]}-{sm['fds_min_max'][1]}; temp files max {sm['temp_files_max']}, last "
          f"{sm['temp_files_last']}, stale max {sm['stale_files_max']} (age {sm['cache_age_s']} s); "
          f"somebody else's folder in the temp dir {'kept' if sm['bystander_kept'] else 'DELETED'}")
    if "rss_growth_pct" in sm:
        print(f"RSS mean over runs 10-30 {sm['rss_mean_10_30_mb']} MB, over the last 20 {sm['rss_mean_last20_mb']} MB: "
              f"{sm['rss_growth_pct']:+.2f} %")
    if "memory" in res:
        print(res["memory"])
    line = json.dumps({"meta": meta, **res})
    print(line)
    if args.json:
        Path(args.json).write_text(line + "\n")
    return 0 if sm["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
