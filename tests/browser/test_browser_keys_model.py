"""The keyboard path (app/keys.py) on a bare page in Chromium (no server: a few seconds), in Gradio's markup: two
16 x 16 lane pictures (AR, then CSD: 240 px, #img_<m> .image-container > button > img) whose counters carry the grid
(data-grid), a map in the Heatmaps tab (#tab_maps #map_entropy) and an inspector; the page's style removes the
browser's own focus outline (so a ring seen is KEYS_CSS's). A listener plays the server: a click on the lane picture,
mapped as Gradio 6.31 maps it, names its cell in the inspector (data-method, data-pos). Focus CSD's lane picture:
Enter, ArrowRight x2, ArrowDown inspect (0, 0), (0, 1), (0, 2), (1, 2); then the map: Enter keeps (1, 2),
ArrowLeft, ArrowUp, ArrowUp move CSD's cell (the inspected lane's, not the first lane's) to (1, 1), (0, 1), (0, 1)
(clamped at the top edge). And the focus ring: the focused lane picture's pixels differ from the unfocused one's.
The served app: tests/browser/test_browser_keys.py; these are the mutation check's detectors
(tests/mutation/mutants_keys.py)."""
import io
import os
import time

import pytest

from specviz.app import keys
from tests.browser.test_browser import ARGS, CHROMIUM

PAGE = """<html><head><style>button {{outline: none;}} {css}</style></head><body style="margin:0">
<div id="lanes" style="display:flex"><div id="lane_ar"><div id="img_ar"><div class="image-container">
 <button style="padding:0;border:0;margin:20px">
 <img id="lane_a" style="display:block;width:240px;height:240px"></button>
 </div></div><div id="stats_ar"><div class="sv-lane" data-grid="16x16">256/256 tokens</div></div></div>
<div id="lane_csd"><div id="img_csd"><div class="image-container">
 <button style="padding:0;border:0;margin:20px"><img id="lane" style="display:block;width:240px;height:240px"></button>
 </div></div><div id="stats_csd"><div class="sv-lane" data-grid="16x16">144/256 tokens</div></div></div></div>
<button id="tab_maps-button">Heatmaps</button>
<div id="tab_maps" role="tabpanel"><div id="map_entropy"><div class="image-container">
 <button style="padding:0;border:0"><img id="map" style="display:block;width:300px;height:200px"></button>
</div></div></div>
<div id="inspector"></div></body></html>"""
# the server, as far as the keyboard path sees it: Gradio 6.31's mapping of the click, then the inspector's fragment
SERVER = """() => {
  const c = document.createElement('canvas'); c.width = 240; c.height = 240;
  document.querySelector('#lane').src = document.querySelector('#lane_a').src = c.toDataURL();
  const m = document.createElement('canvas'); m.width = 300; m.height = 200;
  document.querySelector('#map').src = m.toDataURL();
  document.querySelectorAll('#lanes button').forEach(b => b.addEventListener('click', e => {
    const t = e.currentTarget.querySelector('img'), n = t.getBoundingClientRect();
    const r = Math.min(n.width / t.naturalWidth, n.height / t.naturalHeight, 1);
    const x = Math.round((e.clientX - n.left - (n.width - t.naturalWidth * r) / 2) / r);
    const y = Math.round((e.clientY - n.top - (n.height - t.naturalHeight * r) / 2) / r);
    const pos = Math.floor(y / 15) * 16 + Math.floor(x / 15);
    const m = e.currentTarget.closest('[id^="img_"]').id.slice(4);
    document.querySelector('#inspector').innerHTML = `<div class="sv-insp" data-method="${m}" data-pos="${pos}"></div>`;
  }));
}"""
LANE, MAP = "#img_csd .image-container button", "#map_entropy .image-container button"
KEYS = [(LANE, "Enter", (0, 0)), (LANE, "ArrowRight", (0, 1)), (LANE, "ArrowRight", (0, 2)),
        (LANE, "ArrowDown", (1, 2)), (MAP, "Enter", (1, 2)), (MAP, "ArrowLeft", (1, 1)), (MAP, "ArrowUp", (0, 1)),
        (MAP, "ArrowUp", (0, 1))]


def _page(p):
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not found (apt-get install -y chromium)")
    browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
    page = browser.new_page(viewport={"width": 800, "height": 700})
    page.set_content(PAGE.format(css=keys.KEYS_CSS))
    page.evaluate(SERVER)
    page.wait_for_function("() => document.querySelector('#lane').naturalWidth === 240 &&"
                           " document.querySelector('#lane_a').naturalWidth === 240 &&"
                           " document.querySelector('#map').naturalWidth === 300")
    page.evaluate(f"({keys.KEYS_JS})()")
    return browser, page


def _sync():
    return pytest.importorskip("playwright.sync_api", reason="playwright is not installed").sync_playwright


@pytest.mark.browser
def test_enter_and_arrows_on_a_lane_and_on_a_map_inspect_each_cell_in_turn():
    with _sync()() as p:
        browser, page = _page(p)
        try:
            labels = [page.locator(s).get_attribute("aria-label") for s in (LANE, MAP)]
            got = []
            for where, key, _ in KEYS:
                if not page.evaluate("s => document.activeElement === document.querySelector(s)", where):
                    page.focus(where)
                page.keyboard.press(key)
                time.sleep(0.1)
                seen = page.evaluate("() => { const e = document.querySelector('#inspector .sv-insp'); return e &&"
                                     " [e.getAttribute('data-method'), Number(e.getAttribute('data-pos'))]; }")
                got.append((where, key, seen and (seen[0], divmod(seen[1], 16))))
        finally:
            browser.close()
    assert labels == [keys.LABEL.format(method="csd"), keys.MAP_LABEL.format(map="Heatmaps")]
    assert got == [(w, k, ("csd", cell)) for w, k, cell in KEYS]


@pytest.mark.browser
def test_a_focused_lane_picture_shows_a_focus_ring():
    from PIL import Image, ImageChops  # noqa: PLC0415 - only this test reads screenshots
    with _sync()() as p:
        browser, page = _page(p)
        try:
            clip = dict(x=0, y=0, width=300, height=300)
            off = Image.open(io.BytesIO(page.screenshot(clip=clip))).convert("RGB")
            page.keyboard.press("Tab")                              # the keyboard's focus: focus-visible
            assert page.evaluate("() => document.activeElement === document.querySelector('#img_ar button')")
            on = Image.open(io.BytesIO(page.screenshot(clip=clip))).convert("RGB")
        finally:
            browser.close()
    assert ImageChops.difference(on, off).getbbox() is not None, "no visible focus ring on the lane picture"
