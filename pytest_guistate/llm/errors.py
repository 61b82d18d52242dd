"""Errors of the LLM layer. Verdicts about the test are `AssertionError`s, so pytest reports them
as failures with a readable message instead of a harness crash (issue 5: "stops the test cleanly")."""

from __future__ import annotations

from typing import Any

__all__ = ["CassetteDivergence", "CassetteError", "LLMBudgetExceeded", "LLMConfigError", "LLMError", "LLMRunFailed"]


class LLMError(RuntimeError):
    """The model call failed for a reason that is not a test verdict (API error after retries)."""


class LLMConfigError(ValueError):
    """A bad LLM setting (unknown mode, missing key for `anthropic`/`record`, bad budget)."""


class LLMBudgetExceeded(AssertionError):
    """The test used more tokens than `--guistate-llm-budget` allows."""

    def __init__(self, used: int, budget: int, purpose: str = "", step: int | None = None) -> None:
        where = f" (during the {purpose} call" + (f" of step {step})" if step is not None else ")") if purpose else ""
        super().__init__(
            f"LLM token budget exceeded: used {used} tokens of a budget of {budget}{where}; "
            "raise --guistate-llm-budget or make the test shorter"
        )
        self.used = used
        self.budget = budget


class LLMRunFailed(AssertionError):
    """`run(...)` ended without the actor reporting success; `.result` keeps the steps so far."""

    def __init__(self, message: str, result: Any) -> None:
        super().__init__(message)
        self.result = result


class CassetteError(AssertionError):
    """A cassette that cannot be used (missing in replay mode, unreadable, wrong schema)."""


class CassetteDivergence(AssertionError):
    """Replay: the test sent a request that does not match the recorded exchange at that position."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index
