"""A calm screen (app/pinned.py, app/present.py), in a real browser (Debian's Chromium, Playwright) at 1440x900,
1920x1080 and 1920x1080 at 150 % with the default 4 methods: a lane click and a typed commit may bring the results
into view, but a user who scrolls away within a second of either (and, after the click, opens the Primer) stays where
they scrolled — scrollY sampled every
0.25 s for 6 s (the click's inspection, ring and primer arrive meanwhile; the commit's re-run finishes) never
changes, nor does the position of the tabs on the screen. After a commit the re-run's status line and lanes change
size above the reader and the browser moves the page itself (scroll anchoring, a page that got shorter): there no
script may scroll the page or bring an element into view after the user's scroll (every such call is logged)."""
import time

import pytest

from tests.browser.test_browser import RUN_MS
from tests.browser.test_browser_present import VIEWS, in_view, save, served  # noqa: F401 (fixture)
from tests.support.cases import one

# every way a script scrolls the page or an element into view, logged (after the user's scroll: none may come)
WATCH = """() => { window.svScrolls = []; const wrap = (o, n) => { const f = o[n];
  o[n] = function (...a) { window.svScrolls.push(n); return f.apply(this, a); }; };
  wrap(window, 'scrollBy'); wrap(window, 'scrollTo'); wrap(window, 'scroll'); wrap(Element.prototype, 'scrollIntoView');
  wrap(Element.prototype, 'scrollIntoViewIfNeeded'); }"""


def stays(page, seconds: float = 6.0) -> list:
    """scrollY every 0.25 s for `seconds`."""
    out = []
    for _ in range(int(seconds / 0.25)):
        out.append(page.evaluate("() => [window.scrollY, Math.round(document.querySelector('#tabs')"
                                 ".getBoundingClientRect().top)]"))
        time.sleep(0.25)
    return out


def scroll_away(page) -> float:
    """The wheel turned down until the tab bar is 100 px from the top (as a reader who goes on to the Primer), and
    short of the page's end by 120 px (at the end, a page that gets shorter moves the reader whatever the scripts
    do: the browser clamps). On a loaded machine the page may not yet be tall enough to scroll (the click's
    inspection still on its way): the wheel waits, up to 10 s, for 60 px of room; then scrollY is read once it has
    stopped moving (the wheel's smooth scroll has landed)."""
    for _ in range(50):
        room = page.evaluate("() => document.documentElement.scrollHeight - window.innerHeight - window.scrollY")
        box = page.locator("#tabs").bounding_box()
        delta = min(box["y"] - 100, room - 120)
        if delta >= 60:
            break
        time.sleep(0.2)
    page.mouse.move(box["x"] + 20, min(max(box["y"], 0) + 20, page.viewport_size["height"] - 20))
    page.mouse.wheel(0, max(0, delta))
    last = None
    for _ in range(40):                                              # the wheel's scroll lands (<= 8 s)
        time.sleep(0.2)
        y = page.evaluate("() => window.scrollY")
        if y > 0 and y == last:
            break
        last = y
    return page.evaluate("() => window.scrollY")


@pytest.mark.browser
@pytest.mark.parametrize("view", one(VIEWS, "1440x900"))
def test_no_scroll_after_the_user_scrolled_away_from_a_click_or_a_commit(served, tmp_path, view):  # noqa: F811
    browser, url = served
    w, h, dpr = VIEWS[view]
    page = browser.new_page(viewport={"width": w, "height": h}, device_scale_factor=dpr)
    page.set_default_timeout(90_000)
    page.goto(url)
    page.click("#generate")
    page.locator("#status").filter(has_text="All done").wait_for(timeout=RUN_MS)
    time.sleep(1)
    img = page.locator("#img_csd img")                               # 1. a lane click, then the wheel
    img.scroll_into_view_if_needed()
    box = img.bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.4, box["y"] + box["height"] * 0.6)
    time.sleep(0.3)
    y = scroll_away(page)
    assert y > 50, f"the wheel did not scroll ({y})"
    assert in_view(page, "#tab_primer-button")
    page.click("#tab_primer-button")                                 # on to the Primer: no scroll needed
    ys = stays(page)
    assert page.locator("#inspector .sv-insp").count(), "the click inspected nothing"
    assert {a for a, _ in ys} == {y} and len({b for _, b in ys}) == 1, f"{view}: after a lane click: {ys}"
    page.evaluate("() => window.scrollTo(0, 0)")                     # 2. a typed commit, then the wheel
    time.sleep(0.5)
    box = page.locator("#lam input[type=number]")
    box.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("3")
    page.keyboard.press("Enter")
    time.sleep(0.5)
    y = scroll_away(page)
    assert y > 50, f"the wheel did not scroll ({y})"
    page.evaluate(WATCH)
    ys = stays(page)
    assert page.evaluate("() => window.svScrolls") == [], f"{view}: the page scrolled after the user did"
    page.locator("#status").filter(has_text="All done").wait_for(timeout=RUN_MS)
    assert page.locator("#stats_csd .sv-knobs").inner_text().startswith("λ 3 ")
    save(page, tmp_path, f"calm_{view}")
    page.close()
