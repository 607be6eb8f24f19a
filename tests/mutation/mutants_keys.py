"""Wrong variants of the keyboard path (specviz/app/keys.py, JavaScript run in the browser). The detector is the
served-app browser test (tests/browser/test_browser_keys.py: Tab, Enter, ArrowRight x2, ArrowDown at 1920x1080)
run on the app served with the variant's script; without Chromium and Playwright no variant is listed (the browser
tests skip there too)."""
import os

import app
from specviz.app import keys
from tests.browser.test_browser import CHROMIUM
from tests.support.mutants import Mutant

RIGHT, WRONG = '"ArrowDown": [1, 0]', '"ArrowDown": [0, 1]'       # ArrowDown taken as one more column


def _served(check):
    """Run `check((browser, url), tmp)` on the app served with keys.KEYS_JS and keys.KEYS_CSS as they are now."""
    import pathlib  # noqa: PLC0415 - only when a variant is checked
    import tempfile  # noqa: PLC0415 - only when a variant is checked

    from playwright.sync_api import sync_playwright  # noqa: PLC0415 - only when a variant is checked

    from tests.browser.test_browser import ARGS
    from tests.browser.test_browser_clicks import serve
    assert app.KEYS_JS in app.STYLE["js"] and app.KEYS_CSS in app.STYLE["css"]
    style = dict(app.STYLE, js=app.STYLE["js"].replace(app.KEYS_JS, keys.KEYS_JS),     # keys.*: as patched
                 css=app.STYLE["css"].replace(app.KEYS_CSS, keys.KEYS_CSS))
    demo, url = serve(style)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                check((browser, url), pathlib.Path(tempfile.mkdtemp()))
            finally:
                browser.close()
    finally:
        demo.close()


def _focus_ring():
    from tests.browser.test_browser_keys import test_every_kind_of_control_shows_a_focus_ring as check
    _served(check)


def _walk():
    from tests.browser.test_browser_keys import test_tab_enter_and_arrows_inspect_and_ring_each_cell_in_turn as check
    _served(lambda served, tmp: check(served, "1920x1080"))


def _available() -> bool:
    try:
        import playwright.sync_api  # noqa: F401 - only whether it is installed
    except ImportError:
        return False
    return os.path.exists(CHROMIUM)


VARIANTS = [
    Mutant("keys: ArrowDown moves one column (the row step lost)",
           lambda mp: mp.setattr(keys, "KEYS_JS", keys.KEYS_JS.replace(RIGHT, WRONG)), (_walk,)),
    Mutant("keys: the focus-ring CSS dropped (Gradio's own focus styles only: the slider shows none)",
           lambda mp: mp.setattr(keys, "KEYS_CSS", ""), (_focus_ring,)),
] if _available() else []
