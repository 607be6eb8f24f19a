"""The commit filter (app/commit.py) against a model of Gradio 6.31's slider on a bare page in Chromium (no server):
the number box releases on pointerup and blur and sends an input per keystroke (null when empty), the range releases
on pointerup. A typed edit (click into the box, select-all, Delete, digits, Enter or Tab) must give one release with
the typed value and no null input; focus and blur without an edit, and a click on the range that does not move it,
no release. Also the mutation check's detector (tests/mutation/mutants_commit.py)."""
import os

import pytest

from specviz.app import commit
from tests.browser.test_browser import ARGS, CHROMIUM

PAGE = """<html><body><div class="block"><input id="n" type="number" value="0.5" min="0" max="10" step="0.01">
<input id="r" type="range" value="0.5" min="0" max="10" step="0.01"></div><button id="o">elsewhere</button>
</body></html>"""
# the model: what Gradio's slider listens to (its own listeners sit on the inputs themselves)
GRADIO = """() => {
  window.log = [];
  const n = document.querySelector('#n'), r = document.querySelector('#r');
  const value = () => n.value === '' ? null : Number(n.value);
  n.addEventListener('input', () => { r.value = n.value; log.push(['input', value()]); });
  n.addEventListener('pointerup', () => log.push(['release', value()]));
  n.addEventListener('blur', () => log.push(['release', value()]));
  r.addEventListener('input', () => { n.value = r.value; log.push(['input', Number(r.value)]); });
  r.addEventListener('pointerup', () => log.push(['release', Number(r.value)]));
  document.addEventListener('keydown', e => { if (e.key === 'Enter' && e.target === n) n.blur(); });
}"""


def edit(page, value: str, key: str) -> list:
    page.evaluate("() => { window.log = []; }")
    page.click("#n")
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.type(value)
    page.keyboard.press(key)
    return page.evaluate("() => window.log")


@pytest.mark.browser
def test_a_typed_edit_releases_once_with_its_value_and_nothing_else_releases():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not found (apt-get install -y chromium)")
    sync = pytest.importorskip("playwright.sync_api", reason="playwright is not installed").sync_playwright
    with sync() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 800, "height": 600})
            page.set_content(PAGE)
            page.evaluate(GRADIO)
            page.evaluate(f"({commit.JS})()")
            for value, key in (("2", "Enter"), ("3.5", "Tab")):
                got = edit(page, value, key)
                assert [e for e in got if e[0] == "release"] == [["release", float(value)]], got
                assert ["input", None] not in got, got
            page.evaluate("() => { window.log = []; }")
            page.click("#n")                                            # focus and leave: nothing typed
            page.keyboard.press("Tab")
            page.click("#n")                                            # emptied and left: the value back
            page.keyboard.press("Control+A")
            page.keyboard.press("Delete")
            page.click("#o")
            assert page.input_value("#n") == "3.5"
            box = page.locator("#r").bounding_box()                      # the thumb at 3.5 of 0-10: not moved
            page.mouse.click(box["x"] + 8 + 0.35 * (box["width"] - 16), box["y"] + box["height"] / 2)
            moved = page.input_value("#r")
            got = page.evaluate("() => window.log")
            releases = [e for e in got if e[0] == "release"]
            assert releases == ([] if moved == "3.5" else [["release", float(moved)]]), got
            assert ["input", None] not in got, got
        finally:
            browser.close()
