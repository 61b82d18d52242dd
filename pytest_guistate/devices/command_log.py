"""The device commands of a test, as the trace viewer's action log shows them (issue 23).

Playwright's trace viewer lists each action with its locator and duration; the guistate viewer
had only the step's name. Every WebDriver command the Appium-Python-Client sends goes through its
`command_executor.execute(command, params)`: `CommandLog.attach` wraps that one method of one
driver, so the sim, UiAutomator2, XCUITest and Chromium sessions are logged alike, and each entry
says what was asked (`findElement accessibility id='Delete post by Carol'`), how long the answer
took and whether it failed. An element command names the locator its element was found by.
Typed text is never kept (only its length): it may be a password.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CommandLog"]

_KEPT = 2000  # entries waiting to be taken: a test that never takes them keeps the newest only
_SKIPPED = frozenset({"getLog", "getAvailableLogTypes"})  # reading logs is not an action of the test
_TEXT_PARAMS = ("text", "value")


def _element_id(value: Any) -> str:
    if isinstance(value, dict):
        for key, item in value.items():
            if key.startswith("element") and isinstance(item, str):
                return item
    return ""


def _describe(command: str, params: dict[str, Any], locators: dict[str, str]) -> str:
    """`command` with what it acts on: its locator, its element's locator, a point or a text length."""
    parts = [command]
    if "using" in params and "value" in params:
        parts.append(f"{params['using']}={params['value']!r}")
    element = params.get("id") or params.get("elementId")
    if isinstance(element, str) and element in locators:
        parts.append(f"({locators[element]})")
    for name in _TEXT_PARAMS:
        if name != "value" or "using" not in params:
            typed = params.get(name)
            if isinstance(typed, list):
                typed = "".join(str(t) for t in typed)
            if isinstance(typed, str) and command != "executeScript":
                parts.append(f"[{len(typed)} characters]")
                break
    if command == "executeScript" and isinstance(params.get("script"), str):
        script = params["script"].strip()
        parts.append(script if script.startswith("mobile:") else "(script)")
    return " ".join(parts)


@dataclass
class CommandLog:
    """Commands sent through one driver, oldest first; `take()` hands over what came since."""

    entries: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=_KEPT))
    _locators: dict[str, str] = field(default_factory=dict)  # element id -> locator it was found by
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def attach(cls, driver: Any) -> CommandLog | None:
        """Log the commands of `driver` (an Appium/Selenium WebDriver); None when it has no executor."""
        executor: Any = getattr(driver, "command_executor", None)  # None when the driver has none: `execute` below is then no callable
        execute = getattr(executor, "execute", None)
        if not callable(execute):
            return None
        known = getattr(executor, "_guistate_command_log", None)
        if isinstance(known, CommandLog):
            return known
        log = cls()

        def logged(command: str, params: dict[str, Any]) -> Any:
            # described before sending: the executor takes the element id and session out of `params`
            what, locator = log._describe(command, dict(params or {}))
            started, wall = time.perf_counter(), time.time()
            status, answer = "ok", None
            try:
                answer = execute(command, params)
            except Exception as exc:
                status = type(exc).__name__
                raise
            finally:
                if command not in _SKIPPED:
                    log._note(what, locator, wall, (time.perf_counter() - started) * 1000, status, answer)
            return answer

        executor.execute = logged
        executor._guistate_command_log = log
        return log

    def _describe(self, command: str, params: dict[str, Any]) -> tuple[str, str]:
        """(what the entry says, the locator a find used or "")."""
        with self._lock:
            what = _describe(command, params, self._locators)
        locator = f"{params['using']}={params['value']!r}" if "using" in params and "value" in params else ""
        return what, locator

    def _note(self, what: str, locator: str, wall: float, ms: float, status: str, answer: Any) -> None:
        with self._lock:
            value = answer.get("value") if isinstance(answer, dict) else None
            if locator:
                for found in value if isinstance(value, list) else [value]:
                    element = _element_id(found)
                    if element:
                        self._locators[element] = locator
                if len(self._locators) > 5000:
                    self._locators.clear()
            self.entries.append({"t": round(wall, 3), "command": what, "ms": round(ms, 1), "status": status})

    def take(self) -> list[dict[str, Any]]:
        """The entries logged since the last call."""
        with self._lock:
            taken = list(self.entries)
            self.entries.clear()
        return taken
