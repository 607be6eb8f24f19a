"""Same image as AR, in the race: with noise = keyed the lossless lanes say "identical to AR ✓" and the relaxed lanes
how many tokens changed, both checked here against AR's tokens of the same race (not assumed); with the papers'
noise, or without an AR lane, no lane claims anything about AR."""
import re

from specviz.analysis import paired
from specviz.app.handlers import Handlers
from specviz.render import html
from tests.support.apptools import knob_inputs, tiny_backend

METHODS = ["ar", "sjd", "mcsjd", "csd"]


def final(noise: str, methods: tuple = tuple(METHODS)) -> dict:
    """The final update of a fresh race (not cached: the mutation check runs it with a wrong variant installed); a
    frame every forward, so the lanes finish at different frames, as in the browser."""
    h = Handlers(tiny_backend()[0], fps=1e9)
    return list(h.generate(knob_inputs(list(methods), seed=5, noise=noise, lam=8.0, delta=1.0)))[-1]


def _text(fragment: str) -> str:
    return re.sub("<[^>]+>", "", fragment)


def lanes_state_what_changed_against_ar():
    upd = final("keyed")
    traces = upd["state"].traces
    ar = traces["ar"].tokens
    for m in METHODS[1:]:
        n = len(paired.changed_positions(traces[m].tokens, ar))
        said = _text(upd[f"stats_{m}"])
        if n == 0:
            assert "identical to AR ✓" in said and "changed vs AR" not in said, (m, said)
        else:
            assert f"{n} token{'s' if n != 1 else ''} changed vs AR" in said and "identical" not in said, (m, said)
    assert "AR" not in _text(upd["stats_ar"]).replace("no knobs", "")


def test_keyed_lanes_say_identical_or_how_many_changed():
    lanes_state_what_changed_against_ar()
    upd = final("keyed")
    traces = upd["state"].traces
    for m in ("sjd", "mcsjd"):                                      # lossless: AR's tokens, so AR's image
        assert traces[m].tokens == traces["ar"].tokens and "identical to AR ✓" in _text(upd[f"stats_{m}"])
    assert traces["csd"].tokens != traces["ar"].tokens                # λ = 8, δ = 1 relaxes on this toy


def test_without_keyed_noise_or_without_ar_no_lane_claims_anything():
    for upd, ms in ((final("papers"), METHODS), (final("keyed", ("sjd", "csd")), ["sjd", "csd"])):
        for m in ms:
            said = _text(upd[f"stats_{m}"])
            assert "identical to AR" not in said and "changed vs AR" not in said, (m, said)


def test_the_lane_words_by_hand():
    assert _text(html.vs_ar("sjd", 0)) == "identical to AR ✓"
    assert _text(html.vs_ar("csd", 1)) == "1 token changed vs AR"
    assert _text(html.vs_ar("csd", 17)) == "17 tokens changed vs AR"
    assert html.vs_ar("csd", None) == "" and html.vs_ar("ar", 0) == ""
