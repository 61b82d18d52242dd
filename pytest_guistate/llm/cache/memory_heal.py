"""The cross-run memory as the action cache sees it (issue 21): LLM-driven steps tap points, so the
memory would never learn their elements' looks, and a replayed step could not heal a target its
fingerprint no longer finds. The test's memory (the plugin's `MemoryBridge`, which the Device
already holds as `device.memory`) is reached through this protocol: llm never imports memory
(pyproject's import-linter layers), and the bridge keeps the one way to learn, heal and settle.

An LLM step's element is keyed like a located tap: a locator from the cached target's candidates
(id, then desc, then text) and the element's label as its function, so a scripted
`device.tap(..., function="Delete")` and the cache share what they learned. A heal names the
instance by the words its description shares with its cached neighbours ("Erin" of "Delete post
by Erin" beside "Erin"): the memory then never taps a neighbour row's button. A word every row's
description has ("post") pins nothing, which is why the neighbours decide."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation

__all__ = ["ElementMemory", "HealedLook", "MemoryKey", "element_memory", "memory_key"]

_PREFERRED = ("id", "desc", "text")
_WORD = re.compile(r"[A-Za-z0-9]+")


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if len(w) > 1}


class HealedLook(Protocol):
    """What a heal found (`memory.heal.HealResult`); only `ok` may be acted on."""

    status: str
    reason: str
    score: float

    @property
    def ok(self) -> bool: ...

    @property
    def point(self) -> tuple[int, int] | None: ...


@runtime_checkable
class ElementMemory(Protocol):
    """The part of `MemoryBridge` the action cache uses."""

    def learn_passed(self, kind: str, value: str, box: Box, function: str | None, before: Observation, *,
                     step_name: str, outcome: str) -> None: ...

    def heal_on(self, observation: Observation, kind: str, value: str, function: str | None, *,
                instance: frozenset[str] = frozenset()) -> Any: ...

    def acting_on(self, result: Any, before: Observation, *, edit: dict[str, Any] | None = None) -> None: ...


def element_memory(device: Any) -> ElementMemory | None:
    """The test's memory when it is on (the plugin sets `device.memory`), else None."""
    memory = getattr(device, "memory", None)
    return memory if isinstance(memory, ElementMemory) else None


@dataclass(frozen=True)
class MemoryKey:
    """How the memory knows an LLM step's element: `learn` keys its look, `heal` finds it again."""

    locator: tuple[str, str]
    function: str | None
    instance: frozenset[str] = frozenset()  # words that say which element of several alike is meant

    @property
    def wanted(self) -> str:
        """The label a heal names in its status ('Delete')."""
        return self.function or self.locator[1]


def memory_key(fingerprint: dict[str, Any], locators: list[dict[str, str]]) -> MemoryKey | None:
    """The key for a cached target, None when no candidate locator exists (nothing to learn by)."""
    found = {kind: str(value) for candidate in locators for kind, value in candidate.items() if value}
    preferred = next(((kind, found[kind]) for kind in _PREFERRED if found.get(kind)), None)
    if preferred is None:
        return None
    function = str(fingerprint.get("text") or fingerprint.get("hint") or "").strip() or None
    instance = (_words(found.get("desc", "")) & _words(str(fingerprint.get("in") or ""))) - _words(function or "")
    return MemoryKey(preferred, function, frozenset(instance))
