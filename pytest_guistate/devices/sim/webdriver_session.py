"""One WebDriver session: its phone, its element ids and its timeouts.

Element ids are handed out per session and map to a `SimNode.key`. A key outlives re-renders for
as long as its view exists, so an id is *stale* exactly when its key is gone from `phone.root()`
(the same contract UiAutomator2 keeps with its element cache).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_guistate.devices.sim.errors import W3CError, invalid_argument
from pytest_guistate.devices.sim.ios.persona import IOS, match_platform, platform_of
from pytest_guistate.devices.sim.model import PhoneModel, SimNode

__all__ = [
    "ELEMENT_KEY",
    "SessionStore",
    "SimSession",
    "element_ref",
    "find_node",
    "merge_capabilities",
    "response_capabilities",
]

# W3C web element identifier; the legacy "ELEMENT" key is sent too for old JSONWP clients.
ELEMENT_KEY = "element-6066-11e4-a52e-4f735466cecf"


def element_ref(eid: str) -> dict[str, str]:
    return {ELEMENT_KEY: eid, "ELEMENT": eid}


def find_node(root: SimNode, key: str) -> SimNode | None:
    for node in root.walk():
        if node.key == key:
            return node
    return None


@dataclass
class SimSession:
    """State of one session. Every field is touched only with `lock` held."""

    session_id: str
    phone: PhoneModel
    capabilities: dict[str, Any]
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    implicit_ms: int = 0
    page_load_ms: int = 300_000
    script_ms: int = 30_000
    settings: dict[str, Any] = field(default_factory=dict)
    closed: bool = False
    context: str = "NATIVE_APP"  # or the web view context switched to (`routes_context.py`)
    web_generation: int = 0  # which web view that context was switched to
    _id_by_key: dict[str, str] = field(default_factory=dict, repr=False)
    _key_by_id: dict[str, str] = field(default_factory=dict, repr=False)

    def element_id(self, node: SimNode) -> str:
        """The id for a node; the same node (same key) always gets the same id in this session."""
        eid = self._id_by_key.get(node.key)
        if eid is None:
            eid = uuid.uuid4().hex
            self._id_by_key[node.key] = eid
            self._key_by_id[eid] = node.key
        return eid

    def resolve(self, eid: str, root: SimNode | None = None) -> SimNode:
        """The node behind an element id, or the W3C error a real server would give."""
        key = self._key_by_id.get(eid)
        if key is None:
            raise W3CError("no such element", f"element id {eid!r} was never returned in this session")
        node = find_node(root if root is not None else self.phone.root(), key)
        if node is None:
            raise W3CError(
                "stale element reference",
                f"element {eid!r} ({key}) is no longer on the screen; find it again",
            )
        return node

    def timeouts(self) -> dict[str, int]:
        return {"implicit": self.implicit_ms, "pageLoad": self.page_load_ms, "script": self.script_ms}

    def set_timeouts(self, body: dict[str, Any]) -> None:
        """W3C `{"implicit": ms, ...}` or JSONWP `{"type": "implicit", "ms": ms}`."""
        if "type" in body and "ms" in body:
            body = {{"page load": "pageLoad"}.get(str(body["type"]), str(body["type"])): body["ms"]}
        names = {"implicit": "implicit_ms", "pageLoad": "page_load_ms", "script": "script_ms"}
        unknown = [name for name in body if name not in names]
        if unknown:
            raise invalid_argument(f"unknown timeout(s) {unknown}; expected implicit, pageLoad or script")
        for name, value in body.items():
            if value is None and name == "script":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 2**53 - 1:
                raise invalid_argument(f"timeout {name!r} must be a non-negative integer of ms, got {value!r}")
            setattr(self, names[name], int(value))


def merge_capabilities(body: dict[str, Any]) -> dict[str, Any]:
    """W3C capability processing (§7.2): alwaysMatch merged with the first compatible firstMatch.

    Raises invalid argument for malformed input and session not created when no entry matches
    a driver the sim imitates (Android/UiAutomator2 or iOS/XCUITest, issue 11). A legacy
    `desiredCapabilities` body is accepted as-is.
    """
    caps = body.get("capabilities")
    if caps is None:
        legacy = body.get("desiredCapabilities")
        if not isinstance(legacy, dict):
            raise invalid_argument("body needs a 'capabilities' object (W3C) or 'desiredCapabilities'")
        caps = {"alwaysMatch": legacy}
    if not isinstance(caps, dict):
        raise invalid_argument("'capabilities' must be a JSON object")
    always = caps.get("alwaysMatch", {})
    first = caps.get("firstMatch", [{}])
    if not isinstance(always, dict):
        raise invalid_argument("'alwaysMatch' must be a JSON object")
    if not isinstance(first, list) or not first or not all(isinstance(entry, dict) for entry in first):
        raise invalid_argument("'firstMatch' must be a non-empty list of JSON objects")
    reasons: list[str] = []
    for entry in first:
        clash = sorted(set(always) & set(entry))
        if clash:
            raise invalid_argument(f"firstMatch repeats alwaysMatch key(s) {clash}")
        merged = {**always, **entry}
        if "automationName" in merged and "appium:automationName" not in merged:
            merged["appium:automationName"] = merged.pop("automationName")
        platform, mismatch = match_platform(merged)
        if platform is not None:
            return merged
        reasons.append(mismatch)
    raise W3CError(
        "session not created",
        "the simulated phone is Android/UiAutomator2 or iOS/XCUITest; no capability set matched "
        f"({'; '.join(reasons)})",
    )


def response_capabilities(merged: dict[str, Any], width: int, height: int) -> dict[str, Any]:
    """What `POST /session` returns: the request's capabilities as Appium echoes them."""
    out = {name.removeprefix("appium:"): value for name, value in merged.items()}
    if platform_of(merged) == IOS:
        out.update({"platformName": "iOS", "automationName": "XCUITest",
                    "deviceName": out.get("deviceName", "iPhone 15 (guistate-sim)"),
                    "platformVersion": out.get("platformVersion", "17.5")})
        return out
    out.update(
        {
            "platformName": "Android",
            "automationName": "UiAutomator2",
            "deviceName": out.get("deviceName", "guistate-sim"),
            "deviceScreenSize": f"{width}x{height}",
        }
    )
    return out


PhoneFactory = Callable[[dict[str, Any]], PhoneModel]


class SessionStore:
    """All live sessions of one server. The store lock guards the dict only; each session has its own."""

    def __init__(self, phone_factory: PhoneFactory, default_caps: Mapping[str, Any], max_sessions: int) -> None:
        self._factory = phone_factory
        self._default_caps = dict(default_caps)
        self._max = max_sessions
        self._sessions: dict[str, SimSession] = {}
        self._lock = threading.Lock()
        self.stopping = threading.Event()  # set on server stop: ends implicit-wait polls early

    def create(self, body: dict[str, Any]) -> SimSession:
        requested = merge_capabilities(body)
        defaults = dict(self._default_caps)
        if match_platform(requested)[0] == IOS:
            defaults.pop("guistate:screen", None)  # a default screen is Android pixels; iOS takes points of its own
        merged = {**defaults, **requested}
        with self._lock:
            if len(self._sessions) >= self._max:
                raise W3CError("session not created", f"too many open sessions ({self._max}); quit one first")
        try:
            phone = self._factory(merged)
        except W3CError:
            raise
        except Exception as exc:
            raise W3CError("session not created", f"the simulated phone refused the capabilities: {exc}") from exc
        session = SimSession(uuid.uuid4().hex, phone, response_capabilities(merged, phone.width, phone.height))
        with self._lock:
            admitted = len(self._sessions) < self._max  # re-checked: another request may have won the race
            if admitted:
                self._sessions[session.session_id] = session
        if not admitted:
            phone.close()
            raise W3CError("session not created", f"too many open sessions ({self._max}); quit one first")
        return session

    def get(self, session_id: str) -> SimSession:
        with self._lock:
            session = self._sessions.get(session_id)
        if session is None:
            raise W3CError("invalid session id", f"no active session {session_id!r} (never created or already quit)")
        return session

    def delete(self, session_id: str) -> None:
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is None:
            raise W3CError("invalid session id", f"no active session {session_id!r} (never created or already quit)")
        with session.lock:
            session.closed = True
            session.phone.close()

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._sessions)

    def sessions(self) -> list[SimSession]:
        with self._lock:
            return list(self._sessions.values())

    def close_all(self) -> list[str]:
        """Close every phone (server stop); returns the errors met, so none is lost silently."""
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        errors = []
        for session in sessions:
            with session.lock:
                session.closed = True
                try:
                    session.phone.close()
                except Exception as exc:  # noqa: BLE001 - keep closing the others; the caller reports these
                    errors.append(f"session {session.session_id}: {exc!r}")
        return errors
