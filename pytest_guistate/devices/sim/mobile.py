"""`mobile:` execute methods of the UiAutomator2 driver (the sim-only `guistate*` ones and the
dispatch of a script to its persona's table are `scripts.py`, above both personas).

Recent Appium clients route app management and key presses through `execute_script("mobile: ...")`
instead of dedicated endpoints, so these must behave like the UiAutomator2 driver. Errors follow
the Appium driver: an unknown `mobile:` name is "unknown command" (Appium's UnknownCommandError,
HTTP 404), a plain JavaScript body in the native context is "unknown method" (NotImplementedError,
HTTP 405), and `mobile: shell` is "unsupported operation" (there is no adb behind the phone).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.sim.actions import focused_node
from pytest_guistate.devices.sim.errors import W3CError, arg_int, arg_number, arg_str, invalid_argument
from pytest_guistate.devices.sim.webdriver_session import SimSession, element_ref

__all__ = ["MOBILE_COMMANDS", "app_id", "press_keycode", "tree_signature"]

MobileHandler = Callable[[SimSession, dict[str, Any]], Any]
MOBILE_COMMANDS: dict[str, MobileHandler] = {}


def _command(name: str) -> Callable[[MobileHandler], MobileHandler]:
    def register(handler: MobileHandler) -> MobileHandler:
        MOBILE_COMMANDS[name] = handler
        return handler

    return register


def app_id(params: dict[str, Any]) -> str:
    value = params.get("appId", params.get("bundleId"))
    if not isinstance(value, str) or not value:
        raise invalid_argument("an 'appId' (or 'bundleId') string is required")
    return value


def tree_signature(session: SimSession) -> tuple[tuple[str, str, str], ...]:
    """What the screen shows, cheaply: used to tell whether a scroll moved anything."""
    return tuple((n.key, n.bounds.to_bounds(), n.text) for n in session.phone.root().walk())


def _element_box(session: SimSession, params: dict[str, Any]) -> Box | None:
    eid = params.get("elementId", params.get("element"))
    if eid is None:
        return None
    if isinstance(eid, dict):
        eid = next(iter(element_ref_ids(eid)), None)
    if not isinstance(eid, str):
        raise invalid_argument("'elementId' must be an element id string")
    return session.resolve(eid).bounds


def element_ref_ids(ref: dict[str, Any]) -> list[str]:
    return [value for key, value in ref.items() if key in element_ref("") and isinstance(value, str)]


def _point(session: SimSession, params: dict[str, Any]) -> tuple[int, int]:
    """`elementId` (+ optional x/y offset from its top-left, as UiAutomator2) or absolute x/y."""
    box = _element_box(session, params)
    if box is None:
        return arg_int(params, "x"), arg_int(params, "y")
    if "x" in params and "y" in params:
        return box.left + arg_int(params, "x"), box.top + arg_int(params, "y")
    return box.center


def _area(session: SimSession, params: dict[str, Any]) -> Box:
    box = _element_box(session, params)
    if box is not None:
        return box
    box = Box.from_xywh(
        arg_int(params, "left"), arg_int(params, "top"), arg_int(params, "width"), arg_int(params, "height")
    )
    if box.is_empty:
        raise invalid_argument(f"gesture area {box.as_list()} is empty")
    return box


def _check_on_screen(session: SimSession, x: int, y: int) -> None:
    if not (0 <= x < session.phone.width and 0 <= y < session.phone.height):
        raise W3CError(
            "move target out of bounds",
            f"({x}, {y}) is outside the {session.phone.width}x{session.phone.height} screen",
        )


@_command("clickGesture")
def _click(session: SimSession, params: dict[str, Any]) -> None:
    x, y = _point(session, params)
    _check_on_screen(session, x, y)
    session.phone.tap(x, y)


@_command("doubleClickGesture")
def _double_click(session: SimSession, params: dict[str, Any]) -> None:
    x, y = _point(session, params)
    _check_on_screen(session, x, y)
    session.phone.tap(x, y)
    session.phone.tap(x, y)


@_command("longClickGesture")
def _long_click(session: SimSession, params: dict[str, Any]) -> None:
    x, y = _point(session, params)
    _check_on_screen(session, x, y)
    duration = arg_int(params, "duration", 500)
    if duration < 0:
        raise invalid_argument("'duration' must be >= 0 ms")
    session.phone.long_press(x, y, duration)


_DIRECTIONS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def _stroke(session: SimSession, params: dict[str, Any], finger_direction: str) -> None:
    area = _area(session, params)
    percent = arg_number(params, "percent")
    if not 0 < percent <= 1:
        raise invalid_argument(f"'percent' must be in (0, 1], got {percent!r}")
    speed = arg_number(params, "speed", 5000)
    if speed <= 0:
        raise invalid_argument(f"'speed' must be > 0 px/s, got {speed!r}")
    dx, dy = _DIRECTIONS[finger_direction]
    cx, cy = area.center
    half_x, half_y = area.width * percent / 2 * dx, area.height * percent / 2 * dy
    x1, y1 = round(cx - half_x), round(cy - half_y)
    x2, y2 = round(cx + half_x), round(cy + half_y)
    x2, y2 = min(max(x2, 0), session.phone.width - 1), min(max(y2, 0), session.phone.height - 1)
    distance = abs(x2 - x1) + abs(y2 - y1)
    session.phone.swipe(x1, y1, x2, y2, max(1, round(distance / speed * 1000)))


def _direction(params: dict[str, Any]) -> str:
    direction: str = arg_str(params, "direction").lower()
    if direction not in _DIRECTIONS:
        raise invalid_argument(f"'direction' must be one of up, down, left, right; got {direction!r}")
    return direction


@_command("swipeGesture")
def _swipe(session: SimSession, params: dict[str, Any]) -> None:
    _stroke(session, params, _direction(params))


_OPPOSITE = {"up": "down", "down": "up", "left": "right", "right": "left"}


@_command("scrollGesture")
def _scroll(session: SimSession, params: dict[str, Any]) -> bool:
    """Scrolling *down* moves the finger up. Returns whether the screen moved (UiAutomator2 returns
    "can scroll more"; a scroll that changed nothing is the sim's evidence of the end)."""
    before = tree_signature(session)
    _stroke(session, params, _OPPOSITE[_direction(params)])
    return tree_signature(session) != before


@_command("dragGesture")
def _drag(session: SimSession, params: dict[str, Any]) -> None:
    box = _element_box(session, params)
    x1, y1 = box.center if box is not None else (arg_int(params, "startX"), arg_int(params, "startY"))
    x2, y2 = arg_int(params, "endX"), arg_int(params, "endY")
    for x, y in ((x1, y1), (x2, y2)):
        _check_on_screen(session, x, y)
    speed = arg_number(params, "speed", 2500)
    if speed <= 0:
        raise invalid_argument(f"'speed' must be > 0 px/s, got {speed!r}")
    session.phone.swipe(x1, y1, x2, y2, max(1, round((abs(x2 - x1) + abs(y2 - y1)) / speed * 1000)))


@_command("activateApp")
def _activate(session: SimSession, params: dict[str, Any]) -> None:
    session.phone.activate_app(app_id(params))


@_command("terminateApp")
def _terminate(session: SimSession, params: dict[str, Any]) -> bool:
    return bool(session.phone.terminate_app(app_id(params)))


@_command("queryAppState")
def _app_state(session: SimSession, params: dict[str, Any]) -> int:
    return int(session.phone.app_state(app_id(params)))


@_command("getCurrentPackage")
def _current_package(session: SimSession, params: dict[str, Any]) -> str:
    return session.phone.current_package()


# Android KeyEvent codes the simulated keyboard understands (KEYCODE_0..9, A..Z, SPACE).
_KEY_CHARS = {7 + i: str(i) for i in range(10)} | {29 + i: chr(ord("a") + i) for i in range(26)} | {62: " "}
KEYCODE_HOME, KEYCODE_BACK = 3, 4


def press_keycode(session: SimSession, keycode: int, metastate: int = 0) -> None:
    if keycode == KEYCODE_BACK:
        session.phone.back()
        return
    if keycode == KEYCODE_HOME:
        session.phone.press_home()
        return
    char = _KEY_CHARS.get(keycode)
    if char is None:
        raise W3CError("unsupported operation", f"keycode {keycode} is not supported (HOME=3, BACK=4, digits, letters, space)")
    node = focused_node(session.phone.root())
    if node is None:
        raise W3CError("invalid element state", f"keycode {keycode}: no focused field to type into")
    session.phone.type_text(node.key, char.upper() if metastate & 1 else char)


@_command("pressKey")
def _press_key(session: SimSession, params: dict[str, Any]) -> None:
    press_keycode(session, arg_int(params, "keycode"), arg_int(params, "metastate", 0))


@_command("shell")
def _shell(session: SimSession, params: dict[str, Any]) -> None:
    raise W3CError("unsupported operation", "'mobile: shell' needs adb; the simulated phone has none")
