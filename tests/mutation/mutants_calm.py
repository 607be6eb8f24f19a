"""Wrong variants of a calm screen's scripts (app/serving.WAIT_JS: the waiting line; app/pinned.JS: the held status
line, the single scroll and Present mode's lane fit), JavaScript run in the browser. The detectors are the bare-page
models of tests/browser/test_browser_calm_model.py and test_browser_fit_model.py (a few seconds each, no server);
without Chromium and Playwright no variant is listed (the browser tests skip there too)."""

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


def _fit(name: str):
    def run():
        from tests.browser import test_browser_fit_model as m  # noqa: PLC0415 - only when a variant is checked
        getattr(m, name)()
    return run


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
    Mutant("pinned fit: a tab without a map guesses 40 vh for the map's room (the lanes change size with the tab)",
           _swap(pinned, "JS", "const kept = present && !map && fit.mapGrid", "const kept = false && fit.mapGrid"),
           (_fit("test_a_tab_without_a_map_keeps_the_maps_grid"),)),
    Mutant("pinned fit: the lanes' settled text does not fit them again (the first fit's sizes stay)",
           _swap(pinned, "JS", "|| over || rewrapped)", "|| over)"),
           (_fit("test_the_lanes_are_fitted_again_when_their_text_settles"),)),
    Mutant("pinned fit: the page may be 2 px taller than the screen in Present mode (it scrolled: 721 px in 720)",
           _swap(pinned, "JS", "if (excess() > 0) {", "if (excess() > 2) {"),
           (_fit("test_the_page_is_never_taller_than_the_screen"),)),
    Mutant("pinned fit: no narrower grid when full-size titles fit none (twelve lanes: the page scrolled, 861 px)",
           _swap(pinned, "JS", "if (present && best[1] < least && titleW) {", "if (false) {"),
           (_fit("test_twelve_lanes_fit_a_150_percent_screen"),)),
    Mutant("pinned fit: the narrower grid keeps the lanes' knob values (three lines of text under each picture)",
           _swap(pinned, "JS", "l.classList.add('sv-bare');", "l.classList.remove('sv-bare');"),
           (_fit("test_twelve_lanes_fit_a_150_percent_screen"),)),
    Mutant("pinned fit: the titles' size is written as a plain inline style (Present mode's !important rule wins)",
           _swap(pinned, "JS", "`${want.toFixed(1)}px`,", "`${want.toFixed(1)}px`, '') || ("),
           (_fit("test_twelve_lanes_fit_a_150_percent_screen"),)),
    Mutant("pinned fit: the normal layout's columns ignore the titles' width (twelve 75 px lanes overlapped)",
           _swap(pinned, "JS", "if (titles.length) {      // the short titles", "if (present && titles.length) {  //"),
           (_fit("test_twelve_normal_layout_lanes_keep_their_text_in_their_columns"),)),
] if browser_available(CHROMIUM) else []
