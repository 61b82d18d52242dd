"""Latency profiles: the simulated phone answers as slowly as a real driver would (issue 11).

Capability `guistate:latency` = `"none"` (default: no delay, today's speed) | `"uiautomator2"` |
`"xcuitest"` | a dict `{command: [mean_ms, jitter_ms], ...}` over the command kinds below (a
named profile may be the base: `{"base": "xcuitest", "source": [3000, 800]}`). Each request of
a session is delayed by `mean + jitter * u`, `u` in [-1, 1] drawn from a hash of the session's
`guistate:seed`, the command kind and how many of that kind came before: the same seed gives the
same delays in the same order, whatever the thread timing. The delay runs on the phone's clock
(a `ManualClock` is advanced, never slept on), so tests on a manual clock do not get slower.

An XPath find (`xpath`) is priced apart: on XCUITest like a page source (WebDriverAgent snapshots
the whole hierarchy to evaluate it), on UiAutomator2 above an id find (the window is dumped to XML
first); a custom profile without `xpath` prices it like `find`.

The figures are estimates from published measurements (docs/latency.md cites them), meant to
make the *shape* of a real run visible - a page source costing as much as a screenshot, a
session start costing seconds - not to predict one device's speed.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["COMMANDS", "PROFILES", "LatencyBook", "LatencyError", "LatencyProfile", "command_kind", "parse_profile"]

# What a request costs is decided by its kind; "other" covers every command not listed.
COMMANDS = ("session", "quit", "screenshot", "source", "find", "xpath", "click", "actions", "keys", "app", "execute",
            "other")
FREE = "free"  # the sim's own instrumentation (action log, ground truth, faults): no real driver has it


class LatencyError(ValueError):
    """A `guistate:latency` capability the sim cannot use; the message names the bad key."""


# (mean_ms, jitter_ms) per command kind. Estimates; sources and reasoning in docs/latency.md.
PROFILES: dict[str, dict[str, tuple[float, float]]] = {
    "none": {},
    "uiautomator2": {
        "session": (6000, 2000), "quit": (300, 100), "screenshot": (250, 80), "source": (450, 150),
        "find": (150, 60), "xpath": (250, 90), "click": (200, 80), "actions": (250, 80), "keys": (300, 100),
        "app": (1500, 500), "execute": (120, 40), "other": (40, 15),
    },
    "xcuitest": {
        "session": (15000, 5000), "quit": (500, 150), "screenshot": (350, 120), "source": (1200, 500),
        "find": (300, 120), "xpath": (1200, 500), "click": (350, 120), "actions": (450, 150), "keys": (500, 150),
        "app": (2000, 700), "execute": (200, 60), "other": (60, 20),
    },
}


@dataclass(frozen=True)
class LatencyProfile:
    name: str
    costs: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def is_none(self) -> bool:
        return not any(mean > 0 or jitter > 0 for mean, jitter in self.costs.values())

    def delay_ms(self, kind: str, seed: int, n: int) -> float:
        """The delay of the `n`-th request of `kind` in a session seeded `seed` (deterministic)."""
        if kind == FREE:
            return 0.0
        if kind == "xpath" and kind not in self.costs:
            kind = "find"  # a custom profile that prices no XPath: an XPath find costs what a find costs
        mean, jitter = self.costs.get(kind, self.costs.get("other", (0.0, 0.0)))
        if mean <= 0 and jitter <= 0:
            return 0.0
        digest = hashlib.blake2b(f"{seed}:{kind}:{n}".encode(), digest_size=8).digest()
        u = int.from_bytes(digest, "big") / float(2**64 - 1) * 2.0 - 1.0
        return max(0.0, mean + jitter * u)


def _pair(key: str, value: Any) -> tuple[float, float]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = [value, 0]
    if (not isinstance(value, (list, tuple)) or len(value) != 2
            or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in value)):
        raise LatencyError(f"guistate:latency[{key!r}] must be [mean_ms, jitter_ms] (numbers), got {value!r}")
    mean, jitter = float(value[0]), float(value[1])
    if mean < 0 or jitter < 0 or jitter > mean or mean > 600_000:
        raise LatencyError(
            f"guistate:latency[{key!r}] = {list(value)}: need 0 <= jitter_ms <= mean_ms <= 600000")
    return mean, jitter


def parse_profile(value: Any) -> LatencyProfile:
    """A profile from the capability value; `LatencyError` naming the bad key or name."""
    if value is None:
        return LatencyProfile("none")
    if isinstance(value, str):
        if value not in PROFILES:
            raise LatencyError(f"guistate:latency {value!r} is not a profile; use one of {sorted(PROFILES)} "
                               "or a dict {command: [mean_ms, jitter_ms]}")
        return LatencyProfile(value, dict(PROFILES[value]))
    if not isinstance(value, Mapping):
        raise LatencyError(f"guistate:latency must be a profile name or a dict, got {type(value).__name__}")
    base_name = value.get("base", "none")
    if base_name not in PROFILES:
        raise LatencyError(f"guistate:latency['base'] {base_name!r} is not a profile; use one of {sorted(PROFILES)}")
    costs = dict(PROFILES[base_name])
    for key, pair in value.items():
        if key == "base":
            continue
        if key not in COMMANDS:
            raise LatencyError(f"guistate:latency has an unknown command {key!r}; commands are {list(COMMANDS)}")
        costs[key] = _pair(key, pair)
    return LatencyProfile(f"custom({base_name})" if base_name != "none" else "custom", costs)


# `mobile:` scripts that start or stop an app cost what the app routes cost. The sim's own reset
# (`guistateReset`, a fresh phone between two tests of a reused session) stands for a real driver's
# terminate + relaunch, which is not free: it costs one app launch (docs/latency.md).
_APP_SCRIPTS = frozenset({"mobile: activateApp", "mobile: terminateApp", "mobile: launchApp", "mobile: removeApp",
                          "mobile: installApp", "mobile: guistateReset"})


def command_kind(method: str, template: str, body: Mapping[str, Any]) -> str:
    """The cost class of a request, from its route template (e.g. "/session/{sid}/source")."""
    if template == "/session":
        return "session" if method == "POST" else "other"
    if template == "/session/{sid}" and method == "DELETE":
        return "quit"
    tail = template.removeprefix("/session/{sid}")
    if tail == "/screenshot":
        return "screenshot"
    if tail == "/source":
        return "source"
    if tail.endswith(("/element", "/elements")):
        # XPath is the slowest strategy: XCUITest snapshots the whole hierarchy for it (its docs,
        # "locator-strategies"), UiAutomator2 dumps the window to XML before evaluating it
        return "xpath" if str(body.get("using", "")).lower() == "xpath" else "find"
    if tail.startswith("/guistate/"):
        return FREE
    if tail.endswith("/click") or tail == "/back":
        return "click"
    if tail in ("/actions", "/touch/perform", "/touch/multi/perform"):
        return "actions" if method == "POST" else "other"
    if tail.endswith(("/value", "/keys")) or tail.startswith("/keys"):
        return "keys"
    if tail in ("/appium/device/activate_app", "/appium/device/terminate_app"):
        return "app"
    if tail.startswith("/execute"):
        script = str(body.get("script", "")).strip()
        if script in _APP_SCRIPTS:
            return "app"
        return FREE if script.startswith("mobile: guistate") else "execute"
    return "other"


def _sleeper(phone: Any) -> Callable[[float], None]:
    """Wait on the phone's clock: advance a manual clock, sleep on a real one."""
    clock = getattr(phone, "_clock", None)
    advance = getattr(clock, "advance", None)
    return advance if callable(advance) else time.sleep


@dataclass
class _SessionCosts:
    profile: LatencyProfile
    seed: int
    counts: dict[str, int] = field(default_factory=dict)
    total_ms: dict[str, float] = field(default_factory=dict)


class LatencyBook:
    """Per-session profiles and counters of one server; thread-safe."""

    def __init__(self) -> None:
        self._sessions: dict[str, _SessionCosts] = {}
        self._lock = threading.Lock()

    def open(self, session_id: str, capabilities: Mapping[str, Any]) -> None:
        """Register a session (call after its capabilities are merged)."""
        profile = parse_profile(capabilities.get("guistate:latency"))
        seed = capabilities.get("guistate:seed", 0)
        with self._lock:
            self._sessions[session_id] = _SessionCosts(profile, seed if isinstance(seed, int) else 0)

    def close(self, session_id: str) -> None:
        with self._lock:
            self._sessions.pop(session_id, None)

    def charge(self, session_id: str, kind: str, phone: Any) -> float:
        """Wait what `kind` costs in this session; returns the applied delay in ms (0 when none)."""
        with self._lock:
            costs = self._sessions.get(session_id)
            if costs is None or costs.profile.is_none:
                return 0.0
            n = costs.counts.get(kind, 0)
            costs.counts[kind] = n + 1
            delay = costs.profile.delay_ms(kind, costs.seed, n)
            costs.total_ms[kind] = costs.total_ms.get(kind, 0.0) + delay
        if delay > 0:
            _sleeper(phone)(delay / 1000.0)
        return delay

    def totals(self, session_id: str) -> dict[str, float]:
        """Milliseconds of delay applied so far, per command kind."""
        with self._lock:
            costs = self._sessions.get(session_id)
            return dict(costs.total_ms) if costs is not None else {}
