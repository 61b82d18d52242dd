"""`guistate appium doctor|start|stop` where nothing is installed: every missing piece is named
with the command that installs it (issue 15). The installed path is tests/appium/test_appium_cli_real.py."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pytest_guistate.cli import main
from pytest_guistate.devices import appium_server


def _bare_path(tmp_path: Path) -> str:
    """A PATH holding node and npm only (no appium, no chromium): what a fresh pip user has."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("node", "npm"):
        found = shutil.which(tool)
        assert found, f"{tool} is needed on this machine for the doctor's version checks"
        (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


def test_doctor_names_what_is_missing_and_how_to_install_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PATH", _bare_path(tmp_path))
    home = tmp_path / "appium-home"
    assert main(["appium", "doctor", "--home", str(home)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("ok      node: ")
    assert f"MISSING appium: not in {home}/node_modules nor on PATH" in out
    assert f"npm install --prefix {home} appium@3 && export APPIUM_HOME={home}" in out
    assert "driver install --source=npm appium-chromium-driver" in out
    assert "MISSING chromium: not on PATH" in out and "sudo apt-get install chromium" in out
    assert "sudo apt-get install chromium-driver" in out
    assert f"guistate appium start --home {home}" in out
    assert out.rstrip().endswith(f"missing: appium, driver chromium, chromium, chromedriver, server (APPIUM_HOME={home})")


def test_doctor_reports_a_url_that_does_not_answer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    findings = appium_server.doctor(tmp_path, "http://127.0.0.1:9", ["uiautomator2"])
    server = findings[-1]
    assert server.what == "server http://127.0.0.1:9" and not server.ok and "no answer" in server.found
    assert any(f.what == "driver uiautomator2" and "appium-uiautomator2-driver" in f.fix for f in findings)


def test_node_range_is_appium_3s(tmp_path: Path) -> None:
    assert appium_server._node_ok((20, 19, 0)) and appium_server._node_ok((22, 12, 1))
    assert appium_server._node_ok((24, 0, 0)) and appium_server._node_ok((25, 1, 0))
    assert not appium_server._node_ok((18, 20, 0)) and not appium_server._node_ok((20, 18, 9))
    assert not appium_server._node_ok((21, 5, 0)) and not appium_server._node_ok((22, 11, 0))


def test_start_without_an_install_says_so_and_stop_on_nothing_is_fine(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PATH", _bare_path(tmp_path))
    monkeypatch.setenv("APPIUM_HOME", str(tmp_path / "home"))
    assert main(["appium", "start"]) == 1
    err = capsys.readouterr().err
    assert f"Appium is not installed in {tmp_path / 'home'} nor on PATH" in err and "guistate appium doctor" in err
    assert main(["appium", "stop"]) == 0
    assert "no server started from" in capsys.readouterr().err
    assert not (tmp_path / "home" / appium_server.STATE_FILE).exists()
    assert os.environ["APPIUM_HOME"] == str(tmp_path / "home")


def test_the_chromium_preset_takes_chromium_from_path_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_guistate.devices import capabilities

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("chromium-browser", "chromedriver"):  # Ubuntu's name for the browser
        tool = bin_dir / name
        tool.write_text("#!/bin/sh\n")
        tool.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    caps = capabilities.chromium()
    assert caps["goog:chromeOptions"]["binary"] == str(bin_dir / "chromium-browser")
    assert caps["appium:executable"] == str(bin_dir / "chromedriver")
    assert capabilities.main(["chromium", "-o", str(tmp_path / "caps.json")]) == 0
    assert f"browser {bin_dir / 'chromium-browser'}, chromedriver {bin_dir / 'chromedriver'}" in capsys.readouterr().err
    (bin_dir / "chromedriver").unlink()
    with pytest.raises(ValueError, match="no chromedriver on PATH .*apt-get install chromium-driver"):
        capabilities.chromium()
