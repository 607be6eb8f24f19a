"""Same image as AR, as a person sees it (Chromium at 1920x1080): with Noise = keyed chosen under "Sampling and
drafting", the sjd lane says it is identical to AR, csd's lane gives the number of tokens it changed (checked against
the two traces the served page makes), and in Present mode the "Changed vs AR" map is inside the viewport."""
import re
import time

import pytest

from specviz.analysis import paired
from specviz.analysis.views import MAPS
from tests.browser.test_browser import RUN_MS
from tests.browser.test_browser_present import in_view, page_trace, save, served  # noqa: F401 (fixture)
from tests.support.apptools import module_gradio_tmp  # noqa: F401 (fixture: one cache dir for the server)

FPS = "shipped"     # app.build_demo's own frame rate (tests/browser/test_browser_present.served): read after runs


def keyed_race(browser, url):
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    page.set_default_timeout(60_000)
    page.goto(url)
    page.locator("#setup").get_by_text("Sampling and drafting").first.click()   # the closed accordion
    page.locator("#noise").get_by_text("keyed", exact=True).click()
    page.click("#generate")
    page.get_by_text("All done").first.wait_for(timeout=RUN_MS)
    time.sleep(0.5)
    return page


@pytest.mark.browser
def test_keyed_lanes_say_identical_or_changed_and_the_map_is_in_view_in_present_mode(served, tmp_path):  # noqa: F811 (the fixture)
    browser, url = served
    page = keyed_race(browser, url)
    ar = page_trace("ar", noise="keyed").tokens
    assert page_trace("sjd", noise="keyed").tokens == ar                 # what the lane is about to claim
    changed = len(paired.changed_positions(page_trace("csd", noise="keyed").tokens, ar))
    assert changed > 0
    sjd, csd = page.locator("#stats_sjd").inner_text(), page.locator("#stats_csd").inner_text()
    assert "identical to AR ✓" in sjd and "changed vs AR" not in sjd, sjd
    said = re.search(r"(\d+) tokens? changed vs AR", csd)
    assert said and int(said.group(1)) == changed and "identical" not in csd, csd
    save(page, tmp_path, "keyed_1920x1080")
    page.keyboard.press("p")                                           # Present mode
    page.wait_for_function("document.body.classList.contains('sv-present')")
    page.get_by_role("tab", name=MAPS["changed"].title).click()
    page.locator("#map_changed img").wait_for()
    time.sleep(0.8)
    save(page, tmp_path, "keyed_present_1920x1080")
    for sel in ("#map_changed img", "#stats_sjd", "#stats_csd", "#img_ar img", "#img_csd img"):
        assert in_view(page, sel), f"present: {sel} is not inside the viewport"
    page.close()
