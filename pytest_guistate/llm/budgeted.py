"""An LLM request inside a test's wall-clock budget (issue 14): it ends at the budget, not after it.

The SDK's `timeout=` bounds one attempt, and the SDK then retries a timed-out or 429/5xx request
on its own (`max_retries`), so a slow server held a 4 s test for 7.6 s: the first attempt ran to
the budget, the retry past it, and only the next step start noticed. There is no "total deadline"
in the SDK, so under a budget the client makes the attempts itself: each one's timeout is what is
left of the budget, retries follow the SDK's rules (408/409/429/5xx, connection errors and
timeouts; `x-should-retry`; `retry-after` or exponential backoff), and a wait is cut at the
budget, where `watchdog.check` raises `TestTimeout`. Without a budget the SDK retries as usual.
"""

from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING, Any

from pytest_guistate.core import watchdog
from pytest_guistate.llm.sdk import anthropic_sdk
from pytest_guistate.llm.settings import LLMSettings

if TYPE_CHECKING:
    import anthropic

__all__ = ["retry_wait", "within_budget"]

_MIN_ATTEMPT_S = 0.05  # the shortest timeout worth sending


def within_budget(sdk: anthropic.Anthropic, params: dict[str, Any], headers: dict[str, str] | None,
                  settings: LLMSettings, where: str) -> tuple[Any, int]:
    """(raw response, retries taken); raises the last SDK error, or `TestTimeout` when the budget ends first."""
    once = sdk.with_options(max_retries=0)
    for attempt in range(settings.max_retries + 1):
        watchdog.check(where)
        left = watchdog.remaining()
        timeout = settings.timeout_s if left is None else min(settings.timeout_s, max(_MIN_ATTEMPT_S, left))
        try:
            return once.messages.with_raw_response.create(**params, extra_headers=headers, timeout=timeout), attempt
        except anthropic_sdk().APIStatusError as exc:
            if attempt == settings.max_retries or not _retryable(exc.response):
                raise
            wait = retry_wait(exc.response, attempt)
        except (anthropic_sdk().APITimeoutError, anthropic_sdk().APIConnectionError):
            watchdog.check(where)  # the budget, not the model, ran out
            if attempt == settings.max_retries:
                raise
            wait = retry_wait(None, attempt)
        left = watchdog.remaining()
        time.sleep(max(0.0, wait if left is None else min(wait, left)))
    raise AssertionError("unreachable: the last attempt returns or raises")


def _retryable(response: Any) -> bool:
    should = str(response.headers.get("x-should-retry", "")).lower()
    if should in ("true", "false"):
        return should == "true"
    return int(response.status_code) in (408, 409, 429) or int(response.status_code) >= 500


def retry_wait(response: Any, attempt: int) -> float:
    """The server's `retry-after-ms` / `retry-after` (seconds, up to 60), else 0.5 s doubling to 8 s, jittered."""
    if response is not None:
        for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
            try:
                value = float(response.headers.get(name, "")) * scale
            except ValueError:
                continue
            if 0 <= value <= 60:
                return value
    return min(0.5 * 2.0 ** attempt, 8.0) * (1 - 0.25 * random.random())
