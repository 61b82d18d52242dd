"""`GuistateSession`: the object the `guistate` fixture hands to a test.

It is the core's `TaskSession` plus what only exists inside pytest: the LLM actor and AI checks
(`run`, `check`), secrets to redact, and the auto tier learning the plan length at `goal()`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pytest_guistate.core.errors import QueryUnverified
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.core.tiers import AutoThresholds, Tier, TierPolicy, choose_tier
from pytest_guistate.memory.flows import flow_hints, remember_flow

if TYPE_CHECKING:
    from pytest_guistate.llm.actor import RunResult
    from pytest_guistate.llm.check import CheckVerdict
    from pytest_guistate.llm.facade import TestLLM
    from pytest_guistate.memory.store import MemoryStore
    from pytest_guistate.report.redact import Redactor

__all__ = ["GuistateSession", "LLMNotConfigured"]


class LLMNotConfigured(RuntimeError):
    """`guistate.run()` / `check()` / `query()` were called while `--guistate-llm=off`."""


class GuistateSession(TaskSession):
    """Per-test task state machine (see `TaskSession` for the verbs) with pytest-side extras."""

    def __init__(
        self,
        *args: Any,
        tier_reason: str = "",
        auto_from_plan: AutoThresholds | None = None,
        redactor: Redactor | None = None,
        retier_hook: Callable[[Tier], None] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.tier_reason = tier_reason
        self._auto_from_plan = auto_from_plan
        self._redactor = redactor
        self._retier_hook = retier_hook
        self.llm: TestLLM | None = None
        # Opened on the first run()/check(): a test without LLM steps needs no cassette and no key.
        self.llm_factory: Callable[[], TestLLM] | None = None
        self.flow_store: MemoryStore | None = None  # procedural memory for the actor (set by the plugin)
        self._queries = 0  # guistate.query calls so far: their crops' names

    @property
    def redactor(self) -> Redactor | None:
        """What this test's records must not show (secrets, the redact hook's patterns)."""
        return self._redactor

    @property
    def tier(self) -> Tier:
        return self.policy.tier

    def goal(self, text: str, plan: Sequence[Any] = (), *, refresh: Callable[[], object] | None = None) -> None:
        """Declare the task (see `TaskSession.goal`); under the auto tier a declared plan picks the tier."""
        if self._auto_from_plan is not None and plan and not self.steps:
            tier, reason = choose_tier(Tier.AUTO, plan_length=len(plan), thresholds=self._auto_from_plan)
            if tier is not self.policy.tier:
                self.retier(TierPolicy.for_tier(tier, max_plan_length=self.policy.max_plan_length))
                if self._retier_hook is not None:
                    self._retier_hook(tier)
            self.tier_reason = reason
        super().goal(text, plan, refresh=refresh)

    def failure_section(self, max_anchors: int = 8) -> str:
        """The report section, with every registered secret scrubbed (it reaches terminals and JUnit XML)."""
        text = super().failure_section(max_anchors)
        return self._redactor.scrub(text) if self._redactor is not None else text

    def secret(self, value: str) -> str:
        """Register a value (password, token) that must never reach a saved file; returns it."""
        if self._redactor is not None and value:
            self._redactor.add_secret(value)
        return value

    def run(self, instruction: str, *, max_steps: int = 30, plan: Any = None) -> RunResult:
        """Hand a natural-language goal to the Claude actor; every action goes through `perform`.

        With the cross-run memory on, flows that worked for similar instructions go into the
        actor's prompt as hints (never commands), and a successful run is remembered as a flow."""
        llm = self._require_llm("run")
        hints = flow_hints(self.flow_store, instruction, self._apps()) if self.flow_store is not None else []
        result = llm.run(instruction, max_steps=max_steps, plan=plan, hints=hints)
        if result.success and self.flow_store is not None:
            remember_flow(self.flow_store, instruction, result.turns, self._apps(), test=self.name)
        return result

    def _apps(self) -> list[str]:
        """Apps this test has seen, as packages and short names (both may appear in instructions)."""
        packages = [p for s in self.steps for p in (s.package_before, s.package_after) if p]
        return list(dict.fromkeys([*packages, *(p.rpartition(".")[2] for p in packages)]))

    def check(self, claim: str) -> CheckVerdict:
        """An AI assertion on the current screen, cross-checked against the UI tree."""
        return self._require_llm("check").check(claim)

    def query(self, question: str, type: Any = str) -> Any:
        """A typed value read off the current screen (str, int, float, bool, list[str], a record and lists
        of records), every part verified against the element it was read from; `QueryFailed` /
        `QueryUnverified` otherwise. Replayed from the action cache at 0 tokens in the cache modes."""
        from pytest_guistate.core.values import shape_of

        shape = shape_of(type)
        secrets = tuple(getattr(self._redactor, "secrets", ())) if self._redactor is not None else ()
        try:
            result = self._require_llm("query").query(question, shape, secrets)
        except QueryUnverified as exc:  # the record shows what the model cited, so a person can judge it
            self._query_crops(exc.evidence, exc.observation)
            raise
        self._query_crops(result.evidence, result.observation)
        return result.value

    def _query_crops(self, evidence: list[dict[str, Any]], observation: Any) -> None:
        """Each cited element's crop for the record (report.html, Allure): `crop` on its evidence."""
        put_crop = getattr(self.artifacts, "put_crop", None)  # the recorder's; a bare sink keeps none
        frame = getattr(observation, "frame", None)
        if put_crop is None or frame is None:
            return
        from pytest_guistate.core.artifact_names import crop_name
        from pytest_guistate.core.geometry import Box

        self._queries += 1
        for number, item in enumerate(evidence):
            if item.get("box"):
                box = Box(*item["box"])
                name = crop_name(len(self.steps), label=f"query{self._queries}-{number}")
                item["crop"] = put_crop(name, self.oracle.crop(frame, box), box, cut_from=observation)

    def _require_llm(self, verb: str) -> TestLLM:
        if self.llm is None and self.llm_factory is not None:
            self.llm = self.llm_factory()
        if self.llm is None or (self.llm.client is None and not self.llm.settings.mode.uses_cache):
            raise LLMNotConfigured(
                f"guistate.{verb}() needs an LLM: run with --guistate-llm=replay (committed cassettes), "
                "record or anthropic (ANTHROPIC_API_KEY in the environment), or set ini guistate_llm"
            )
        return self.llm
