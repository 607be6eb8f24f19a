"""What a method's record promises about its traces, checked on a trace read from a file (on top of the structural
checks of core.checks): the method is registered, its config is a valid RunConfig of that method, and every step
after the prefill makes only decisions the method can make. `read_trace` opens a file with both checks."""
from __future__ import annotations

from pathlib import Path

from specviz.core.checks import want
from specviz.core.trace import Trace
from specviz.engine import registry
from specviz.engine.config import RunConfig


def check_method(trace: Trace) -> None:
    """ValueError ("not a specviz trace: ...") naming the first thing the method's record does not allow."""
    want(trace.method in registry.REGISTRY, f"method {trace.method!r} is not one of {', '.join(registry.REGISTRY)}")
    try:
        cfg = RunConfig.from_dict(trace.config)
    except (TypeError, ValueError) as e:
        raise ValueError(f"not a specviz trace: config: {e}") from None
    want(cfg.method == trace.method, "config method differs from the trace method")
    allowed = registry.get(trace.method).decisions
    for st in trace.steps[1:]:
        want(all(ev.decision in allowed for ev in st.events),
             f"step {st.step}: a {trace.method} run makes only {', '.join(sorted(allowed))} decisions here")


def read_trace(path: str | Path) -> Trace:
    """A trace file, checked for structure and against its method's record."""
    trace = Trace.load(path)
    check_method(trace)
    return trace
