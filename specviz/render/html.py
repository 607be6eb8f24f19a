"""Small HTML fragments for the app: lane counters, the token inspector, the preview table, the summary rows.
Pure string building over trace views; no Gradio."""
from __future__ import annotations

from html import escape

from specviz.analysis import context, paired, views
from specviz.core.cards import Cards
from specviz.core.numbers import gib
from specviz.render.draw import DECISION_LABEL, DECISION_RGB
from specviz.render.knob_text import knob_caption
from specviz.render.lane_view import LaneView
from specviz.render.verdict import context_line, first_change, num, plain, verdict

SUMMARY_HEADERS = ["method", "target forwards", "step compression", "mean accepted", "relaxed", "rejected",
                   "Σ per-token TV cost (bound on the image's TV)", "mean per judged token",
                   "rule's promised Σ", "implausible codes (target q < 0.001)", "time s"]


NBSP = "\u00a0"                      # a number and its unit never wrap apart in a narrow lane ("5.83" / "s")


def lane_stats(v: LaneView, cards: Cards) -> str:
    """The counters under one race panel (`cards`: the methods' cards)."""
    state = (f"<span class='sv-done'>✓ done at forward {v.forwards}</span>" if v.done
             else f"<span class='sv-run'>● forward {v.forwards}</span>")
    drafter = f"<br><span class='sv-sub'>drafter: {escape(v.drafter)}</span>" if v.drafter else ""
    knobs = f"<div class='sv-knobs'>{knob_caption(v.method, v.config, cards) or 'no knobs'}</div>" if v.config else ""
    knobs += vs_ar(v.method, v.vs_ar)
    grid = f" data-grid='{v.grid[0]}x{v.grid[1]}'" if v.grid else ""   # app/keys.py reads it
    return (f"<div class='sv-lane'{grid}>{knobs}<span class='sv-kind'>{escape(cards.of(v.method).summary)}{drafter}"
            f"<br></span>{state}<br>"
            f"<span class='sv-count'>{v.committed}/{v.positions} tokens · </span>"
            f"<b>{v.compression:.2f}×</b><span class='sv-words'> step compression</span>"
            f"<span class='sv-secs'> · {v.seconds:.2f}{NBSP}s{_engine_part(v)}</span>"
            f"{_lane_memory(v)}</div>")


def _engine_part(v: LaneView) -> str:
    """', engine 0.12 s': of the lane's seconds, those outside the target's forwards ('' when not measured)."""
    if v.engine_seconds is None:
        return ""
    return (f"<span class='sv-engine' title='work of the decoder itself (drafting, the rules, the record); the rest "
            f"of the time is in the forwards of the target'>, engine{NBSP}{v.engine_seconds:.2f}{NBSP}s</span>")


def peak_words(cuda: bool) -> str:
    """What a peak figure is: on CUDA the run's own peak; on the CPU the process's peak RSS (never reset)."""
    return "peak" if cuda else "process peak"


def _lane_memory(v) -> str:
    """' · peak 1.23 GiB' (CUDA) / ' · process peak 1.23 GiB' (CPU); '' when nothing was measured (opened traces)."""
    if v.mem_peak is None:
        return ""
    return f"<span class='sv-mem'> · {peak_words(v.mem_cuda)} {gib(v.mem_peak).replace(' ', NBSP)}</span>"


def memory_line(used) -> str:
    """' · memory in use X · peak Y' for the status line (used: (in use, peak, cuda) or None: '')."""
    if used is None:
        return ""
    in_use, peak, cuda = used
    return f"<span class='sv-mem'> · memory in use {gib(in_use)} · {peak_words(cuda)} {gib(peak)}</span>"


def vs_ar(method: str, changed: int | None) -> str:
    """Under keyed noise, the lane's word on AR's image of the same race (paired.vs_ar_words), '' when none."""
    words = paired.vs_ar_words(method, changed)
    return f"<div class='sv-vsar {'sv-same' if changed == 0 else 'sv-changed'}'>{words}</div>" if words else ""


def status(tick: int, lanes, done: bool, elapsed: float, used=None) -> str:
    """The race's status line; `used`: (bytes in use, peak bytes, on CUDA?) measured for this race, or None."""
    left = [v.method for v in lanes if not v.done]
    if done:
        return (f"<div class='sv-status'>All done: {tick} ticks of the common clock in {elapsed:.1f} s."
                f"{memory_line(used)}</div>")
    return (f"<div class='sv-status'>Clock: tick {tick} — each method still running makes one target forward "
            f"per tick · running: {', '.join(left)}{memory_line(used)}</div>")


def opened(methods: list, prompt: str, note: str) -> str:
    return (f"<div class='sv-status'>Opened traces of {escape(', '.join(methods))} for "
            f"<i>{escape(prompt[:200])}</i> — {escape(note)}.</div>")


REPLAY_PENDING = "*The replay opens when the run finishes.*"
STOPPED = "<div class='sv-status'>Stopped. Press Generate to start again.</div>"


def summary_rows(traces: dict) -> list[list]:
    rows = []
    for m, t in traces.items():
        s = t.summary
        rows.append([m, s["target_forwards"], round(_compression(s), 3), round(s["mean_accepted"], 3),
                     s["relaxed"], s["rejected"], round(s["tv_cost"], 4), _opt(s.get("tv_cost_mean")),
                     _opt(s.get("tv_bound")), t.implausible(),
                     round(sum(st.seconds for st in t.steps), 3)])
    return rows


def _compression(s: dict) -> float:
    """Tokens per target forward from the counts (the summary's own figure is already rounded to 4 places, and
    rounding it again to 3 can differ from History's: 256/124 -> 2.0645 -> 2.064, not 2.065)."""
    return s["tokens"] / max(1, s["target_forwards"]) if "tokens" in s else s["step_compression"]


def _opt(v) -> object:
    """A summary number that older traces (or rules without a promise) lack: '—'."""
    return "—" if v is None else round(v, 4)


def _chip(decision: str) -> str:
    r, g, b = DECISION_RGB[decision]
    return (f"<span class='sv-chip' style='background:rgb({r},{g},{b})'></span>"
            f"{escape(DECISION_LABEL[decision])}")


def _bar(label: str, value: float, colour: str) -> str:
    w = max(0.0, min(1.0, value)) * 100
    return (f"<div class='sv-bar'><span class='sv-bl'>{label}</span><span class='sv-bt'>"
            f"<span style='width:{w:.1f}%;background:{colour}'></span></span><span class='sv-bv'>{num(value)}</span>"
            f"</div>")


def inspector(trace, pos: int, cards: Cards) -> str:
    """p vs q, acceptance, entropy, TV and the decision history at one position (docs/design.md §6); the method's
    card (of `cards`) gives its relaxation, reading and inspector lines."""
    r, c = divmod(pos, trace.grid[1])
    hist = views.attempts(trace, pos)
    head = (f"<div class='sv-insp' data-method='{escape(trace.method)}' data-pos='{pos}'>"
            f"<span class='sv-close' title='close (Escape)'>×</span>"
            f"<h4>{escape(trace.method)} · row {r}, column {c} (position {pos})</h4>")
    if not hist:
        return head + "<p>Nothing was decided here yet.</p></div>"
    judged = [a for a in hist if a.event.decision in views.JUDGED]
    key = judged[-1] if judged else hist[-1]
    right = _history(hist) + (_members(key, group_reading(trace.method, trace.config, cards)) if key.members else "")
    left = (_numbers(hist, key, len(judged)) + explain(trace.method, trace.config, key.event, cards)
            + reading(trace.method, trace.config, cards))
    said = plain(key.event, first_change(trace))
    saw = context.seen(trace, pos) if context.out_of_raster(trace) else None     # zipar, pjd: what it saw
    said += f" {context_line(saw)}" if saw is not None else ""
    return (f"{head}<p class='sv-plain'>{escape(said)}</p>{verdict_line(trace.method, hist, key, cards)}"
            f"<div class='sv-cols'><div>{left}</div><div>{right}</div>"
            "</div></div>")


def verdict_line(method: str, hist, key, cards: Cards) -> str:
    """What decided this cell, in one paragraph from the recorded numbers (render/verdict.py): the deciding draft's
    verdict, then the committed token's when another event committed it (a resample, a bonus)."""
    parts = [verdict(key.event, cards.of(method).relaxation or "the rule's relaxation").text()]
    final = next((a for a in reversed(hist) if a.event.commits), None)
    if final is not None and final is not key:
        parts.append(verdict(final.event).text())
    return f"<p class='sv-verdict' id='sv-verdict'>{escape(' '.join(parts))}</p>"


def reading(method: str, config: dict, cards: Cards) -> str:
    """Which reading of the paper this trace ran: the method's text-valued knobs (GSD mode, LANTERN residual)."""
    m = cards.of(method)
    modes = [f"{k.flag} {config.get(k.name, k.default)}" for k in m.rule_knobs if k.kind is str]
    return (f"<p class='sv-sub'>Reading: {escape(m.reading)}" + (f" — ran with {escape(', '.join(modes))}" if modes
                                                                 else "") + "</p>") if m.reading else ""


def explain(method: str, config: dict, event, cards: Cards) -> str:
    """The line the method's card adds under the numbers (its record's `explain` hook: CSD's units, CASCADE's
    budget)."""
    m = cards.of(method)
    text = m.explain(config, event) if m.explain is not None else ""
    return f"<p class='sv-sub'>{escape(text)}</p>" if text else ""


def group_reading(method: str, config: dict, cards: Cards) -> str:
    """How the run formed its groups (the card's `group_reading` hook), for the candidates table."""
    m = cards.of(method)
    return m.group_reading(config) if m.group_reading is not None else ""


def _numbers(hist, key, n_judged: int) -> str:
    final = next((a for a in reversed(hist) if a.event.commits), None)
    e = key.event
    lines = []
    if final is not None:
        lines.append(f"<p>Final token <b>{final.event.token}</b>: {_chip(final.event.decision)} at target "
                     f"forward {final.step}. {n_judged} draft(s) judged here.</p>")
    lines.append(f"<p class='sv-sub'>Deciding draft: token {e.token} at forward {key.step} — "
                 f"{'point-mass draft' if e.point_mass else 'sampled draft'}</p>")
    if e.decision in views.JUDGED:                      # a draft was judged: its laws, ratio and acceptance
        lines += [_bar("p(x) draft", e.p_draft, "#3b7dd8"), _bar("q(x) target", e.p_target, "#2ea043"),
                  _bar("min(1, q/p)", e.exact_prob, "#8c959f"), _bar("b accept", e.accept_prob, "#f2a900"),
                  _bar("TV(p, q)", e.tv, "#9a3fb5"), _bar("TV(p, r)", e.tv_residual, "#c77dde")]
    else:                                               # sampled, not judged: only the target law speaks
        lines.append(_bar("q(x) target", e.p_target, "#2ea043"))
    lines.append(_bar("TV cost", e.tv_cost, "#d73027"))
    lines.append("<p class='sv-sub'>TV(p, q): draft law against the target law q; TV(p, r): against the law the draft "
                 "was judged with (later tree siblings: the running residual r; otherwise r = q). TV cost: TV(o, q) of "
                 "the output law" + (" of the level's whole sibling walk" if e.parent >= 0 else "") + ".</p>")
    lines.append(f"<p class='sv-sub'>H(q) = {e.entropy:.3f} nats (normalised {e.entropy_norm:.3f})"
                 + (f"; uniform u = {e.u:.3f}" if e.u >= 0 else "") + "</p>")
    return "\n".join(lines)


def _history(hist) -> str:
    rows = "".join(f"<tr><td>{a.step}</td><td>{a.event.level}</td><td>{a.event.token}</td>"
                   f"<td>{_chip(a.event.decision)}</td><td>{_judged(a.event, a.event.p_draft)}</td>"
                   f"<td>{num(a.event.p_target)}</td><td>{_judged(a.event, a.event.accept_prob)}</td>"
                   f"<td>{_judged(a.event, a.event.tv)}</td><td>{_judged(a.event, a.event.tv_residual)}</td>"
                   f"<td>{num(a.event.tv_cost)}</td></tr>" for a in hist)
    return ("<p class='sv-sub'>Every event at this position, in order (fwd: target forward; lvl: draft level)</p>"
            "<table class='sv-t'><tr><th>fwd</th><th>lvl</th><th>token</th><th>decision</th><th>p(x)</th><th>q(x)</th>"
            f"<th>b</th><th>TV(p,q)</th><th>TV(p,r)</th><th>cost</th></tr>{rows}</table>")


def _judged(e, v: float) -> str:
    """A draft-side number: '—' for a token that was sampled rather than judged (no draft, no b)."""
    return num(v) if e.decision in views.JUDGED else "—"


_EMPTY = "<tr><td colspan=7>no member: the group is empty</td></tr>"


def _members(a, how: str) -> str:
    rows = "".join(f"<tr><td>{n}</td><td>{'?' if lv < 0 else lv}</td><td>{tok}</td><td>{num(q)}</td><td>{cos:.3f}</td>"
                   f"<td>{'—' if cc <= -1 else f'{cc:.3f}'}</td><td>{'I' if i else ''}{'C' if cv else ''}</td></tr>"
                   for n, tok, q, cos, cc, lv, i, cv in a.members if i or cv)      # members only
    return (f"<p class='sv-sub'>Group of node {a.event.node} (level {a.event.level}): other draft-tree nodes whose "
            "tokens count as alternatives for this same position — I = interchangeable (same tree level), "
            f"C = convergent (a consecutive level); not neighbouring image cells. Sets: {escape(how)}</p>"
            "<table class='sv-t'><tr><th>node</th><th>level</th><th>token</th><th>q(token) here</th><th>cos</th>"
            f"<th>child cos</th><th>group</th></tr>{rows or _EMPTY}</table>")


def either(words: list) -> str:
    """'λ, δ, τ_pos or τ_seq': the words as one phrase of alternatives ('a slider' when there are none)."""
    return " or ".join(filter(None, (", ".join(words[:-1]), words[-1]))) if words else "a slider"


def preview_table(previews: list, knobs, cards: Cards) -> str:
    def mean(v):
        return sum(v) / len(v) if v else 1.0
    tunable = cards.rescorable()                                                      # the cards that say so
    rows = "".join(
        f"<tr><td>{p.method}</td><td>{'yes' if p.tunable else 'no'}</td><td>{p.recorded_compression:.2f}×</td>"
        f"<td>{mean(p.baseline_len):.2f} → <b>{mean(p.expected_len):.2f}</b></td>"
        f"<td>{p.baseline_compression:.2f}× → <b>{p.expected_compression:.2f}×</b></td></tr>" for p in previews)
    return (f"<div class='sv-prev'><b>Preview: an estimate</b> — the drafts this run recorded, re-scored under the "
            "new knobs, with no model run. A re-run drafts anew (new drafts follow from new accepts), so what it "
            "achieves can differ; the History tab keeps both. <i>run achieved</i> is this run's tokens per forward; "
            "<i>E[step compression]</i> is the expectation over the acceptance draws, at the recorded knobs → at the "
            "new ones (the recorded run is one draw, so the first number need not equal it). "
            f"{', '.join(f'{k.sym} = {knobs[k.name]:.2f}' for k in cards.sliders)}. "
            "Release the slider (or press Enter in its box) to re-run. Expected values re-score only the drafts the "
            "run judged "
            f"(recorded knobs → new knobs); only {escape(', '.join(tunable))} depend on these knobs. Group-forming "
            "rules (CASCADE) re-run each level's walk and the step's TV budget on the recorded masses; the groups of "
            "siblings after an accepted one are not recorded and count as lossless."
            "<table class='sv-t'><tr><th>method</th><th>uses knobs</th><th>run achieved</th>"
            "<th>E[tokens / step]</th><th>E[step compression]</th></tr>"
            f"{rows}</table></div>")


def outcome_table(rows: list) -> str:
    """After a slider re-run: per method, the previous run, the preview's estimate for the new knobs and what the
    re-run achieved (analysis.preview.outcomes)."""
    if not rows:
        return ""
    body = "".join(f"<tr><td>{o.method}</td><td>{o.before:.2f}×</td><td>{o.predicted:.2f}×</td>"
                   f"<td><b>{o.achieved:.2f}×</b></td><td>{o.achieved - o.predicted:+.2f}×</td></tr>" for o in rows)
    return ("<div class='sv-prev'><b>Re-run: predicted vs achieved</b> — the preview's estimate (the previous run's "
            "drafts re-scored under the new knobs) beside what the re-run achieved with drafts of its own. The "
            "History tab keeps both runs.<table class='sv-t'><tr><th>method</th><th>before</th><th>predicted</th>"
            f"<th>achieved</th><th>achieved − predicted</th></tr>{body}</table></div>")


CSS = """
.sv-lane {font-size: 13px; line-height: 1.35; padding: 2px 4px;}
.sv-done {color: #1a7f37; font-weight: 600;}
.sv-run {color: #bf8700; font-weight: 600;}
.sv-status {font-size: 13px; color: #444;}
.sv-kind {color: #666; font-size: 12px;}
.sv-insp h4 {margin: 0 0 4px 0;}
.sv-cols {display: grid; grid-template-columns: minmax(260px, 1fr) minmax(260px, 1fr); gap: 20px;}
.sv-sub {color: #555; font-size: 12px; margin: 4px 0;}
.sv-chip {display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px;}
.sv-bar {display: flex; align-items: center; font-size: 12px; margin: 2px 0;}
.sv-bl {width: 95px;} .sv-bv {width: 60px; text-align: right; font-family: monospace;}
.sv-bt {flex: 1; height: 10px; background: #eee; border-radius: 3px; overflow: hidden; display: flex;}
.sv-bt span {display: block; height: 100%;}
.sv-t {font-size: 12px; border-collapse: collapse; margin-top: 4px;}
.sv-t td, .sv-t th {padding: 1px 6px; border-bottom: 1px solid #eee; text-align: right;}
.sv-prev {font-size: 13px;}
"""
