"""The README's picture: the H200 example's summary, every record with its measured decision.

    .venv/bin/python tools/screenshot.py            # writes docs/assets/screenshot.png
    .venv/bin/python tools/screenshot.py -o x.png   # somewhere else

Builds the example's site in a temporary folder (the example's own files are not touched),
serves it on 127.0.0.1 and photographs the summary page in Debian's Chromium through
Playwright, at one fixed viewport (1280 x 860, light, device scale 1, no animation), so the
same site gives the same picture on the same machine.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "h200-decode"
OUTPUT = REPO / "docs" / "assets" / "screenshot.png"
CHROMIUM = Path("/usr/bin/chromium")
VIEWPORT = {"width": 1280, "height": 860}
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--no-first-run"]


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def served(folder: Path) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def shoot(browser: Any, url: str, output: Path) -> None:
    """The summary page at `url` photographed into `output` (PNG), its first screen only."""
    context = browser.new_context(
        viewport=VIEWPORT, color_scheme="light", device_scale_factor=1, reduced_motion="reduce"
    )
    try:
        page = context.new_page()
        page.goto(url + "summary.html")
        page.wait_for_load_state("networkidle")
        output.parent.mkdir(parents=True, exist_ok=True)
        try:
            page.screenshot(path=str(output), animations="disabled", caret="hide")
        except Exception:  # Chromium's "Unable to capture screenshot" under load: once more
            page.wait_for_timeout(1000)
            page.screenshot(path=str(output), animations="disabled", caret="hide")
    finally:
        context.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "h200-decode"
        shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("site"))
        cmd = [sys.executable, "-m", "generator", "build", "--site", "--quiet"]
        proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            sys.stderr.write(proc.stdout + proc.stderr)
            return proc.returncode
        with served(root / "site") as url, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
            try:
                shoot(browser, url, args.output)
            finally:
                browser.close()
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
