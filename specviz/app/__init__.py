"""specviz.app."""
