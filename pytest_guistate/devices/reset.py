"""Reset the app between tests that share one Appium session (issue 12, `--guistate-session=worker`).

A new UiAutomator2 or XCUITest session costs seconds; resetting the app in a live one costs a
few commands. The reset is chosen from the session's capabilities, per driver:

- the sim: `mobile: guistateReset` (a fresh phone built from the next test's capabilities);
- UiAutomator2: `mobile: clearApp` + `mobile: activateApp` (data cleared, like a new session
  with `appium:noReset` false); with `appium:noReset` true only terminate + activate (data kept,
  as the user asked);
- XCUITest: `mobile: terminateApp` + `mobile: launchApp`; with `appium:app` and no `noReset`,
  remove + install first (clears the app container). The keychain survives both (iOS keeps it
  across reinstalls; `mobile: clearKeychains` works on simulators only, so it is left to the hook);
- Chromium: in every window, dismiss an alert, clear local/session storage and cookies, close
  every window but the first, then load the session's start URL.

`appium:fullReset` (a reinstall per session) and a driver with no known reset raise
`ResetUnavailable`: the caller opens a new session instead. Nothing here imports pytest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from selenium.common.exceptions import (
    InvalidSessionIdException,
    NoAlertPresentException,
    NoSuchWindowException,
    UnexpectedAlertPresentException,
    WebDriverException,
)

from pytest_guistate.devices.errors import DeviceError, driver_call

if TYPE_CHECKING:
    from pytest_guistate.devices.device import Device

__all__ = [
    "ResetOutcome",
    "ResetUnavailable",
    "driver_kind",
    "incompatible_keys",
    "reset_app",
    "session_gone",
]

SIM, UIAUTOMATOR2, XCUITEST, CHROMIUM = "sim", "uiautomator2", "xcuitest", "chromium"

# Capabilities a reset can apply to a live session (the app to start); any other difference
# between the held session's capabilities and a test's needs a new session.
_RESETTABLE: dict[str, frozenset[str]] = {
    UIAUTOMATOR2: frozenset({"appium:appPackage", "appium:appActivity", "guistate:faults", "guistate:seed"}),
    XCUITEST: frozenset({"appium:bundleId", "guistate:faults", "guistate:seed"}),
    CHROMIUM: frozenset({"guistate:faults", "guistate:seed"}),
}
_SIM_FIXED = frozenset({"guistate:screen"})  # the screen size is measured once per session

# How servers say the session is gone: W3C `invalid session id`, chromedriver's wording, and the
# UiAutomator2 server's own after a crash.
_GONE_HINTS = ("invalid session id", "session is either terminated or not started", "no such session",
               "a session is either terminated", "session not found")


@dataclass(frozen=True)
class ResetOutcome:
    """Which reset ran and what it did, for the journal and the report header."""

    driver: str  # sim, uiautomator2, xcuitest, chromium, or hook
    detail: str

    def describe(self) -> str:
        return f"{self.driver}: {self.detail}"


class ResetUnavailable(Exception):
    """This session cannot be reset in place; open a new one (the message says why)."""


def driver_kind(caps: Mapping[str, Any], *, is_sim: bool) -> str:
    """The reset family of a session: sim, uiautomator2, xcuitest, chromium, or '' (unknown)."""
    if is_sim:
        return SIM
    automation = str(caps.get("appium:automationName") or caps.get("automationName") or "").lower()
    if automation in (UIAUTOMATOR2, XCUITEST, CHROMIUM):
        return automation
    if caps.get("browserName"):
        return CHROMIUM if "chrom" in str(caps["browserName"]).lower() else ""
    return ""


def incompatible_keys(kind: str, held: Mapping[str, Any], wanted: Mapping[str, Any]) -> list[str]:
    """Capabilities that differ between the held session and a test and that no reset can apply."""
    differ = sorted(k for k in set(held) | set(wanted) if held.get(k) != wanted.get(k))
    if kind == SIM:
        return [k for k in differ if k in _SIM_FIXED]
    allowed = _RESETTABLE.get(kind, frozenset())
    return [k for k in differ if k not in allowed]


def session_gone(exc: BaseException) -> bool:
    """True when the server no longer knows the session (expired by `newCommandTimeout`, deleted)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, InvalidSessionIdException):
            return True
        text = (getattr(seen, "msg", None) or str(seen)).lower()
        if any(hint in text for hint in _GONE_HINTS):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def reset_app(device: Device, kind: str, caps: Mapping[str, Any], *, start_url: str = "") -> ResetOutcome:
    """Reset the app of `device` for a test with capabilities `caps` (`ResetUnavailable`, `DeviceError`)."""
    if kind == SIM:
        result = device.mobile("guistateReset", {"capabilities": dict(caps)})
        package = (result or {}).get("package", "") if isinstance(result, dict) else ""
        return ResetOutcome(SIM, f"mobile: guistateReset (a fresh phone{', ' + package if package else ''})")
    if _flag(caps, "appium:fullReset"):
        raise ResetUnavailable("appium:fullReset asks for a reinstall per session")
    if kind == UIAUTOMATOR2:
        return _reset_android(device, caps)
    if kind == XCUITEST:
        return _reset_ios(device, caps)
    if kind == CHROMIUM:
        return _reset_browser(device, start_url)
    name = caps.get("appium:automationName") or caps.get("browserName") or "(none)"
    raise ResetUnavailable(f"no app reset is known for automationName {name!r}")


def _flag(caps: Mapping[str, Any], name: str) -> bool:
    value = caps.get(name)
    return value is True or str(value).lower() == "true"


def _run_commands(
    device: Device, kind: str, target: str, commands: list[tuple[str, dict[str, Any]]], note: str = ""
) -> ResetOutcome:
    """Run `mobile: <command>` for each in order; the outcome names exactly what ran, on `target`."""
    for command, params in commands:
        device.mobile(command, params)
    detail = " + ".join(command for command, _ in commands) + f" {target}"
    return ResetOutcome(kind, f"{detail} ({note})" if note else detail)


def _reset_android(device: Device, caps: Mapping[str, Any]) -> ResetOutcome:
    package = caps.get("appium:appPackage")
    if not package:
        raise ResetUnavailable("no appium:appPackage: there is no app under test to reset")
    app = {"appId": package}
    if _flag(caps, "appium:noReset"):
        return _run_commands(device, UIAUTOMATOR2, package, [("terminateApp", app), ("activateApp", app)],
                             "appium:noReset: data kept")
    return _run_commands(device, UIAUTOMATOR2, package, [("clearApp", app), ("activateApp", app)])


def _reset_ios(device: Device, caps: Mapping[str, Any]) -> ResetOutcome:
    bundle = caps.get("appium:bundleId")
    if not bundle:
        raise ResetUnavailable("no appium:bundleId: there is no app under test to reset")
    app, installer = {"bundleId": bundle}, caps.get("appium:app")
    if installer and not _flag(caps, "appium:noReset"):
        reinstall = [("terminateApp", app), ("removeApp", app), ("installApp", {"app": installer}), ("launchApp", app)]
        return _run_commands(device, XCUITEST, bundle, reinstall, "keychain kept")
    return _run_commands(device, XCUITEST, bundle, [("terminateApp", app), ("launchApp", app)],
                         "app data and keychain kept")


_CLEAR_STORAGE_JS = "try { localStorage.clear(); } catch (e) {} try { sessionStorage.clear(); } catch (e) {}"


def _reset_browser(device: Device, start_url: str) -> ResetOutcome:
    """Four commands when the test left one window and no alert: the same as a bare client's reset
    (cookies, storage, start page) plus the window count."""
    driver, url = device.driver, device.url
    handles = list(driver_call("window handles", url, lambda: driver.window_handles))
    keep = handles[0]
    for handle in reversed(handles):  # the kept window last, so it is the current one at the end
        if len(handles) > 1:
            driver_call("switch window", url, partial(driver.switch_to.window, handle))
        _clear_window(device, keep)
        if handle != keep:
            driver_call("close window", url, driver.close)
    target = start_url or "about:blank"
    driver_call(f"open {target}", url, lambda: driver.get(target))
    closed = len(handles) - 1
    return ResetOutcome(CHROMIUM, f"{closed} extra window(s) closed, cookies and storage cleared, {target} loaded")


def _clear_window(device: Device, only: str) -> None:
    """Clear storage and cookies of the current window; an alert the test left open is dismissed,
    a current window the test closed is replaced by the one still open, then it is tried again."""
    driver, url = device.driver, device.url
    try:
        driver_call("clear storage", url, lambda: driver.execute_script(_CLEAR_STORAGE_JS))
    except DeviceError as exc:
        if isinstance(exc.__cause__, UnexpectedAlertPresentException):
            _dismiss_alert(device)  # chromedriver may have dismissed it already ("dismiss and notify")
        elif isinstance(exc.__cause__, NoSuchWindowException):
            driver_call("switch window", url, partial(driver.switch_to.window, only))
        else:
            raise
        driver_call("clear storage", url, lambda: driver.execute_script(_CLEAR_STORAGE_JS))
    driver_call("delete cookies", url, driver.delete_all_cookies)


def _dismiss_alert(device: Device) -> None:
    try:
        device.driver.switch_to.alert.dismiss()
    except NoAlertPresentException:
        return
    except WebDriverException as exc:  # "no such alert" in other dialects is fine too
        if "alert" not in (exc.msg or "").lower():
            raise
