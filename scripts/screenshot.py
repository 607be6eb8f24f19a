"""The README screenshot: the real app on the embedded model, after one run with the default methods.

    python scripts/screenshot.py [--out assets/screenshot.png] [--mid mid.png]

Starts `python app.py` on a free port (specviz.app.serving.served_app), drives Debian's Chromium with Playwright, clicks
Generate, optionally captures a mid-run frame, waits for "All done" and saves a full-page screenshot.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from specviz.app.serving import served_app  # noqa: E402

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="assets/screenshot.png")
    ap.add_argument("--mid", default=None, help="also save a frame taken while the methods race")
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
        browser.close()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
