"""Fault injection for the simulated phone: the timing and flakiness real devices show.

Every fault a real device shows in a long E2E test (a list that redraws late, a slow search, a tap
the touchscreen never delivered, an "App isn't responding" dialog, transitions still sliding
when the screenshot is taken) is a knob here, so a test can reproduce the failure on demand.
The same keys are accepted by the `guistate:faults` capability and by `Phone.set_faults`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any

from pytest_guistate.devices.sim.model import SimError

__all__ = ["Faults"]


@dataclass(frozen=True)
class Faults:
    """Current fault settings. Times are seconds unless the name says `_ms`."""

    refresh_delay: float = 0.0  # Feed: the list redraws this long after a confirmed delete
    refresh_duration: float = 0.4  # Feed: pull-to-refresh spinner time before the fresh list shows
    search_delay: float = 0.6  # Shop: spinner time before search results show
    drop_tap_rate: float = 0.0  # probability a tap is silently lost (seeded RNG)
    popup_at_action: int | None = None  # show "App isn't responding" after the n-th effective action
    animation_ms: int = 0  # screen transitions slide for this long
    seed: int | None = None  # RNG seed for fault randomness; None = the phone's seed
    webview_screenshot_hang: float = 0.0  # Hybrid: a proxied web view screenshot hangs this long
    toast_s: float | None = None  # how long a toast stays; None: the phone's own (`phone.TOAST_S`, 1.5 s)

    def updated(self, changes: dict[str, Any]) -> Faults:
        """A copy with `changes` applied; unknown keys or bad values raise `SimError`."""
        if not isinstance(changes, dict):
            raise SimError("invalid argument", f"faults must be a JSON object, got {type(changes).__name__}")
        known = set(asdict(self))
        unknown = sorted(set(changes) - known)
        if unknown:
            raise SimError("invalid argument", f"unknown fault key(s) {unknown}; known: {sorted(known)}")
        clean: dict[str, Any] = {}
        for name, value in changes.items():
            clean[name] = _check(name, value)
        return replace(self, **clean)


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SimError("invalid argument", f"fault {name!r} must be a finite number, got {value!r}")
    return float(value)


def _integer(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SimError("invalid argument", f"fault {name!r} must be an integer, got {value!r}")
    return value


def _check(name: str, value: Any) -> Any:
    if name in ("refresh_delay", "refresh_duration", "search_delay", "webview_screenshot_hang"):
        seconds = _number(name, value)
        if not 0.0 <= seconds <= 600.0:
            raise SimError("invalid argument", f"fault {name!r} must be within 0..600 s, got {value!r}")
        return seconds
    if name == "drop_tap_rate":
        rate = _number(name, value)
        if not 0.0 <= rate <= 1.0:
            raise SimError("invalid argument", f"fault 'drop_tap_rate' must be within 0..1, got {value!r}")
        return rate
    if name == "animation_ms":
        ms = _integer(name, value)
        if not 0 <= ms <= 10_000:
            raise SimError("invalid argument", f"fault 'animation_ms' must be within 0..10000, got {value!r}")
        return ms
    if name == "popup_at_action":
        if value is None:
            return None
        n = _integer(name, value)
        if n < 1:
            raise SimError("invalid argument", f"fault 'popup_at_action' must be >= 1 or null, got {value!r}")
        return n
    if name == "seed":
        return None if value is None else _integer(name, value)
    if name == "toast_s":
        if value is None:
            return None
        seconds = _number(name, value)
        if not 0.0 <= seconds <= 600.0:
            raise SimError("invalid argument", f"fault 'toast_s' must be within 0..600 s or null, got {value!r}")
        return seconds
    raise SimError("invalid argument", f"unknown fault key {name!r}")
