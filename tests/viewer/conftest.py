"""Browser fixtures for the trace viewer tests: Debian's headless Chromium driven by Playwright.

Chromium is required, not optional: without it these tests fail and say how to install it
(browser downloads are impossible here, so Playwright is pointed at the system binary).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "report"))

INSTALL = ("apt-get install -y chromium chromium-driver  (Debian; then `pip install playwright` - "
           "never `playwright install`, the tests use the system Chromium)")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.fail(f"the viewer tests need headless Chromium, which is not on PATH: {INSTALL}", pytrace=False)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the viewer tests need Playwright for Python: pip install -e '.[dev]' (or pip install playwright)",
                    pytrace=False)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=ARGS)
        yield chromium
        chromium.close()


class PageProbe:
    """A page plus what it did that a test must see: script errors, dialogs (alert() = XSS)."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.on("dialog", self._dialog)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()


@pytest.fixture
def probe(browser: Any) -> Iterator[PageProbe]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    probe = PageProbe(context.new_page())
    yield probe
    context.close()
    assert probe.errors == [], f"script errors in the page: {probe.errors}"
    assert probe.dialogs == [], f"the page opened dialogs (injected script ran?): {probe.dialogs}"
