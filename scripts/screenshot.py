"""Screenshot an HTML report in headless Chromium (Debian's), as in docs/report.png:

.venv/bin/python scripts/screenshot.py memgauge-demo.html docs/report.png [--height 1500]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from playwright.sync_api import sync_playwright

ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("html", type=Path)
    parser.add_argument("png", type=Path)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=1500)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=args.chromium, args=ARGS)
        page = browser.new_page(viewport={"width": args.width, "height": args.height})
        page.goto(args.html.resolve().as_uri())
        page.wait_for_selector("body[data-rendered]", state="attached", timeout=15_000)
        page.screenshot(path=str(args.png))
        browser.close()


if __name__ == "__main__":
    main()
