"""How long the Export button takes for the default four methods on the embedded model (slide figure, images, traces,
maps, the race as GIF + MP4, one zip), medians of --runs exports of one finished run, plus the film's frame counts
and file sizes. Prints a Markdown table and one JSON line.

    python scripts/export_time.py [--runs 3] [--threads 1]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

import app  # noqa: E402
from specviz.analysis.cards import cards  # noqa: E402
from specviz.app.configs import make_configs  # noqa: E402
from specviz.app.race import race  # noqa: E402
from specviz.engine.drafters import drafter_factory  # noqa: E402
from specviz.models import load_model  # noqa: E402
from specviz.render import exports, video  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model = load_model("scenes")
    cfgs = make_configs(app.DEFAULT_METHODS, prompt=app.EXAMPLES[0], seed=0)
    *_, last = race(model, drafter_factory(model), cfgs, fps=1000)
    secs, film = [], {}
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            paths = exports.export_run(last.traces, last.images, app.EXAMPLES[0], tmp, cards=cards())
            secs.append(time.perf_counter() - t0)
            film = {p.suffix: p.stat().st_size for p in paths if p.suffix in (".gif", ".mp4", ".zip")}
    out = {"methods": app.DEFAULT_METHODS, "export_s_median": round(statistics.median(secs), 2),
           "export_s": [round(s, 2) for s in secs], "gif_frames": video.frame_count(last.traces, "gif"),
           "mp4_frames": video.frame_count(last.traces, "mp4"), "bytes": film, "threads": args.threads}
    print("| methods | export s (median) | GIF frames | MP4 frames | GIF MB | MP4 MB | zip MB |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {', '.join(out['methods'])} | {out['export_s_median']} | {out['gif_frames']} | {out['mp4_frames']} | "
          f"{film['.gif'] / 1e6:.2f} | {film['.mp4'] / 1e6:.2f} | {film['.zip'] / 1e6:.2f} |")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
