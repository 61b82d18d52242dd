"""Endpoints that change the phone: W3C actions, back, app management, `mobile:` scripts and the
sim-only `guistate` endpoints (faults, action log, ground truth) for any HTTP client.

Importing this module registers its routes in `routes.ROUTES`.
"""

from __future__ import annotations

from typing import Any

from pytest_guistate.devices.sim import mobile, scripts
from pytest_guistate.devices.sim.actions import focused_node, parse_actions
from pytest_guistate.devices.sim.errors import W3CError, arg_int
from pytest_guistate.devices.sim.routes import Request, route
from pytest_guistate.devices.sim.routes_element import visible_centre
from pytest_guistate.devices.sim.webdriver_session import SimSession

__all__ = ["perform_actions"]


def perform_actions(session: SimSession, body: dict[str, Any]) -> None:
    """Interpret the whole chain first (so a bad action changes nothing), then play it."""

    def element_centre(eid: str) -> tuple[float, float]:
        return visible_centre(session, session.resolve(eid))

    phone = session.phone
    gestures = parse_actions(body, width=phone.width, height=phone.height, element_centre=element_centre)
    for gesture in gestures:
        if gesture.kind == "tap":
            phone.tap(gesture.x1, gesture.y1)
        elif gesture.kind == "long_press":
            phone.long_press(gesture.x1, gesture.y1, gesture.duration_ms)
        elif gesture.kind == "swipe":
            phone.swipe(gesture.x1, gesture.y1, gesture.x2, gesture.y2, gesture.duration_ms)
        else:
            node = focused_node(phone.root())
            if node is None:
                raise W3CError("invalid element state", f"key actions typed {gesture.text!r} but no field has focus")
            phone.type_text(node.key, gesture.text)


@route("POST", "/session/{sid}/actions")
def _actions(req: Request) -> Any:
    perform_actions(req.sess, req.body)
    return None


@route("DELETE", "/session/{sid}/actions")
def _release_actions(req: Request) -> Any:
    """Nothing to release: every chain ends with its pointers up (or is refused before it runs)."""
    return None


@route("POST", "/session/{sid}/back")
def _back(req: Request) -> Any:
    req.sess.phone.back()
    return None


@route("POST", "/session/{sid}/appium/device/activate_app")
def _activate_app(req: Request) -> Any:
    req.sess.phone.activate_app(mobile.app_id(req.body))
    return None


@route("POST", "/session/{sid}/appium/device/terminate_app")
def _terminate_app(req: Request) -> Any:
    return bool(req.sess.phone.terminate_app(mobile.app_id(req.body)))


@route("POST", "/session/{sid}/appium/device/app_state")
def _app_state(req: Request) -> Any:
    return int(req.sess.phone.app_state(mobile.app_id(req.body)))


@route("GET", "/session/{sid}/appium/device/current_package")
def _current_package(req: Request) -> Any:
    return req.sess.phone.current_package()


@route("POST", "/session/{sid}/appium/device/press_keycode")
def _press_keycode(req: Request) -> Any:
    mobile.press_keycode(req.sess, arg_int(req.body, "keycode"), arg_int(req.body, "metastate", 0))
    return None


@route("POST", "/session/{sid}/execute/sync")
@route("POST", "/session/{sid}/execute/async")
@route("POST", "/session/{sid}/execute")
def _execute(req: Request) -> Any:
    return scripts.execute_script(req.sess, req.body)


def _ios_only(req: Request, method: str, what: str) -> None:
    """Alerts are W3C endpoints the XCUITest driver serves; UiAutomator2 has no such command."""
    if getattr(req.sess.phone, "platform", "android") != "ios":
        raise W3CError("unknown command", f"no command at {method} /session/{req.params['sid']}/alert/{what}")


@route("GET", "/session/{sid}/alert/text")
def _alert_text(req: Request) -> Any:
    _ios_only(req, "GET", "text")
    from pytest_guistate.devices.sim.ios.mobile import alert_text

    return alert_text(req.sess)


def _alert_press(req: Request, action: str) -> Any:
    from pytest_guistate.devices.sim.ios.mobile import press_alert

    _ios_only(req, "POST", action)
    press_alert(req.sess, action)
    return None


route("POST", "/session/{sid}/alert/accept")(lambda req: _alert_press(req, "accept"))
route("POST", "/session/{sid}/alert/dismiss")(lambda req: _alert_press(req, "dismiss"))


@route("POST", "/session/{sid}/guistate/faults")
def _faults(req: Request) -> Any:
    return scripts.set_faults(req.sess, req.body)


@route("GET", "/session/{sid}/guistate/action_log")
def _action_log(req: Request) -> Any:
    return req.sess.phone.action_log()


@route("GET", "/session/{sid}/guistate/ground_truth")
def _ground_truth(req: Request) -> Any:
    return req.sess.phone.ground_truth()
