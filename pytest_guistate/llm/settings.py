"""LLM settings and modes, kept free of the `anthropic` import so the plugin loads fast.

The SDK is imported only when a test actually opens an LLM (`llm.client`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path

from pytest_guistate.llm.accounting import Price
from pytest_guistate.llm.errors import LLMConfigError

__all__ = ["DEFAULT_MODEL", "LLMSettings", "Mode"]

DEFAULT_MODEL = "claude-sonnet-4-6"


class Mode(str, enum.Enum):
    OFF = "off"
    ANTHROPIC = "anthropic"
    RECORD = "record"
    REPLAY = "replay"
    CACHE = "cache"  # the action cache, no model: a miss fails the test (issue 21)
    CACHE_FALLBACK = "cache-fallback"  # the action cache; on a miss the live actor finishes the goal

    @property
    def uses_cache(self) -> bool:
        return self in (Mode.CACHE, Mode.CACHE_FALLBACK)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class LLMSettings:
    """Everything configurable, built once by the plugin (options + ini)."""

    mode: Mode = Mode.OFF
    model: str = DEFAULT_MODEL
    max_tokens: int = 1024
    budget: int | None = None  # tokens per test (input incl. cache reads/writes + output)
    timeout_s: float = 60.0
    max_retries: int = 2
    updater: str = "on_demand"  # off | on_demand | always
    frame_divisor: float = 3.0
    price: Price | None = None
    cache_key_file: Path | None = None  # the action cache's key for goals with secrets (`llm.cache.secrets`)

    def __post_init__(self) -> None:
        if self.max_tokens < 1:
            raise LLMConfigError(f"LLM max tokens must be >= 1, got {self.max_tokens}")
        if self.budget is not None and self.budget < 1:
            raise LLMConfigError(f"--guistate-llm-budget must be a positive number of tokens, got {self.budget}")
        if self.updater not in ("off", "on_demand", "always"):
            raise LLMConfigError(f"LLM updater activation must be off, on_demand or always, got {self.updater!r}")
