"""`mobile: guistateReset` and `mobile: clearApp`: the simulated phone's between-tests reset (issue 12).

With `--guistate-session=worker` one session serves many tests, so the sim needs what a real
driver offers: `clearApp` (UiAutomator2's `pm clear`: the app's data is gone and it is stopped)
and its own whole-phone reset, `guistateReset`, which builds a fresh phone from
`{"capabilities": {...}}` (the next test's, whole: app, faults, seed — nothing of the last test's
is kept), or without it from the session's own. The session id stays; element ids handed out before are forgotten, as after a relaunch on a phone.
Importing this module registers both commands in `mobile.MOBILE_COMMANDS`, and `guistateReset` for the
iOS persona too (XCUITest has no `clearApp`: its reset is terminate + launch).
"""

from __future__ import annotations

from typing import Any

from pytest_guistate.devices.sim.errors import W3CError, invalid_argument
from pytest_guistate.devices.sim.ios.mobile import IOS_MOBILE_COMMANDS
from pytest_guistate.devices.sim.mobile import MOBILE_COMMANDS, app_id
from pytest_guistate.devices.sim.model import AppState, SimError
from pytest_guistate.devices.sim.webdriver_session import SimSession, response_capabilities

__all__ = ["session_request_capabilities"]

# What Appium echoes without its vendor prefix, and the W3C names that never carry one.
_W3C_NAMES = frozenset({"platformName", "browserName", "browserVersion", "acceptInsecureCerts", "pageLoadStrategy",
                        "proxy", "setWindowRect", "strictFileInteractability", "timeouts", "unhandledPromptBehavior"})


def session_request_capabilities(session: SimSession) -> dict[str, Any]:
    """The session's capabilities in request form (`appium:` restored), what `from_capabilities` reads."""
    out: dict[str, Any] = {}
    for name, value in session.capabilities.items():
        out[name if ":" in name or name in _W3C_NAMES else f"appium:{name}"] = value
    return out


def _guistate_reset(session: SimSession, params: dict[str, Any]) -> dict[str, Any]:
    caps = params.get("capabilities", session_request_capabilities(session))
    if not isinstance(caps, dict):
        raise invalid_argument("'capabilities' must be a JSON object of capabilities")
    factory = getattr(type(session.phone), "from_capabilities", None)
    if factory is None:
        raise W3CError("unsupported operation", f"{type(session.phone).__name__} cannot be rebuilt from capabilities")
    browsers = getattr(session.phone, "browsers", None)  # the server's web view browsers stay the server's
    try:
        phone = factory(caps) if browsers is None else factory(caps, browsers=browsers)
    except SimError:
        raise
    except Exception as exc:  # a bad overlay: say which, keep the old phone
        raise invalid_argument(f"guistateReset: the phone refused the capabilities: {exc}") from exc
    old, session.phone = session.phone, phone
    old.close()
    session._id_by_key.clear()  # ids of the old phone's views are stale now, as after a relaunch
    session._key_by_id.clear()
    session.context, session.web_generation = "NATIVE_APP", 0  # a relaunched app starts native
    session.capabilities = response_capabilities(caps, phone.width, phone.height)
    return {"package": phone.current_package()}


def _clear_app(session: SimSession, params: dict[str, Any]) -> bool:
    """UiAutomator2's `mobile: clearApp`: the sim keeps an app's data in its running instance."""
    package = app_id(params)
    if session.phone.app_state(package) == AppState.NOT_INSTALLED:
        raise invalid_argument(f"clearApp: {package!r} is not installed")
    session.phone.terminate_app(package)
    return True


MOBILE_COMMANDS["guistateReset"] = _guistate_reset
MOBILE_COMMANDS["clearApp"] = _clear_app
IOS_MOBILE_COMMANDS["guistateReset"] = _guistate_reset
