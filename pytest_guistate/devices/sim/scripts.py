"""`execute_script("mobile: name", {...})`: the script dispatched to its persona's command table,
and the sim-only `guistate*` commands both personas answer (faults, action log, ground truth).

Above both tables (`mobile.py` for UiAutomator2, `ios/mobile.py` for XCUITest), so neither persona
reads the other. Importing this module registers the `guistate*` commands in both tables, as
`mobile_reset.py` and `mobile_apps.py` register theirs; the `/execute` route imports it.

Errors follow the Appium driver: an unknown `mobile:` name is "unknown command" (Appium's
UnknownCommandError, HTTP 404) on Android and "unsupported operation" on iOS (`execute_ios`), a
plain JavaScript body in the native context is "unknown method" (NotImplementedError, HTTP 405).
"""

from __future__ import annotations

from typing import Any

from pytest_guistate.devices.sim.errors import W3CError, arg_str, invalid_argument
from pytest_guistate.devices.sim.ios.mobile import IOS_MOBILE_COMMANDS, execute_ios
from pytest_guistate.devices.sim.mobile import MOBILE_COMMANDS
from pytest_guistate.devices.sim.webdriver_session import SimSession

__all__ = ["execute_script", "set_faults"]


def execute_script(session: SimSession, body: dict[str, Any]) -> Any:
    """`POST /execute/sync` body `{"script": "mobile: name", "args": [{...}]}`; lock held by caller."""
    script = arg_str(body, "script").strip()
    args = body.get("args", [])
    if not isinstance(args, list):
        raise invalid_argument("'args' must be a list")
    if not script.startswith("mobile:"):
        raise W3CError("unknown method", "only 'mobile: <name>' scripts run in the NATIVE_APP context")
    name = script.removeprefix("mobile:").strip()
    params = args[0] if args else {}
    if not isinstance(params, dict):
        raise invalid_argument(f"'mobile: {name}' takes one JSON object argument, got {type(params).__name__}")
    if getattr(session.phone, "platform", "android") == "ios":
        return execute_ios(session, name, params)
    handler = MOBILE_COMMANDS.get(name)
    if handler is None:
        known = ", ".join(sorted(MOBILE_COMMANDS))
        raise W3CError("unknown command", f"unknown mobile command {name!r}; the simulated phone supports: {known}")
    return handler(session, params)


def set_faults(session: SimSession, params: dict[str, Any]) -> dict[str, Any]:
    """Body `{"faults": {...}}`, or the fault mapping itself."""
    faults = params["faults"] if set(params) == {"faults"} else params
    if not isinstance(faults, dict):
        raise invalid_argument("'faults' must be a JSON object")
    session.phone.set_faults(faults)
    return faults


def _faults(session: SimSession, params: dict[str, Any]) -> None:
    set_faults(session, params)


def _action_log(session: SimSession, params: dict[str, Any]) -> list[dict[str, Any]]:
    return session.phone.action_log()


def _ground_truth(session: SimSession, params: dict[str, Any]) -> dict[str, Any]:
    return session.phone.ground_truth()


_SIM_ONLY = {"guistateFaults": _faults, "guistateActionLog": _action_log, "guistateGroundTruth": _ground_truth}
MOBILE_COMMANDS.update(_SIM_ONLY)
IOS_MOBILE_COMMANDS.update(_SIM_ONLY)
