"""Per-test glue the `guistate` fixture uses: `open_llm(...)` -> `TestLLM` with `run`, `check`,
`report()` and `close()`. It owns the test's client (budget, ledger, cassette) and installs the
LLM state updater on the session when the settings ask for it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_guistate.llm.actor import ActorConfig, RunResult, run
from pytest_guistate.llm.cassette import cassette_path
from pytest_guistate.llm.check import AICheckFailed, CheckVerdict, check
from pytest_guistate.llm.client import LLMClient, LLMSettings, Mode, make_client
from pytest_guistate.llm.errors import LLMRunFailed
from pytest_guistate.llm.updater import LLMStateUpdater

__all__ = ["TestLLM", "open_llm"]


@dataclass
class TestLLM:
    __test__ = False  # not a pytest test class despite the name

    settings: LLMSettings
    session: Any
    device: Any
    client: LLMClient | None
    updater: LLMStateUpdater | None = None
    runs: list[RunResult] = field(default_factory=list)
    checks: list[CheckVerdict] = field(default_factory=list)

    def run(self, instruction: str, *, max_steps: int = 30, plan: Any = None, hints: Sequence[str] = ()) -> RunResult:
        config = ActorConfig(frame_divisor=self.settings.frame_divisor, hints=tuple(hints))
        try:
            result = run(self.session, self.device, instruction, llm=self.client, max_steps=max_steps, plan=plan,
                         config=config)
        except LLMRunFailed as exc:
            if exc.result is not None:
                self.runs.append(exc.result)
            raise
        self.runs.append(result)
        return result

    def check(self, claim: str) -> CheckVerdict:
        try:
            verdict = check(self.session, claim, llm=self.client, frame_divisor=self.settings.frame_divisor)
        except AICheckFailed as exc:
            self.checks.append(exc.verdict)
            raise
        self.checks.append(verdict)
        return verdict

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
        if self.updater is not None:
            data["updater"] = {"calls": self.updater.calls, "errors": self.updater.errors,
                               "reasons": self.updater.reasons}
        return data

    def close(self) -> None:
        if self.client is not None:
            self.client.finish()


def open_llm(settings: LLMSettings, session: Any, device: Any, *, test_file: Path, test_name: str,
             scrub: Callable[[Any], Any] | None = None) -> TestLLM:
    """Create the test's LLM access; cassettes live at `cassette_path(test_file, test_name)`.
    `scrub` (the test's redactor) cleans what a cassette stores, and replay matches on it."""
    platform = str(getattr(device, "platform", "android"))
    path = cassette_path(test_file, test_name, platform) if settings.mode in (Mode.RECORD, Mode.REPLAY) else None
    client = make_client(settings, cassette_path=path, scrub=scrub)
    updater = None
    if client is not None and settings.updater != "off":
        updater = LLMStateUpdater(client, activation=settings.updater, offline=session.updater,
                                  frame_divisor=settings.frame_divisor)
        session.updater = updater
    return TestLLM(settings, session, device, client, updater)
