"""One session through a Selenium Grid hub (issue 35): opened past failing nodes and through the
hub's queue, and ended with the node named when the Appium behind it died.

Opening: a relay node whose Appium does not answer fails fast with the service's URL in the
Grid's message; that node is recorded (`DevicePool.node_failed`), and the request is sent again
once the hub shows a free slot on a node that says it is healthy, until one deadline —
`guistate_session_timeout`, which covers the queue, the retries and the start itself. The hub is
taken out only when every node matching the capabilities has failed. A wait is named a wait: while
every matching slot is busy the caller's `announce` gets "waiting for a slot ..." (the live line,
and a warning with the time waited), and a queue that ran out (the Grid's own
`session-request-timeout`, or this deadline) is an error of this test, not a dead hub, and is never
retried — so the wait is never doubled.

Ending: when a test failed, the hub's `/status` says which node ran its session and that node's
own `/status` whether it is healthy (a relay node reports DOWN when its service stops answering,
long before the hub's health check does). A dead node ends the test with `device … died` naming
that node; the hub stays in the pool for the other tests.

During the test (issue 44): any device call that meets a connection failure to a service behind
the hub (a find, a script, a screenshot, an action, a context switch) asks `named_death` at once,
so the call itself ends with the same `device … died` naming the node and its Appium.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self

from pytest_guistate.devices.device_list import DeviceSpec
from pytest_guistate.devices.errors import DeviceError
from pytest_guistate.devices.grid import (
    GridStatus,
    NodeHealth,
    failed_service,
    is_queue_timeout,
    node_health,
    node_of_session,
    queue_position,
    read_grid_status,
    service_health,
    trim_grid_message,
)
from pytest_guistate.devices.pool import DevicePool
from pytest_guistate.devices.timeouts import DeviceTimeout

__all__ = ["HubOut", "QueueWait", "hub_session_died", "named_death", "open_through_hub", "session_node"]

POLL_S = 1.0  # how often a waiting test re-reads the hub's /status
_STATUS_TIMEOUT_S = 3.0


class HubOut(DeviceError):
    """Every node behind the hub that matches the capabilities failed: the hub is out of the pool."""


@dataclass
class QueueWait:
    """How long opening the session waited for a slot (0 when a slot was free at once), and why."""

    seconds: float = 0.0
    why: str = ""


def _healthy_free_slot(status: GridStatus, capabilities: dict[str, Any]) -> bool:
    """A matching free slot on a node that is UP for the hub and by its own word."""
    for node in status.nodes:  # a node this machine cannot reach: the hub's word (UP) stands
        if node.up and any(not slot.busy for slot in node.matching(capabilities)) \
                and node_health(node.uri).state != "down":
            return True
    return False


class _Ticker:
    """Calls `announce(elapsed)` every POLL_S while a blocking call runs (the live line keeps counting)."""

    def __init__(self, announce: Callable[[float], None], started: float) -> None:
        self._announce = announce
        self._started = started
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2 * POLL_S)

    def _run(self) -> None:
        while not self._stop.wait(POLL_S):
            self._announce(time.monotonic() - self._started)


def open_through_hub(
    pool: DevicePool,
    spec: DeviceSpec,
    capabilities: dict[str, Any],
    open_session: Callable[[float], Any],
    deadline_s: float,
    announce: Callable[[str], None],
) -> tuple[Any, QueueWait]:
    """A new session through hub `spec` within `deadline_s` (see the module docstring).

    `open_session(seconds)` sends one newSession for `capabilities` (as sent: the queue is searched
    for them) with that read deadline. A refusal that names no
    node (capabilities no slot offers, a bad marker cap) is re-raised for the caller's refusal rule.
    """
    from selenium.common.exceptions import WebDriverException

    started = time.monotonic()
    wait = QueueWait()
    said = ""
    queued_at = ""

    def waiting(elapsed: float) -> None:  # short: the live line has the rest of pytest's line only
        announce(f"waiting for a Grid slot, {elapsed:.0f} s{queued_at}")

    def watch(elapsed: float) -> None:
        """While newSession runs: this request still in the hub's queue is a wait for a slot."""
        nonlocal said, queued_at
        place = queue_position(spec.url, capabilities)
        if place is not None:
            status = read_grid_status(spec.url, _STATUS_TIMEOUT_S)
            busy = status.describe(capabilities) if status is not None else "the hub's /status did not answer"
            said = f"{busy}; position {place[0]} of {place[1]} in the hub's queue"
            queued_at = f", queue {place[0]}/{place[1]}"
            wait.why = said
            waiting(elapsed)

    while True:
        remaining = deadline_s - (time.monotonic() - started)
        if remaining <= 0:
            raise DeviceError(_out_of_time(spec, deadline_s, pool, said))
        try:
            with _Ticker(watch, started):
                driver = open_session(remaining)
        except DeviceTimeout as exc:
            if read_grid_status(spec.url, _STATUS_TIMEOUT_S) is None:
                raise  # the hub itself does not answer: the caller takes it out
            raise DeviceError(_out_of_time(spec, deadline_s, pool, said or str(exc))) from None
        except WebDriverException as exc:
            text = trim_grid_message(exc.msg or str(exc))
            if is_queue_timeout(text):
                # a queue that gave up while every matching node was down (the hub marked them DOWN
                # before this request reached a node) waited for nothing: that hub is out
                _take_out_if_every_node_failed(pool, spec, capabilities)
                raise DeviceError(
                    f"no slot of hub {spec.label} came free: the hub's queue gave up after "
                    f"{time.monotonic() - started:.0f} s (its session-request-timeout): {text} — a wait, not a "
                    "refusal: not retried, the hub stays in the pool"
                ) from None
            service = failed_service(text)
            if service is None:
                raise
            pool.node_failed(spec, service, text)
            failed, nodes = _take_out_if_every_node_failed(pool, spec, capabilities)
            said = f"node service {service} failed to start a session ({failed} of {nodes} nodes failed)"
            wait.why = said
            _wait_for_healthy_slot(spec, capabilities, started, deadline_s, pool, waiting)
            continue
        wait.seconds = time.monotonic() - started if wait.why else 0.0
        return driver, wait


def _wait_for_healthy_slot(
    spec: DeviceSpec, capabilities: dict[str, Any], started: float, deadline_s: float, pool: DevicePool,
    waiting: Callable[[float], None],
) -> None:
    while time.monotonic() - started < deadline_s:
        status = read_grid_status(spec.url, _STATUS_TIMEOUT_S)
        if status is not None and _healthy_free_slot(status, capabilities):
            return
        _take_out_if_every_node_failed(pool, spec, capabilities)  # the last live node may die while we wait
        waiting(time.monotonic() - started)
        time.sleep(POLL_S)
    raise DeviceError(_out_of_time(spec, deadline_s, pool, "no healthy free slot"))


def _take_out_if_every_node_failed(pool: DevicePool, spec: DeviceSpec, capabilities: dict[str, Any]) -> tuple[int, int]:
    """(failed, matching) nodes of the hub; when every matching node failed, the hub is taken out
    (`HubOut`). A node failed when a session failure of this run named its service, or when it is
    not UP by the hub's or its own word (the failures name services, the states name nodes: the
    larger count of the two is taken, never their sum)."""
    status = read_grid_status(spec.url, _STATUS_TIMEOUT_S)
    matching = status.matching_nodes(capabilities) if status is not None else []
    failures = pool.node_failures(spec)
    down = {}
    for node in matching:
        health = node_health(node.uri)
        if not node.up or health.state == "down":
            down[node.uri] = health.detail if health.state == "down" else f"the hub says {node.availability}"
    failed, nodes = max(len(failures), len(down)), max(1, len(matching))
    if failed >= nodes:
        # the states name nodes, the failures name the Appium services behind them: said apart, so a
        # node and its service are never read as two of the matching nodes
        said_down = "; ".join(f"{node}: {why}" for node, why in sorted(down.items()))
        said_failed = "; ".join(f"service {service}: {why}" for service, why in sorted(failures.items()))
        reasons = " | ".join(part for part in (said_down and f"nodes not up: {said_down}",
                                                said_failed and f"session starts that failed: {said_failed}") if part)
        pool.mark_dead(spec, f"every node behind the hub that matches the capabilities failed ({failed} of {nodes}): "
                             f"{reasons}")
        raise HubOut(f"hub {spec.label}: every matching node failed")
    return failed, nodes


def _out_of_time(spec: DeviceSpec, deadline_s: float, pool: DevicePool, said: str) -> str:
    failures = pool.node_failures(spec)
    failed = f"; nodes that failed: {'; '.join(f'{n}: {r}' for n, r in failures.items())}" if failures else ""
    return (f"waited {deadline_s:g} s for a session from hub {spec.label} (guistate_session_timeout, one deadline "
            f"for the queue and the start): {said}{failed} — a wait, not a dead hub: it stays in the pool")


def hub_session_died(pool: DevicePool, spec: DeviceSpec, node_uri: str | None, error_text: str) -> str | None:
    """Why the node that ran a failed test's session is dead (recorded against that node), or None
    when it is healthy (the test failed on its own). A node this machine cannot reach counts as dead
    only when the test's error also names a connection failure to its service."""
    if node_uri is None:
        return None
    health = node_health(node_uri)
    service = failed_service(error_text)
    if health.up and service is not None:
        # a relay node reports its service DOWN only at its next check: a call failing at once asks the
        # service the error names itself
        asked = service_health(service)
        health = health if asked.up else NodeHealth("down", f"node {node_uri} relays to a dead service: {asked.detail}")
    if health.up or (health.state == "unreachable" and service is None):
        return None
    behind = f" (Appium {service})" if service else ""
    pool.node_failed(spec, service or node_uri, health.detail)
    return f"node {node_uri}{behind} behind the hub: {health.detail}"


def named_death(pool: DevicePool, spec: DeviceSpec, session_id: str, error_text: str) -> str | None:
    """`device HUB died: node … (Appium …) behind the hub: …` for a device call whose error names a
    connection failure to a service behind the hub (the node running `session_id`, read from the hub,
    and judged by its own and its service's `/status`), else None: only such an error costs requests."""
    if failed_service(error_text) is None:
        return None
    why = hub_session_died(pool, spec, session_node(spec, session_id), error_text)
    return None if why is None else f"device {spec.label} died: {why}"


def session_node(spec: DeviceSpec, session_id: str) -> str | None:
    """The node running `session_id`, read from the hub (before the session is deleted)."""
    return node_of_session(spec.url, session_id, _STATUS_TIMEOUT_S)
