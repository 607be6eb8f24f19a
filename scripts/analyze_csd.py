"""Why does (or doesn't) CSD beat SJD? Per judged Jacobi slot: fresh (point-mass) vs refined drafts, how often the
TV filter opens, the entropy there, and the acceptance each kind gets.

python scripts/analyze_csd.py --prompts 8 --set lam=0.4 delta=0.95
"""
import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from specviz.analysis import bench  # noqa: E402
from specviz.engine.config import RunConfig  # noqa: E402
from specviz.models import load_model  # noqa: E402
from specviz.models.runner import run  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--set", nargs="*", default=[])
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    over = {k: bench.cast_knob(v) for k, v in (s.split("=", 1) for s in args.set)}
    model = load_model("scenes")
    stats = {}
    for method in ("sjd", "csd"):
        kinds = {"fresh": [], "refined": []}
        sc = []
        for i, (caption, _) in enumerate(bench.prompt_set(args.prompts)):
            cfg = RunConfig(**({"method": method, "prompt": caption, "seed": i} | over))
            t = run(cfg, model=model)
            sc.append(t.summary["step_compression"])
            for s in t.steps:
                for e in s.events:
                    if e.decision in ("exact", "relaxed", "rejected"):
                        kinds["fresh" if e.point_mass else "refined"].append(e)
        out = {"step_compression_median": statistics.median(sc)}
        for k, evs in kinds.items():
            if not evs:
                continue
            gate = cfg.delta
            out[k] = {"judged": len(evs), "accepted": round(sum(e.decision != "rejected" for e in evs) / len(evs), 3),
                      "relaxed": round(sum(e.decision == "relaxed" for e in evs) / len(evs), 3),
                      "tv_below_delta": round(sum(e.tv < gate for e in evs) / len(evs), 3),
                      "mean_tv": round(statistics.mean(e.tv for e in evs), 3),
                      "mean_entropy_norm": round(statistics.mean(e.entropy_norm for e in evs), 3),
                      "mean_q_x": round(statistics.mean(e.p_target for e in evs), 3)}
        stats[method] = out
    print(json.dumps(stats, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
