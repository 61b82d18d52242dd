"""A Selenium Grid 4 hub in front of Appium servers (issue 35): a hub is a pool, not one URL.

A hub's `GET /status` lists its nodes, each with its state (`UP`, `DOWN`, `DRAINING`) and slots
(a stereotype, and the session it runs, if any). From it the plugin sizes the pool (the slots whose
stereotype matches the run's capabilities), warns when more test processes than slots will queue,
tells a wait in the hub's queue from a dead server, and the doctor lists what stands behind a hub.

The hub routes each new session itself; the plugin cannot pick a node. What it can do is read
where a failure happened: a relay node that cannot reach its Appium server answers
"Error while creating session with the service http://HOST:PORT" — that URL names the node's
service, so the failure is recorded against that service (`node_failures` in the pool), and the
hub is taken out only when every matching node has failed. Stdlib only: read at configure time.
"""

from __future__ import annotations

import http.client
import json
import re
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from pytest_guistate.devices.device_list import DeviceSpec, server_request

__all__ = [
    "GridNode",
    "GridSlot",
    "GridStatus",
    "NodeHealth",
    "failed_service",
    "hub_capacity",
    "hub_pool",
    "is_queue_timeout",
    "node_health",
    "node_of_session",
    "queue_position",
    "read_grid_status",
    "service_health",
    "stereotype_matches",
    "trim_grid_message",
]

# The Grid's DefaultSlotMatcher does not compare extension capabilities with these prefixes.
_UNMATCHED_PREFIXES = ("goog:", "moz:", "ms:", "se:")
# What a relay node says when its service refused or did not answer: on a new session "Error while
# creating session with the service URL", on a command "Connection error (GET URL/session/…)" or, when
# the connection broke mid-request, "Failed to execute request (POST URL/session/…)".
_SERVICE_RE = re.compile(
    r"(?:creating session with the service|(?:Connection error|Failed to execute request) "
    r"\((?:GET|POST|DELETE|PUT|PATCH))\s+(https?://[^\s/,;)'\"]+)")
# The Grid's errors carry a multi-line block of host / build / system / driver info, once or twice.
_GRID_NOISE_RE = re.compile(
    r"^\s*(Host info:|Build info:|System info:|Driver info:|Capabilities\s*\{|Command:|Session ID:|"
    r"at [\w$.]+\(|For documentation on this error)", re.IGNORECASE)
_GRID_BLOCK_RE = re.compile(r"^\s*(Host info:|Build info:|System info:|Driver info:)", re.MULTILINE)
_QUEUE_TIMEOUT_HINTS = ("new session request timed out", "timed out waiting", "session request timed out")


@dataclass(frozen=True)
class GridSlot:
    """One slot of a node: what it offers (its stereotype) and the session it runs now, if any."""

    stereotype: dict[str, Any]
    session_id: str | None

    @property
    def busy(self) -> bool:
        return self.session_id is not None


@dataclass(frozen=True)
class GridNode:
    """One node of the hub as `/status` states it."""

    node_id: str
    uri: str
    availability: str
    slots: tuple[GridSlot, ...]
    version: str = ""

    @property
    def up(self) -> bool:
        return self.availability.upper() == "UP"

    def matching(self, capabilities: dict[str, Any]) -> list[GridSlot]:
        return [slot for slot in self.slots if stereotype_matches(slot.stereotype, capabilities)]


@dataclass(frozen=True)
class GridStatus:
    """A hub's `/status`: whether it is ready, its message, its nodes."""

    url: str
    ready: bool
    message: str
    nodes: tuple[GridNode, ...]

    def matching_nodes(self, capabilities: dict[str, Any]) -> list[GridNode]:
        return [node for node in self.nodes if node.matching(capabilities)]

    def slot_counts(self, capabilities: dict[str, Any]) -> tuple[int, int, int]:
        """(matching slots on UP nodes, of them busy, matching slots on nodes not UP)."""
        up = [slot for node in self.nodes if node.up for slot in node.matching(capabilities)]
        down = [slot for node in self.nodes if not node.up for slot in node.matching(capabilities)]
        return len(up), sum(slot.busy for slot in up), len(down)

    def describe(self, capabilities: dict[str, Any]) -> str:
        """One line: how many matching slots, busy, on how many nodes, and which nodes are not UP."""
        free_total, busy, down = self.slot_counts(capabilities)
        nodes = self.matching_nodes(capabilities)
        text = f"{busy} of {free_total} matching slot(s) busy on {sum(n.up for n in nodes)} UP node(s)"
        gone = [f"{n.uri} {n.availability}" for n in nodes if not n.up]
        return text + (f"; not UP: {', '.join(gone)} ({down} slot(s))" if gone else "")


def _is_extension(name: str) -> bool:
    return ":" in name


def stereotype_matches(stereotype: dict[str, Any], capabilities: dict[str, Any]) -> bool:
    """Whether the hub would route `capabilities` to a slot of this stereotype (the Grid's default
    matcher: browserName, browserVersion and platformName when both name them; extension
    capabilities of the stereotype that the request names, except goog:/moz:/ms:/se:)."""
    for name in ("browserName", "browserVersion"):
        want, have = capabilities.get(name), stereotype.get(name)
        if want not in (None, "") and have not in (None, "") and str(want).lower() != str(have).lower():
            return False
    want, have = capabilities.get("platformName"), stereotype.get("platformName")
    if want not in (None, "", "any", "ANY") and have not in (None, "") and not _platform_is(str(have), str(want)):
        return False
    for name, value in stereotype.items():
        if not _is_extension(name) or name.startswith(_UNMATCHED_PREFIXES) or name not in capabilities:
            continue
        asked = capabilities[name]
        if isinstance(value, str) and isinstance(asked, str):
            if value.lower() != asked.lower():
                return False
        elif value != asked:
            return False
    return True


def _platform_is(have: str, want: str) -> bool:
    """Selenium's Platform.is(): a family matches its members (`linux` is a `unix`)."""
    have, want = have.lower(), want.lower()
    return have == want or (want == "unix" and have in ("linux", "mac", "unix"))


def _get_json(url: str, path: str, timeout_s: float) -> Any:
    try:
        with urllib.request.urlopen(server_request(url, path), timeout=timeout_s) as response:
            return json.loads(response.read(4_000_000).decode("utf-8") or "null")
    except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError):
        return None


def _hub_root(url: str) -> str:
    """The hub's base URL: clients often name it with Grid 3's `/wd/hub`, which Grid 4 also serves."""
    return url[: -len("/wd/hub")] if url.rstrip("/").endswith("/wd/hub") else url.rstrip("/")


def read_grid_status(url: str, timeout_s: float = 5.0) -> GridStatus | None:
    """The hub's status, or None when `url` does not answer like a Selenium Grid 4 hub (an Appium
    server's `/status` has no `nodes`)."""
    body = _get_json(_hub_root(url), "/status", timeout_s)
    value = body.get("value") if isinstance(body, dict) else None
    if not isinstance(value, dict) or not isinstance(value.get("nodes"), list):
        return None
    nodes = []
    for raw in value["nodes"]:
        if not isinstance(raw, dict):
            continue
        slots = tuple(
            GridSlot(dict(slot.get("stereotype") or {}), _session_id(slot.get("session")))
            for slot in raw.get("slots") or () if isinstance(slot, dict)
        )
        nodes.append(GridNode(str(raw.get("id", "?")), str(raw.get("uri", "?")), str(raw.get("availability", "?")),
                              slots, str(raw.get("version", ""))))
    return GridStatus(url, bool(value.get("ready")), str(value.get("message", "")), tuple(nodes))


def _session_id(session: object) -> str | None:
    if isinstance(session, dict):
        return str(session.get("sessionId") or session.get("id") or "?")
    return None


def queue_position(url: str, capabilities: dict[str, Any], timeout_s: float = 3.0) -> tuple[int, int] | None:
    """(position, length) of the first request asking for `capabilities` in the hub's new-session
    queue (`/se/grid/newsessionqueue/queue`), or None when no such request waits (or the hub does not
    say). A request is told by the capabilities it sent: with a driver port of its own it is unique."""
    body = _get_json(_hub_root(url), "/se/grid/newsessionqueue/queue", timeout_s)
    value = body.get("value") if isinstance(body, dict) else None
    if not isinstance(value, list):
        return None
    wanted = json.loads(json.dumps(capabilities, default=str))
    for index, entry in enumerate(value):
        asked = entry.get("capabilities") if isinstance(entry, dict) else None
        for caps in asked if isinstance(asked, list) else [asked]:
            if isinstance(caps, dict) and all(caps.get(k) == v for k, v in wanted.items()):
                return index + 1, len(value)
    return None


@dataclass(frozen=True)
class NodeHealth:
    """A node's word on itself (`GET node/status`): a relay node reports DOWN as soon as its service
    stops answering its status endpoint, long before the hub's health check notices."""

    state: str  # "up", "down", or "unreachable" (a node on a network this machine cannot reach, or dead)
    detail: str = ""

    @property
    def up(self) -> bool:
        return self.state == "up"


def node_health(node_uri: str, timeout_s: float = 3.0) -> NodeHealth:
    try:
        with urllib.request.urlopen(f"{node_uri.rstrip('/')}/status", timeout=timeout_s) as response:
            body = json.loads(response.read(1_000_000).decode("utf-8") or "{}")
    except urllib.error.HTTPError as exc:
        exc.close()
        return NodeHealth("up", f"HTTP {exc.code}")  # it answers; not ours to judge (auth, an older Grid)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return NodeHealth("unreachable", f"node {node_uri} does not answer /status ({getattr(exc, 'reason', exc)})")
    value = body.get("value") if isinstance(body, dict) else None
    node = value.get("node") if isinstance(value, dict) else None
    availability = str(node.get("availability", "UP")) if isinstance(node, dict) else "UP"
    message = str(value.get("message", "")) if isinstance(value, dict) else ""
    if availability.upper() == "UP":
        return NodeHealth("up", message)
    return NodeHealth("down", f"node {node_uri} reports {availability} ({message})")


def service_health(service: str, timeout_s: float = 3.0) -> NodeHealth:
    """An Appium server's word on itself (`GET service/status`): "down" when nothing answers there. A
    relay node reports its service DOWN only at its next check of it; the service itself is asked at once."""
    try:
        with urllib.request.urlopen(f"{service.rstrip('/')}/status", timeout=timeout_s) as response:
            response.read(1_000_000)
    except urllib.error.HTTPError as exc:
        exc.close()
        return NodeHealth("up", f"HTTP {exc.code}")  # it answers
    except (urllib.error.URLError, OSError) as exc:
        return NodeHealth("down", f"its Appium {service} does not answer /status ({getattr(exc, 'reason', exc)})")
    return NodeHealth("up")


def node_of_session(url: str, session_id: str, timeout_s: float = 3.0) -> str | None:
    """The URI of the node that runs `session_id`, from the hub's `/status` (None if not listed)."""
    status = read_grid_status(url, timeout_s)
    for node in status.nodes if status else ():
        if any(slot.session_id == session_id for slot in node.slots):
            return node.uri
    return None


def failed_service(message: str) -> str | None:
    """The service URL a relay node names when it could not create a session there, else None."""
    match = _SERVICE_RE.search(message)
    if match is None:
        return None
    return match.group(1).rstrip(".")


def is_queue_timeout(message: str) -> bool:
    """The hub's own queue deadline (`session-request-timeout`) ran out: a wait, not a refusal."""
    lowered = message.lower()
    return any(hint in lowered for hint in _QUEUE_TIMEOUT_HINTS)


def trim_grid_message(message: str, limit: int | None = None) -> str:
    """A Grid error without its host / build / system / driver blocks and stack lines, each sentence
    once (the Grid repeats both); a message that carries no such block is returned as it came."""
    if not _GRID_BLOCK_RE.search(message):
        return message if limit is None or len(message) <= limit else message[: limit - 1] + "…"
    kept: list[str] = []
    for line in message.splitlines():
        line = line.strip().rstrip(";").strip()
        if not line or _GRID_NOISE_RE.match(line):
            continue
        for part in re.split(r"(?<=\.)\s+", line):
            if part and part not in kept:
                kept.append(part)
    text = " ".join(kept) or message.strip()
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"


def hub_pool(
    specs: Sequence[DeviceSpec], capabilities: dict[str, Any], workers: int, timeout_s: float = 5.0,
) -> tuple[tuple[DeviceSpec, ...], dict[str, GridStatus]]:
    """The pool with every Grid hub listed once widened to its slots, and the hubs' status by device key.

    A hub listed once gets one lease per slot whose stereotype matches the run's capabilities plus
    the entry's own, and at least one per test process (the hub queues a session that finds every
    slot busy; `plugin.py` warns about that at the start). A hub listed n times keeps its n leases,
    as before. A URL that is not a hub, or does not answer, stays as listed (the pool probes it).
    """
    grids: dict[str, GridStatus] = {}
    listed: dict[str, int] = {}
    for spec in specs:
        listed[spec.key] = listed.get(spec.key, 0) + 1
    widened: list[DeviceSpec] = []
    for spec in specs:
        if spec.key not in grids and spec.slot == 0:
            status = read_grid_status(spec.url, timeout_s)
            if status is not None:
                grids[spec.key] = status
        status = grids.get(spec.key)
        if status is None or listed[spec.key] > 1:
            widened.append(spec)
            continue
        slots = status.slot_counts({**capabilities, **spec.capabilities})[0]
        widened.extend(replace(spec, slot=i) for i in range(max(1, slots, workers)))
    return tuple(widened), grids


def hub_capacity(specs: Sequence[DeviceSpec], capabilities: dict[str, Any], workers: int) -> list[str]:
    """What a run should hear before it starts about the hubs of its pool: more test processes than
    matching slots (the rest queue in the hub), or no slot matching at all. One line per hub."""
    lines: list[str] = []
    seen: set[str] = set()
    for spec in specs:
        if spec.key in seen:
            continue
        seen.add(spec.key)
        status = read_grid_status(spec.url)
        if status is None:
            continue
        caps = {**capabilities, **spec.capabilities}
        slots, _busy, _down = status.slot_counts(caps)
        offered = sorted({json.dumps(slot.stereotype, sort_keys=True) for node in status.nodes for slot in node.slots})
        if not status.matching_nodes(caps):
            lines.append(f"hub {spec.label}: no slot's stereotype matches the capabilities (the hub offers "
                         f"{', '.join(offered) or 'no slots'}); every session will be refused")
        elif workers > slots:
            lines.append(f"hub {spec.label}: {workers} test processes and {slots} matching slot(s) "
                         f"({status.describe(caps)}): {workers - slots} session(s) at a time will queue in the hub "
                         "for a free slot (each within guistate_session_timeout)")
    return lines
