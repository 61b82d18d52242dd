"""`MemoryBridge`: one test's link between the `Device`, its task session and the cross-run memory.

The device reports every element a locator found (`found`) and asks for a heal when a locator
finds nothing (`heal`). What is learned or healed is settled only when the step ends (`on_step`,
a session listener placed before the recorder): a successful step teaches the element's look
from the *before*-frame and confirms a heal; a failed step after a heal is a "false heal
prevented". Healing only happens inside a step with an `expect=`, because the expected effect is
what accepts a heal (issue 7: tools that heal by clicking a neighbour pass falsely).

A step's looks are learnt beside the test (issue 42: `MemoryStore.beside`, on the memory's own
thread once the step passed), never on the step's path; every read of the memory waits for them.

Learning costs no screenshot of its own (issue 12, "tree on demand"): the element's look comes
from the device's newest observation while it still shows the screen the element was found on
(the step's before-screen, `_screen_for`). An element whose look the memory already keeps costs
no request and no full-size decode at any tier (issues 38 and 42): the step's verdict is awaited,
then the kept look is searched in the before-frame's half-size copy and refreshed (`refresh_kept`),
so a suite run again and again on one app pays nothing for learning. For a new look, the tree is used
when already read (standard, full, a step with a check); at a step that reads no trees (light) it is
not fetched. Only a look not kept yet (or one
that was not found again in this test) asks the element its box, app and whether it is a password
field (`ElementFacts`); the full-size decode of the before-frame that the look is cropped from
starts at once on the decode thread, overlapping the tap. Only when no current screen is known
(the locator waited for the element, or an input came between) is a fresh one taken, and never at
a step that reads no trees. A heal always observes the screen now, tree included.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_guistate.core.anchors import AnchorType
from pytest_guistate.core.artifact_names import crop_name
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation
from pytest_guistate.memory.heal import Healer, HealResult
from pytest_guistate.memory.heal_proposal import CallSite, call_site, propose, propose_cache_edit
from pytest_guistate.memory.learn import refresh_kept, remember_place
from pytest_guistate.memory.locator import Locator, function_key

if TYPE_CHECKING:
    from pytest_guistate.core.task_session import TaskSession
    from pytest_guistate.devices.device import ElementFacts

__all__ = ["MemoryBridge"]

SUCCESS = ("ok", "settled", "refreshed", "retried")


@dataclass
class _Found:
    step: int
    before: Observation
    locator: Locator
    box: Box | None  # None: a kept look, found again in `before` once the step passed
    function: str | None


@dataclass
class _Healed:
    step: int
    before: Observation
    result: HealResult
    site: CallSite | None = None  # where a scripted test wrote the healed locator (a heal proposal's place)
    locator: tuple[str, str] = ("", "")
    edit: dict[str, Any] | None = None  # a replayed cache step's new target, for its cache file (`propose_cache_edit`)


@dataclass
class MemoryBridge:
    healer: Healer
    session: TaskSession
    nodeid: str
    app_version: str = ""
    heals: list[dict[str, Any]] = field(default_factory=list)  # for the summary and the terminal
    unlearned: list[str] = field(default_factory=list)  # why a located tap taught nothing (tree-less light steps)
    _found: list[_Found] = field(default_factory=list)
    _healed: list[_Healed] = field(default_factory=list)
    _relearn: set[str] = field(default_factory=set)  # kept looks not found again in this test

    # -- called by Device --------------------------------------------------------------------
    def found(self, kind: str, value: str, box: Box | Callable[[], Box], function: str | None, *,
              screen: Observation | None = None, facts: Callable[[], ElementFacts] | None = None) -> None:
        """`box` may be a callable asking the driver (one request): it is called only when needed."""
        step = self.session.current_step
        if step is None:
            return  # outside a step nothing confirms the action worked: nothing to learn
        locator = Locator(kind, value)
        # a look the memory keeps is found again in the before-frame's half-size copy once the step passed:
        # no request, and no full-size decode of that frame (a tree already read gives the box for free,
        # but the crop it would cut, ~14 ms of decode a step, competed with the step for the CPU; issue 42)
        if (screen is not None and (screen.tree_fetched or not step.reads_trees)
                and self._kept(function_key(locator, function))):
            self._found.append(_Found(step.index, screen, locator, None, function))  # no request now
            return
        asked: list[Box] = []

        def box_now() -> Box:  # asked once, and only for a look that is learnt (not when nothing can be)
            if not asked:
                asked.append(box() if callable(box) else box)
            return asked[0]

        before = self._screen_for(step, box_now, screen, facts, locator)
        if before is not None:
            self._found.append(_Found(step.index, before, locator, box_now(), function))
            if before.known_package:  # `learn_patch` will crop the look from full-size pixels
                before.frame.prefetch_full()  # decoded while the tap is sent, not on the step loop after it

    def _kept(self, key: str) -> bool:
        """The memory keeps a look of `key` that was not missed in this test (a look missed once
        is learnt from the element again: it may have changed)."""
        self.healer.store.settle()  # a look refreshed beside the test may have been missed (`_relearn`)
        return key not in self._relearn and bool(self.healer.store.patches(key))

    def _screen_for(self, step: Any, box: Callable[[], Box], screen: Observation | None,
                    facts: Callable[[], ElementFacts] | None, locator: Locator) -> Observation | None:
        """The screen to learn the element's look from, its tree read now (the tap comes next)."""
        if screen is not None and screen.tree_fetched:
            tree = screen.tree
            if tree is None or any(n.bounds == box() for n in tree.nodes()):
                return screen  # the before-screen, read anyway: no request at all
            # the element is not in that tree: the screen changed since, look again (below)
        elif screen is not None and step.reads_trees:
            _ = screen.tree  # a page source, but no screenshot
            return screen
        elif screen is not None and facts is not None:
            known = facts()
            if not known.package or known.private:
                why = "may show a secret" if known.package else "names no app without a page source"
                self.unlearned.append(f"{locator}: {why} and its screen's tree is not read")
                return None
            return Observation(screen.frame, tree=None, package=known.package, timestamp=screen.timestamp)
        if step.reads_trees:
            return self.session.observe()
        why = "not in the tree of the screen known" if screen is not None and screen.tree_fetched else "no current screen known"
        self.unlearned.append(f"{locator}: {why} and this step reads no trees")
        return None

    def heal(self, kind: str, value: str, function: str | None) -> tuple[tuple[int, int] | None, str]:
        step = self.session.current_step
        if step is None or step.expect is None:
            return None, "not healed: healing needs a guistate step with expect= to verify the effect"
        before = self.session.observe()
        result = self.healer.heal(before, Locator(kind, value), function, app=before.package or None)
        if not result.ok or result.point is None:
            return None, result.reason
        self.acting_on(result, before)
        if self._healed and self._healed[-1].result is result:  # a scripted test's call: propose the edit
            self._healed[-1].site = call_site()
            self._healed[-1].locator = (kind, value)
        return result.point, ""

    # -- called by the action cache (LLM-driven steps tap points, not locators) -----------------
    def learn_passed(self, kind: str, value: str, box: Box, function: str | None, before: Observation, *,
                     step_name: str, outcome: str) -> None:
        """An LLM-driven step on the element at `box` passed: learn its look as a located tap's.
        Called after the step ended (the actor's observer), so it is settled here, not in `on_step`."""
        if outcome in SUCCESS:
            self._learn(_Found(-1, before, Locator(kind, value), box, function), step_name)

    def heal_on(self, observation: Observation, kind: str, value: str, function: str | None, *,
                instance: frozenset[str] = frozenset()) -> HealResult:
        """Heal against a screen the caller already judged: a replayed cached step decides hit or
        miss before its step starts; acting on the result is `acting_on`. `instance`: see `Healer.heal`."""
        return self.healer.heal(observation, Locator(kind, value), function, app=observation.package or None,
                                instance=instance or None)

    def acting_on(self, result: HealResult, before: Observation, *, edit: dict[str, Any] | None = None) -> None:
        """The current step acts on `result`: its end confirms the heal or records a false heal prevented.
        `edit`: a replayed cache step's place in its file and new target (the heal proposes that edit)."""
        step = self.session.current_step
        if step is not None and result.ok:
            self._healed.append(_Healed(step.index, before, result, edit=edit))

    # -- session listener --------------------------------------------------------------------
    def on_step(self, record: Any) -> None:
        ok = record.outcome in SUCCESS
        learnt = [f for f in self._found if f.step == record.index] if ok else []
        # beside the test (issue 42): nothing the step's verdict waits for; a look whose screen still
        # has a tree to read is learnt here (that read is the driver's, on this thread)
        beside = [f for f in learnt if f.box is None or f.before.tree_fetched]
        for item in learnt:
            if not any(item is b for b in beside):
                self._learn(item, record.name)
        if beside:
            def learn(name: str = record.name) -> None:
                for item in beside:
                    self._learn(item, name)
            self.healer.store.beside(f"learning step {record.index}'s looks ({record.name!r})", learn)
        for healed in [h for h in self._healed if h.step == record.index]:
            self._settle_heal(record, healed, ok)
        self._found = [f for f in self._found if f.step != record.index]
        self._healed = [h for h in self._healed if h.step != record.index]

    def _learn(self, item: _Found, step_name: str) -> None:
        if item.box is None:
            key = function_key(item.locator, item.function)
            if refresh_kept(self.healer.store, item.before, key).entry_id is None:
                self._relearn.add(key)
                self.unlearned.append(f"{item.locator}: its kept look is not in the before-frame; "
                                      "its next tap in this test learns it from the element")
            return
        learnt = self.healer.learn(item.before, item.locator, item.box, item.function, app=item.before.package,
                                   version=self.app_version, test=self.nodeid, step=step_name)
        if learnt.entry_id is not None:
            remember_place(self.healer.store, learnt.entry_id, item.box)  # where a refresh looks first

    def _settle_heal(self, record: Any, healed: _Healed, ok: bool) -> None:
        result = healed.result
        crops = []
        for label, png in (("remembered", result.variant_png), ("matched", result.match_png)):
            if png:
                name = crop_name(record.index, label=f"heal-{label}")
                self.session.artifacts.put(name, png)
                record.crops.append(name)  # written with the step by the recorder
                crops.append(name)
        status = "healed" if ok else "false_heal_prevented"
        title = result.title() if ok else f"false heal prevented: {result.locator} (the expected effect did not appear)"
        proposal = None
        if ok and healed.site is not None:  # the heal's effect showed: the test file's locator should change
            proposal = propose(healed.site, *healed.locator, healed.before.tree, result.node, self.nodeid)
        elif ok and healed.edit is not None:  # a replayed cache step: its cache file's target should change
            proposal = propose_cache_edit(healed.edit, self.nodeid)
        detail = result.reason + (f"; {proposal.line_text()}" if proposal is not None else "")
        if proposal is not None:
            record.heal = proposal.line_text()  # the step's own record: the journal, the viewer, Allure
        self.session.journal.anchor(AnchorType.EXCEPTION, title, step_index=record.index, crops=crops,
                                    detail=detail, data={**result.to_dict(), "kind": "heal", "status": status,
                                                         **({"proposal": proposal.to_dict()} if proposal else {})})
        if ok:
            self.healer.confirm(result, healed.before, version=self.app_version, test=self.nodeid, step=record.name)
        self.heals.append({"locator": str(result.locator), "function": result.function, "status": status,
                           "score": round(float(result.score or 0.0), 3), "step": record.index, "title": title,
                           **({"proposal": proposal.to_dict()} if proposal else {})})
