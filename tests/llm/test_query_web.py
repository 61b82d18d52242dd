"""`guistate.query` on the mobile-web Feed (issue 46): the page in real headless Chromium through its
chromedriver (no Appium server), read through the real SDK and the reference server; the values are
checked against the page's own DOM, and the cached read gives today's list after a delete at 0 tokens."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from appium import webdriver
from appium.options.common import AppiumOptions

from pytest_guistate import gone
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.core.values import shape_of
from pytest_guistate.devices.device import Device
from pytest_guistate.devices.sim.webview import CHROMIUM_ARGS
from pytest_guistate.devices.web_feed import FeedServer
from pytest_guistate.llm.client import LLMSettings, Mode
from pytest_guistate.llm.facade import open_llm
from pytest_guistate.llm.reference.server import ReferenceServer
from tests.helpers.chromium import require_chromium
from tests.llm.conftest import FAKE_KEY

AUTHORS_JS = "return Array.from(document.querySelectorAll('[data-testid=author]')).map((e) => e.textContent)"


@pytest.fixture
def web_feed() -> Iterator[tuple[Device, TaskSession]]:
    require_chromium()
    from pytest_guistate.devices.sim.webview import locate_chromium

    browser, driver = locate_chromium()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([driver, f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    metrics = {"width": 360, "height": 780, "pixelRatio": 3, "touch": True, "mobile": True}
    caps = {
        "browserName": "chrome",
        "goog:chromeOptions": {
            "binary": browser,
            "args": list(CHROMIUM_ARGS),
            "mobileEmulation": {"deviceMetrics": metrics},
        },
    }
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                device = Device(webdriver.Remote(url, options=AppiumOptions().load_capabilities(caps)), url=url)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        with FeedServer() as feed:
            device.open_url(feed.url)
            try:
                yield device, TaskSession(device, name="query-web")
            finally:
                device.close()
    finally:
        process.kill()
        process.wait(timeout=10)


def test_the_web_feed_is_read_and_replayed_after_a_delete(web_feed, tmp_path: Path, monkeypatch) -> None:
    device, session = web_feed
    session.observe(settled=True)
    names = shape_of(list[str])
    with ReferenceServer() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        settings = LLMSettings(mode=Mode.ANTHROPIC, timeout_s=10.0, updater="off")
        live = open_llm(settings, session, device, test_file=tmp_path / "test_web.py", test_name="test_feed")
        shown = live.query("the names of the authors", names).value
        dom = device.driver.execute_script(AUTHORS_JS)
        assert len(shown) >= 5 and shown == dom[: len(shown)] and shown[0] == "Alice"
        live.close(passed=True)

    session.perform(
        "delete Alice's post", lambda: device.tap("Delete"), expect="Delete post by Alice?", idempotent=False
    )  # the first row's Delete: Alice's
    session.perform("confirm", lambda: device.tap(id="confirm_delete"), expect=gone("Alice"), idempotent=False)
    assert [e["author"] for e in device.action_log() if e["action"] == "delete_post"] == ["Alice"]
    cached = open_llm(
        LLMSettings(mode=Mode.CACHE, updater="off"),
        session,
        device,
        test_file=tmp_path / "test_web.py",
        test_name="test_feed",
    )
    today = cached.query("the names of the authors", names).value
    assert cached.client is None and "Alice" not in today
    assert today == device.driver.execute_script(AUTHORS_JS)[: len(today)]
