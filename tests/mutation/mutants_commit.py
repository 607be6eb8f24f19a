"""Wrong variants of the commit filter (specviz/app/commit.py, JavaScript run in the browser). The detector types
into a model of Gradio 6.31's slider in Chromium (tests/browser/test_browser_commit_model.py); without Chromium and
Playwright there is nothing to run it in and no variant is listed (the browser tests skip there too)."""
from specviz.app import commit
from tests.support.mutants import Mutant, browser_available

_CASES = {
    "commit: a click into the box releases the slider (a run with the old value)":
        ("if (box(el)) { stop(e); return; }", "if (box(el)) return;"),
    "commit: an emptied box's input passed on (null: the error toast)":
        ("if (box(e.target) && !finite(e.target.value)) stop(e);", "if (box(e.target) && false) stop(e);"),
    "commit: blur releases a value nothing changed (a second run)":
        ("if (from !== undefined && Number(from) === Number(el.value)) stop(e);", ""),
}


def _model():
    from tests.browser.test_browser_commit_model import (
        test_a_typed_edit_releases_once_with_its_value_and_nothing_else_releases,
    )
    test_a_typed_edit_releases_once_with_its_value_and_nothing_else_releases()


def _variant(name, right, wrong):
    assert right in commit.JS, name
    return Mutant(name, lambda mp: mp.setattr(commit, "JS", commit.JS.replace(right, wrong)), (_model,))


VARIANTS = [_variant(n, r, w) for n, (r, w) in _CASES.items()] if browser_available() else []
