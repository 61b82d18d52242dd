"""The per-test LLM client: mode, key, budget, accounting, prompt caching, cassettes.

Modes (`--guistate-llm`): `off` (no model; `run`/`check` refuse, the offline updater is used),
`anthropic` (the API; key from `ANTHROPIC_API_KEY` only, base URL from `ANTHROPIC_BASE_URL` as
the SDK reads it, so a proxy or the reference server can stand in), `record` (as anthropic, and
the exchanges are written to the test's cassette), `replay` (no network: a loopback server
replays the cassette, so the real SDK still makes real HTTP requests).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_guistate.core import watchdog
from pytest_guistate.llm.accounting import CallUsage, TokenLedger, price_for
from pytest_guistate.llm.budgeted import within_budget
from pytest_guistate.llm.cassette import (
    PURPOSE_HEADER,
    Cassette,
    Exchange,
    ReplayServer,
    match_text,
    strip_images,
)
from pytest_guistate.llm.errors import (
    CassetteDivergence,
    LLMBudgetExceeded,
    LLMConfigError,
    LLMError,
)
from pytest_guistate.llm.sdk import anthropic_sdk
from pytest_guistate.llm.settings import DEFAULT_MODEL, LLMSettings, Mode
from pytest_guistate.llm.transcript import transcript_entry

if TYPE_CHECKING:
    import anthropic

__all__ = ["DEFAULT_MODEL", "REPLAY_KEY", "LLMClient", "LLMSettings", "Mode", "make_client"]

REPLAY_KEY = "replay-mode-no-key"  # not a secret: the replay server accepts any key
_RECORDED_HEADERS = ("request-id", "content-type", "retry-after")


@dataclass
class LLMClient:
    """One test's model access. `create(...)` is the only call path; it books every call in `ledger`."""

    settings: LLMSettings
    sdk: anthropic.Anthropic
    ledger: TokenLedger
    cassette: Cassette | None = None
    replay: ReplayServer | None = None
    secrets: tuple[str, ...] = ()
    scrub: Callable[[Any], Any] | None = None  # the test's redactor: what a cassette may store
    log: list[str] = field(default_factory=list)  # one line per call, for reports (never the key)
    transcript: list[dict[str, Any]] = field(default_factory=list)  # what the viewer shows per call

    def create(self, purpose: str, *, system: list[dict[str, Any]], tools: list[dict[str, Any]],
               messages: list[dict[str, Any]], tool_choice: dict[str, Any] | None = None,
               step: int | None = None) -> anthropic.types.Message:
        """One Messages call. Raises LLMBudgetExceeded, CassetteDivergence or LLMError (clear messages)."""
        budget = self.settings.budget
        if budget is not None and self.ledger.used >= budget:
            raise LLMBudgetExceeded(self.ledger.used, budget, purpose, step)
        params: dict[str, Any] = {"model": self.settings.model, "max_tokens": self.settings.max_tokens,
                                  "system": system, "tools": tools, "messages": messages}
        if tool_choice is not None:
            params["tool_choice"] = tool_choice
        headers = {PURPOSE_HEADER: purpose} if self.replay is not None else None
        started = time.monotonic()
        call = CallUsage(purpose=purpose, step=step, model=self.settings.model)
        where = f"the LLM {purpose} call"
        watchdog.check(where)  # the test's wall-clock budget (issue 14)
        try:
            if watchdog.remaining() is None:
                raw = self.sdk.messages.with_raw_response.create(**params, extra_headers=headers)
                retries = raw.retries_taken
            else:
                raw, retries = within_budget(self.sdk, params, headers, self.settings, where)
            message = _parsed(raw, self.endpoint)
        except anthropic_sdk().APIStatusError as exc:
            self._fail(call, params, exc, started)
            raise AssertionError("unreachable") from exc  # _fail always raises
        except watchdog.TestTimeout as exc:  # the budget ended during the call or its retry wait
            call.error, call.elapsed_s = f"TestTimeout: {exc}", time.monotonic() - started
            self.ledger.add(call)
            self.log.append(f"{purpose} step={step} {call.error}")
            raise
        except (anthropic_sdk().APITimeoutError, anthropic_sdk().APIConnectionError) as exc:
            call.error = f"{type(exc).__name__}: {exc}{_transport_cause(exc)}"
            call.elapsed_s = time.monotonic() - started
            self.ledger.add(call)
            self.log.append(f"{purpose} step={step} {call.error}")
            raise LLMError(f"LLM {purpose} call to {self.endpoint} failed after {self.settings.max_retries} "
                           f"retries: {call.error} (timeout {self.settings.timeout_s:g} s per attempt, "
                           "--guistate-llm-timeout)") from exc
        except UnusableAnswer as exc:  # the SDK cannot read it, or it lacks what the actor needs (issue 22)
            call.error = str(exc)
            call.elapsed_s = time.monotonic() - started
            self.ledger.add(call)
            self.log.append(f"{purpose} step={step} {call.error}")
            raise LLMError(f"LLM {purpose} call: {exc}") from None
        usage = message.usage
        call.input_tokens = usage.input_tokens
        call.output_tokens = usage.output_tokens
        call.cache_creation_input_tokens = usage.cache_creation_input_tokens or 0
        call.cache_read_input_tokens = usage.cache_read_input_tokens or 0
        call.request_id = raw.request_id or ""
        call.retries = retries
        call.stop_reason = str(message.stop_reason)
        call.elapsed_s = time.monotonic() - started
        self.ledger.add(call)
        self.transcript.append(transcript_entry(purpose, step, messages, message, call.to_dict()))
        self.log.append(f"{purpose} step={step} {call.request_id} in={call.total_input} out={call.output_tokens} "
                        f"cache_read={call.cache_read_input_tokens} stop={call.stop_reason} retries={call.retries}")
        if self.cassette is not None and self.replay is None:
            kept = {k: v for k, v in raw.headers.items() if k.lower() in _RECORDED_HEADERS}
            self.cassette.add(Exchange(purpose, step, strip_images(params), match_text(params, purpose),
                                       raw.status_code, raw.http_response.json(), kept))
        if budget is not None and self.ledger.used > budget:
            raise LLMBudgetExceeded(self.ledger.used, budget, purpose, step)
        return message

    @property
    def endpoint(self) -> str:
        """The Messages URL requests go to, for messages (the replay server's, or the API's / ANTHROPIC_BASE_URL)."""
        return f"{str(self.sdk.base_url).rstrip('/')}/v1/messages"

    def _fail(self, call: CallUsage, params: dict[str, Any], exc: anthropic.APIStatusError, started: float) -> None:
        if self.replay is not None and self.replay.divergence is not None:
            divergence = self.replay.divergence
            raise CassetteDivergence(divergence.message, divergence.index) from None
        body: dict[str, Any] = exc.body if isinstance(exc.body, dict) else {}
        found = body.get("error")
        error: dict[str, Any] = found if isinstance(found, dict) else {}
        call.error = f"HTTP {exc.status_code} {error.get('type', type(exc).__name__)}: {error.get('message', exc.message)}"
        call.request_id = exc.request_id or ""
        call.elapsed_s = time.monotonic() - started
        self.ledger.add(call)
        self.log.append(f"{call.purpose} step={call.step} {call.request_id} {call.error}")
        if self.cassette is not None and self.replay is None:
            kept = {k: v for k, v in exc.response.headers.items() if k.lower() in _RECORDED_HEADERS}
            self.cassette.add(Exchange(call.purpose, call.step, strip_images(params), match_text(params, call.purpose),
                                       exc.status_code, body, kept))
        retried = "" if exc.status_code < 429 and exc.status_code != 408 else f" after {self.settings.max_retries} retries"
        raise LLMError(f"LLM {call.purpose} call failed{retried}: {call.error} (request-id {call.request_id or '?'})") from exc

    def finish(self) -> None:
        """Write the cassette (record mode) and stop the replay server. Safe to call twice."""
        if self.cassette is not None and self.replay is None and self.cassette.exchanges:
            self.cassette.save(model=self.settings.model, sdk_version=anthropic_sdk().__version__, secrets=self.secrets,
                               scrub=self.scrub)
        if self.replay is not None:
            self.replay.stop()
        self.sdk.close()

    @property
    def unused_exchanges(self) -> int:
        """Replay: recorded exchanges the test never asked for (it took a shorter path)."""
        if self.replay is None or self.cassette is None:
            return 0
        return max(0, len(self.cassette.exchanges) - self.replay.position)


def make_client(settings: LLMSettings, *, cassette_path: Path | None = None,
                env: dict[str, str] | None = None, scrub: Callable[[Any], Any] | None = None) -> LLMClient | None:
    """The client for one test, or None when the mode is `off`."""
    environ = os.environ if env is None else env
    if settings.mode is Mode.OFF:
        return None
    price = settings.price or price_for(settings.model)
    ledger = TokenLedger(settings.model, settings.budget, price)
    common: dict[str, Any] = {"timeout": settings.timeout_s, "max_retries": settings.max_retries}
    if settings.mode is Mode.REPLAY:
        if cassette_path is None:
            raise LLMConfigError("--guistate-llm=replay needs a cassette path for the test")
        cassette = Cassette.load(cassette_path)
        replay = ReplayServer(cassette, scrub=scrub).start()
        sdk = anthropic_sdk().Anthropic(api_key=REPLAY_KEY, base_url=replay.url, **common)
        return LLMClient(settings, sdk, ledger, cassette, replay, scrub=scrub)
    key = environ.get("ANTHROPIC_API_KEY", "")
    if not key:
        raise LLMConfigError(f"--guistate-llm={settings.mode}: set ANTHROPIC_API_KEY in the environment "
                             "(keys are never read from options or ini)")
    base_url = environ.get("ANTHROPIC_BASE_URL") or None
    sdk = anthropic_sdk().Anthropic(api_key=key, base_url=base_url, **common)
    recording: Cassette | None = None
    if settings.mode is Mode.RECORD:
        if cassette_path is None:
            raise LLMConfigError("--guistate-llm=record needs a cassette path for the test")
        recording = Cassette(cassette_path)
    return LLMClient(settings, sdk, ledger, recording, None, secrets=(key,), scrub=scrub)


class UnusableAnswer(Exception):
    """An HTTP answer the SDK cannot turn into a Message, or one without the usage / content the
    client and actor read; its text names the endpoint, the HTTP status and what was wrong."""


def _parsed(raw: Any, endpoint: str) -> anthropic.types.Message:
    """`raw.parse()`, refusing what the SDK would pass on half-read: the SDK builds a `Message` from
    any JSON without validating it (`construct`), so JSON of another shape became a Message of Nones
    (an `AttributeError` on `usage.input_tokens` later), and a cut-off body a raw `JSONDecodeError`."""
    status = int(getattr(raw, "status_code", 0) or 0)
    where = f"{endpoint} answered HTTP {status}"
    try:
        message = raw.parse()
    except (ValueError, TypeError, KeyError) as exc:  # json.JSONDecodeError is a ValueError; pydantic's too
        body = _body_head(raw)
        raise UnusableAnswer(f"{where} with a body that is not a Messages API answer ({type(exc).__name__}: "
                             f"{str(exc)[:120]}; body starts {body!r}): a cut-off or non-JSON body") from None
    if not isinstance(message, anthropic_sdk().types.Message):
        raise UnusableAnswer(f"{where} with {type(message).__name__}, not a message object") from None
    missing = [name for name, ok in (
        ("type 'message'", getattr(message, "type", None) == "message"),
        ("usage.input_tokens", isinstance(getattr(getattr(message, "usage", None), "input_tokens", None), int)),
        ("usage.output_tokens", isinstance(getattr(getattr(message, "usage", None), "output_tokens", None), int)),
        ("content (a list)", isinstance(getattr(message, "content", None), list)),
    ) if not ok]
    if missing:
        raise UnusableAnswer(f"{where} with JSON of another shape: missing {', '.join(missing)} (body starts "
                             f"{_body_head(raw)!r})")
    checked: anthropic.types.Message = message  # an instance of the SDK's class, checked above
    return checked


def _body_head(raw: Any, limit: int = 80) -> str:
    try:
        return str(raw.http_response.text)[:limit]
    except Exception:  # noqa: BLE001 - only for the message; the real error is raised by the caller
        return "?"


def _transport_cause(exc: BaseException) -> str:
    """What the HTTP layer raised under an SDK connection error (e.g. a ReadTimeout the SDK did not
    classify as a timeout): named, so the message says what really happened."""
    cause = exc.__cause__
    if cause is None or isinstance(exc, anthropic_sdk().APITimeoutError):
        return ""
    return f" (cause: {type(cause).__name__}: {cause})"
