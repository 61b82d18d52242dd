"""Capability presets: headless Chromium through Appium 3, and UiAutomator2 / XCUITest examples.

`--guistate-caps=FILE.json` takes a JSON object; this module builds the presets so they can be
written to such a file (`python -m pytest_guistate.devices.capabilities chromium -o caps.json`)
or returned from a project's `guistate_capabilities` fixture. Every key that a preset does not
know (a device farm's `bstack:options`, `sauce:options`, `lt:options`, ...) passes through to
the server untouched.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["PRESETS", "chromium", "find_chromium", "uiautomator2", "with_native_web_screenshot", "write_preset",
           "xcuitest"]

NATIVE_WEB_SCREENSHOT = "appium:nativeWebScreenshot"


def with_native_web_screenshot(caps: dict[str, Any]) -> dict[str, Any]:
    """UiAutomator2 caps asking for the phone's own screenshot in a web view context (issue 37): without
    it the driver proxies the screenshot to chromedriver, which shows the web view alone (or hangs), so
    the frames of one test would change size and coordinate system at a context switch. A value the
    caps already give is kept; other drivers are left alone (XCUITest's web screenshots are native)."""
    automation = str(caps.get("appium:automationName") or caps.get("automationName") or "").lower()
    if automation != "uiautomator2" or NATIVE_WEB_SCREENSHOT in caps:
        return caps
    return {**caps, NATIVE_WEB_SCREENSHOT: True}

# Names a Chromium and its chromedriver go by on PATH (Debian, Ubuntu's snap wrapper, Google's build).
CHROME_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMEDRIVER_NAMES = ("chromedriver",)


def find_chromium() -> tuple[str | None, str | None]:
    """(browser, chromedriver) found on PATH, first match of each name list; None = not found.
    Issue 15: the preset hard-coded /usr/bin paths that only Debian has."""
    browser = next((found for name in CHROME_NAMES if (found := shutil.which(name))), None)
    driver = next((found for name in CHROMEDRIVER_NAMES if (found := shutil.which(name))), None)
    return browser, driver


def _located(found: str | None, what: str, names: tuple[str, ...], package: str) -> str:
    if found is None:
        raise ValueError(f"no {what} on PATH (looked for {', '.join(names)}): install it "
                         f"(Debian/Ubuntu: sudo apt-get install {package}) or pass its path")
    return found

# Flags that make headless Chromium start fast and quietly in a container (issue 6, checked here):
# no sandbox as root, /dev/shm is tiny in containers, and nothing that phones home.
CHROMIUM_ARGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
)


def chromium(
    *,
    device_name: str | None = "Pixel 7",
    width: int = 412,
    height: int = 915,
    pixel_ratio: float = 2.625,
    chrome_binary: str | None = None,
    chromedriver: str | None = None,
    extra_args: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Appium 3 + appium-chromium-driver + headless Chromium emulating a phone.

    `device_name` picks one of Chromium's built-in phones (Pixel 7: 412x915 CSS px at 2.625, so
    screenshots are 1082x2402); pass `device_name=None` to emulate `width` x `height` at
    `pixel_ratio` instead. `autodownloadEnabled: false` keeps the driver from fetching a
    chromedriver build (no network here); `disableBuildCheck` accepts Debian's matching build.
    No `--user-data-dir`: chromedriver makes a fresh temporary profile per session.
    `chrome_binary` / `chromedriver` default to what `find_chromium()` finds on PATH.
    """
    if chrome_binary is None or chromedriver is None:
        browser, driver = find_chromium()
        chrome_binary = chrome_binary or _located(browser, "Chromium", CHROME_NAMES, "chromium")
        chromedriver = chromedriver or _located(driver, "chromedriver", CHROMEDRIVER_NAMES, "chromium-driver")
    if device_name:
        emulation: dict[str, Any] = {"deviceName": device_name}
    else:
        if width <= 0 or height <= 0 or pixel_ratio <= 0:
            raise ValueError(f"emulated screen must be positive, got {width}x{height} at {pixel_ratio}")
        emulation = {
            "deviceMetrics": {"width": width, "height": height, "pixelRatio": pixel_ratio, "touch": True, "mobile": True},
        }
    return {
        "platformName": "linux",
        "browserName": "chrome",
        "appium:automationName": "Chromium",
        "appium:executable": chromedriver,
        "appium:autodownloadEnabled": False,
        "appium:disableBuildCheck": True,
        "appium:newCommandTimeout": 120,
        "goog:chromeOptions": {
            "binary": chrome_binary,
            "args": [*CHROMIUM_ARGS, *extra_args],
            "mobileEmulation": emulation,
        },
    }


def uiautomator2(
    *, app_package: str, app_activity: str | None = None, udid: str | None = None, app: str | None = None
) -> dict[str, Any]:
    """A real Android phone or emulator through Appium's UiAutomator2 driver (example).

    Differences from the sim: screenshots and bounds are in physical pixels (as in the sim), the
    page source is the same UiAutomator2 XML, `mobile:` commands are the driver's own (the sim's
    `guistate*` ones do not exist), and there is no action log: assert on what the screen shows.
    """
    caps: dict[str, Any] = {
        "platformName": "Android",
        "appium:automationName": "UiAutomator2",
        "appium:appPackage": app_package,
        "appium:noReset": False,
        "appium:newCommandTimeout": 300,
        "appium:disableWindowAnimation": True,
        NATIVE_WEB_SCREENSHOT: True,  # the whole phone in a web view context too (hybrid apps, issue 37)
    }
    if app_activity:
        caps["appium:appActivity"] = app_activity
    if udid:
        caps["appium:udid"] = udid
    if app:
        caps["appium:app"] = app
    return caps


def xcuitest(
    *, bundle_id: str, udid: str | None = None, device_name: str = "iPhone 15", platform_version: str | None = None
) -> dict[str, Any]:
    """An iPhone or simulator through Appium's XCUITest driver (example).

    Differences: the page source is XCUITest XML (`x/y/width/height` in points) and screenshots
    are in pixels (2x or 3x); `Device` measures that scale and reports every box in screenshot
    pixels. There is no back key: `Device.back()` taps the navigation bar's back button (an edge
    swipe where there is no bar) and fails with a clear message at a stack's root or over an
    alert. The sim's iOS persona accepts this preset as it is (`guistate:platform` is implied).
    """
    caps: dict[str, Any] = {
        "platformName": "iOS",
        "appium:automationName": "XCUITest",
        "appium:bundleId": bundle_id,
        "appium:deviceName": device_name,
        "appium:newCommandTimeout": 300,
    }
    if udid:
        caps["appium:udid"] = udid
    if platform_version:
        caps["appium:platformVersion"] = platform_version
    return caps


def _uiautomator2_example() -> dict[str, Any]:
    return uiautomator2(app_package="com.example.feed", app_activity=".MainActivity", udid="emulator-5554")


def _xcuitest_example() -> dict[str, Any]:
    return xcuitest(bundle_id="com.example.feed", udid="00008110-000000000000001E")


PRESETS: dict[str, Callable[[], dict[str, Any]]] = {
    "chromium": chromium,
    "uiautomator2": _uiautomator2_example,
    "xcuitest": _xcuitest_example,
}


def write_preset(name: str, path: Path) -> Path:
    """Write preset `name` as the JSON file `--guistate-caps` reads."""
    try:
        factory = PRESETS[name]
    except KeyError:
        raise ValueError(f"no capability preset {name!r}; presets: {', '.join(PRESETS)}") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(factory(), indent=2) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pytest_guistate.devices.capabilities", description="Print or write a capability preset."
    )
    parser.add_argument("preset", choices=sorted(PRESETS))
    parser.add_argument("-o", "--output", type=Path, help="write to this JSON file instead of stdout")
    args = parser.parse_args(argv)
    if args.preset == "chromium":
        browser, driver = find_chromium()
        print(f"chromium preset: browser {browser or 'NOT FOUND'}, chromedriver {driver or 'NOT FOUND'} "
              "(from PATH)", file=sys.stderr)
        if browser is None or driver is None:
            try:
                chromium()
            except ValueError as exc:
                parser.exit(2, f"error: {exc}\n")
    if args.output:
        write_preset(args.preset, args.output)
    else:
        json.dump(PRESETS[args.preset](), sys.stdout, indent=2)
        sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
