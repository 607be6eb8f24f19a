"""A keyboard path to the inspector (app/keys.py), in a real browser (Debian's Chromium, Playwright): Tab reaches a
lane picture (labelled "<method> picture: Enter inspects, arrows move"), Enter inspects cell (0, 0), ArrowRight x2
and ArrowDown move the inspector and the magenta ring to (0, 1), (0, 2), (1, 2), at 1920x1080 and 1440x900; and every
kind of control shows a focus ring: a screenshot of a button, a slider, a check box and a lane picture focused from
the keyboard differs from one of the same control unfocused. The mutant of tests/mutation/mutants_keys.py (ArrowDown
moves one cell, as if the grid were one column wide) is killed by the first test."""
import io
import time

import pytest

from specviz.app.keys import LABEL
from tests.browser.test_browser_clicks import GRID, chromium, inspected, ringed, run_page, served  # noqa: F401
from tests.support.cases import one

MOVES = [("Enter", (0, 0)), ("ArrowRight", (0, 1)), ("ArrowRight", (0, 2)), ("ArrowDown", (1, 2))]


def tab_to(page, selector: str, most: int = 200) -> None:
    """Press Tab until the element at `selector` has focus (a keyboard-only user's way there)."""
    page.locator("body").evaluate("b => { document.activeElement && document.activeElement.blur(); }")
    for _ in range(most):
        page.keyboard.press("Tab")
        if page.evaluate("s => document.activeElement === document.querySelector(s)", selector):
            return
    raise AssertionError(f"Tab never reached {selector}")


def walk(page) -> list:
    """Tab to CSD's lane, press MOVES; [(key, the cell the inspector names, ringed)] per key."""
    button = "#img_csd .image-container button:has(img)"
    assert page.locator(button).get_attribute("aria-label") == LABEL.format(method="csd")
    assert page.locator(button).get_attribute("tabindex") == "0"
    tab_to(page, button)
    got = []
    for key, (r, c) in MOVES:
        page.keyboard.press(key)
        try:                                                         # Enter: the grid's probe, then the cell
            page.wait_for_function("p => { const e = document.querySelector('#inspector .sv-insp');"
                                   " return e && e.getAttribute('data-method') === 'csd' &&"
                                   " Number(e.getAttribute('data-pos')) === p; }", arg=r * GRID[1] + c, timeout=15000)
        except Exception:                                            # noqa: BLE001 - not that cell: read what it is
            pass
        seen = inspected(page, None)
        got.append((key, seen and divmod(seen[1], GRID[1]), seen is not None and ringed(page, "#img_csd img", seen[1])))
    assert page.evaluate("s => document.activeElement === document.querySelector(s)", button), "focus was lost"
    return got


@pytest.mark.browser
@pytest.mark.parametrize("view", one(["1920x1080", "1440x900"], "1440x900"))
def test_tab_enter_and_arrows_inspect_and_ring_each_cell_in_turn(served, view):  # noqa: F811
    browser, url = served
    page = run_page(browser, url, view, ("ar", "sjd", "mcsjd", "csd"))
    got = walk(page)
    page.close()
    assert got == [(k, cell, True) for k, cell in MOVES]


def pixels(page, selector: str):
    """The page's pixels round the element at `selector` (8 px margin: the outline and its offset)."""
    from PIL import Image  # noqa: PLC0415 - only the browser tests read screenshots
    box = page.locator(selector).bounding_box()
    clip = dict(x=max(0, box["x"] - 8), y=max(0, box["y"] - 8), width=box["width"] + 16, height=box["height"] + 16)
    return Image.open(io.BytesIO(page.screenshot(clip=clip))).convert("RGB")


@pytest.mark.browser
def test_every_kind_of_control_shows_a_focus_ring(served, tmp_path):  # noqa: F811
    from PIL import ImageChops  # noqa: PLC0415 - only the browser tests read screenshots
    browser, url = served
    page = run_page(browser, url)
    controls = {"button": "#generate", "slider": "input[type=range]", "checkbox": "#present input[type=checkbox]",
                "lane picture": "#img_csd .image-container button:has(img)"}
    diff = {}
    for name, sel in controls.items():
        page.locator(sel).first.scroll_into_view_if_needed()
        sel_first = f"{sel} >> nth=0"
        page.mouse.click(2, 2)                                      # nothing focused
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        time.sleep(0.3)
        off = pixels(page, sel_first)
        page.keyboard.press("Shift")                                # the last input was the keyboard: focus-visible
        page.locator(sel_first).focus()
        time.sleep(0.3)
        on = pixels(page, sel_first)
        on.save(tmp_path / f"focus_{name.replace(' ', '_')}.png")
        diff[name] = ImageChops.difference(on, off).getbbox() is not None
    page.close()
    assert diff == {name: True for name in controls}, diff


def ringed_soon(page, sel: str, pos: int, seconds: float = 15.0) -> bool:
    """The ring reaches the lane picture in the update after the inspection (follow.outlined): on a loaded machine it
    may come a few seconds after the inspector names the cell; poll for it."""
    return ringed(page, sel, pos, wait_s=seconds)


MAP_MOVES = [("Enter", (0, 1)), ("ArrowDown", (1, 1)), ("ArrowLeft", (1, 0)), ("ArrowLeft", (1, 0))]


@pytest.mark.browser
@pytest.mark.parametrize("view", one(["1920x1080", "1440x900"], "1920x1080"))
def test_a_focused_map_moves_the_inspected_cell_with_the_arrows(served, view):  # noqa: F811
    """Keyboard only: Tab to CSD's lane, Enter, ArrowRight (CSD (0, 1)); Tab on to the Entropy map (labelled "Entropy
    map: Enter inspects, arrows move"): Enter keeps (0, 1), ArrowDown, ArrowLeft x2 -> (1, 1), (1, 0), (1, 0) (the
    edge), each named by the inspector and ringed in CSD's lane picture."""
    from specviz.app.keys import MAP_LABEL  # noqa: PLC0415 - this test's own constant
    browser, url = served
    page = run_page(browser, url, view, ("ar", "sjd", "mcsjd", "csd"))
    lane, shown = "#img_csd .image-container button:has(img)", "#map_entropy .image-container button:has(img)"
    tab_to(page, lane)
    for key in ("Enter", "ArrowRight"):
        page.keyboard.press(key)
        time.sleep(0.5)
    assert page.locator(shown).get_attribute("aria-label") == MAP_LABEL.format(map="Entropy")
    tab_to(page, shown)
    got = []
    for key, (r, c) in MAP_MOVES:
        page.keyboard.press(key)
        try:
            page.wait_for_function("p => { const e = document.querySelector('#inspector .sv-insp');"
                                   " return e && e.getAttribute('data-method') === 'csd' &&"
                                   " Number(e.getAttribute('data-pos')) === p; }", arg=r * GRID[1] + c, timeout=15000)
        except Exception:                                            # noqa: BLE001 - not that cell: read what it is
            pass
        seen = inspected(page, None)
        got.append((key, seen and (seen[0], divmod(seen[1], GRID[1])),
                    seen is not None and ringed_soon(page, "#img_csd img", seen[1])))
    focused = page.evaluate("s => document.activeElement === document.querySelector(s)", shown)
    page.close()
    assert focused, "the map lost the focus"
    assert got == [(k, ("csd", cell), True) for k, cell in MAP_MOVES]


QUICK = [(2, 3), (9, 12)]
OPENING = (5, 5)                                     # the click that docks the inspector before the quick pair


def quick_clicks(page) -> tuple:
    """Dock the inspector first (a click on cell OPENING, waited for: the docked column re-lays the lanes, so the
    picture moves once, 385 px left at 1920x1080 with two lanes), then click cell QUICK[0] of CSD's lane and at once
    QUICK[1] (no wait between, as a user correcting a click does); once the page settles: (the cell the inspector
    names, the second cell ringed, the first cell ringed, the picture where it was for both clicks)."""
    from tests.browser.test_browser_clicks import lane_centre  # noqa: PLC0415 - that module's own helper
    img = page.locator("#img_csd img")
    img.scroll_into_view_if_needed()
    time.sleep(0.3)
    box, natural = img.bounding_box(), img.evaluate("e => [e.naturalWidth, e.naturalHeight]")
    page.mouse.click(*lane_centre(box, natural, *OPENING))
    opening = OPENING[0] * GRID[1] + OPENING[1]
    page.wait_for_function("p => { const e = document.querySelector('#inspector .sv-insp');"
                           " return e && Number(e.getAttribute('data-pos')) === p; }", arg=opening, timeout=30000)
    ringed_soon(page, "#img_csd img", opening)
    img.scroll_into_view_if_needed()
    time.sleep(0.5)
    box = img.bounding_box()
    for r, c in QUICK:
        page.mouse.click(*lane_centre(box, natural, r, c))
    (r, c), last = QUICK[-1], QUICK[-1][0] * GRID[1] + QUICK[-1][1]
    try:
        page.wait_for_function("p => { const e = document.querySelector('#inspector .sv-insp');"
                               " return e && Number(e.getAttribute('data-pos')) === p; }", arg=last, timeout=15000)
    except Exception:                                                # noqa: BLE001 - not that cell: read what it is
        pass
    seen = inspected(page, None)
    first = QUICK[0][0] * GRID[1] + QUICK[0][1]
    return (seen and (seen[0], divmod(seen[1], GRID[1])), ringed_soon(page, "#img_csd img", last),
            ring_now(page, "#img_csd img", first), img.bounding_box() == box)


def ring_now(page, sel: str, pos: int) -> bool:
    """The ring is round cell `pos` now (after the settle of 2 s: an older ring landing late would show here)."""
    time.sleep(2.0)
    return ringed(page, sel, pos, wait_s=0.0)


@pytest.mark.browser
def test_two_quick_clicks_inspect_and_ring_the_second_cell(served):  # noqa: F811
    """A click made while the last one is still answering is not dropped, and no older ring lands after a newer one
    (follow.CLICK "multiple" one at a time; the ring "always_last"; Gradio's default "once" left the inspector or the
    ring on the first cell)."""
    browser, url = served
    page = run_page(browser, url, "1920x1080", ("ar", "csd"))
    got = quick_clicks(page)
    page.close()
    assert got == (("csd", QUICK[-1]), True, False, True)
