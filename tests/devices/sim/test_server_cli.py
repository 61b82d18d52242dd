"""`serve_sim`: prints its URL, serves real sessions, stops cleanly on SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys

from appium import webdriver
from appium.options.android import UiAutomator2Options
from appium.options.ios import XCUITestOptions

from pytest_guistate.devices.sim.cli import serve_sim


def test_serve_until_sigterm() -> None:
    code = "import sys; from pytest_guistate.devices.sim.cli import serve_sim; sys.exit(serve_sim(sys.argv[1:]))"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "--port", "0", "--width", "540", "--height", "1200"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline()
        assert "serving simulated phones at http://127.0.0.1:" in line, line + proc.stderr.read()
        assert "Android: UiAutomator2, 540x1200 px; iOS: XCUITest, 393x852 pt" in line  # both personas, both units
        url = line.split(" at ")[1].split()[0]
        drv = webdriver.Remote(url, options=UiAutomator2Options())
        assert drv.get_window_size() == {"width": 540, "height": 1200}
        drv.quit()
        ios = webdriver.Remote(url, options=XCUITestOptions())  # --width/--height are Android pixels
        assert ios.get_window_size() == {"width": 393, "height": 852}  # an iPhone 15, in points
        ios.quit()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
        assert proc.returncode == 0, err
        assert "stopped" in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_bad_arguments_are_refused(capsys: object) -> None:
    assert serve_sim(["--host", "0.0.0.0", "--port", "0"]) == 2
    assert serve_sim(["--width", "100", "--port", "0"]) == 2
