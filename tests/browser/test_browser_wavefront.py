"""ZipAR and PJD in Present mode, in a real browser (Debian's Chromium, Playwright) at 1920x1080 with ar, sjd, zipar
and pjd: while the race runs, the zipar lane's pictures show several rows decided in part at once
(each picture it was given, read back through a canvas: the wavefront paints; a lane that drew only its raster
prefix showed one);
after it, a click on a zipar cell makes the inspector say what the token saw, the Missing context map is in view
with labels >= 16 CSS px, and the page still does not scroll. The zipar finalize-step map of the served model is
not raster-monotone. Screenshots as test_browser_present.py."""
import time

import numpy as np
import pytest

from specviz.analysis import views
from specviz.render import draw
from tests.browser.test_browser import RUN_MS
from tests.browser.test_browser_bench import choose
from tests.browser.test_browser_present import VIEWS, in_view, label_px, page_trace, save, served  # noqa: F401

METHODS = ["ar", "sjd", "zipar", "pjd"]
GRID = 12                                          # the served fixture: tiny_backend(codes=16, grid=12)

# every picture the zipar lane is given while the race runs (its src, recorded on each change: reading the pictures
# on a timer missed them all on a loaded machine); read back afterwards through a canvas
WATCH = """() => { window._svSrcs = new Set();
  const rec = () => { const e = document.querySelector('#img_zipar img'); if (e && e.src) window._svSrcs.add(e.src); };
  window._svObs = new MutationObserver(rec);
  window._svObs.observe(document.body, {subtree: true, childList: true, attributes: true, attributeFilter: ['src']});
}"""
# the most rows any of those pictures shows with some cells decided and some hatched
ROWS = """async ([n, c, und, hat]) => { window._svObs.disconnect(); let best = 0;
  const g = document.createElement('canvas').getContext('2d');
  const same = (a, b) => a[0] === b[0] && a[1] === b[1] && a[2] === b[2];
  for (const src of window._svSrcs) { const e = new Image(); e.src = src; await e.decode();
    g.canvas.width = e.naturalWidth; g.canvas.height = e.naturalHeight; g.drawImage(e, 0, 0);
    let rows = 0;
    for (let i = 0; i < n; i++) { let open = 0;
      for (let j = 0; j < n; j++) { const d = g.getImageData(j * c, i * c, c, c).data; let hatched = true;
        for (let k = 0; k < d.length; k += 4) { const p = [d[k], d[k + 1], d[k + 2]];
          if (!same(p, und) && !same(p, hat)) { hatched = false; break; } }
        open += hatched ? 1 : 0; }
      rows += open > 0 && open < n ? 1 : 0; }
    best = Math.max(best, rows); }
  return [best, window._svSrcs.size]; }"""


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
    page.evaluate(WATCH)
    page.click("#generate")
    page.locator("#status").filter(has_text="All done").wait_for(timeout=RUN_MS)
    rows, seen = page.evaluate(ROWS, [GRID, draw.cell_px((GRID, GRID), 240), list(draw.UNDECIDED_RGB),
                                      list(draw.HATCH_RGB)])
    assert rows >= 2, f"no picture of the zipar lane showed two rows in part at once ({rows}; {seen} pictures)"
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
