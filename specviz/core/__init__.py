"""specviz.core."""
