"""The inspector's plain-words first line against the events it describes: the token, the chance b and the draw u
as the percentages of the recorded numbers, the outcome word matching the recorded decision; under keyed noise AR's
keyed token, b, min(1, q/p), J/p and the chance c (tests/render/test_plain_keyed.py checks them against AR's own
trace) — and no number that is not recorded. Every event of AR, lossless and relaxed runs, papers' and keyed noise."""
import re

from specviz.analysis.cards import cards
from specviz.render import html, verdict
from specviz.render.verdict import num, pair
from tests.render.test_primer import NOISES, traces

OUTCOME = {"exact": "kept", "relaxed": "kept", "rejected": "thrown away", "ar": "drew token",
           "bonus": "at no extra cost", "resampled": "thrown away"}


def plain_says_the_recorded_event():
    seen = set()
    for noise, runs in zip(NOISES, map(traces, NOISES)):
        for m, t in runs.items():
            for _, ev in t.events():
                text = verdict.plain(ev)   # looked up at call time, so a mutant replaces it
                seen.add((noise, ev.decision))
                assert text.startswith("In plain words: "), text
                assert f"token {ev.token}" in text and OUTCOME[ev.decision] in text, (noise, m, ev, text)
                nums = {str(ev.token)}
                if ev.target_sample is not None and ev.decision in ("exact", "relaxed", "rejected"):
                    assert f"AR drew token {ev.target_sample} here" in text, text    # no first change given
                    nums |= {str(ev.target_sample), "0", "1", num(ev.accept_prob), num(ev.exact_prob),
                             num(ev.coupled_prob), *pair(ev.u, verdict.excess(ev.accept_prob, ev.exact_prob))}
                    assert ("differs from AR's" in text) == (ev.decision == "relaxed"), text
                elif ev.decision in ("exact", "relaxed", "rejected"):
                    su, sb = pair(100 * ev.u, 100 * ev.accept_prob)
                    assert f"a {sb} % chance of being kept, the random draw came up {su} %" in text, text
                    nums |= {su, sb}
                    if ev.decision == "relaxed":
                        sx = pair(100 * ev.u, 100 * ev.exact_prob)[1]
                        assert f"would have been {sx} %" in text, text
                        nums.add(sx)
                    else:
                        assert "losslessly" not in text, text
                written = set(re.findall(r"\d+(?:\.\d+)?(?:e-?\d+)?", text))
                assert written <= nums, (noise, m, written - nums, text)
    return seen


def test_the_plain_line_says_the_recorded_event():
    seen = plain_says_the_recorded_event()
    for d in ("exact", "relaxed", "rejected"):          # both noises reach every judged outcome
        assert ("papers", d) in seen and ("keyed", d) in seen, seen


def test_the_inspector_opens_with_the_plain_line():
    t = traces("papers")["csd"]
    pos = next(ev.pos for _, ev in t.events() if ev.decision == "relaxed")
    page = html.inspector(t, pos, cards())
    assert page.index("class='sv-plain'") < page.index("sv-verdict"), page[:400]
    assert "In plain words: " in page
