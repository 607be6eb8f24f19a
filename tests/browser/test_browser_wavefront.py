"""ZipAR and PJD in Present mode, in a real browser (Debian's Chromium, Playwright) at 1920x1080 with ar, sjd, zipar
and pjd: while the race runs, the zipar lane's picture shows several rows decided in part at once
(read back through a canvas every 40 ms: the wavefront paints; a lane that drew only its raster prefix showed one);
after it, a click on a zipar cell makes the inspector say what the token saw, the Missing context map is in view
with labels >= 16 CSS px, and the page still does not scroll. The zipar finalize-step map of the served model is
not raster-monotone. Screenshots as test_browser_present.py."""
import time

import numpy as np
import pytest

from specviz.analysis import views
from specviz.render import draw
from tests.browser.test_browser_bench import choose
from tests.browser.test_browser_present import VIEWS, in_view, label_px, page_trace, save, served  # noqa: F401

METHODS = ["ar", "sjd", "zipar", "pjd"]
GRID = 12                                          # the served fixture: tiny_backend(codes=16, grid=12)

# every 40 ms while the race runs: how many rows of the zipar picture have some cells decided and some hatched
WATCH = """([n, c, und, hat]) => { window._svRows = 0; const g = document.createElement('canvas').getContext('2d');
  const same = (a, b) => a[0] === b[0] && a[1] === b[1] && a[2] === b[2];
  window._svWatch = setInterval(() => {
    const e = document.querySelector('#img_zipar img'); if (!e || !e.complete || !e.naturalWidth) return;
    g.canvas.width = e.naturalWidth; g.canvas.height = e.naturalHeight; g.drawImage(e, 0, 0);
    let rows = 0;
    for (let i = 0; i < n; i++) { let open = 0;
      for (let j = 0; j < n; j++) { const d = g.getImageData(j * c, i * c, c, c).data; let hatched = true;
        for (let k = 0; k < d.length; k += 4) { const p = [d[k], d[k + 1], d[k + 2]];
          if (!same(p, und) && !same(p, hat)) { hatched = false; break; } }
        open += hatched ? 1 : 0; }
      rows += open > 0 && open < n ? 1 : 0; }
    window._svRows = Math.max(window._svRows, rows); }, 40); }"""


def test_the_zipar_finalize_map_is_not_raster_monotone():
    fin = views.numeric_map(page_trace("zipar"), "finalize").ravel()
    assert np.any(np.diff(fin) < 0), "zipar's finalize-step map is raster-monotone"


@pytest.mark.browser
def test_zipar_and_pjd_in_present_mode(served, tmp_path):  # noqa: F811 (the fixture)
    browser, url = served
    w, h, dpr = VIEWS["1920x1080"]
    page = browser.new_page(viewport={"width": w, "height": h}, device_scale_factor=dpr)
    page.set_default_timeout(90_000)
    page.goto(url)
    choose(page, METHODS)
    page.locator("#present input[type=checkbox]").click()
    page.wait_for_function("document.body.classList.contains('sv-present')")
    page.evaluate(WATCH, [GRID, draw.cell_px((GRID, GRID), 240), list(draw.UNDECIDED_RGB), list(draw.HATCH_RGB)])
    page.click("#generate")
    page.locator("#status").filter(has_text="All done").wait_for()
    rows = page.evaluate("() => { clearInterval(window._svWatch); return window._svRows; }")
    assert rows >= 2, f"the zipar lane never showed two rows in part at once ({rows})"
    assert page.locator("#img_zipar img").evaluate("e => e.naturalWidth") == 240
    time.sleep(1.0)
    lane = page.locator("#img_zipar img").bounding_box()
    page.mouse.click(lane["x"] + lane["width"] * 0.5, lane["y"] + lane["height"] * 0.9)    # row 10, column 6
    page.locator("#sv-verdict").wait_for()
    assert "Context seen: " in page.locator("#inspector .sv-plain").inner_text()
    page.click("#tab_missing-button")
    page.wait_for_function("() => { const i = document.querySelector('#map_missing img');"
                           " return i && i.complete && i.naturalWidth > 0; }")
    time.sleep(1.2)                                                   # the lanes are fitted to the map
    save(page, tmp_path, "wavefront_present_1920x1080")
    assert page.evaluate("document.documentElement.scrollHeight") <= h, "Present mode scrolls"
    for sel in ("#lanes", "#map_missing img", "#sv-verdict"):
        assert in_view(page, sel), f"{sel} is not inside the viewport"
    assert label_px(page, "#map_missing img") >= 16
    page.close()
