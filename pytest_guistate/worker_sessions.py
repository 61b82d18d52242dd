"""One Appium session per worker, reset between tests (issue 12, `--guistate-session=worker`).

The `device` fixture asks the `SessionKeeper` of its test process for the session the previous
test left; the keeper hands it over only when it may be reused — same device, capabilities the
reset can apply, the previous test passed — and after the app was reset (the user's
`pytest_guistate_reset_app` hook, else the per-driver reset of `devices/reset.py`). Otherwise
the fixture opens a new session, and `SessionInfo.reason` (`stash_keys.py`, kept on the test's item) says why; the journal and the report
header show it. A session the server ended (newCommandTimeout, deleted) is replaced once, with a
warning.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from pytest_guistate.config import SessionMode
from pytest_guistate.devices.reset import (
    ResetOutcome,
    ResetUnavailable,
    incompatible_keys,
    reset_app,
    session_gone,
)
from pytest_guistate.stash_keys import REPORTS_KEY, did_test_fail, marker_kwargs

if TYPE_CHECKING:
    from pytest_guistate.devices.device import Device
    from pytest_guistate.devices.device_list import DeviceSpec

__all__ = ["HeldSession", "SessionKeeper", "SessionReuseWarning", "session_mode", "test_failed"]

ResetHook = Callable[["Device", dict[str, Any]], "ResetOutcome | None"]


class SessionReuseWarning(UserWarning):
    """A reused session had to be replaced (expired on the server, or its reset failed)."""


@dataclass
class HeldSession:
    """A live session kept between tests: its device wrapper, where it runs and how it was opened."""

    device: Device
    spec: DeviceSpec
    caps: dict[str, Any]  # the capabilities it was opened with
    kind: str  # the reset family (devices/reset.py)
    start_url: str = ""  # browser sessions: the page a reset returns to
    tests: int = 1


def session_mode(item: pytest.Item, default: SessionMode) -> SessionMode:
    """The marker's `session=` (test|worker), else the run's; a typo is a usage error."""
    value = marker_kwargs(item).get("session")
    if value is None:
        return default
    try:
        return SessionMode(str(value))
    except ValueError:
        allowed = ", ".join(m.value for m in SessionMode)
        raise pytest.UsageError(
            f"{item.nodeid}: @pytest.mark.guistate(session={value!r}) is not one of {allowed}"
        ) from None


def test_failed(item: pytest.Item) -> bool:
    """Failed, errored in setup, or an expected failure happened: its session is not trusted."""
    if did_test_fail(item):
        return True
    call = item.stash.get(REPORTS_KEY, {}).get("call")
    return call is not None and bool(getattr(call, "wasxfail", None)) and call.skipped


class SessionKeeper:
    """The session this test process keeps between tests (at most one: one device per worker)."""

    def __init__(self) -> None:
        self._held: HeldSession | None = None
        self._note = ""  # why the last session was not kept, for the next test's SessionInfo

    def checkout(
        self, mode: SessionMode, spec: DeviceSpec, caps: dict[str, Any], reset_hook: ResetHook
    ) -> tuple[HeldSession | None, str]:
        """The held session, reset for a test with `caps`; or None and why a new one is needed."""
        held, self._held = self._held, None
        note, self._note = self._note, ""
        if held is None:
            return None, note or ("the first test of this worker" if mode is SessionMode.WORKER else "")
        if mode is SessionMode.TEST:
            return self._discard(held, "this test asks for its own session (session='test')")
        if held.spec != spec:
            return self._discard(held, f"the device changed to {spec.label}")
        differ = incompatible_keys(held.kind, held.caps, caps)
        if differ:
            return self._discard(held, f"this test's capabilities differ in {', '.join(differ)}")
        dev = held.device
        dev.on_secret, dev.memory, dev.decode_ahead = None, None, True  # per-test hooks of the last test
        dev.on_context = None
        try:
            if dev.in_webview:  # the last test ended in a web view: the next starts in the app, as a new one does
                dev.switch_context("NATIVE_APP")
            outcome = reset_hook(dev, caps) or reset_app(dev, held.kind, caps, start_url=held.start_url)
        except ResetUnavailable as exc:
            return self._discard(held, f"no reset in place: {exc}")
        except Exception as exc:  # noqa: BLE001 - any failure means: do not trust this session
            sid = getattr(dev.driver, "session_id", "?")
            if session_gone(exc):
                warnings.warn(SessionReuseWarning(
                    f"guistate: the Appium session {sid} on {spec.label} was ended by the server "
                    f"({_first_line(exc)}); a new session is opened for this test"), stacklevel=2)
                return self._discard(held, f"the server ended the previous session ({_first_line(exc)})")
            warnings.warn(SessionReuseWarning(
                f"guistate: resetting the app in session {sid} on {spec.label} failed ({_first_line(exc)}); "
                "the device may be unresponsive, a new session is opened for this test"), stacklevel=2)
            return self._discard(held, f"the app reset failed ({_first_line(exc)})")
        held.tests += 1
        return held, outcome.describe()

    def keep(self, held: HeldSession) -> None:
        self._held = held

    def dropped(self, reason: str) -> None:
        """The session of the test that just ended was closed; the next test is told why."""
        self._note = reason

    def close(self) -> None:
        """End the held session (the worker's last test is done)."""
        held, self._held = self._held, None
        if held is not None:
            with contextlib.suppress(Exception):  # the run is over; a dead session changes nothing
                held.device.close()

    def _discard(self, held: HeldSession, reason: str) -> tuple[None, str]:
        with contextlib.suppress(Exception):  # replacing it anyway: a failed quit changes nothing
            held.device.close()
        return None, reason


def _first_line(exc: BaseException) -> str:
    text = (getattr(exc, "msg", None) or str(exc)).strip()
    return (text.splitlines() or [type(exc).__name__])[0][:200]
