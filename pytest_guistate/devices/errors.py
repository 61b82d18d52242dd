"""Device errors, and the mapping of driver failures onto them (issue 6).

A real server says "I cannot do that" in several dialects; `CapabilityUnavailable` gathers them
so a test (and the step loop) can tell a limit of the device from a flaky failure.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from selenium.common.exceptions import (
    InvalidSessionIdException,
    JavascriptException,
    UnknownMethodException,
    WebDriverException,
)

from pytest_guistate.devices.grid import trim_grid_message

__all__ = [
    "CapabilityUnavailable",
    "ContextUnavailable",
    "DeviceError",
    "ElementAmbiguous",
    "ElementNotFound",
    "ElementNotReady",
    "WebViewGone",
    "driver_call",
    "screenshot_payload_text",
]


class DeviceError(RuntimeError):
    """The device (Appium server or sim) failed or is gone; the message says which call."""


class CapabilityUnavailable(DeviceError):
    """The driver behind this session cannot do that (a missing `mobile:` command, no app
    management in a browser, ...): a limit of the device, not a flaky failure, so never retried."""


class ContextUnavailable(DeviceError):
    """`switch_context` to a name the session does not list (issue 37); the message lists those it does."""


class WebViewGone(DeviceError):
    """The web view context the device was in is no longer listed (the page navigated away, the app
    closed its web view): commands there cannot reach the page; switch to a listed context."""


class ElementNotFound(AssertionError):
    """No element matched a locator; the message lists what was on screen instead."""


class ElementNotReady(ElementNotFound):
    """A locator's element was there but never became ready to act on (not visible, disabled,
    moving, covered) within its wait; the message names what it waited for and what it saw. Never
    healed by the memory: the element is the right one, acting elsewhere would be the wrong action."""


class ElementAmbiguous(ElementNotFound):
    """A locator asked to be unique (`unique=True`: an exported test's locator named its element alone when
    recorded) names two or more elements now; acting on the first could be the wrong one, so nothing is
    done. Never healed by the memory: the locator did find something, just not one thing."""


# How drivers say "I do not implement that": W3C `unknown command` / `unsupported operation`,
# Appium's "Unknown mobile command", and a browser running `mobile: x` as page JavaScript
# ("x is not defined": the chromium driver hands execute_script to the page). The XCUITest driver
# (Appium 2 base driver + WebDriverAgent, issue 11) says "Unsupported execute method 'mobile: x'",
# "Method is not implemented" / "Method has not yet been implemented" (NotYetImplementedError).
_UNSUPPORTED_HINTS = ("unknown command", "unknown mobile command", "not implemented", "not supported",
                      "unsupported operation", "is not defined", "unsupported execute method",
                      "not yet been implemented")


def driver_call(what: str, url: str, fn: Callable[[], Any]) -> Any:
    """Run one driver call; failures become `DeviceError` or `CapabilityUnavailable` naming the call."""
    try:
        return fn()
    except WebDriverException as exc:
        message = trim_grid_message((exc.msg or str(exc)).strip())  # a Grid's host/build blocks, once (issue 35)
        _shown_once(exc, message)
        lowered = message.lower()
        unsupported = isinstance(exc, UnknownMethodException) or any(h in lowered for h in _UNSUPPORTED_HINTS)
        # a page's own script error is not a missing capability, unless we asked for `mobile:`
        if unsupported and (not isinstance(exc, JavascriptException) or what.startswith("mobile:")):
            raise CapabilityUnavailable(f"{what} is not supported by the driver behind {url}: {message}") from exc
        raise DeviceError(f"{what} failed on {url}: {message}{_w3c_error_note(exc)}") from exc


def _shown_once(exc: WebDriverException, message: str) -> None:
    """A Selenium Grid's error (a Java stack, or a host/build block) is shown once, in the DeviceError:
    the chained driver exception keeps its type (resets test it) but not the Grid's text (issue 35)."""
    java = any("org.openqa.selenium" in str(line) for line in exc.stacktrace or ())
    if java or (exc.msg is not None and message != exc.msg.strip()):
        exc.msg = "(a Selenium Grid error: its text is in the DeviceError below)"
        exc.stacktrace = None


def screenshot_payload_text(url: str, payload: object, exc: BaseException) -> str:
    """A screenshot answer that is not base64 PNG data, described by what it is (issue 14): a proxy's
    HTML error page, a JSON object, nothing at all."""
    from pytest_guistate.core.frame import describe_bytes

    if isinstance(payload, str) and payload.lstrip().startswith(("{", "[")):
        try:
            json.loads(payload)
        except ValueError as bad:
            return f"screenshot from {url} is not base64 PNG data: the server sent malformed JSON ({bad}): {payload[:60]!r}"
    if not isinstance(payload, (str, bytes)):
        return f"screenshot from {url} is not base64 PNG data: the server sent a {type(payload).__name__} ({payload!r:.80})"
    return f"screenshot from {url} is not base64 PNG data: the server sent {describe_bytes(payload)} ({exc})"


def _w3c_error_note(exc: WebDriverException) -> str:
    """What the W3C error of a failed call means, when the server's message alone does not say it."""
    if isinstance(exc, InvalidSessionIdException):
        return (" (invalid session id: the server no longer knows this session - it expired after "
                "appium:newCommandTimeout, was deleted, or the server restarted)")
    return ""
