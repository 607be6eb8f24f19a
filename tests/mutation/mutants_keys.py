"""Wrong variants of the keyboard path (specviz/app/keys.py, JavaScript and CSS run in the browser). The detectors
are the bare-page models of tests/browser/test_browser_keys_model.py (Enter and arrows on a lane picture and a map;
the focus ring by pixels: a few seconds each, no server; the served app's own browser tests,
tests/browser/test_browser_keys.py, check the same at 1920x1080 and 1440x900 outside the fast lane); without
Chromium and Playwright no variant is listed (the browser tests skip there too)."""

from specviz.app import keys
from tests.browser.test_browser import CHROMIUM
from tests.support.mutants import Mutant, browser_available

RIGHT, WRONG = '"ArrowDown": [1, 0]', '"ArrowDown": [0, 1]'       # ArrowDown taken as one more column


def _focus_ring():
    from tests.browser import test_browser_keys_model as m  # noqa: PLC0415 - only when a variant is checked
    m.test_a_focused_lane_picture_shows_a_focus_ring()


def _walk():
    from tests.browser import test_browser_keys_model as m  # noqa: PLC0415 - only when a variant is checked
    m.test_enter_and_arrows_on_a_lane_and_on_a_map_inspect_each_cell_in_turn()



VARIANTS = [
    Mutant("keys: ArrowDown moves one column (the row step lost)",
           lambda mp: mp.setattr(keys, "KEYS_JS", keys.KEYS_JS.replace(RIGHT, WRONG)), (_walk,)),
    Mutant("keys: the focus-ring CSS dropped (Gradio's own focus styles only: the picture shows none)",
           lambda mp: mp.setattr(keys, "KEYS_CSS", ""), (_focus_ring,)),
    Mutant("keys: a map moves over the run's first lane, not the inspected cell's",
           lambda mp: mp.setattr(keys, "KEYS_JS", keys.KEYS_JS.replace("if (i && grid(i[0]) && picture(i[0]))",
                                                                       "if (false)")), (_walk,)),
] if browser_available(CHROMIUM) else []
