"""specviz: a visual laboratory for speculative decoding of autoregressive image generators."""
from specviz.core.trace import DECISIONS, StepEvent, TokenEvent, Trace
from specviz.engine.config import METHODS, ConfigError, RunConfig
from specviz.engine.decode import Progress, decode
from specviz.engine.drafters import drafter_factory
from specviz.models import load_model

__all__ = ["METHODS", "ConfigError", "RunConfig", "Progress", "decode", "drafter_factory", "load_model",
           "DECISIONS", "TokenEvent", "StepEvent", "Trace"]
