"""The Atlas tab in a real browser (Chromium via Playwright, same setup as test_browser.py): build the default small
atlas, see the headline table, the claims, both figures and the downloads. Screenshot: <tmp>/atlas.png."""
import pytest

from tests.browser.test_browser import page_and_model, shot  # noqa: F401 (the fixture is used by name)


@pytest.mark.browser
def test_atlas_tab_in_chromium(page_and_model, tmp_path):  # noqa: F811
    page, _ = page_and_model
    page.click("#tab_atlas-button")
    page.locator("#at_go").click()
    page.locator("#at_files a").nth(5).wait_for(timeout=240_000)         # JSONL, JSON, 2 PNG, 2 PDF
    table = page.locator("#at_table")
    table.filter(has_text="cascade").wait_for()
    page.locator("#at_plot").scroll_into_view_if_needed()
    shot(page, tmp_path, "atlas", full_page=True)
    cells = table.inner_text().split("\n")
    assert [c for c in cells if c in ("ar", "sjd", "csd", "cascade")] == ["ar", "sjd", "csd", "cascade"]
    assert "relaxed in low detail %" in table.inner_text()
    assert "CSD relaxes where the target is uncertain" in page.locator("#at_claims").inner_text()
    names = page.locator("#at_files").inner_text().replace("\n", "")
    assert all(n in names for n in ("atlas.jsonl", "atlas.json", "atlas.png", "atlas_maps.pdf")), names
    assert page.locator("#at_plot img, #at_plot canvas, #at_plot svg").count() >= 1
    assert "Traceback" not in page.content()
