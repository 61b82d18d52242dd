"""`mobile:` execute methods of the XCUITest driver that tests really use, on the iOS persona.

Coordinates are points. Parameters follow the driver's documentation (execute-methods):
`bundleId` for app management, `x`/`y` (relative to `elementId` when given) for taps,
`duration` in seconds for touchAndHold/drag, a finger `direction` for swipe and a content
`direction` for scroll. An unknown name is refused as Appium 2's base driver refuses it
("unsupported operation", "Unsupported execute method ... Available methods are: ...").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.sim.errors import W3CError, arg_number, arg_str, invalid_argument
from pytest_guistate.devices.sim.ios.query import compile_predicate
from pytest_guistate.devices.sim.ios.translate import IosNode, nodes_of
from pytest_guistate.devices.sim.webdriver_session import SimSession, element_ref

__all__ = ["IOS_MOBILE_COMMANDS", "alert_buttons", "alert_node", "alert_text", "execute_ios"]

Handler = Callable[[SimSession, dict[str, Any]], Any]
IOS_MOBILE_COMMANDS: dict[str, Handler] = {}


def _command(name: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        IOS_MOBILE_COMMANDS[name] = handler
        return handler

    return register


def execute_ios(session: SimSession, name: str, params: dict[str, Any]) -> Any:
    handler = IOS_MOBILE_COMMANDS.get(name)
    if handler is None:
        known = ", ".join(f"mobile: {n}" for n in sorted(IOS_MOBILE_COMMANDS))
        raise W3CError("unsupported operation", f"Unsupported execute method 'mobile: {name}'. "
                                                f"Available methods are: {known}")
    return handler(session, params)


def _bundle(params: dict[str, Any]) -> str:
    value = params.get("bundleId")
    if not isinstance(value, str) or not value:
        raise invalid_argument(f"Parameters were incorrect. We wanted {{\"required\":[\"bundleId\"]}} and you sent "
                               f"{sorted(params)}")
    return value


def _element(session: SimSession, params: dict[str, Any]) -> IosNode | None:
    eid = params.get("elementId", params.get("element"))
    if eid is None:
        return None
    if isinstance(eid, dict):
        eid = next((v for k, v in eid.items() if k in element_ref("") and isinstance(v, str)), None)
    if not isinstance(eid, str):
        raise invalid_argument("'elementId' must be an element id string")
    node = session.resolve(eid)
    assert isinstance(node, IosNode)
    return node


def _point(session: SimSession, params: dict[str, Any]) -> tuple[float, float]:
    """`x`/`y` relative to `elementId`'s top-left when given (XCUITest), else absolute points."""
    node = _element(session, params)
    if node is None:
        return arg_number(params, "x"), arg_number(params, "y")
    if "x" in params and "y" in params:
        return node.bounds.left + arg_number(params, "x"), node.bounds.top + arg_number(params, "y")
    return node.bounds.center


def _area(session: SimSession, params: dict[str, Any]) -> Box:
    node = _element(session, params)
    return node.bounds if node is not None else Box(0, 0, session.phone.width, session.phone.height)


@_command("tap")
def _tap(session: SimSession, params: dict[str, Any]) -> None:
    x, y = _point(session, params)
    session.phone.tap(x, y)  # type: ignore[arg-type]


@_command("doubleTap")
def _double_tap(session: SimSession, params: dict[str, Any]) -> None:
    x, y = _point(session, params)
    session.phone.tap(x, y)  # type: ignore[arg-type]
    session.phone.tap(x, y)  # type: ignore[arg-type]


@_command("touchAndHold")
def _touch_and_hold(session: SimSession, params: dict[str, Any]) -> None:
    seconds = arg_number(params, "duration")
    if seconds < 0:
        raise invalid_argument("'duration' must be >= 0 seconds")
    x, y = _point(session, params)
    session.phone.long_press(x, y, round(seconds * 1000))  # type: ignore[arg-type]


_FINGER = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def _stroke(session: SimSession, area: Box, finger: str) -> None:
    dx, dy = _FINGER[finger]
    cx, cy = area.center
    reach_x, reach_y = area.width // 3 * dx, area.height // 3 * dy
    width, height = session.phone.width, session.phone.height
    x1, y1 = min(max(cx - reach_x, 0), width - 1), min(max(cy - reach_y, 0), height - 1)
    x2, y2 = min(max(cx + reach_x, 0), width - 1), min(max(cy + reach_y, 0), height - 1)
    session.phone.swipe(x1, y1, x2, y2, 300)


def _direction(params: dict[str, Any]) -> str:
    direction: str = arg_str(params, "direction").lower()
    if direction not in _FINGER:
        raise invalid_argument(f"'direction' must be one of up, down, left, right; got {direction!r}")
    return direction


@_command("swipe")
def _swipe(session: SimSession, params: dict[str, Any]) -> None:
    """The finger moves in `direction` (XCUIElement swipeUp etc.)."""
    _stroke(session, _area(session, params), _direction(params))


_OPPOSITE = {"up": "down", "down": "up", "left": "right", "right": "left"}


@_command("scroll")
def _scroll(session: SimSession, params: dict[str, Any]) -> None:
    """Content `direction` (down shows what is below), or scroll down until `name`/`predicateString` shows."""
    area = _area(session, params)
    target = params.get("predicateString") or params.get("name")
    if target is None:
        _stroke(session, area, _OPPOSITE[_direction(params)])
        return
    if not isinstance(target, str):
        raise invalid_argument("'name' / 'predicateString' must be a string")
    matches = compile_predicate(target) if "predicateString" in params else (lambda n: n.name == target)
    for _ in range(10):
        if any(matches(n) for n in session.phone.root().walk() if isinstance(n, IosNode)):
            return
        _stroke(session, area, "up")
    raise W3CError("no such element", f"Failed to scroll to an element matching {target!r}")


@_command("dragFromToForDuration")
def _drag(session: SimSession, params: dict[str, Any]) -> None:
    seconds = arg_number(params, "duration")
    if not 0.5 <= seconds <= 60:
        raise invalid_argument(f"'duration' must be within 0.5..60 seconds, got {seconds!r}")
    points = [arg_number(params, name) for name in ("fromX", "fromY", "toX", "toY")]
    x1, y1, x2, y2 = (round(v) for v in points)
    session.phone.swipe(x1, y1, x2, y2, round(seconds * 1000))


# -- alerts ------------------------------------------------------------------------------------


def alert_node(session: SimSession) -> IosNode:
    for node in session.phone.root().walk():
        if node.cls == "XCUIElementTypeAlert":
            assert isinstance(node, IosNode)
            return node
    raise W3CError("no such alert", "An attempt was made to operate on a modal dialog when one was not open")


def alert_buttons(alert: IosNode) -> list[IosNode]:
    return [n for n in nodes_of(alert) if n.cls == "XCUIElementTypeButton"]


def alert_text(session: SimSession) -> str:
    alert = alert_node(session)
    return "\n".join(n.label or "" for n in nodes_of(alert) if n.cls == "XCUIElementTypeStaticText" and n.label)


def press_alert(session: SimSession, action: str, label: str | None = None) -> None:
    """accept = the default (last) button, dismiss = the cancel (first) one, or the one labelled `label`."""
    buttons = alert_buttons(alert_node(session))
    if label is not None:
        chosen = next((b for b in buttons if b.label == label), None)
        if chosen is None:
            raise invalid_argument(f"The alert has no button labelled {label!r}; its buttons: "
                                   f"{[b.label for b in buttons]}")
    elif not buttons:
        raise W3CError("unknown error", "The alert has no buttons to press")
    else:
        chosen = buttons[-1] if action == "accept" else buttons[0]
    session.phone.tap(*chosen.bounds.center)


@_command("alert")
def _alert(session: SimSession, params: dict[str, Any]) -> Any:
    action = arg_str(params, "action")
    if action == "getButtons":
        return [b.label for b in alert_buttons(alert_node(session))]
    if action not in ("accept", "dismiss"):
        raise invalid_argument(f"'action' must be accept, dismiss or getButtons; got {action!r}")
    label = params.get("buttonLabel")
    if label is not None and not isinstance(label, str):
        raise invalid_argument("'buttonLabel' must be a string")
    press_alert(session, action, label)
    return None


# -- apps and buttons ----------------------------------------------------------------------------


@_command("launchApp")
@_command("activateApp")
def _activate(session: SimSession, params: dict[str, Any]) -> None:
    session.phone.activate_app(_bundle(params))


@_command("terminateApp")
def _terminate(session: SimSession, params: dict[str, Any]) -> bool:
    return bool(session.phone.terminate_app(_bundle(params)))


@_command("queryAppState")
def _app_state(session: SimSession, params: dict[str, Any]) -> int:
    return int(session.phone.app_state(_bundle(params)))


@_command("activeAppInfo")
def _active_app(session: SimSession, params: dict[str, Any]) -> dict[str, Any]:
    app = session.phone.root().children[0]
    return {"bundleId": session.phone.current_package(), "name": getattr(app, "name", ""), "pid": 4242,
            "processArguments": {"args": [], "env": {}}}


@_command("pressButton")
def _press_button(session: SimSession, params: dict[str, Any]) -> None:
    name = arg_str(params, "name").lower()
    if name == "home":
        session.phone.press_home()
    elif name not in ("volumeup", "volumedown"):
        raise invalid_argument(f"The button name {name!r} is unknown; use home, volumeUp or volumeDown")
