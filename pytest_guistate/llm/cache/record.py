"""Building an action cache while a test runs: `CacheRecorder.observer` is the actor's step observer
(live, record and cassette-replay runs, and the live part of a fallback), `add_run` closes a
`guistate.run()`, `add_check` keeps a passed AI check. The facade writes the file only when the test
passed (`TestLLM.close`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pytest_guistate.core.uitree import UINode, UITree
from pytest_guistate.devices import hybrid
from pytest_guistate.llm.cache.cachefile import (
    CachedCheck,
    CachedRun,
    CachedStep,
    claim_words,
    fingerprint,
    locator_candidates,
    locator_matches,
    screen_signature,
    state_after,
)
from pytest_guistate.llm.cache.memory_heal import ElementMemory, memory_key

__all__ = ["CacheRecorder", "screen_of", "target_of"]


def screen_of(observation: Any) -> dict[str, Any]:
    """The signature of an observation's screen (its tree is read if not yet)."""
    if observation is None:
        return screen_signature(None)
    return screen_signature(observation.tree, str(getattr(observation, "package", "") or ""))


def _region(record: Any) -> list[int] | None:
    """Where the oracle saw the step's change: the union of its first region's box, if any."""
    for region in getattr(record, "regions", None) or []:
        box = region.get("box") if isinstance(region, dict) else None
        if isinstance(box, list) and len(box) == 4:
            return [int(v) for v in box]
    return None


def locator_context(tree: UITree, target: UINode, context: str) -> str:
    """The context whose locators find `target` (a hybrid session's step acted in `context`): the web view's
    for a node of the page mapped into the web view (`hybrid.graft`), `NATIVE_APP` for one of the native
    screen around it. "" in a session never seen in two contexts (its records name none): the cache of
    a plain app stays as it was. A page node seen from `NATIVE_APP` gets `WEBVIEW`, the web view's context
    whose name the step did not see."""
    if not context:
        return ""
    host = hybrid.webview_node(tree)
    inside = host is not None and target is not host and target.index_path.startswith(f"{host.index_path}/")
    if not inside:
        return hybrid.NATIVE_CONTEXT
    return context if hybrid.is_web_context(context) else "WEBVIEW"


def target_of(tree: UITree, target: UINode, context: str = "") -> dict[str, Any]:
    """A step's `target` as the cache keeps it: the element's fingerprint, its locator candidates, which of
    them found it alone on `tree` (the ones a scripted export may use, `llm/export.py`) and, in a hybrid
    session, the context whose locators find it. Also what a heal during a replay proposes as the step's
    new target (`replay._heal`)."""
    print_ = fingerprint(tree, target)
    locators = locator_candidates(print_)
    unique = [kind for loc in locators for kind in loc if locator_matches(tree, loc) == 1]
    data: dict[str, Any] = {"fingerprint": print_, "locators": locators, "unique": unique}
    where = locator_context(tree, target, context)
    if where:
        data["context"] = where
    return data


@dataclass
class CacheRecorder:
    """Collects the steps of the current run; `pending` is the run in progress."""

    session: Any
    memory: ElementMemory | None = None  # the test's cross-run memory: a passed step teaches it its target's look
    pending: list[CachedStep] = field(default_factory=list)
    runs: list[CachedRun] = field(default_factory=list)
    checks: list[CachedCheck] = field(default_factory=list)
    started_with: list[str] | None = None  # the milestones completed when the run in progress took its first step
    acted_on: UINode | None = None  # the pending last step's target (to read its state on the next screen)
    # a browser session's current page URL (`Device.page_url`), None in an app session: each run keeps the
    # page it started and ended on, so a scripted export opens the page the run acted on
    page_url: Callable[[], str] | None = None
    page_start: str | None = None  # the URL the run in progress started on

    def begin_run(self) -> None:
        """A run starts (live or replayed): in a browser session, the page it starts on (one request)."""
        if self.page_url is not None and self.page_start is None:
            self.page_start = self.page_url()

    def step(self, tool: str, args: dict[str, Any], name: str, record: Any, decided_on: Any, target: UINode | None,
             idempotent: bool, completed_before: list[str], *, learn: bool = True) -> CachedStep:
        """Record one verified step (`record` is its StepRecord). `learn`: teach the memory the
        target's look (False when the step acted on a heal, which the memory confirms itself)."""
        if not self.pending:
            self.started_with = list(completed_before)
        tree = getattr(decided_on, "tree", None) if decided_on is not None else None
        target_data = None
        if target is not None and tree is not None:
            target_data = target_of(tree, target, str(getattr(record, "context", "") or ""))
            if learn and tool in ("tap", "type_text"):
                self._teach(target_data["fingerprint"], target_data["locators"], target, decided_on, record)
        # The screen this step led to is the one the next step decides on (`_close_previous`):
        # observing here would change the test's timing (a cassette replay must see what it saw).
        self._close_previous(decided_on)
        self.acted_on = target
        newly = [m for m in self.session.state.completed if m not in completed_before]
        clean_args = {k: v for k, v in args.items() if not k.startswith("_") and k != "reason"}
        effect = {"expect": args.get("expect") if isinstance(args.get("expect"), dict) else None,
                  "outcome": record.outcome, "verdict": record.verdict, "confirmed": bool(record.confirmed),
                  "region": _region(record), "next_screen": None}
        step = CachedStep(n=len(self.pending) + 1, tool=tool, args=clean_args, name=name, idempotent=idempotent,
                          screen=screen_of(decided_on), target=target_data, effect=effect,
                          milestone=newly[0] if newly else None)
        self.pending.append(step)
        return step

    def _teach(self, print_: dict[str, Any], locators: list[dict[str, str]], target: UINode, before: Any,
               record: Any) -> None:
        """The memory learns an LLM step's element as it learns a located tap's (`MemoryBridge`)."""
        key = memory_key(print_, locators)
        if self.memory is None or key is None or target.bounds is None:
            return
        self.memory.learn_passed(*key.locator, target.bounds, key.function, before, step_name=record.name,
                                 outcome=str(record.outcome))

    def observer(self, turn: Any, record: Any, decided_on: Any, target: UINode | None, idempotent: bool,
                 completed_before: list[str]) -> None:
        """`actor.StepObserver`: the actor's turn carries the tool call as the model made it."""
        self.step(turn.tool, dict(turn.input), record.name, record, decided_on, target, idempotent, completed_before)

    def _close_previous(self, observation: Any) -> None:
        if self.pending and self.pending[-1].effect.get("next_screen") is None:
            last = self.pending[-1]
            last.effect["next_screen"] = screen_of(observation)
            # a switch's state after the step: a replay's tap must leave it so (not a disabled switch, not a
            # confirm dialog the recording did not have); absent when the step's target had no state
            fp = last.fingerprint
            state = None if self.acted_on is None else state_after(getattr(observation, "tree", None), self.acted_on, fp)
            if state is not None:
                last.effect["checked"] = state

    def add_run(self, instruction: str, success: bool, summary: str) -> None:
        """A `guistate.run()` ended: keep its steps when it succeeded, drop them otherwise."""
        if success:
            self._close_previous(self.session.observe())  # the screen the run ended on (already settled)
            self._keep_milestones()
            page = {"start": self.page_start or "", "end": self.page_url()} if self.page_url is not None else {}
            self.runs.append(CachedRun(instruction, list(self.pending), {"success": True, "summary": summary}, {},
                                       page))
        self.pending, self.started_with, self.page_start = [], None, None

    def _keep_milestones(self) -> None:
        """A milestone the run reached after its last step completed (at the run's end, after a
        refresh) belongs to that last step: a replay then gives it that step's settle and refresh."""
        if not self.pending or self.started_with is None:
            return
        named = {s.milestone for s in self.pending}
        missing = [m for m in self.session.state.completed if m not in self.started_with and m not in named]
        last = self.pending[-1]
        if missing and last.milestone is None:
            last.milestone = missing[0]

    def add_check(self, claim: str, observation: Any, evidence: list[dict[str, Any]], explanation: str) -> None:
        """A passed AI check: the cited elements' fingerprints (so replay can find them again)."""
        tree = getattr(observation, "tree", None)
        kept: list[dict[str, Any]] = []
        for item in evidence:
            element_id = str(item.get("element_id", ""))
            node = tree.by_index_path(element_id) if tree is not None and element_id else None
            kept.append({"quote": str(item.get("quote") or ""),
                         "fingerprint": fingerprint(tree, node) if node is not None and tree is not None else None})
        self.checks.append(CachedCheck(claim, screen_of(observation), kept, explanation, claim_words(claim, tree)))
