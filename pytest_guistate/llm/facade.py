"""Per-test glue the `guistate` fixture uses: `open_llm(...)` -> `TestLLM` with `run`, `check`,
`report()` and `close()`. It owns the test's client (budget, ledger, cassette) and installs the
LLM state updater on the session when the settings ask for it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_guistate.llm.actor import ActorConfig, RunResult, run
from pytest_guistate.llm.cache.cachefile import actions_path
from pytest_guistate.llm.cache.per_test import CacheSession
from pytest_guistate.llm.cassette import cassette_path
from pytest_guistate.llm.check import AICheckFailed, CheckVerdict, check
from pytest_guistate.llm.client import LLMClient, LLMSettings, Mode, make_client
from pytest_guistate.llm.errors import LLMConfigError, LLMRunFailed
from pytest_guistate.llm.query import QueryResult, query
from pytest_guistate.llm.updater import LLMStateUpdater

if TYPE_CHECKING:
    from pytest_guistate.core.values import Shape

__all__ = ["TestLLM", "open_llm"]


@dataclass
class TestLLM:
    __test__ = False  # not a pytest test class despite the name

    settings: LLMSettings
    session: Any
    device: Any
    client: LLMClient | None
    updater: LLMStateUpdater | None = None
    live_factory: Callable[[], LLMClient | None] | None = None  # cache-fallback: the live actor's client
    runs: list[RunResult] = field(default_factory=list)
    checks: list[CheckVerdict] = field(default_factory=list)
    queries: list[dict[str, Any]] = field(default_factory=list)  # each query's record: question, value, evidence
    cache: CacheSession | None = None  # the action cache: written after a pass, replayed in the cache modes

    def run(self, instruction: str, *, max_steps: int = 30, plan: Any = None, hints: Sequence[str] = ()) -> RunResult:
        if self.cache is not None and self.settings.mode.uses_cache:
            result = self.cache.run(instruction, max_steps=max_steps, plan=plan, hints=hints, live=self._live_run)
            self.runs.append(result)
            return result
        return self._live_run(instruction, max_steps=max_steps, plan=plan, hints=hints)

    def _live_run(self, instruction: str, *, max_steps: int, plan: Any, hints: Sequence[str],
                  history: Sequence[str] = (), handover: Sequence[str] = ()) -> RunResult:
        config = ActorConfig(frame_divisor=self.settings.frame_divisor, hints=tuple(hints), history_seed=tuple(history),
                             handover=tuple(handover))
        observer = self.cache.recorder.observer if self.cache is not None else None
        if self.cache is not None:
            self.cache.recorder.begin_run()
        try:
            result = run(self.session, self.device, instruction, llm=self._model(), max_steps=max_steps, plan=plan,
                         config=config, observer=observer)
        except LLMRunFailed as exc:
            if exc.result is not None:
                self.runs.append(exc.result)
                if self.cache is not None:
                    self.cache.recorder.add_run(instruction, False, exc.result.summary)
            raise
        if self.cache is not None:
            self.cache.live_ended(instruction, result)
        if not self.settings.mode.uses_cache:
            self.runs.append(result)
        return result

    def _model(self) -> LLMClient | None:
        """The client; in cache-fallback mode it is opened at the first miss (a run of hits needs no key)."""
        if self.client is None and self.settings.mode is Mode.CACHE_FALLBACK and self.live_factory is not None:
            try:
                self.client = self.live_factory()
            except LLMConfigError as exc:
                misses = "; ".join(self.cache.misses) if self.cache is not None else ""
                raise LLMConfigError(f"--guistate-llm=cache-fallback needs the live actor after a cache miss "
                                     f"({misses}), but: {exc}") from None
        return self.client

    def check(self, claim: str) -> CheckVerdict:
        if self.cache is not None and self.settings.mode.uses_cache:
            cached = self.cache.check(claim)
            if cached is not None:
                self.checks.append(cached)
                return cached
        try:
            verdict = check(self.session, claim, llm=self._model(), frame_divisor=self.settings.frame_divisor)
        except AICheckFailed as exc:
            self.checks.append(exc.verdict)
            raise
        self.checks.append(verdict)
        if self.cache is not None:
            self.cache.live_check(verdict)
        return verdict

    def query(self, question: str, shape: Shape, secrets: Sequence[str] = ()) -> QueryResult:
        """A typed value: from the cache at 0 tokens in the cache modes (a miss asks the model in the
        fallback), else from the model; verified either way, and kept in the record."""
        if self.cache is not None and self.settings.mode.uses_cache:
            cached = self.cache.query(question, shape, secrets)
            if cached is not None:
                self.queries.append(cached.to_dict())
                return cached
        try:
            result = query(self.session, question, shape, llm=self._model(), frame_divisor=self.settings.frame_divisor,
                           secrets=secrets)
        except AssertionError as exc:
            self.queries.append({"question": question, "type": shape.name, "value": getattr(exc, "value", None),
                                 "evidence": getattr(exc, "evidence", []), "source": "model",
                                 "problems": getattr(exc, "problems", [str(exc)])})
            raise
        self.queries.append(result.to_dict())
        if self.cache is not None:
            self.cache.live_query(result, shape)
        return result

    def report(self) -> dict[str, Any]:
        """For the journal, Allure and the summary JSON: tokens/cost per step and test, outcomes."""
        data: dict[str, Any] = {"mode": self.settings.mode.value, "model": self.settings.model}
        if self.client is not None:
            data["usage"] = self.client.ledger.to_dict()
            data["unused_exchanges"] = self.client.unused_exchanges
            data["exchanges"] = self.client.transcript
        data["runs"] = [{"outcome": r.outcome, "success": r.success, "summary": r.summary, "turns": len(r.turns)}
                        for r in self.runs]
        data["checks"] = [{"claim": c.claim, "verdict": c.verdict, "problems": c.problems} for c in self.checks]
        if self.queries:
            data["queries"] = list(self.queries)
        if self.updater is not None:
            data["updater"] = {"calls": self.updater.calls, "errors": self.updater.errors,
                               "reasons": self.updater.reasons}
        if self.cache is not None:
            data["cache"] = self.cache.report(int(data.get("usage", {}).get("totals", {}).get("total_tokens", 0)))
        return data

    def close(self, passed: bool | None = None) -> None:
        """Finish the client; a passing test (`passed`) writes its action cache."""
        if self.client is not None:
            self.client.finish()
        if self.cache is not None and passed:
            tokens = self.client.ledger.used if self.client is not None else 0
            self.cache.write(self.settings, tokens)


def open_llm(settings: LLMSettings, session: Any, device: Any, *, test_file: Path, test_name: str,
             scrub: Callable[[Any], Any] | None = None,
             spans: Callable[[str], list[tuple[int, int]]] | None = None) -> TestLLM:
    """Create the test's LLM access; cassettes live at `cassette_path(test_file, test_name)`.
    `scrub` (the test's redactor) cleans what a cassette stores, and replay matches on it; `spans`
    (the redactor's) says where a text holds a secret, which the action cache stores as a placeholder."""
    platform = str(getattr(device, "platform", "android"))
    path = cassette_path(test_file, test_name, platform) if settings.mode in (Mode.RECORD, Mode.REPLAY) else None
    cache = CacheSession.open(settings.mode, actions_path(test_file, test_name, platform), session, device,
                              test=test_name, platform=platform, scrub=scrub, spans=spans,
                              key_file=settings.cache_key_file)
    live_factory = None
    if settings.mode.uses_cache:  # no model unless a fallback needs one
        client = None
        if settings.mode is Mode.CACHE_FALLBACK:
            live_settings = replace(settings, mode=Mode.ANTHROPIC)
            live_factory = lambda: make_client(live_settings, scrub=scrub)
    else:
        client = make_client(settings, cassette_path=path, scrub=scrub)
    updater = None
    if client is not None and settings.updater != "off":
        updater = LLMStateUpdater(client, activation=settings.updater, offline=session.updater,
                                  frame_divisor=settings.frame_divisor)
        session.updater = updater
    return TestLLM(settings, session, device, client, updater, cache=cache, live_factory=live_factory)
