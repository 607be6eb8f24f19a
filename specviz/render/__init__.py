"""specviz.render."""
