"""`specviz bench --table paper`: one row per method in the layout the speculative-decoding papers for AR image
models use (docs/benchmarks.md), from a bench result (bench.measure plus bench_cli's CLIP / FID):

- latency speedup: the median over images of AR's wall time / the method's, both from the same run, paired by
  (prompt, seed) (bench.aggregate's speedup_vs_ar); beside it, what one image's time was made of: the median seconds
  inside the target's prefill and forwards, and the median of the rest, the engine's own work (drafting, the rules,
  the record: engine/clock.py; on CUDA the clock waits for the device before each reading);
- step compression: the mean over images of image positions / target forwards;
- mean accepted length and per-position acceptance as vLLM's speculative-decoding log reports them, over the
  verification steps of every image pooled: mean accepted length = committed tokens / steps (vLLM's
  1 + accepted / drafts); the rate at draft position i (1, 2, ...) = the share of steps that committed at least
  i + 1 tokens (the step's own token plus i accepted drafts);
- CLIP (100 x max(cos, 0), mean over images), FID, and the peak memory of the method's images (quality.py,
  core.memory).
"""
from __future__ import annotations

import numpy as np

from specviz.analysis.bench import parse_spec
from specviz.core.numbers import gib
from specviz.engine import registry

SHOWN_POSITIONS = 6          # the Markdown shows the first rates; the JSON has them all


def acceptance(hist: list[int]) -> tuple[float | None, list[float]]:
    """(mean accepted length, per-position acceptance rates) from a pooled accepted-length histogram."""
    h = np.asarray(hist, float)
    steps = h.sum()
    if steps == 0:
        return None, []
    mean = float((np.arange(len(h)) * h).sum() / steps)
    rates = [float(h[i + 1:].sum() / steps) for i in range(1, len(h) - 1)]
    return round(mean, 4), [round(r, 4) for r in rates]


def rows(res: dict) -> list[dict]:
    """One row per method spec. A method that drafts nothing (its card: AR, ZipAR's rows in parallel) has no
    acceptance at a draft position: its steps' extra tokens are other rows' samples, not accepted drafts."""
    out = []
    for m, a in res["methods"].items():
        mean, rates = acceptance(a["accepted_hist"])
        record = registry.REGISTRY.get(parse_spec(m)[0])           # a name no longer registered: as if it drafts
        rates = rates if record is None or record.family.drafts else []
        out.append({"method": m, "images": a["images"],
                    "latency_speedup": 1.0 if m == "ar" else a.get("speedup_vs_ar"),
                    "forward_seconds": a.get("forward_seconds"), "engine_seconds": a.get("engine_seconds"),
                    "step_compression": a["step_compression_mean"], "mean_accepted_length": mean,
                    "acceptance_per_position": rates, "accepted_hist": a["accepted_hist"],
                    "clip": a.get("clip"), "fid": a.get("fid"), "peak_memory_bytes": a.get("peak_memory")})
    return out


def _cell(v, fmt="{}") -> str:
    return "" if v is None else fmt.format(v)


def markdown(res: dict) -> str:
    head = ["method", "latency speedup", "forward s", "engine s", "step compression", "mean accepted length",
            f"acceptance at draft position 1..{SHOWN_POSITIONS} (vLLM)", "CLIP", "FID", "peak memory", "images"]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for r in rows(res):
        rates = r["acceptance_per_position"]
        shown = " ".join(f"{x:.2f}" for x in rates[:SHOWN_POSITIONS]) + (" ..." if len(rates) > SHOWN_POSITIONS else "")
        cells = [r["method"], _cell(r["latency_speedup"], "{:.2f}x"), _cell(r["forward_seconds"], "{:.3f}"),
                 _cell(r["engine_seconds"], "{:.3f}"), _cell(r["step_compression"], "{:.2f}x"),
                 _cell(r["mean_accepted_length"], "{:.2f}"), shown, _cell(r["clip"], "{:.2f}"),
                 _cell(r["fid"], "{:.2f}"), _cell(r["peak_memory_bytes"] and gib(r["peak_memory_bytes"])),
                 str(r["images"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
