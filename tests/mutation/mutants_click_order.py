"""Wrong variants of the click order (specviz/app/follow.py CLICK and RING): Gradio's default trigger mode "once" on
the inspecting clicks (a click made while the last is answering is dropped), on the ring (the ring of a quick second
click is dropped), or the rings run four at a time (an older ring can land after a newer one). Detected by
tests/app/test_click_order.py from the built app's listeners; tests/browser/test_browser_keys.py's quick-click case
fails on the first two in a browser (checked when it was written: inspector on (2, 3), not (9, 12))."""
from specviz.app import follow
from tests.app.test_click_order import clicks_run_in_order_and_the_ring_follows_the_last as _order
from tests.support.mutants import Mutant

VARIANTS = [
    Mutant("click order: the inspecting clicks keep Gradio's default 'once' (a quick second click is dropped)",
           lambda mp: mp.setattr(follow, "CLICK", follow.CLICK | {"trigger_mode": "once"}), (_order,)),
    Mutant("click order: the ring keeps Gradio's default 'once' (the ring of a quick second click is dropped)",
           lambda mp: mp.setattr(follow, "RING", follow.RING | {"trigger_mode": "once"}), (_order,)),
    Mutant("click order: rings run four at a time (an older ring can land after a newer one)",
           lambda mp: mp.setattr(follow, "RING", follow.RING | {"concurrency_limit": 4}), (_order,)),
]
