"""One test's action cache: loaded in the cache modes, replayed run by run and check by check, and
written after a passing test (`TestLLM.close`). Modes (issue 21):

* `anthropic`, `record`, `replay`: the model drives; a passing test writes its cache.
* `cache` (strict): no model at all; every step must hit, a miss fails the test naming the step, the
  reason, the nearest candidate and the screen it was cached on. The file is never rewritten.
* `cache-fallback`: replay, and at the first miss hand the rest of the goal to the live actor (task
  state as always, the steps done as its history, and in its first request the miss and the next
  cached steps, `_handover`); the cache is rewritten
  only if the test passes, and the change is reported. The run ends without the model only when
  the milestones hold because of an action of this run (`_reached_by_this_run`, issue 32).

In both modes every miss goes to `misses`, which the journal (`miss_messages`) and the summary
(`first_miss`) carry: a strict miss is not only its exception.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_guistate.core.values import field_of
from pytest_guistate.llm.actor import RunResult, Turn
from pytest_guistate.llm.actuator import as_actuator
from pytest_guistate.llm.cache.cachefile import (
    ActionCache,
    CachedQuery,
    CachedRun,
    CacheError,
    load_cache,
    plan_lines,
    screen_similarity,
    write_cache,
)
from pytest_guistate.llm.cache.memory_heal import element_memory
from pytest_guistate.llm.cache.query_cache import QueryMiss, read_again, read_prints
from pytest_guistate.llm.cache.record import CacheRecorder, screen_of
from pytest_guistate.llm.cache.replay import (
    CacheMiss,
    CacheThresholds,
    Miss,
    StepStatus,
    held_milestones,
    replay_check,
    replay_run,
    settled_milestones,
    unmet_milestones,
)
from pytest_guistate.llm.cache.secrets import Binding, CacheKey, Spans, bind_run, cache_key, fill, seal_run
from pytest_guistate.llm.check import CheckVerdict
from pytest_guistate.llm.query import QueryResult
from pytest_guistate.llm.settings import LLMSettings, Mode

if TYPE_CHECKING:
    from pytest_guistate.core.values import Shape

__all__ = ["CacheSession"]

LiveRun = Callable[..., RunResult]


def _all_plan(cache: ActionCache | None) -> list[str]:
    if cache is None:
        return []
    return [line for i, run in enumerate(cache.runs) for line in [f"run {i + 1}: {run.instruction}",
                                                                 *plan_lines(run.steps)]] + [
        f"query {i + 1}: {q.question!r} ({q.type})" for i, q in enumerate(cache.queries)]


@dataclass
class CacheSession:
    mode: Mode
    path: Path
    session: Any
    device: Any
    test: str
    platform: str
    cached: ActionCache | None = None
    scrub: Callable[[Any], Any] | None = None  # the test's redactor: what the file may store
    spans: Spans | None = None  # where a text holds the test's secrets: they are stored as placeholders
    key_file: Path | None = None  # the key the secrets' digests are made with (`cache.secrets.cache_key`)
    registered: Callable[[], Any] = lambda: ()  # the test's secrets so far, for a typed placeholder
    recorder: CacheRecorder = field(init=False)
    statuses: list[StepStatus] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    change: list[str] = field(default_factory=list)
    rewritten: bool = False
    run_index: int = 0
    check_index: int = 0
    query_index: int = 0
    queries: list[CachedQuery] = field(default_factory=list)  # this run's passing queries, for the file
    phase: str = ""  # "hit" while cached steps replay, "live" while the actor drives in a cache mode


    def __post_init__(self) -> None:
        page_url = self.device.page_url if getattr(self.device, "browser", False) else None
        self.recorder = CacheRecorder(self.session, memory=element_memory(self.device), page_url=page_url)

    @classmethod
    def open(cls, mode: Mode, path: Path, session: Any, device: Any, *, test: str, platform: str,
             scrub: Callable[[Any], Any] | None = None, spans: Spans | None = None,
             key_file: Path | None = None) -> CacheSession:
        """In the cache modes the file is read now: a bad one fails the test here, before any action.
        A missing file fails the strict mode; the fallback mode then runs live (and reports it)."""
        redactor = getattr(session, "redactor", None)  # the test's secrets so far (a GuistateSession's)
        cache = cls(mode, path, session, device, test, platform, scrub=scrub, spans=spans, key_file=key_file,
                    registered=lambda: tuple(getattr(redactor, "secrets", ())))
        if mode.uses_cache and (mode is Mode.CACHE or path.exists()):
            cache.cached = load_cache(path, platform=platform)
        if mode.uses_cache:  # first listener: the journal, the terminal and Allure see the step's cache status
            session.journal.listeners.insert(0, cache)
        return cache

    def on_step(self, record: Any) -> None:
        """Mark a step of an LLM run in a cache mode: a replayed one `hit` (or `miss` when its cached
        effect did not show), one the live actor took after a miss `live`."""
        if self.phase == "hit":
            healed = record.cache  # "hit (healed: ...)": the replay acted on a target the memory healed
            record.cache = ("miss (false heal prevented)" if healed else "miss") if record.outcome == "failed" \
                else healed or "hit"
        elif self.phase:
            record.cache = self.phase

    def _live(self, live: LiveRun, instruction: str, **kwargs: Any) -> RunResult:
        self.phase = "live"
        try:
            return live(instruction, **kwargs)
        finally:
            self.phase = ""

    @property
    def strict(self) -> bool:
        return self.mode is Mode.CACHE

    # -- runs ---------------------------------------------------------------------------------
    def _next_run(self, instruction: str) -> tuple[CachedRun, Binding] | None:
        """The cached run for this instruction and what its secret placeholders stand for; None (the
        fallback runs live, the reason in `misses`) or an error (strict) when there is none."""
        runs = self.cached.runs if self.cached is not None else []
        index, self.run_index = self.run_index, self.run_index + 1
        if index >= len(runs):
            if self.strict:
                raise self._refused(f"action cache {self.path} has {len(runs)} run(s); the test's run {index + 1} "
                                    f"({instruction!r}) is not in it: re-record the cache")
            return None
        cached = runs[index]
        key = self._key(create=False) if cached.secrets else None
        binding = bind_run(cached, instruction, key, self.registered(), where=f"run {index + 1}")
        if binding is None:
            if self.strict:
                raise self._refused(f"action cache {self.path}: run {index + 1} was recorded for "
                                    f"{cached.instruction!r}, the test now asks {instruction!r}: re-record "
                                    "the cache")
            return None
        for value in binding.seen:  # a secret of the instruction (even a changed one): never in a record from here on
            self._register(value)
        if binding.miss:
            message = f"cache miss at {binding.miss} [{self.path}]"
            self.misses.append(message)  # strict or not, in the record
            if self.strict:
                raise CacheMiss(message, Miss(None, binding.miss))
            return None
        return cached, binding

    def _key(self, *, create: bool) -> CacheKey | None:
        try:
            return cache_key(self.key_file, create=create)
        except (OSError, ValueError) as exc:
            raise CacheError(f"action cache {self.path}: the key for goals with secrets cannot be read ({exc})") \
                from None

    def _register(self, value: str) -> None:
        register = getattr(self.session, "secret", None)
        if register is not None:
            try:
                register(value)
            except ValueError:
                pass  # too short to scrub (a 2-character value): the redactor refuses it; nothing stores it

    def _refused(self, message: str) -> CacheError:
        """A strict run the cache cannot serve: named in the record like any miss, then raised."""
        self.misses.append(message)
        return CacheError(message)

    def run(self, instruction: str, *, max_steps: int, plan: Any, hints: Sequence[str], live: LiveRun) -> RunResult:
        """Replay the next cached run; on a miss fail (strict) or hand over to `live` (fallback)."""
        if not self.session.state.goal:
            self.session.goal(instruction, plan or ())
        self.recorder.begin_run()
        misses = len(self.misses)
        found = self._next_run(instruction)
        if found is None:
            if len(self.misses) == misses:
                self.misses.append(f"no cached run for {instruction!r} in {self.path}: ran live")
            return self._live(live, instruction, max_steps=max_steps, plan=None, hints=hints)
        cached, binding = found
        held = held_milestones(self.session) if not self.strict else []  # before any action of this run
        actuator = as_actuator(self.device)
        self.phase = "hit"
        try:
            outcome = replay_run(self.session, actuator, cached, self.recorder, run_index=self.run_index - 1,
                                 memory=self.recorder.memory, secrets=binding.values, cache_file=str(self.path))
            unmet = settled_milestones(self.session, actuator) if outcome.miss is None else []
        finally:
            self.phase = ""
        self.statuses.extend(outcome.statuses)
        miss = outcome.miss
        if miss is None:
            if not unmet:
                summary = str(cached.done.get("summary", ""))
                self.recorder.add_run(instruction, True, summary)
                turns = [Turn(s.n, cached.steps[i].tool, dict(cached.steps[i].args), step=s.step, outcome="ok",
                              note="cache hit") for i, s in enumerate(outcome.statuses)]
                return RunResult(True, "done", f"{summary} (action cache: {len(turns)} hits)", turns,
                                 {"total_tokens": 0})
            miss = Miss(None, f"all steps replayed, but milestones are not on screen after settle and refresh: "
                              f"{unmet}")
            self.statuses.append(StepStatus(len(cached.steps) + 1, "done", "miss", miss.reason))
        message = miss.message(self.path)
        self.misses.append(message)  # strict or not, the journal and the summary name every miss
        if self.strict:
            raise CacheMiss(message, miss)
        if self.session.state.plan and not unmet_milestones(self.session):
            proof = _reached_by_this_run(outcome, held)
            if not proof:
                return self._goal_reached(instruction, cached, outcome, miss, binding.values)
            self.misses.append(f"after the miss the milestones hold, but {proof}: not taken as the goal reached "
                               f"[{self.path}]")
        done = [s.line() for s in outcome.statuses if s.status == "hit"]
        again = [n for n in outcome.non_idempotent_done if miss.step is not None and n == miss.step.n]
        handover = _handover(done, message, outcome.remaining, again[0] if again else None, miss.target_hint())
        hits = len(done)
        records = {r.index: r for r in self.session.steps}
        history = [f"{r.index} {r.name.removesuffix(' [cache]')} -> {r.outcome}" for s in outcome.statuses
                   if s.step is not None and (r := records.get(s.step)) is not None]
        return self._live(live, instruction, max_steps=max(1, max_steps - hits), plan=None,
                          hints=hints, history=history, handover=handover)

    def _goal_reached(self, instruction: str, cached: CachedRun, outcome: Any, miss: Miss,
                      secrets: Mapping[str, str]) -> RunResult:
        """The missed step's action did reach the goal (a screen of the flow was removed): done, no model."""
        if outcome.acted is not None:
            step, record, decided_on, node, before = outcome.acted
            if record is not None:
                self.recorder.step(step.tool, fill(step.args, secrets), step.name, record, decided_on, node,
                                   step.idempotent, before)
                self.recorder.pending[-1].effect["expect"] = None  # the old expectation no longer shows
        self.recorder.add_run(instruction, True, str(cached.done.get("summary", "")))
        turns = [Turn(s.n, "cache", {}, step=s.step, outcome=s.status) for s in outcome.statuses]
        return RunResult(True, "done", f"{cached.done.get('summary', '')} (action cache: goal reached after "
                         f"a miss: {miss.reason})", turns, {"total_tokens": 0})

    def live_ended(self, instruction: str, result: RunResult) -> None:
        """A live actor run (any mode) ended: its steps join the cache when it succeeded."""
        self.recorder.add_run(instruction, result.success, result.summary)
        self.statuses.extend(StepStatus(len(self.statuses) + 1, f"{t.tool} {t.input.get('element_id', '')}".strip(),
                                        "live", step=t.step) for t in result.turns if t.step is not None)

    # -- checks -------------------------------------------------------------------------------
    def check(self, claim: str) -> CheckVerdict | None:
        """A cached AI check re-verified (a verdict), None when the fallback must ask the model."""
        checks = self.cached.checks if self.cached is not None else []
        index, self.check_index = self.check_index, self.check_index + 1
        cached = checks[index] if index < len(checks) and checks[index].claim == claim else None
        holds, reason = replay_check(self.session, cached, claim)
        if holds and cached is not None:
            self.recorder.checks.append(cached)
            self.statuses.append(StepStatus(len(self.statuses) + 1, f"check {claim!r}", "hit"))
            return CheckVerdict(claim, "pass", "pass", f"{cached.explanation} (action cache: evidence re-verified)",
                                list(cached.evidence))
        message = f"cache miss at AI check {claim!r}: {reason} [{self.path}]"
        self.statuses.append(StepStatus(len(self.statuses) + 1, f"check {claim!r}", "miss", reason))
        self.misses.append(message)
        if self.strict:
            raise CacheMiss(message, Miss(None, reason))
        return None

    def live_check(self, verdict: CheckVerdict) -> None:
        if verdict.passed:
            self.recorder.add_check(verdict.claim, self.session.observe(), verdict.evidence, verdict.explanation)
        if self.mode.uses_cache:
            self.statuses.append(StepStatus(len(self.statuses) + 1, f"check {verdict.claim!r}", "live"))

    # -- queries (issue 46) ----------------------------------------------------------------------
    def query(self, question: str, shape: Shape, secrets: Sequence[str] = ()) -> QueryResult | None:
        """Today's value read from the cached query's elements at 0 tokens; None when the fallback must
        ask the model; a strict miss raises `CacheMiss` naming why (gone, renamed, ambiguous)."""
        queries = self.cached.queries if self.cached is not None else []
        index, self.query_index = self.query_index, self.query_index + 1
        cached = queries[index] if index < len(queries) and queries[index].question == question else None
        name = f"query {question!r}"
        if cached is None:
            reason = f"no cached query for the question {question!r}"
        elif cached.type != shape.name:
            reason = f"cached as {cached.type}, asked as {shape.name}"
        else:
            reason = ""
            for settled in (False, True):  # fresh first; settled when the fresh screen does not give it
                observation = self.session.observe(settled=settled)
                similarity = screen_similarity(cached.screen, screen_of(observation))
                if similarity < CacheThresholds().screen:
                    reason = (f"the screen is not the one the query read (similarity {similarity:.2f}; cached on "
                              f"'{cached.screen.get('title', '')}')")
                    continue
                try:
                    value, cited = read_again(shape, cached.reads, observation.tree, secrets)
                except QueryMiss as exc:
                    reason = str(exc)
                    continue
                self.queries.append(cached)
                self.statuses.append(StepStatus(len(self.statuses) + 1, name, "hit"))
                raw = shape_json(value)
                return QueryResult(question, shape.name, value, raw, cited,
                                   "action cache: read again from the cached elements", source="cache",
                                   observation=observation)
        message = f"cache miss at {name}: {reason} [{self.path}]"
        self.statuses.append(StepStatus(len(self.statuses) + 1, name, "miss", reason))
        self.misses.append(message)
        if self.strict:
            raise CacheMiss(message, Miss(None, reason))
        return None

    def live_query(self, result: QueryResult, shape: Shape) -> None:
        """A verified live query joins the cache with the elements it read (none: not replayable)."""
        if result.tree is not None:
            reads = read_prints(shape, result.value, result.evidence, result.tree)
            self.queries.append(CachedQuery(result.question, result.type,
                                            screen_of(_Seen(result.tree, result.package)), result.raw, reads))
        if self.mode.uses_cache:
            self.statuses.append(StepStatus(len(self.statuses) + 1, f"query {result.question!r}", "live"))

    # -- the file and the report ----------------------------------------------------------------
    def write(self, settings: LLMSettings, tokens: int) -> None:
        """After a pass: the model modes always write; the fallback only when it changed something."""
        if self.strict:
            return
        if self.mode is Mode.CACHE_FALLBACK and self.cached is not None and not self.misses:
            return
        caps = getattr(getattr(self.device, "driver", None), "capabilities", None) or {}
        version = caps.get("guistate:appVersion") or caps.get("appium:appVersion")
        recorded = {"mode": self.mode.value, "model": settings.model, "tokens": tokens,
                    **({"app_version": str(version)} if version is not None else {})}
        if getattr(self.device, "browser", False):  # a browser session: the export asserts one and opens its pages
            recorded.update(session="browser", browserName=str(caps.get("browserName") or ""))
        if self.mode is Mode.REPLAY and self.path.exists():
            try:  # a cassette replay keeps how the cache was first made
                recorded = load_cache(self.path, platform=self.platform).recorded or recorded
            except CacheError:
                pass
        old = self.cached
        if old is None and self.path.exists():
            try:
                old = load_cache(self.path, platform=self.platform)
            except CacheError:
                old = None
        new = ActionCache(self.test, self.platform, self._sealed(self.recorder.runs), list(self.recorder.checks),
                          recorded, list(self.queries))
        self.change = list(difflib.unified_diff(_all_plan(old), _all_plan(new), "cached plan", "new plan", lineterm="",
                                                n=0))
        if self.mode is Mode.REPLAY and old is not None and not self.change:
            # A cassette replay of the same plan leaves the committed cache alone: the effects it saw (a step
            # settled instead of ok, a region a few pixels off) vary with timing, and CI must not dirty the tree.
            self.rewritten = False
            return
        self.rewritten = write_cache(self.path, new, self.scrub)

    def _sealed(self, runs: Sequence[CachedRun]) -> list[CachedRun]:
        """The runs as the file holds them: each secret a placeholder with its keyed digest (the key is
        made now if the project has none yet); without secrets, the runs as they are."""
        if self.spans is None:
            return list(runs)
        spans = self.spans
        if not any(spans(r.instruction) or any(spans(str(s.args.get("text", ""))) for s in r.steps) for r in runs):
            return list(runs)
        key = self._key(create=True)
        return [seal_run(run, spans, key) for run in runs]

    def report(self, tokens_used: int) -> dict[str, Any]:
        counted = [s for s in self.statuses if s.status in ("hit", "miss", "live")]
        hits = sum(s.status == "hit" for s in counted)
        live = sum(s.status == "live" for s in counted)
        recorded_tokens = int((self.cached.recorded if self.cached else {}).get("tokens", 0) or 0)
        return {"mode": self.mode.value, "path": str(self.path),
                "steps": [{"n": s.n, "name": s.name, "status": s.status, "reason": s.reason, "step": s.step}
                          for s in self.statuses],
                "hits": hits, "misses": sum(s.status == "miss" for s in counted), "live": live,
                "hit_rate": round(hits / len(counted), 3) if counted and self.mode.uses_cache else None,
                "tokens_used": tokens_used,
                "tokens_saved": max(0, recorded_tokens - tokens_used) if self.mode.uses_cache else 0,
                "miss_messages": list(self.misses), "rewritten": self.rewritten, "change": list(self.change)}


@dataclass
class _Seen:
    """An observation as `screen_of` reads it: the tree a query was answered on and its app."""

    tree: Any
    package: str


def shape_json(value: Any) -> Any:
    """A converted value as JSON (a dataclass record as its fields), as the model's raw value is kept."""
    if isinstance(value, list):
        return [shape_json(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return {k: field_of(value, k) for k in value.__dataclass_fields__}
    return value


def _reached_by_this_run(outcome: Any, held: Sequence[str]) -> str:
    """Why milestones that hold after a miss are no proof of the goal reached ('' when they are):
    only an action of this run (a replayed hit, or the missed step's action) can reach a goal, and
    never one whose milestones already held before the run acted (a subject off screen, not loaded)."""
    if held:
        return f"{list(held)} already held before this run acted (off screen or not loaded is not done)"
    acted = any(s.status == "hit" for s in outcome.statuses) or (
        outcome.acted is not None and outcome.acted[1] is not None)
    return "" if acted else "no action of this run ran"


HANDOVER_PLAN_STEPS = 4  # cached steps named to the live actor after a miss


def _handover(done: Sequence[str], message: str, remaining: Sequence[Any], acted: int | None,
              target: str = "") -> list[str]:
    """What the live actor is told after a miss (its first request only, `ActorConfig.handover`): the
    steps replayed, the miss, the next few cached steps, and (`target`, `Miss.target_hint`) the recorded
    element when the miss was that lookalikes on screen could not be told apart: the goal's words alone
    would let the actor act on the wrong one. Nothing when no step was replayed, none acted and the
    target was not ambiguous: the live run is then the live run, at its tokens (issue 21: a fallback
    spends no more than the live steps it replaces)."""
    if target and not done and acted is None:
        return [f"Then: {message}.", target]
    if not done and acted is None:
        return []
    shown = plan_lines(remaining[:HANDOVER_PLAN_STEPS])
    more = len(remaining) - len(shown)
    lines = [f"The first {len(done)} step(s) of this goal were replayed from the action cache and verified: "
             + "; ".join(done) if done else "No cached step could be replayed.",
             f"Then: {message}.",
             "The next steps of the cached plan (they may no longer fit the screen): " + " | ".join(shown)
             + (f" | ... and {more} more" if more > 0 else "")]
    if acted is not None:
        lines.append(f"Step {acted}'s action already ran once: do not repeat it unless the screen shows it did "
                     "not happen.")
    if target:
        lines.append(target)
    return lines
