"""W3C Actions (`POST /session/{id}/actions`) turned into the phone's gestures.

The spec executes input sources tick by tick: a tick lasts as long as its longest pause or move
across all sources. Each pointer's down→up stroke is then classified the way Android's gesture
detector would: little travel and a short hold is a tap, a hold of >= 500 ms a long press, and
travel beyond the touch slop a swipe whose duration is the summed time between down and up.
Durations are passed to the phone, not slept: the simulated clock is the phone's business.
Key sources type their characters into the focused field.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pytest_guistate.devices.sim.errors import W3CError, invalid_argument, is_number
from pytest_guistate.devices.sim.model import SimNode

__all__ = ["LONG_PRESS_MS", "TOUCH_SLOP_PX", "Gesture", "focused_node", "parse_actions"]

LONG_PRESS_MS = 500  # Android's ViewConfiguration long-press timeout
TOUCH_SLOP_PX = 16  # ~8 dp at xxhdpi: travel below this is still a tap
_ELEMENT_KEYS = ("element-6066-11e4-a52e-4f735466cecf", "ELEMENT")
_MAX_ACTIONS = 2_000


@dataclass(frozen=True)
class Gesture:
    """One interpreted gesture, in execution order (`start_ms` from the start of the chain)."""

    kind: str  # "tap" | "long_press" | "swipe" | "type"
    start_ms: int
    x1: int = 0
    y1: int = 0
    x2: int = 0
    y2: int = 0
    duration_ms: int = 0
    text: str = ""
    source: int = 0  # index of the input source, to tell multi-touch from a sequence of strokes


@dataclass
class _Stroke:
    source: int = 0
    x: float = 0.0
    y: float = 0.0
    down_at: int | None = None
    start: tuple[float, float] = (0.0, 0.0)
    max_travel: float = 0.0


def _duration(action: dict[str, Any], where: str) -> int:
    value = action.get("duration", 0)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 3_600_000:
        raise invalid_argument(f"{where}: 'duration' must be a non-negative number of ms, got {value!r}")
    return int(value)


def _coord(action: dict[str, Any], name: str, where: str) -> float:
    value = action.get(name, 0)
    if not is_number(value):
        raise invalid_argument(f"{where}: {name!r} must be a number, got {value!r}")
    return float(value)


def _validate(body: dict[str, Any]) -> list[dict[str, Any]]:
    sources = body.get("actions")
    if not isinstance(sources, list):
        raise invalid_argument("'actions' must be a list of input sources")
    total = 0
    for i, source in enumerate(sources):
        if not isinstance(source, dict):
            raise invalid_argument(f"actions[{i}] must be an object")
        if source.get("type") not in ("pointer", "key", "none", "wheel"):
            raise invalid_argument(f"actions[{i}].type must be pointer, key, none or wheel, got {source.get('type')!r}")
        steps = source.get("actions")
        if not isinstance(steps, list) or not all(isinstance(step, dict) for step in steps):
            raise invalid_argument(f"actions[{i}].actions must be a list of objects")
        total += len(steps)
    if total > _MAX_ACTIONS:
        raise invalid_argument(f"too many actions ({total} > {_MAX_ACTIONS})")
    return sources


def parse_actions(
    body: dict[str, Any],
    *,
    width: int,
    height: int,
    element_centre: Callable[[str], tuple[float, float]],
) -> list[Gesture]:
    """Interpret a W3C actions payload; `element_centre(eid)` resolves an element origin."""
    sources = _validate(body)
    ticks = max((len(source["actions"]) for source in sources), default=0)
    strokes = {i: _Stroke(source=i) for i, source in enumerate(sources) if source["type"] == "pointer"}
    gestures: list[Gesture] = []
    now = 0
    for tick in range(ticks):
        tick_ms = 0
        for i, source in enumerate(sources):
            if tick >= len(source["actions"]):
                continue
            action = source["actions"][tick]
            where = f"actions[{i}].actions[{tick}]"
            kind = action.get("type")
            if kind == "pause":
                tick_ms = max(tick_ms, _duration(action, where))
            elif source["type"] == "pointer":
                tick_ms = max(
                    tick_ms, _pointer(strokes[i], action, where, now, gestures, width, height, element_centre)
                )
            elif source["type"] == "key":
                _key(action, where, now, gestures)
            elif source["type"] == "wheel" and kind == "scroll":
                raise W3CError("unsupported operation", "wheel scroll actions are not supported; use a touch swipe")
            else:
                raise invalid_argument(f"{where}: action type {kind!r} is not valid for a {source['type']} source")
        now += tick_ms
    for i, stroke in strokes.items():
        if stroke.down_at is not None:
            raise invalid_argument(f"actions[{i}]: pointer is still down at the end (missing pointerUp)")
    _refuse_multi_touch(gestures)
    return gestures


def _refuse_multi_touch(gestures: list[Gesture]) -> None:
    """Two fingers down at once (pinch, multi-finger tap) has no meaning on the simulated phone."""
    strokes = [g for g in gestures if g.kind != "type"]
    for i, first in enumerate(strokes):
        for second in strokes[i + 1 :]:
            if first.source == second.source:
                continue
            if (
                first.start_ms <= second.start_ms + second.duration_ms
                and second.start_ms <= first.start_ms + first.duration_ms
            ):
                raise W3CError("unsupported operation", "multi-touch gestures are not supported by the simulated phone")


def _pointer(
    stroke: _Stroke,
    action: dict[str, Any],
    where: str,
    now: int,
    gestures: list[Gesture],
    width: int,
    height: int,
    element_centre: Callable[[str], tuple[float, float]],
) -> int:
    kind = action.get("type")
    if kind == "pointerMove":
        origin = action.get("origin", "viewport")
        x, y = _coord(action, "x", where), _coord(action, "y", where)
        if origin == "pointer":
            x, y = stroke.x + x, stroke.y + y
        elif isinstance(origin, dict):
            eid = next((origin[key] for key in _ELEMENT_KEYS if isinstance(origin.get(key), str)), None)
            if eid is None:
                raise invalid_argument(f"{where}: element origin needs an element reference, got {origin!r}")
            cx, cy = element_centre(eid)
            x, y = cx + x, cy + y
        elif origin != "viewport":
            raise invalid_argument(f"{where}: origin must be 'viewport', 'pointer' or an element, got {origin!r}")
        if not (0 <= x < width and 0 <= y < height):
            raise W3CError("move target out of bounds", f"{where}: ({x:.0f}, {y:.0f}) is outside {width}x{height}")
        stroke.x, stroke.y = x, y
        if stroke.down_at is not None:
            travel = math.hypot(x - stroke.start[0], y - stroke.start[1])
            stroke.max_travel = max(stroke.max_travel, travel)
        return _duration(action, where)
    if kind == "pointerDown":
        if stroke.down_at is not None:
            raise invalid_argument(f"{where}: pointerDown while the pointer is already down")
        stroke.down_at, stroke.start, stroke.max_travel = now, (stroke.x, stroke.y), 0.0
        return 0
    if kind == "pointerUp":
        if stroke.down_at is None:
            raise invalid_argument(f"{where}: pointerUp without a preceding pointerDown")
        held = now - stroke.down_at
        x1, y1 = round(stroke.start[0]), round(stroke.start[1])
        if stroke.max_travel < TOUCH_SLOP_PX:
            gesture = "long_press" if held >= LONG_PRESS_MS else "tap"
            gestures.append(Gesture(gesture, stroke.down_at, x1, y1, x1, y1, held, source=stroke.source))
        else:
            gestures.append(
                Gesture("swipe", stroke.down_at, x1, y1, round(stroke.x), round(stroke.y), held, source=stroke.source)
            )
        stroke.down_at = None
        return 0
    if kind == "pointerCancel":
        stroke.down_at = None
        return 0
    raise invalid_argument(f"{where}: unknown pointer action type {kind!r}")


# WebDriver's private-use key codes that a phone keyboard would not type as characters.
_SPECIAL_KEYS = range(0xE000, 0xE05E)


def _key(action: dict[str, Any], where: str, now: int, gestures: list[Gesture]) -> None:
    kind = action.get("type")
    value = action.get("value")
    if kind not in ("keyDown", "keyUp"):
        raise invalid_argument(f"{where}: unknown key action type {kind!r}")
    if not isinstance(value, str) or len(value) != 1:
        raise invalid_argument(f"{where}: key 'value' must be a single character, got {value!r}")
    if kind == "keyDown" and ord(value) not in _SPECIAL_KEYS:
        if gestures and gestures[-1].kind == "type":
            last = gestures.pop()
            gestures.append(Gesture("type", last.start_ms, text=last.text + value))
        else:
            gestures.append(Gesture("type", now, text=value))


def focused_node(root: SimNode) -> SimNode | None:
    return next((node for node in root.walk() if node.focused), None)
