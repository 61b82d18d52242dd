"""pytest options and ini values of the LLM layer, for `config.py`/`plugin.py` to call.

`--guistate-llm=off|anthropic|record|replay|cache|cache-fallback` (ini `guistate_llm`, default off),
`--guistate-llm-budget=TOKENS` (ini `guistate_llm_budget`, per test, empty = none), ini
`guistate_llm_model`, `guistate_llm_max_tokens`, `guistate_llm_updater` (off|on_demand|always),
`guistate_llm_price` ("INPUT,OUTPUT" USD per million tokens), `--guistate-llm-timeout=S` (ini
`guistate_llm_timeout`, seconds per request attempt, default 60) and ini `guistate_llm_retries` (default 2:
the SDK's retries of a 408/409/429/5xx, a timeout or a dropped connection). The API key is never an option.
"""

from __future__ import annotations

import math

import pytest

from pytest_guistate.llm.accounting import Price
from pytest_guistate.llm.errors import LLMConfigError
from pytest_guistate.llm.settings import DEFAULT_MODEL, LLMSettings, Mode

__all__ = ["add_llm_options", "build_llm_settings"]


def add_llm_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("guistate")
    group.addoption("--guistate-llm", dest="guistate_llm", choices=[m.value for m in Mode], default=None,
                    help="LLM-driven steps: off (default), anthropic (API; key from ANTHROPIC_API_KEY), "
                         "record (API + write cassettes beside the tests), replay (cassettes, no network), "
                         "cache (replay the action cache, no model; a miss fails), cache-fallback (the action "
                         "cache, the live actor on a miss; rewrites the cache when the test passes).")
    group.addoption("--guistate-llm-budget", dest="guistate_llm_budget", default=None, metavar="TOKENS",
                    help="Per-test LLM token budget (input incl. cache + output); exceeding it fails the test.")
    group.addoption("--guistate-llm-timeout", dest="guistate_llm_timeout", default=None, metavar="S",
                    help="Seconds per LLM request attempt (default 60); retries (ini guistate_llm_retries, "
                         "default 2) and their waits never run past the test's budget.")
    group.addoption("--guistate-export", dest="guistate_export", default=None, metavar="DIR",
                    help="Write each LLM-driven test that passed as a scripted test into DIR (guistate export-test "
                         "on its action cache: no model or cache needed to run it).")
    parser.addini("guistate_llm", "off|anthropic|record|replay|cache|cache-fallback", default="off")
    parser.addini("guistate_llm_timeout", "seconds per LLM request attempt (default 60)", default="60")
    parser.addini("guistate_llm_retries", "retries of a failed LLM request (408/409/429/5xx, timeouts)", default="2")
    parser.addini("guistate_llm_budget", "per-test LLM token budget (empty: none)", default="")
    parser.addini("guistate_llm_model", "Claude model name", default=DEFAULT_MODEL)
    parser.addini("guistate_llm_max_tokens", "max output tokens per LLM call", default="1024")
    parser.addini("guistate_llm_updater", "LLM state updater activation: off|on_demand|always", default="on_demand")
    parser.addini("guistate_llm_price", "USD per million tokens 'INPUT,OUTPUT' (default: by model)", default="")


def _int(raw: str, what: str) -> int:
    try:
        return int(raw)
    except ValueError:
        raise pytest.UsageError(f"{what}: {raw!r} is not an integer number of tokens") from None


def _seconds(raw: str, what: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise pytest.UsageError(f"{what}: {raw!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise pytest.UsageError(f"{what}: must be > 0 seconds, got {raw!r}")
    return value


def _retries(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise pytest.UsageError(f"ini guistate_llm_retries: {raw!r} is not an integer >= 0")
    return value


_KEY_FILE = ".guistate-cache-key"  # beside the project's pytest.ini; `GUISTATE_CACHE_KEY` wins (llm.cache.secrets)


def build_llm_settings(config: pytest.Config) -> LLMSettings:
    opt = config.option
    mode_text = getattr(opt, "guistate_llm", None) or str(config.getini("guistate_llm"))
    try:
        mode = Mode(mode_text.strip().lower())
    except ValueError:
        raise pytest.UsageError(f"--guistate-llm: {mode_text!r} is not one of {', '.join(m.value for m in Mode)}") from None
    budget_text = getattr(opt, "guistate_llm_budget", None) or str(config.getini("guistate_llm_budget"))
    price_text = str(config.getini("guistate_llm_price")).strip()
    timeout_option = getattr(opt, "guistate_llm_timeout", None)
    timeout_s = _seconds(str(timeout_option if timeout_option is not None else config.getini("guistate_llm_timeout")),
                         "--guistate-llm-timeout" if timeout_option is not None else "ini guistate_llm_timeout")
    retries = _retries(str(config.getini("guistate_llm_retries")).strip())
    try:
        return LLMSettings(
            mode=mode,
            model=str(config.getini("guistate_llm_model")).strip() or DEFAULT_MODEL,
            max_tokens=_int(str(config.getini("guistate_llm_max_tokens")), "ini guistate_llm_max_tokens"),
            budget=_int(budget_text, "--guistate-llm-budget") if budget_text.strip() else None,
            updater=str(config.getini("guistate_llm_updater")).strip(),
            price=Price.parse(price_text) if price_text else None,
            timeout_s=timeout_s,
            max_retries=retries,
            cache_key_file=config.rootpath / _KEY_FILE,
        )
    except (LLMConfigError, ValueError) as exc:
        raise pytest.UsageError(str(exc)) from None
