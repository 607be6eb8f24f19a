"""The Sweep tab under the page's keyed noise in a real browser (Chromium via Playwright, same setup as
test_browser.py; the sweep's model is the tiny toy): the page's Noise = keyed shows in the tab's Noise control, the
"tokens changed vs AR" sweep runs and its table shows mean ± SE per point.
Screenshots: <tmp>/sweep_keyed.png, <tmp>/sweep_keyed_plot.png."""
import pytest

from tests.browser.test_browser import page_and_model, shot  # noqa: F401 (the fixture is used by name)


@pytest.mark.browser
def test_a_keyed_sweep_from_the_tab_in_chromium(page_and_model, tmp_path, monkeypatch):  # noqa: F811
    from specviz.analysis import sweep  # the sweep loads its model by name: the toy stands in for scenes
    from tests.support.toy import toy
    model = toy(codes=5, grid=3, sharpen=0.5)[0]
    monkeypatch.setattr(sweep, "load_model", lambda name: model)
    page, _ = page_and_model
    page.locator("#noise input[value=keyed]").check()                 # the page's control, in the left column
    page.click("#tab_sweep-button")
    page.locator("#sw_noise input[value=keyed]").wait_for()
    page.wait_for_function("() => document.querySelector('#sw_noise input[value=keyed]').checked")
    page.locator("#sw_values input, #sw_values textarea").first.fill("0,2")
    page.locator("#sw_measure input").click()
    page.get_by_role("option", name="tokens changed vs AR per image").click()
    page.locator("#sw_go").click()
    table = page.locator("#sw_table")
    table.filter(has_text="csd lam=2").wait_for(timeout=120_000)
    page.locator("#sw_plot img").first.wait_for(timeout=60_000)
    page.wait_for_function("() => !document.querySelector('#sw_table .pending, #sw_plot .pending')")
    page.locator("#sw_plot").scroll_into_view_if_needed()
    shot(page, tmp_path, "sweep_keyed", full_page=True)
    page.locator("#sw_plot").screenshot(path=str(tmp_path / "sweep_keyed_plot.png"))
    text = table.inner_text()
    assert "±" in text and "identical" in text, text
    assert "error" not in page.locator(".toast-body").all_inner_texts().__str__().lower()
    assert "Traceback" not in page.content()
