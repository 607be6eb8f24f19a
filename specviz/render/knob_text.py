"""The tuning bench's words: the knob values each lane ran with (its header line) and the one-line "predicted vs
achieved" the status carries after a slider re-run. Pure strings over records; no Gradio."""
from __future__ import annotations

from html import escape

from specviz.core.cards import Cards


def knob_values(method: str, config: dict, cards: Cards) -> list[tuple[str, object]]:
    """(symbol, value) of every numeric knob the method's rule reads, as the run's config recorded it (a slider knob
    first, in the registry's order: its card's). Empty for a rule without knobs (AR, SJD, SD) or an unregistered
    method."""
    return [(k.sym, config.get(k.name, k.default)) for k in cards.of(method).rule_knobs if k.kind is not str]


def knob_caption(method: str, config: dict | None, cards: Cards) -> str:
    """'λ 0.5 · δ 0.5' for the lane header, each pair unbroken ('' when the rule has no knobs or no config is
    known)."""
    if not config:
        return ""
    pairs = knob_values(method, config, cards)
    return " · ".join(f"<span class='sv-kv'>{escape(s)} {v:g}</span>" for s, v in pairs)


def outcome_line(rows: list, cards: Cards) -> str:
    """After a slider re-run, one line: for each method whose rule the sliders tune (its record re-scores drafts),
    step compression before → predicted → achieved (analysis.preview.outcomes rows); the others' achieved value
    only. '' when there is nothing to compare."""
    if not rows:
        return ""
    tuned = [o for o in rows if cards.of(o.method).rescorable]
    rest = [o for o in rows if not cards.of(o.method).rescorable]
    parts = [f"<span class='sv-kv'>{escape(o.method)} {o.before:.2f}× → {o.predicted:.2f}× → "
             f"<b>{o.achieved:.2f}×</b></span>" for o in tuned]
    if rest:
        parts.append("not tuned by these knobs: " + ", ".join(f"<span class='sv-kv'>{escape(o.method)} "
                                                               f"{o.achieved:.2f}×</span>" for o in rest))
    return ("<div class='sv-outcome' id='sv-outcome'>Re-run, step compression before → predicted → <b>achieved</b>: "
            f"{' · '.join(parts)}</div>")

