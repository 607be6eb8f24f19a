"""Present mode's lane fit (app/pinned.JS) on bare pages in Chromium (no server: a few seconds), with the app's own
JavaScript and CSS, a map 200 px tall under a 40 px tab bar, and lanes whose text is `pad` px taller than one line:

- a tab without a map (Summary, History) keeps the grid the map's tab was fitted to on the same screen (it guessed
  40 vh for the map's room before: 320 px of an 800 px screen where the map took 292, and the lanes shrank);
- the lanes' text getting shorter after a fit (it settles after the switch to Present mode) fits them again: the
  grid is the one a page with the settled text gets at once (the first fit's smaller pictures were kept before);
- with a map, the page is never taller than the screen, not even by 1 px (the fit allowed 2 px: at 1920x1080 at
  150 % with 4 methods the page was 721 px in a 720 px screen); here the tab keeps 21 px under the map, 1 px more
  than the fit's room for it, and at some screen heights the page was 1 px too tall.
The served app is checked by tests/browser/test_browser_lecture.py at three screens; these are the mutation check's
detectors (tests/mutation/mutants_calm.py)."""
import base64
import time

import pytest

from specviz.app import pinned, present
from tests.browser.test_browser_calm_model import _browser, _sync

LANES = 2


def _svg(w: int, h: int) -> str:
    svg = f"<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}'><rect width='{w}' height='{h}'/></svg>"
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


PAGE = """<html><head><style>{css}
#tabs img {{height: var(--sv-map-h); display: block;}}</style></head>
<body class="sv-present" style="margin:0;font:15px sans-serif">
<div id="main" style="width:1000px">
 <div id="status"><div class="html-container"><div class="prose"><div class="sv-status" style="line-height:20.3px">
 All done: 144 ticks of the common clock in 2.9 s.</div></div></div></div>
 <div id="lanes" style="display:grid">{lanes}</div>
 <div id="tabs"><div style="height:40px">Heatmaps · Summary</div>
  <div id="tab_maps"><img src="{map}"><div style="height:{below}px"></div></div>
  <div id="tab_summary" style="display:none;height:1500px">chart</div>
 </div>
</div></body></html>"""
LANE = ("<div id='lane_m{i}'><div class='sv-lane-title'>M{i}</div><img src='{img}'>"
        "<div class='sv-lane' style='padding-bottom:{pad}px'>no knobs · 1.00×</div></div>")

GRID = ("() => { const l = document.querySelector('#lanes');"
        " return [l.style.gridTemplateColumns, parseFloat(l.style.getPropertyValue('--sv-img'))]; }")


def _open(browser, height: int, pad: int, below: int = 0):
    page = browser.new_page(viewport={"width": 1000, "height": height})
    lanes = "".join(LANE.format(i=i, img=_svg(240, 240), pad=pad) for i in range(LANES))
    page.set_content(PAGE.format(css=pinned.CSS, lanes=lanes, map=_svg(300, 200), below=below))
    page.wait_for_function("[...document.images].every(i => i.complete)")
    page.evaluate(f"({pinned.JS})()")
    time.sleep(0.4)                                                  # the fit runs on the next frames
    return page


def _show(page, tab: str) -> None:
    page.evaluate("t => { for (const id of ['tab_maps', 'tab_summary'])"
                  " document.getElementById(id).style.display = id === t ? '' : 'none'; }", tab)
    time.sleep(0.4)


@pytest.mark.browser
def test_a_tab_without_a_map_keeps_the_maps_grid():
    with _sync()() as p:
        browser = _browser(p)
        try:
            page = _open(browser, 800, 0)
            seen = [page.evaluate(GRID)]
            for tab in ("tab_summary", "tab_maps", "tab_summary"):
                _show(page, tab)
                seen.append(page.evaluate(GRID))
        finally:
            browser.close()
    assert seen[0][1] > 48 and all(s == seen[0] for s in seen), f"[columns, picture px]: maps, summary, ...: {seen}"


@pytest.mark.browser
def test_the_lanes_are_fitted_again_when_their_text_settles():
    with _sync()() as p:
        browser = _browser(p)
        try:
            page = _open(browser, 800, 40)
            first = page.evaluate(GRID)
            page.evaluate("() => document.querySelectorAll('.sv-lane')"
                          ".forEach(e => { e.style.paddingBottom = '0px'; })")              # the text settles
            time.sleep(0.4)
            settled = page.evaluate(GRID)
            fresh = _open(browser, 800, 0).evaluate(GRID)
        finally:
            browser.close()
    assert first[1] < fresh[1] and settled == fresh, f"40 px of text, then none: {first} -> {settled}; at once: {fresh}"


@pytest.mark.browser
def test_the_page_is_never_taller_than_the_screen():
    with _sync()() as p:
        browser = _browser(p)
        try:
            over = {}
            for h in range(700, 712):
                page = _open(browser, h, 0, below=21)   # 1 px more than the room the fit keeps for the map
                over[h] = page.evaluate("() => document.documentElement.scrollHeight") - h
                page.close()
        finally:
            browser.close()
    assert max(over.values()) <= 0, f"page height - screen height, per screen height: {over}"


# twelve lanes as the served app's (every registered method: titles up to 'LANTERN++' at 16 px bold, knob values up
# to three lines in a narrow column) in a 640 px column as beside the docked inspector at 1280x720 (150 %), on a
# screen 460 px tall: bare lanes fit it with 68 px pictures, lanes that keep their knob values overflow it by 22 px
NAMES = ("AR", "SJD", "CSD", "GSD", "SD", "CASCADE", "LANTERN", "LANTERN++", "MC-SJD", "SJD-PAC", "ZipAR", "PJD")
KNOBS = "τ_pos 0.8 · τ_seq 0.8 · δ 1 · "
WIDE = ("<div id='lane_m{i}'><div class='sv-lane-title'>{name}</div><img src='{img}'>"
        "<div class='sv-lane'><span class='sv-knobs'>{knobs}</span><b>1.33×</b></div></div>")


def _twelve(browser, width: int = 640, height: int = 460, mode: str = "sv-present"):
    page = browser.new_page(viewport={"width": width, "height": height})
    lanes = "".join(WIDE.format(i=i, name=n, img=_svg(240, 240), knobs=KNOBS) for i, n in enumerate(NAMES))
    css = pinned.CSS + present.CSS + "#lanes .sv-lane-title {font-size: 16px; font-weight: 700;}"
    page.set_content(PAGE.format(css=css, lanes=lanes, map=_svg(300, 200), below=0)
                     .replace("width:1000px", f"width:{width}px").replace('class="sv-present"', f'class="{mode}"'))
    page.wait_for_function("[...document.images].every(i => i.complete)")
    page.evaluate(f"({pinned.JS})()")
    time.sleep(0.6)
    return page


@pytest.mark.browser
def test_twelve_lanes_fit_a_150_percent_screen():
    """Twelve lanes, no grid of full-size titles fits (three rows of the smallest pictures: the page was 861 px in a
    720 px screen): narrower columns whose titles shrink (>= 12 px, on one line, unclipped) and lanes that say only
    their step compression; the page is not taller than the screen and the pictures are >= 48 px."""
    with _sync()() as p:
        browser = _browser(p)
        try:
            page = _twelve(browser)
            got = page.evaluate("""() => { const l = document.querySelector('#lanes'),
              t = [...document.querySelectorAll('.sv-lane-title')];
              return {over: document.documentElement.scrollHeight - innerHeight, grid: l.style.gridTemplateColumns,
                      img: parseFloat(l.style.getPropertyValue('--sv-img')),
                      font: Math.min(...t.map(e => parseFloat(getComputedStyle(e).fontSize))),
                      clipped: t.filter(e => e.scrollWidth > e.clientWidth + 2).length,
                      lines: Math.max(...t.map(e => Math.round(e.getBoundingClientRect().height)))}; }""")
        finally:
            browser.close()
    assert got["over"] <= 0 and got["img"] >= 48, got
    assert got["font"] >= 12 and got["clipped"] == 0 and got["lines"] < 2 * got["font"], got


@pytest.mark.browser
def test_twelve_normal_layout_lanes_keep_their_text_in_their_columns():
    """The normal layout's columns are as wide as the widest short title too: twelve lanes in the race column of a
    150 % screen (1010 px) with little height left took twelve 75 px columns (here: 'LANTERN++' overflowed its
    column; in the app, 'compression' ran into the next lane); now 6 columns x 2 rows of 64 px pictures."""
    with _sync()() as p:
        browser = _browser(p)
        try:
            page = _twelve(browser, width=1010, height=300, mode="")
            over = page.evaluate("() => [...document.querySelectorAll('.sv-lane-title, .sv-lane')]"
                                 ".filter(e => e.scrollWidth > e.clientWidth + 2).map(e => e.textContent)")
            grid = page.evaluate(GRID)
        finally:
            browser.close()
    assert over == [] and grid[1] >= 64, (over, grid)
