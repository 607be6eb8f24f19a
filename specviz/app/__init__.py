"""app: the Gradio side (handlers, session, widgets, serving, tabs): the only room that imports gradio."""
