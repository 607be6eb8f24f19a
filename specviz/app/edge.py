"""The Gradio edge by name. Handlers (handlers.py) take their inputs as one dict keyed by name and return (or yield)
updates keyed by output name; `wire` connects them to components: inputs as Gradio keyword inputs (`inputs_kwargs`,
after which the API names its parameters), updates as {component: value} (Gradio leaves the outputs an update omits
unchanged)."""
from __future__ import annotations

import inspect
from typing import Callable

import gradio as gr


def wire(event, fn: Callable, inputs: dict, outputs: dict, defaults: dict | None = None, request: bool = False,
         **listener):
    """event(handler, inputs_kwargs=inputs, outputs=[...], **listener) for fn(values by name) -> updates by name.
    `defaults` (by input name) lets API callers omit parameters; `request`: the call's gr.Request joins the values as
    "request" (not an API parameter: Gradio injects it by its type hint). Returns the event's dependency."""
    def to_components(upd: dict):
        got = {outputs[n]: v for n, v in upd.items() if n in outputs}
        return got or gr.skip()

    if inspect.isgeneratorfunction(fn):
        def handler(*req, **values):
            for upd in fn(values | dict(zip(("request",), req))):
                yield to_components(upd)
    else:
        def handler(*req, **values):
            return to_components(fn(values | dict(zip(("request",), req))))
    P, given = inspect.Parameter, defaults or {}
    handler.__name__ = getattr(fn, "__name__", "handler")
    params = [P(n, P.KEYWORD_ONLY, default=given.get(n, P.empty)) for n in inputs]
    if request:                         # Gradio inserts a gr.Request only into a positional parameter with that hint
        params.insert(0, P("request", P.POSITIONAL_OR_KEYWORD, default=None, annotation=gr.Request))
        handler.__annotations__ = {"request": gr.Request}
    handler.__signature__ = inspect.Signature(params)
    return event(handler, inputs_kwargs=inputs, outputs=list(outputs.values()), **listener)
