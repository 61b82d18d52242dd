"""Screenshots of a desktop Chromium session through the DevTools protocol (issue 12).

chromedriver's W3C screenshot is `Page.captureScreenshot` with the PNG encoder's default effort.
Asked for directly with `optimizeForSpeed`, Chromium encodes the same pixels with less zlib work.
The PNG is larger, and both quicker to make and quicker to decode. On the web Feed (Pixel 7
emulation, 1082x2402) one run measured 113 vs 137 ms per screenshot, and 13.6 vs 21.5 ms for the
oracle's half-size decode (benchmarks/latency_bench.py --appium). On a device this fast, a
screenshot is most of a step.

chromedriver runs its DevTools command as it runs the W3C screenshot: a window command, which
first looks for an open JavaScript dialog. A dialog fails the capture ("unexpected alert open"),
and chromedriver's prompt behaviour applies, as with the W3C screenshot. An earlier version sent a
`title` request after each capture to make that check; it repeated what the capture had done, at
one window command a screenshot (`tests/appium/test_device_real.py` opens a `confirm()` and checks
that both routes fail alike).

The route is tried once per session. A driver without it (another browser, an older chromedriver,
an Appium driver that does not pass it on) gets the W3C screenshot from then on, and `reason` says
why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_guistate.devices.errors import CapabilityUnavailable, driver_call

__all__ = ["COMMAND", "DevtoolsScreenshots", "wants_devtools"]

COMMAND = "guistateExecuteCdp"  # registered on the client: chromedriver's POST .../goog/cdp/execute
_ROUTE = "/session/$sessionId/goog/cdp/execute"
_PARAMS = {"cmd": "Page.captureScreenshot", "params": {"format": "png", "optimizeForSpeed": True}}
_BROWSERS = ("chrome", "chromium")


def wants_devtools(capabilities: Mapping[str, Any]) -> bool:
    """A desktop Chrome or Chromium session, i.e. chromedriver behind it. A phone's browser (platform
    Android or iOS) is left alone: its W3C screenshot shows the whole device screen, the DevTools one
    the page only."""
    browser = str(capabilities.get("browserName") or "").lower()
    platform = str(capabilities.get("platformName") or "").lower()
    return browser in _BROWSERS and platform not in ("android", "ios")


class DevtoolsScreenshots:
    """One session's DevTools screenshot route: `take()` until it is known to work (base64 PNG data,
    or None when the route is not there and the caller takes the W3C screenshot), then `capture()`."""

    def __init__(self, driver: Any, url: str) -> None:
        self.driver = driver
        self.url = url
        self.state = "untried"  # untried | on | off
        self.reason = ""  # why it is off

    def take(self) -> Any:
        """A screenshot while the route is not known to work: the first of the session finds out.
        Base64 text, or None: take the W3C screenshot. Once `state` is "on", the caller uses
        `capture()` instead. Only a driver that does not know the command turns the route off; an open
        JavaScript dialog is the page's state, not a missing route: it fails this screenshot as it would
        fail the W3C one."""
        if self.state == "off":
            return None
        try:
            data = driver_call("screenshot", self.url, self._capture)
        except CapabilityUnavailable as exc:
            self._off(f"no DevTools route ({exc})")
            return None
        # any other failure (an open dialog, a dead node, a timeout) is the device's, as it would be the
        # W3C screenshot's: raised, and the route stays untried
        if not isinstance(data, str):
            self._off(f"the DevTools screenshot answered a {type(data).__name__}, not base64 text")
            return None
        self.state = "on"
        return data

    def capture(self) -> Any:
        """Once the route works: the screenshot's base64 text, as the driver sent it (the caller
        checks it as it checks a W3C answer). chromedriver's dialog check came before it."""
        return driver_call("screenshot", self.url, self._capture)

    def _off(self, why: str) -> None:
        """The route is not there: W3C screenshots for the rest of the session."""
        self.state, self.reason = "off", why.splitlines()[0]

    def _capture(self) -> object:
        executor = self.driver.command_executor
        if COMMAND not in getattr(executor, "_commands", {}):
            executor.add_command(COMMAND, "POST", _ROUTE)
        value = self.driver.execute(COMMAND, _PARAMS)["value"]
        return value.get("data") if isinstance(value, Mapping) else value

