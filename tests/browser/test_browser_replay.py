"""The synchronized replay in a real browser (Debian's Chromium, Playwright) at a laptop's 1440x900: after a run, the
Replay tab's Play advances the common clock (the slider, the caption and the picture change), Pause stops it, and the
picture of every lane sits inside the viewport's width, not clipped. Screenshots land in the test's tmp directory
(and in a folder named by SPECVIZ_SCREENSHOTS; 1 = docs/screenshots)."""
import time

import pytest

from specviz.app.replay_tab import PAUSE, PLAY
from tests.browser.test_browser_present import after_run, clipped, save, served  # noqa: F401 (fixture)
from tests.support.apptools import module_gradio_tmp  # noqa: F401 (fixture: the server outlives single tests)

FPS = "shipped"     # app.build_demo's own frame rate (tests/browser/test_browser_present.served): read after runs


def clock(page) -> int:
    return int(float(page.locator("#replay_step input[type=number]").input_value()))


@pytest.mark.browser
def test_play_advances_the_clock_and_pause_stops_it(served, tmp_path):  # noqa: F811 (fixture)
    browser, url = served
    page = after_run(browser, url)
    page.click("#tab_replay-button")
    page.get_by_text("Nothing has happened yet").first.wait_for()
    src = page.locator("#replay_image img").get_attribute("src")
    assert clock(page) == 0
    page.click("#replay_play")
    page.wait_for_function("() => Number(document.querySelector('#replay_step input[type=number]').value) >= 3")
    page.wait_for_function("s => document.querySelector('#replay_image img').src !== s", arg=src)
    page.get_by_text("Clock: target forward").first.wait_for()
    assert page.locator("#replay_play").inner_text().strip() == PAUSE
    for _ in range(5):                          # while playing, the caption is the slider's clock value (in step)
        got = page.evaluate("() => [Number(document.querySelector('#replay_step input[type=number]').value), "
                            "document.querySelector('#replay_caption').innerText]")
        assert f"Clock: target forward {got[0]} of 144" in got[1], got
        time.sleep(0.3)
    page.click("#replay_play")
    time.sleep(1.0)                                                     # a tick in flight lands
    stopped, caption = clock(page), page.locator("#replay_caption").inner_text()
    assert 3 <= stopped < 144 and f"Clock: target forward {stopped} of 144" in caption
    assert page.locator("#replay_play").inner_text().strip() == PLAY
    time.sleep(1.5)
    assert clock(page) == stopped and page.locator("#replay_caption").inner_text() == caption
    img = page.locator("#replay_image img")
    box = img.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 1440 and box["width"] >= 600, box
    natural = img.evaluate("e => [e.naturalWidth, e.clientWidth]")
    assert natural[0] == 1280 and natural[1] >= 600                     # the whole picture, scaled, not cropped
    assert not clipped(page, "#replay_caption, #replay_image")
    page.evaluate("() => document.querySelector('#replay_play').scrollIntoView()")
    page.wait_for_function("() => { const i = document.querySelector('#replay_tree img'); "
                           "return i && i.complete && i.naturalWidth > 0 && i.clientHeight > 100; }")
    time.sleep(0.5)
    save(page, tmp_path, "replay_1440x900")
    box = img.bounding_box()                                            # lane 0 (AR): x 1-25 %, y 38-80 %
    page.mouse.click(box["x"] + box["width"] * 0.1, box["y"] + box["height"] * 0.6)
    page.wait_for_function("() => document.querySelector('#inspector .sv-insp')")
    assert page.locator("#inspector .sv-insp").first.get_attribute("data-method") == "ar"
    page.close()
