"""specviz.analysis."""
