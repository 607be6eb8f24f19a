"""Wrong variants of the click correction (specviz/app/clicks.py, JavaScript run in the browser). The detector
clicks cell centres of a 240 px picture shown at 420, 360 and 240 px in Chromium, under Gradio 6.31's mapping
(tests/browser/test_browser_clicks_model.py); without Chromium and Playwright there is nothing to run it in and no
variant is listed (the browser tests skip there too)."""

import app
from specviz.app import clicks
from tests.browser.test_browser import CHROMIUM
from tests.support.mutants import Mutant, browser_available

RIGHT, WRONG = "const r = Math.min(s, 1);", "const r = s;"      # the correction believes Gradio scales up too


def without_correction(style: dict) -> dict:
    """app.STYLE with the mutant's JavaScript (the served app of tests/browser/test_browser_clicks.py)."""
    assert RIGHT in app.CLICKS_JS and app.CLICKS_JS in style["js"]
    return dict(style, js=style["js"].replace(app.CLICKS_JS, app.CLICKS_JS.replace(RIGHT, WRONG)))


def _hit_test():
    from tests.browser.test_browser_clicks_model import test_the_correction_maps_every_cell_centre_under_gradios_rule
    test_the_correction_maps_every_cell_centre_under_gradios_rule()



VARIANTS = [
    Mutant("clicks: the scale correction dropped (Gradio's r taken as the true scale)",
           lambda mp: mp.setattr(clicks, "JS", clicks.JS.replace(RIGHT, WRONG)), (_hit_test,)),
] if browser_available(CHROMIUM) else []
