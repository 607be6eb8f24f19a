"""engine: rules, verification, drafters, the method registry and catalogue, the one decode loop (imports core).

Importing any engine module registers every method first (methods.py, the catalogue): the registry's API is imported
from its one home, specviz.engine.registry, and finds every record there (RunConfig's fields, too, are the registered
knobs)."""
from specviz.engine import methods  # noqa: F401  (registers the catalogue: not a re-export)
