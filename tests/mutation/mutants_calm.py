"""Wrong variants of a calm screen's scripts (app/serving.WAIT_JS: the waiting line; app/pinned.JS: the held status
line and the single scroll), JavaScript run in the browser. The detectors are the bare-page models of
tests/browser/test_browser_calm_model.py (a few seconds each, no server); without Chromium and Playwright no variant
is listed (the browser tests skip there too)."""

from specviz.app import pinned, serving
from tests.browser.test_browser import CHROMIUM
from tests.support.mutants import Mutant, browser_available


def _swap(module, name: str, right: str, wrong: str):
    """A variant: `right` (which must occur in module.name) replaced by `wrong`."""
    def apply(mp):
        text = getattr(module, name)
        assert right in text, right
        mp.setattr(module, name, text.replace(right, wrong))
    return apply


def _wait():
    from tests.browser import test_browser_calm_model as m  # noqa: PLC0415 - only when a variant is checked
    t = m.test_a_queued_page_says_it_waits_and_counts_the_seconds
    t()


def _steady():
    from tests.browser import test_browser_calm_model as m  # noqa: PLC0415 - only when a variant is checked
    t = m.test_a_commit_keeps_the_lanes_still_while_the_status_line_changes
    t()


def _once():
    from tests.browser import test_browser_calm_model as m  # noqa: PLC0415 - only when a variant is checked
    t = m.test_one_scroll_per_commit_and_none_after_the_wheel
    t()



VARIANTS = [
    Mutant("wait: the status line never shows the wait (Gradio's tracker read for the wrong words)",
           _swap(serving, "WAIT_JS", "/queue:", "/queued:"), (_wait,)),
    Mutant("wait: the seconds restart at every change of Gradio's tracker (the count never climbs)",
           _swap(serving, "WAIT_JS", "if (waiting && since === null) since", "if (waiting) since"), (_wait,)),
    Mutant("pinned: the status line is not held at its tallest (it shrinks and grows under the lanes)",
           _swap(pinned, "JS", "tallest = h; s.style.minHeight = `${Math.ceil(h)}px`;", "tallest = h;"), (_steady,)),
    Mutant("pinned: a commit reserves no outcome line",
           _swap(pinned, "JS", "owed = true; hold(commit);", "owed = true; hold(false);"), (_steady,)),
    Mutant("pinned: the follow goes on after the user scrolled",
           _swap(pinned, "JS", "committed = -1e9; owed = false; window._svScrolledAt", "window._svScrolledAt"),
           (_once,)),
    Mutant("pinned: a scroll for every layout change of the action (not once)",
           _swap(pinned, "JS", "owed = false;\n      window.scrollBy(0, Math.min(", "window.scrollBy(0, Math.min("),
           (_once,)),
] if browser_available(CHROMIUM) else []
