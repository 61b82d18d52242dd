"""`guistate appium start|doctor|stop` with a real Appium 3 install (issue 15).

The Appium folder is `APPIUM_HOME` (what docs/appium.md has a pip user export), else the project's
`.appium/` that `.ci/appium.sh install` fills."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_guistate.devices import appium_server

pytestmark = pytest.mark.appium

ROOT = Path(__file__).resolve().parents[2]


def test_start_doctor_stop_a_second_server(capsys: pytest.CaptureFixture[str]) -> None:
    home = Path(os.environ.get("APPIUM_HOME") or ROOT / ".appium")
    assert appium_server.appium_bin(home) is not None, f"no Appium in {home}: the appium set needs one installed"
    # a server the user started from this folder is theirs: refuse clearly rather than stop it
    assert appium_server._started_url(home) is None, f"stop the server started from {home} first"
    url = appium_server.start(home, timeout=90)
    try:
        assert url.startswith("http://127.0.0.1:") and appium_server.server_status(url)[0]
        assert appium_server.start(home) == url  # a second start reuses the running server
        findings = appium_server.doctor(home, None, ["chromium"])
        assert [f.what for f in findings if not f.ok] == [], "\n".join(f.line() for f in findings)
        assert findings[-1].what == f"server {url}" and "Appium 3." in findings[-1].found
    finally:
        assert appium_server.stop(home)
    assert not appium_server.server_status(url, timeout=1.0)[0]
    assert not (home / appium_server.STATE_FILE).exists()
