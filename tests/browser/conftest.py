"""Every browser module serves one app for all its tests: one Gradio cache dir per module (tests/support/apptools.py's
module_gradio_tmp, made autouse for the folder), so no server starts on the per-test dir of whichever test came first,
or on the machine-wide default shared with the other worker's servers."""
from tests.support.apptools import module_gradio_tmp  # noqa: F401 (an autouse fixture, by its name _gradio_tmp)
