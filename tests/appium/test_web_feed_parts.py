"""The parts of the real-Appium setup that need no Appium: the Feed's server, presets, locators."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from selenium.common.exceptions import InvalidSelectorException

from pytest_guistate.devices import capabilities, web
from pytest_guistate.devices.web_feed import FeedServer


def fetch(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Content-Type", ""), exc.read().decode()


def test_feed_server_serves_only_its_files(feed_server: FeedServer) -> None:
    status, kind, body = fetch(feed_server.page_url(delay_ms=1500))
    assert status == 200 and kind.startswith("text/html") and 'data-testid="posts"' in body
    status, kind, body = fetch(feed_server.url + "feed.js")
    assert status == 200 and kind.startswith("text/javascript") and "__guistateActionLog" in body
    assert fetch(feed_server.url + "server.py")[0] == 404
    assert fetch(feed_server.url + "../server.py")[0] == 404
    assert fetch(feed_server.url + "static/")[0] == 404
    assert "200 /index.html?delay=1500&refresh=600&toast=1500" in feed_server.hits()


def test_feed_server_refuses_bad_settings(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="loopback only"):
        FeedServer(host="0.0.0.0")
    with pytest.raises(FileNotFoundError, match="no index.html"):
        FeedServer(static_dir=tmp_path)
    with pytest.raises(RuntimeError, match="not started"):
        _ = FeedServer().url
    with FeedServer() as server, pytest.raises(ValueError, match="delay_ms must be >= 0"):
        server.page_url(delay_ms=-1)


def test_chromium_preset_has_what_worked_here() -> None:
    caps = capabilities.chromium()
    assert caps["platformName"] == "linux" and caps["appium:automationName"] == "Chromium"
    assert caps["appium:autodownloadEnabled"] is False and caps["appium:disableBuildCheck"] is True
    options = caps["goog:chromeOptions"]
    assert options["binary"] == "/usr/bin/chromium"
    assert "--disable-dev-shm-usage" in options["args"] and "--no-sandbox" in options["args"]
    assert options["mobileEmulation"] == {"deviceName": "Pixel 7"}
    metrics = capabilities.chromium(device_name=None, width=360, height=800, pixel_ratio=3.0)
    assert metrics["goog:chromeOptions"]["mobileEmulation"]["deviceMetrics"]["pixelRatio"] == 3.0
    with pytest.raises(ValueError, match="must be positive"):
        capabilities.chromium(device_name=None, width=0)


def test_presets_write_the_json_the_caps_option_reads(tmp_path: Path) -> None:
    for name in capabilities.PRESETS:
        path = capabilities.write_preset(name, tmp_path / f"{name}.json")
        assert json.loads(path.read_text()) == capabilities.PRESETS[name]()
    assert json.loads((tmp_path / "xcuitest.json").read_text())["appium:automationName"] == "XCUITest"
    assert json.loads((tmp_path / "uiautomator2.json").read_text())["appium:udid"] == "emulator-5554"
    with pytest.raises(ValueError, match="no capability preset 'espresso'"):
        capabilities.write_preset("espresso", tmp_path / "x.json")
    assert capabilities.main(["chromium", "-o", str(tmp_path / "cli.json")]) == 0
    assert json.loads((tmp_path / "cli.json").read_text()) == capabilities.chromium()


class _Page:
    """A driver whose page answers the locator script with a fixed value."""

    def __init__(self, answer: object) -> None:
        self.answer = answer
        self.calls: list[tuple[object, ...]] = []

    def execute_script(self, script: str, *args: object) -> object:
        self.calls.append(args)
        return self.answer


def test_web_locators_pass_their_value_as_an_argument_and_say_what_the_page_answered() -> None:
    page = _Page({"el": "E", "rank": 1, "why": "covered by <div>"})
    located = web.locate(page, "desc", 'say "it\'s"')
    assert page.calls == [("desc", 'say "it\'s"')]  # no quoting into an expression: the value is an argument
    assert located == web.Located("E", 1, "covered by <div>") and not located.ready
    assert web.locate(_Page(None), "text", "x") is None
    with pytest.raises(InvalidSelectorException, match="invalid xpath '//\\[': bad"):
        web.locate(_Page({"invalid": "bad"}), "xpath", "//[")
    with pytest.raises(ValueError, match="unknown locator kind"):
        web.locate(_Page(None), "css", "x")


def test_html_page_source_is_recognised() -> None:
    assert web.looks_like_html('<html lang="en"><head>')
    assert web.looks_like_html("\n<!DOCTYPE html><html>")
    assert not web.looks_like_html("<?xml version='1.0'?><hierarchy><node text='<html'/></hierarchy>")
