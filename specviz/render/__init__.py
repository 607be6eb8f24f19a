"""render: pictures and text from traces and their views (PIL, matplotlib Figure API, HTML strings); no gradio."""
