"""specviz.engine."""
