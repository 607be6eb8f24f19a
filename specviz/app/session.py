"""The names app/session.py held before it was split by job, importable from here as before: the model catalogue
(catalogue.py), opening saved traces (opening.py), building a race's configs (configs.py) and the race (race.py)."""
from __future__ import annotations

from specviz.app.catalogue import (  # noqa: F401  (re-exported)
    Catalogue,
    Loader,
    LoadError,
    available_models,
    check_draft,
    check_model,
    default_catalogue,
    load,
)
from specviz.app.configs import default_draft, make_configs  # noqa: F401  (re-exported)
from specviz.app.opening import read_traces  # noqa: F401  (re-exported)
from specviz.app.race import RACE_PX, Frame, LaneView, race  # noqa: F401  (re-exported)
