"""Deadlines on every device call (issue 14): a server that stops answering ends the test, not the run.

Appium-Python-Client waits forever by default (its `ClientConfig.timeout` is the socket default,
None). `bounded_connection` gives the client an `AppiumConnection` whose every HTTP request has a
read deadline — `guistate_command_timeout` for commands, `guistate_session_timeout` for
`newSession` (a real server may install helper apps or build WebDriverAgent first) — with urllib3's
retries off, so a hung GET is not silently re-sent three more times. A request that runs out
raises `DeviceTimeout` ("device at URL did not answer screenshot within 5 s") and marks the URL
suspect: the pool probes `/status` before the next test leases it (`take_suspect`).

Each request is also clipped to the test's wall-clock budget (`core/watchdog.py`), so a test
over budget ends at its next device call with `TestTimeout` rather than after a long wait.

The deadline bounds the whole answer, not each socket read (issue 22: a server trickling a
screenshot at 64 bytes/s kept a "3 s" deadline waiting 125 s, since urllib3's read timeout restarts
with every recv). urllib3 has no whole-response deadline (its `Timeout(total=)` is also applied per
read), so each request gets a `_Deadline`: when the time is up, the process's one watcher thread
(`_Watcher`, started on first use; issue 42: a `threading.Timer` per request started a thread for
every WebDriver command) shuts the request's socket down. The blocked read in the test's thread then returns at once, urllib3 drops that
connection (a closed socket is never reused from the pool), and `execute` reports the timeout with
the real elapsed time. Shutting a socket down from another thread is safe and wakes a blocked
`recv` on every platform; the sockets are found by a connection class of our own, registered by the
test's thread as it sends (a SOCKS proxy keeps its own classes: there the per-read deadline applies).
"""

from __future__ import annotations

import contextlib
import heapq
import http.client
import itertools
import os
import socket
import threading
import time
from typing import Any

import urllib3
from appium.webdriver.appium_connection import AppiumConnection
from appium.webdriver.client_config import AppiumClientConfig
from selenium.webdriver.remote.command import Command

from pytest_guistate.core import watchdog
from pytest_guistate.devices.device_list import DeviceSpec
from pytest_guistate.devices.errors import DeviceError

__all__ = [
    "LOCATOR_POLL_S",
    "LOCATOR_TIMEOUT_S",
    "DeviceGone", "DeviceTimeout", 
    "bounded_connection",
    "is_suspect",
    "mark_suspect",
    "take_suspect",
]

# Defaults (seconds). A real server: 60 s per command is far beyond a healthy screenshot or page
# source (0.1-2 s on UiAutomator2/XCUITest/chromium) but leaves room for a slow farm; session
# creation may install the UiAutomator2 server or build WebDriverAgent, which takes minutes.
# The sim answers in-process in milliseconds, so 20 s there only ever fires on a real hang.
COMMAND_TIMEOUT_S = 60.0
# How long a locator waits by default for its element to be ready (issue 34, docs/web-components.md):
# component libraries hydrate after the page loads (Ionic's lazy chunks, a list fetched late) and a
# test failing before the screen is drawn proves nothing; 5 s covers that on a loaded CI machine while
# a wrong locator still fails in seconds. A ready element costs one look, whatever the bound.
LOCATOR_TIMEOUT_S = 5.0
LOCATOR_POLL_S = 0.1  # between two looks while a locator waits
SIM_COMMAND_TIMEOUT_S = 20.0
SESSION_TIMEOUT_S = 300.0
SIM_SESSION_TIMEOUT_S = 30.0

_suspects: dict[str, str] = {}
_lock = threading.Lock()


class DeviceTimeout(DeviceError, TimeoutError):
    """A device call got no answer within its deadline. A `TimeoutError` too, so code that treats
    an unreachable server (`OSError`) as "move to another device" does so for a hung one."""


class DeviceGone(DeviceError, ConnectionError):
    """The server refused or dropped the connection of a device call (it died, or restarted)."""


def mark_suspect(url: str, reason: str) -> None:
    with _lock:
        _suspects[url] = reason


def is_suspect(url: str) -> bool:
    with _lock:
        return url in _suspects


def take_suspect(url: str) -> str | None:
    """Why `url` is suspect (and clear it: the caller probes it now), or None."""
    with _lock:
        return _suspects.pop(url, None)


def _timed_out(exc: BaseException) -> bool:
    if isinstance(exc, (urllib3.exceptions.TimeoutError, socket.timeout, TimeoutError)):
        return True
    reason = getattr(exc, "reason", None)  # MaxRetryError wraps the ReadTimeoutError
    return isinstance(reason, (urllib3.exceptions.TimeoutError, socket.timeout, TimeoutError))


def _reason(exc: BaseException) -> str:
    """The innermost cause of a urllib3 error, without the long repr of its pool."""
    inner = getattr(exc, "reason", None) or (exc.args[1] if len(getattr(exc, "args", ())) > 1 else None)
    found = inner if isinstance(inner, BaseException) else exc
    return f"{type(found).__name__}: {found}"[:200]


_sending = threading.local()  # the `_Deadline` of the request this thread is sending, if any


class _Watcher:
    """The one thread that ends requests past their deadline. Registering a deadline is a heap push
    under a lock; the thread sleeps until the earliest one and is woken only when a new deadline
    comes before it (a clipped budget), so a command costs no thread start and, in the steady state
    of equal deadlines, no wake-up. Finished deadlines stay in the heap until their time and are
    dropped then (each holds no connection once finished)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, _Deadline]] = []
        self._order = itertools.count()
        self._wake = threading.Condition(threading.Lock())
        self._pid = 0
        self._thread: threading.Thread | None = None

    def add(self, deadline: _Deadline) -> None:
        with self._wake:
            if self._thread is None or self._pid != os.getpid():  # a forked child has no watcher thread
                self._heap = []
                self._pid = os.getpid()
                self._thread = threading.Thread(target=self._run, name="guistate-deadlines", daemon=True)
                self._thread.start()
            entry = (deadline.due, next(self._order), deadline)
            heapq.heappush(self._heap, entry)
            if self._heap[0] is entry:
                self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                due = self._next_due()
            due._expire()  # outside the lock: a new request is not held up by a socket shutdown

    def _next_due(self) -> _Deadline:
        """Wait (holding the condition) until an unfinished deadline's time has come; take it."""
        while True:
            while self._heap and self._heap[0][2].finished:
                heapq.heappop(self._heap)
            if not self._heap:
                self._wake.wait()
                continue
            left = self._heap[0][0] - time.monotonic()
            if left <= 0:
                return heapq.heappop(self._heap)[2]
            self._wake.wait(left)


_watcher = _Watcher()


class _Deadline:
    """One request's whole-answer deadline: `start()` before sending, `finish()` after; at `seconds`
    the socket of the connection the request went out on is shut down (see the module docstring)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.started = time.monotonic()
        self.due = self.started + seconds
        self.expired = False
        self.finished = False  # read by the watcher without the lock: a finished deadline is dropped
        self.answering = False  # the status line and headers came: the body is what is late
        self._connection: Any = None
        self._lock = threading.Lock()

    def start(self) -> _Deadline:
        _sending.deadline = self
        _watcher.add(self)
        return self

    def finish(self) -> None:
        _sending.deadline = None
        with self._lock:
            self.finished = True
            self._connection = None  # the heap keeps this deadline until its time: not the connection

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def sending_on(self, connection: Any) -> None:
        with self._lock:
            self._connection = connection
            expired = self.expired
        if expired:
            _shut(connection)

    def _expire(self) -> None:
        with self._lock:
            if self.finished:
                return
            self.expired = True
            connection = self._connection
        if connection is not None:
            _shut(connection)


def _shut(connection: Any) -> None:
    sock = getattr(connection, "sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


class _MarkedResponse(http.client.HTTPResponse):
    """http.client's response, noting in the request's `_Deadline` that the status line and headers came
    (urllib3 reads the whole body before its own `getresponse` returns, so that is too late to tell)."""

    def begin(self) -> None:
        super().begin()
        deadline = getattr(_sending, "deadline", None)
        if deadline is not None:
            deadline.answering = True


class _DeadlineHTTPConnection(urllib3.connection.HTTPConnection):
    response_class = _MarkedResponse

    def request(self, *args: Any, **kwargs: Any) -> None:
        deadline = getattr(_sending, "deadline", None)
        if deadline is not None:
            deadline.sending_on(self)
        super().request(*args, **kwargs)


class _DeadlineHTTPSConnection(urllib3.connection.HTTPSConnection):
    response_class = _MarkedResponse

    def request(self, *args: Any, **kwargs: Any) -> None:
        deadline = getattr(_sending, "deadline", None)
        if deadline is not None:
            deadline.sending_on(self)
        super().request(*args, **kwargs)


class _DeadlineHTTPPool(urllib3.HTTPConnectionPool):
    ConnectionCls = _DeadlineHTTPConnection


class _DeadlineHTTPSPool(urllib3.HTTPSConnectionPool):
    ConnectionCls = _DeadlineHTTPSConnection


class _BoundedConnection(AppiumConnection):
    """An `AppiumConnection` that puts a deadline on each request and names the command that hung."""

    def __init__(self, url: str, command_timeout_s: float, session_timeout_s: float) -> None:
        config = AppiumClientConfig(
            url, timeout=command_timeout_s,  # a float is what urllib3 takes
            init_args_for_pool_manager={"init_args_for_pool_manager": {"retries": False}},
        )
        super().__init__(client_config=config)
        self.guistate_url = DeviceSpec(url).display_url  # no user:key@ in messages
        self.command_timeout_s = command_timeout_s
        self.session_timeout_s = session_timeout_s

    def _get_connection_manager(self) -> Any:
        manager = super()._get_connection_manager()
        if type(manager) in (urllib3.PoolManager, urllib3.ProxyManager):  # not SOCKS: its own pool classes
            manager.pool_classes_by_scheme = {"http": _DeadlineHTTPPool, "https": _DeadlineHTTPSPool}
        return manager

    def execute(self, command: str, params: Any) -> Any:
        watchdog.check(f"device call {command}")
        limit = self.session_timeout_s if command == Command.NEW_SESSION else self.command_timeout_s
        budget = watchdog.remaining()
        clipped = budget is not None and budget < limit
        wait = max(0.05, budget) if clipped and budget is not None else limit
        self._client_config.timeout = wait  # read per request by selenium
        deadline = _Deadline(wait).start()
        try:
            return super().execute(command, params)
        except (OSError, urllib3.exceptions.HTTPError) as exc:
            if not _timed_out(exc) and not deadline.expired:
                message = f"device at {self.guistate_url} dropped {command}: {_reason(exc)}"
                mark_suspect(self._client_config.remote_server_addr, message)
                raise DeviceGone(message + " (the server died, restarted or closed the connection)") from None
            if clipped:
                watchdog.check(f"device call {command}")  # the budget, not the device, ran out
            how = "its answer was still arriving" if deadline.answering else "no answer"
            message = (f"device at {self.guistate_url} did not answer {command} within {limit:g} s "
                       f"({how} after {deadline.elapsed:.1f} s; the deadline covers the whole answer)")
            mark_suspect(self._client_config.remote_server_addr, message)
            raise DeviceTimeout(message + " (guistate_command_timeout / guistate_session_timeout)") from None
        finally:
            deadline.finish()


def bounded_connection(url: str, command_timeout_s: float, session_timeout_s: float) -> AppiumConnection:
    """The command executor for `webdriver.Remote(command_executor=..., options=...)`."""
    return _BoundedConnection(url, command_timeout_s, session_timeout_s)
