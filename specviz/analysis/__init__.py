"""analysis: what is computed from traces and runs: views, preview, bench, sweep, atlas (no drawing, no gradio)."""
