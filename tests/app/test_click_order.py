"""Every click that inspects a cell runs, in the order made, and the ring and the Primer that follow it end on the last
cell (specviz/app/follow.py CLICK and RING): Gradio's default trigger mode "once" drops an event asked for while the
last one of the same listener is still answering — two quick clicks on a lane, or Enter then ArrowDown on a map,
left the inspector or the ring on the cell before (tests/browser/test_browser_keys.py's quick-click case sees it in a
browser). Read from the built app's listeners: the functions Gradio runs, their trigger mode and concurrency."""
import app
from tests.support.apptools import tiny_backend


def orders(demo) -> dict:
    """{what: {(trigger mode, concurrency id, limit)}} and the count of each, for the inspecting clicks (selects whose
    outputs are the inspector and the inspected cell), the rings and the Primer updates that follow them."""
    fns = demo.fns.values() if isinstance(demo.fns, dict) else demo.fns
    out = {"click": [], "ring": [], "primer": []}
    for f in fns:
        name, ids = getattr(f.fn, "__name__", ""), [getattr(o, "elem_id", None) for o in f.outputs]
        if {t[1] for t in f.targets} == {"select"} and ids[:1] == ["inspector"] and len(ids) == 2:
            out["click"].append((f.trigger_mode, f.concurrency_id, f.concurrency_limit))
        elif name == "outlined":
            out["ring"].append((f.trigger_mode, f.concurrency_id, f.concurrency_limit))
        elif name == "primer_of":
            out["primer"].append(f.trigger_mode)
    return out


def clicks_run_in_order_and_the_ring_follows_the_last():
    got = orders(app.build_demo(tiny_backend(codes=16, grid=4)[0]))
    assert len(got["click"]) >= 20 and len(got["ring"]) == len(got["click"]), {k: len(v) for k, v in got.items()}
    assert set(got["click"]) == {("multiple", "inspect", 1)}, set(got["click"])
    assert set(got["ring"]) == {("always_last", "ring", 1)}, set(got["ring"])
    assert set(got["primer"]) == {"always_last"}, set(got["primer"])


def test_clicks_run_in_order_and_the_ring_follows_the_last():
    clicks_run_in_order_and_the_ring_follows_the_last()
