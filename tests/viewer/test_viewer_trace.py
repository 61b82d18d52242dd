"""The viewer items of issue 23 in headless Chromium, at 1400 and 600 px wide: a lightbox with the
full-size file, no sideways scrolling, history that Back walks, a message for a missing step, the
action log (device commands with locator and duration), the test's source line per step, and the
run's metadata. The report is the plugin's own, from a real run of the example suite on the sim."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.viewer.conftest import PageProbe

ROOT = Path(__file__).resolve().parents[2]
TEST = "example_suite/test_feed.py::test_delete_a_post_exactly_once_on_a_stale_list"
WIDTHS = [1400, 600]


@pytest.fixture(scope="module")
def feed_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    artifacts = tmp_path_factory.mktemp("trace") / "artifacts"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", TEST, "--guistate=full", "--guistate-retain=on", "-p", "no:cacheprovider",
         f"--guistate-artifacts={artifacts}", "-q"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    [report] = artifacts.glob("*/report.html")
    return report


@pytest.fixture(params=WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def wide(request: pytest.FixtureRequest, browser: Any) -> Iterator[PageProbe]:
    context = browser.new_context(viewport={"width": request.param, "height": 900})
    probe = PageProbe(context.new_page())
    yield probe
    context.close()
    assert probe.errors == [], f"script errors in the page: {probe.errors}"
    assert probe.dialogs == []


def _shown(page: Any) -> list[str]:
    return page.eval_on_selector_all(".detail.shown", "els => els.map(e => e.id)")


def _no_sideways_scroll(page: Any) -> None:
    width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], f"the page scrolls sideways: {width[0]} px wide in a {width[1]} px window"


def test_a_crop_opens_full_size_in_a_lightbox(wide: PageProbe, feed_report: Path) -> None:
    page = wide.page
    page.goto(feed_report.as_uri() + "#step-1")
    crop = page.locator("#step-1 img.crop").first
    crop.scroll_into_view_if_needed()
    shown = page.evaluate("() => document.querySelector('#step-1 img.crop').getBoundingClientRect().width")
    assert shown >= 200 or shown >= 0.8 * page.viewport_size["width"] - 60, f"a crop shown {shown} px wide"
    natural = page.evaluate("() => document.querySelector('#step-1 img.crop').naturalWidth")
    assert natural > 1  # the display copy was loaded when the step was shown
    crop.click()
    box = page.locator("#lightbox")
    assert box.is_visible()
    page.wait_for_function("() => document.querySelector('#lightbox img').naturalWidth > 1")
    full = page.evaluate("() => document.querySelector('#lightbox img').naturalWidth")
    assert full >= natural, "the lightbox shows the full-size file, not a smaller copy"
    assert "crops/" in page.locator("#lightbox p").inner_text()
    page.keyboard.press("Escape")
    assert not box.is_visible()
    page.locator("#step-1 .frames svg").first.click()  # frames open too
    assert box.is_visible()
    box.click()
    assert not box.is_visible()


def test_no_sideways_scrolling_on_any_step(wide: PageProbe, feed_report: Path) -> None:
    page = wide.page
    page.goto(feed_report.as_uri())
    steps = page.eval_on_selector_all(".detail", "els => els.map(e => e.getAttribute('data-step'))")
    for step in steps:
        page.goto(feed_report.as_uri() + f"#step-{step}")
        _no_sideways_scroll(page)
    page.goto((feed_report.parent.parent / "index.html").as_uri())
    _no_sideways_scroll(page)


def test_back_walks_the_steps_and_a_missing_step_says_so(wide: PageProbe, feed_report: Path) -> None:
    page = wide.page
    page.goto("about:blank")
    page.goto(feed_report.as_uri() + "#step-1")
    assert _shown(page) == ["step-1"]
    page.locator(".film[data-step='2']").click()
    assert _shown(page) == ["step-2"]
    page.go_back()
    assert _shown(page) == ["step-1"] and page.evaluate("() => location.hash") == "#step-1"
    page.go_forward()
    assert _shown(page) == ["step-2"]
    page.go_back()
    page.go_back()
    assert page.url == "about:blank", "Back from the first step seen leaves the report"
    page.goto(feed_report.as_uri() + "#step-999")
    missing = page.locator("#step-missing")
    assert missing.is_visible() and "no step 999" in missing.inner_text()
    assert _shown(page), "a step is still shown below the message"
    page.locator(".film[data-step='1']").click()
    assert not missing.is_visible()


def test_each_step_shows_its_device_commands_and_source_line(wide: PageProbe, feed_report: Path) -> None:
    page = wide.page
    page.goto(feed_report.as_uri() + "#step-1")
    log = page.locator("#step-1 .actions-log")
    assert log.is_visible()
    rows = log.locator("tr").all_inner_texts()
    # the find asks for a ready element (enabled) in the same request: a UiSelector on Android
    locator = """-android uiautomator='new UiSelector().description("Delete post by Carol").enabled(true)'"""
    tap = [r for r in rows if f"findElements {locator}" in r]
    assert tap, rows
    assert any(f"clickElement ({locator})" in r for r in rows), rows
    assert all(r.split("\t")[-1].strip().isdigit() for r in rows[1:]), "every command has its duration in ms"
    source = page.locator("#step-1 .source-line").inner_text()
    assert "test_feed.py:" in source and "open the delete dialog on Carol" in source
    page.goto(feed_report.as_uri() + "#step-2")
    assert "confirm the delete" in page.locator("#step-2 .source-line").inner_text()


def test_the_run_metadata_is_shown_without_secrets(wide: PageProbe, feed_report: Path) -> None:
    page = wide.page
    page.goto(feed_report.as_uri())
    page.locator("#run-meta summary").click()
    meta = page.locator("#run-meta").inner_text()
    for needle in ("started", "UTC", "platform", "android", "pytest-guistate", "capabilities", "com.guistate.feed",
                   "http://127.0.0.1:"):
        assert needle in meta, (needle, meta)
    _no_sideways_scroll(page)


def test_the_sim_request_log_is_the_driver_log(wide: PageProbe, feed_report: Path) -> None:
    page = wide.page
    page.goto(feed_report.as_uri())
    page.locator("#driver-log summary").click()
    text = page.locator("#driver-log pre").inner_text()
    assert "GET /session/" in text and "/screenshot 200" in text and " ms" in text
    assert "request log" in page.locator("#driver-log summary").inner_text()
    _no_sideways_scroll(page)
