"""The README screenshots: the real app on the embedded model, after one run with the default methods.

    python scripts/screenshot.py [--out docs/img/screenshot.png] [--mid mid.png] [--present docs/img/present.png]
                                 [--replay docs/img/replay.png] [--present10 docs/img/present_1440x900_10.png]

Starts `python app.py` on a free port (specviz.app.serving.served_app), drives Debian's Chromium with Playwright, clicks
Generate, optionally captures a mid-run frame, waits for "All done" and saves the window (1440x1000). --present: a
1920x1080 window in Present mode after a click on a cell of the CSD lane (the verdict, the cell ringed in every lane
and map); --replay: the Replay tab at 1920x1080 after a few seconds of Play; --present10: Present mode at 1440x900
with every registered method after a click on a cell of the CSD lane.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from specviz.app.serving import served_app  # noqa: E402

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/img/screenshot.png")
    ap.add_argument("--mid", default=None, help="also save a frame taken while the methods race")
    ap.add_argument("--present", default=None, help="also save Present mode at 1920x1080 after a click")
    ap.add_argument("--replay", default=None, help="also save the Replay tab at 1920x1080 while it plays")
    ap.add_argument("--present10", default=None, help="also save Present mode at 1440x900 with every method")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright
    with served_app("--threads", "1") as (_, url), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        page.set_default_timeout(120_000)
        page.goto(url)
        page.click("#generate")
        if args.mid:
            page.locator("#img_ar img").wait_for()
            time.sleep(0.6)
            page.screenshot(path=args.mid)
        page.locator("#status").filter(has_text="All done").wait_for()
        page.locator("#map_entropy img").wait_for()
        time.sleep(1.0)
        page.screenshot(path=args.out, full_page=False)
        print(page.locator("#status").inner_text())
        for out, shoot, size in ((args.present, present, (1920, 1080)), (args.replay, replay, (1920, 1080)),
                                 (args.present10, present10, (1440, 900))):
            if out:
                wide = browser.new_page(viewport={"width": size[0], "height": size[1]})
                wide.set_default_timeout(600_000)                   # every method on one thread: minutes
                shoot(wide, url)
                wide.screenshot(path=out)
                print(f"wrote {out}")
        browser.close()
    print(f"wrote {args.out}")
    return 0


def _run(page, url: str) -> None:
    page.goto(url)
    page.click("#generate")
    page.locator("#status").filter(has_text="All done").wait_for()


def present(page, url: str, methods=()) -> None:
    """Present mode (with `methods` ticked besides the defaults), a cell of the CSD lane clicked, its ring drawn
    everywhere."""
    page.goto(url + ("" if methods else "?present=1"))
    for label in methods:
        box = page.locator("#methods label").filter(has_text=re.compile(rf"^\s*{re.escape(label)}\s*$")).first
        box.scroll_into_view_if_needed()
        if not box.locator("input").is_checked():
            box.click()
    page.click("#generate")
    page.locator("#status").filter(has_text="All done").wait_for()
    if methods:
        page.keyboard.press("p")
        page.wait_for_function("document.body.classList.contains('sv-present')")
        time.sleep(1.2)
    box = page.locator("#img_csd img").bounding_box()
    before = page.locator("#img_ar img").evaluate("e => e.src")
    page.mouse.click(box["x"] + box["width"] * 0.42, box["y"] + box["height"] * 0.3)
    page.locator("#sv-verdict").wait_for()
    page.wait_for_function("src => document.querySelector('#img_ar img').src !== src", arg=before)
    time.sleep(1.5)


def present10(page, url: str) -> None:
    """Present mode with every method ticked, a cell of the CSD lane clicked."""
    from specviz.engine.registry import (
        METHODS,  # the method list (the script's start needs no engine)
        get,
    )
    present(page, url, [get(m).label for m in METHODS])


def replay(page, url: str) -> None:
    """The Replay tab after about three seconds of Play."""
    _run(page, url)
    page.click("#tab_replay-button")
    page.click("#replay_play")
    time.sleep(3.0)
    page.click("#replay_play")
    time.sleep(1.0)
    page.locator("#replay_image").scroll_into_view_if_needed()


if __name__ == "__main__":
    sys.exit(main())
