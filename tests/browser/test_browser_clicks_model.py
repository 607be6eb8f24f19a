"""The click correction (app/clicks.py) against Gradio 6.31's mapping, on a bare page in Chromium (no server: about
a second): a 240 px picture in Gradio's markup (.image-container > button > img) shown at 420, 360 and 240 px; a
listener on the button maps clicks as Gradio does (scale = min(displayed / natural, 1), the natural size centred
in the box, rounded); the centres of cells (0, 0), (0, 15), (15, 0), (15, 15), (6, 9) of a 16 x 16 grid, and the
first and last pixel of the picture, must map to their own pixel. Also the mutation check's detector
(tests/mutation/mutants_clicks.py)."""
import os

import pytest

from specviz.app import clicks
from tests.browser.test_browser import ARGS, CHROMIUM

CELLS = [(0, 0), (0, 15), (15, 0), (15, 15), (6, 9)]
PAGE = """<html><body style="margin:0"><div class="image-container"><button id="b" style="padding:0;border:0">
<div><img id="i" style="display:block;object-fit:contain"></div></button></div></body></html>"""
# Gradio 6.31's rule (ImagePreview's select handler), as the issue states it: the reference the correction feeds
GRADIO = """() => {
  const c = document.createElement('canvas'); c.width = 240; c.height = 240;
  document.querySelector('#i').src = c.toDataURL();
  window.hits = [];
  document.querySelector('#b').addEventListener('click', e => {
    const t = e.currentTarget.querySelector('img'), n = t.getBoundingClientRect();
    const r = Math.min(n.width / t.naturalWidth, n.height / t.naturalHeight, 1);
    const x = Math.round((e.clientX - n.left - (n.width - t.naturalWidth * r) / 2) / r);
    const y = Math.round((e.clientY - n.top - (n.height - t.naturalHeight * r) / 2) / r);
    window.hits.push(x < 0 || x >= t.naturalWidth || y < 0 || y >= t.naturalHeight ? null : [x, y]);
  });
}"""


@pytest.mark.browser
def test_the_correction_maps_every_cell_centre_under_gradios_rule():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not found (apt-get install -y chromium)")
    sync = pytest.importorskip("playwright.sync_api", reason="playwright is not installed").sync_playwright
    with sync() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 800, "height": 600})
            page.set_content(PAGE)
            page.evaluate(GRADIO)
            page.wait_for_function("() => document.querySelector('#i').naturalWidth === 240")
            page.evaluate(f"({clicks.JS})()")
            wrong = []
            for size in (420, 360, 240):
                page.evaluate(f"() => {{ const i = document.querySelector('#i'); i.style.width = '{size}px';"
                              f" i.style.height = '{size}px'; window.hits = []; }}")
                box = page.locator("#i").bounding_box()
                k = size / 240
                points = [((c + 0.5) * 15, (r + 0.5) * 15) for r, c in CELLS] + [(0.2, 0.2), (239.8, 239.8)]
                for x, y in points:
                    page.mouse.click(box["x"] + x * k, box["y"] + y * k)
                hits = page.evaluate("() => window.hits")
                want = [[int(x), int(y)] for x, y in points]
                wrong += [(size, w, h) for w, h in zip(want, hits) if w != h]
            assert wrong == [], f"(shown px, natural pixel clicked, Gradio's answer): {wrong}"
        finally:
            browser.close()
