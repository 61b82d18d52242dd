"""Integration tests against a real Appium 3 server (chromium driver, headless Chromium), issue 6.

Run them with a server URL; they are skipped only when none is configured:

    bash .ci/appium.sh install && URL=$(bash .ci/appium.sh start)
    pytest tests/appium -m appium --guistate-device="$URL"            # chromium preset by default
    pytest tests/appium -m appium --guistate-device="$URL" --guistate-caps=caps.json
    bash .ci/appium.sh stop

`--guistate-caps` is optional here: without it these tests use the chromium preset of
`pytest_guistate.devices.capabilities` (write it to a file with
`python -m pytest_guistate.devices.capabilities chromium -o caps.json`).
Tests not marked `appium` in this folder (the static server, the presets) always run.

Tests marked `grid` need a Selenium Grid 4 hub as the device (issue 35), with two relay nodes in
front of two Appium servers; `bash .ci/grid.sh start` starts one and prints its URL:

    bash .ci/grid.sh install && HUB=$(bash .ci/grid.sh start)
    pytest tests/appium -m grid --guistate-device="$HUB" --guistate-caps=caps.json
    bash .ci/grid.sh stop
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from pytest_guistate.config import get_config
from pytest_guistate.devices import capabilities
from pytest_guistate.devices.web_feed import FeedServer
from pytest_guistate.support.httpserver import LoopbackHTTPServer, ServedThread

# The real UI component libraries of .ci/webapps (`bash .ci/webapps.sh`), served by `webapps`
WEBAPPS = Path(__file__).resolve().parents[2] / ".ci" / "webapps"
LIBRARIES = {
    "ionic": "@ionic/core", "framework7": "framework7", "onsen": "onsenui",
    "shoelace": "@shoelace-style/shoelace", "material": "@material/web", "bootstrap": "bootstrap",
    "ui5": "@ui5/webcomponents",
}


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Silent: a test server's request log is noise in pytest's output."""


@pytest.fixture(scope="module")
def webapps() -> Iterator[str]:
    """The .ci/webapps folder on a loopback port; fails (never skips) naming the install command."""
    missing = [pkg for pkg in LIBRARIES.values() if not (WEBAPPS / "node_modules" / pkg / "package.json").is_file()]
    if missing:
        pytest.fail(f"the component libraries {missing} are not installed in {WEBAPPS / 'node_modules'}: "
                    "run `bash .ci/webapps.sh` (npm ci from the committed lock file)")
    handler = functools.partial(_Quiet, directory=str(WEBAPPS))
    served = ServedThread(lambda address: LoopbackHTTPServer(address, handler), host="127.0.0.1", port=0,
                          name="webapps", what="the component libraries' server")
    served.start()
    try:
        yield f"{served.url}/apps/"
    finally:
        served.stop()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "appium: needs a real Appium server (--guistate-device=URL)")
    config.addinivalue_line("markers", "grid: needs a Selenium Grid 4 hub before Appium servers (--guistate-device=HUB)")
    config.addinivalue_line("markers", "grid_fault: kills the Appium servers behind the hub (GUISTATE_GRID_SERVERS)")


@pytest.fixture
def grid_hub(pytestconfig: pytest.Config) -> str:
    """The hub's URL; the test is skipped only when no device is configured or it is not a Grid hub."""
    from pytest_guistate.devices.grid import read_grid_status

    pool = get_config(pytestconfig).pool
    if not pool or read_grid_status(pool[0].url) is None:
        pytest.skip("no Selenium Grid hub configured: pass --guistate-device=http://127.0.0.1:PORT "
                    "(bash .ci/grid.sh start prints one)")
    return pool[0].url


@pytest.fixture(autouse=True)
def _needs_appium_url(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("appium") is None:
        return
    if get_config(request.config).uses_sim:
        pytest.skip("no Appium server configured: pass --guistate-device=http://127.0.0.1:PORT "
                    "(bash .ci/appium.sh start prints one)")


@pytest.fixture(scope="session")
def guistate_capabilities(pytestconfig: pytest.Config, guistate_capabilities: dict[str, Any]) -> dict[str, Any]:
    """The plugin's capabilities when --guistate-caps is given, else the chromium preset."""
    if get_config(pytestconfig).capabilities:
        return guistate_capabilities
    caps = dict(guistate_capabilities)
    caps.update(capabilities.chromium())
    return caps


@pytest.fixture(scope="session")
def feed_server() -> Iterator[FeedServer]:
    with FeedServer() as server:
        yield server


@pytest.fixture
def inner_device(
    pytester: pytest.Pytester, pytestconfig: pytest.Config, guistate_capabilities: dict[str, Any]
) -> Callable[[int], tuple[str, ...]]:
    """`inner_device(command_timeout)` writes caps.json and devices.json for an inner run on the outer
    run's server and returns the options naming them. The inner run's entry differs by its
    `appium:newCommandTimeout` (one value per test), so it is a distinct lease: the inner run never
    waits for the device the outer run holds."""

    def write(command_timeout: int) -> tuple[str, ...]:
        [outer] = get_config(pytestconfig).pool[:1]
        (pytester.path / "caps.json").write_text(json.dumps(guistate_capabilities))
        (pytester.path / "devices.json").write_text(json.dumps([
            {"url": outer.url, "name": "real-chromium", "capabilities": {"appium:newCommandTimeout": command_timeout}},
        ]))
        return "--guistate-device=@devices.json", "--guistate-caps=caps.json"

    return write
