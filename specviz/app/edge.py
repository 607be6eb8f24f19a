"""The Gradio edge by name. Handlers (handlers.py) take their inputs as one dict keyed by name and return (or yield)
updates keyed by output name; `wire` connects them to components: inputs as Gradio keyword inputs (`inputs_kwargs`,
after which the API names its parameters), updates as {component: value} (Gradio leaves the outputs an update omits
unchanged)."""
from __future__ import annotations

import inspect
from typing import Callable

import gradio as gr


def wire(event, fn: Callable, inputs: dict, outputs: dict, defaults: dict | None = None, request: bool = False,
         select: bool = False, **listener):
    """event(handler, inputs_kwargs=inputs, outputs=[...], **listener) for fn(values by name) -> updates by name.
    `defaults` (by input name) lets API callers omit parameters; `request`: the call's gr.Request joins the values as
    "request", `select`: a select event's gr.SelectData as "select" (neither is an API parameter: Gradio injects
    them by their type hints). Returns the event's dependency."""
    injected = [n for n, on in (("request", request), ("select", select)) if on]
    def to_components(upd: dict):
        got = {outputs[n]: v for n, v in upd.items() if n in outputs}
        return got or gr.skip()

    if inspect.isgeneratorfunction(fn):
        def handler(*req, **values):
            for upd in fn(values | dict(zip(injected, req))):
                yield to_components(upd)
    else:
        def handler(*req, **values):
            return to_components(fn(values | dict(zip(injected, req))))
    P, given = inspect.Parameter, defaults or {}
    handler.__name__ = getattr(fn, "__name__", "handler")
    params = [P(n, P.KEYWORD_ONLY, default=given.get(n, P.empty)) for n in inputs]
    hints = {"request": gr.Request, "select": gr.SelectData}
    for i, n in enumerate(injected):    # Gradio injects these only into positional parameters with their type hints
        params.insert(i, P(n, P.POSITIONAL_OR_KEYWORD, default=None, annotation=hints[n]))
    handler.__annotations__ = {n: hints[n] for n in injected}
    handler.__signature__ = inspect.Signature(params)
    return event(handler, inputs_kwargs=inputs, outputs=list(outputs.values()), **listener)
