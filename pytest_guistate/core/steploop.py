"""The verification loop of one step: judge, settle, refresh (refresh before retry: TSR, seed 000, figure 2).

`StepLoop.verify` answers one question for the session: after this action, is the expected
effect on screen? It judges the first look; if unmet it waits for the screen to settle and
looks again; if still unmet it refreshes (step callable, session callable, hook, else
pull-to-refresh when a scrollable list is on screen) and looks again. It never repeats the
action: whether a retry is allowed is `TaskSession.perform`'s decision, made on the evidence
this loop returns (`Verification.proven_no_effect`).

"Met" means: the expect check passes; with no expect and transition gating on, the oracle saw a
visible change vs the before-frame; with gating off (tier light/off), met.

Page sources (issue 24): a step whose frames did not change reads no tree; the stability probe
places its flicker with the after-tree already read; at standard a step reads at most one (its
after-tree, which is the next step's before-tree while the screen is unchanged).

Without `step_trees` (light) the oracle reads no page source of its own: the expect runs first
(what it read, the oracle uses), the status bar comes from `StatusBars`, and `complete` snaps
an unmet look's regions once its tree is read (see `tiers.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from contextlib import suppress
from dataclasses import dataclass, field, replace

from pytest_guistate.core.checks import Check, CheckResult
from pytest_guistate.core.detect import appeared_in, refreshable_list, undrawn_change
from pytest_guistate.core.detectors import DetectFn
from pytest_guistate.core.frame import Frame, FrameError
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation, Screen, TreeExpired
from pytest_guistate.core.oracle import VisualOracle
from pytest_guistate.core.oracle_dim import find_overlay
from pytest_guistate.core.oracle_mask import StatusBars, steady_keyboard
from pytest_guistate.core.oracle_pixels import PixelWork
from pytest_guistate.core.oracle_types import Transition
from pytest_guistate.core.records import Attempt, StepRecord
from pytest_guistate.core.settle import Clock, SettlePolicy, SettleResult, settle
from pytest_guistate.core.threads import own_thread
from pytest_guistate.core.tiers import TierPolicy
from pytest_guistate.core.uitree import UITree

__all__ = ["VERDICTS", "Judgement", "SessionHooks", "StepLoop", "Verification"]

VERDICTS = ("changed", "no_change", "uncertain")
RefreshFn = Callable[[], object]

MOTION_BOUND_S = 1.5  # how long a met step's evidence may wait for its screen to stop moving (a fade, a slide)


@dataclass
class SessionHooks:
    """Optional callables the pytest layer fills from pluggy hooks (all may be None).

    - `extra_ignore_regions(obs) -> list[Box]`: regions the oracle must ignore (ads, clocks).
    - `refresh(screen, obs) -> bool | None`: refresh the screen; None = not handled.
    - `transition_check(before_obs, after_obs, transition, expect) -> str | None`: a verdict
      override ("changed" / "no_change" / "uncertain"), None = keep the oracle's.
    - `detect_anchors(record, before_obs, after_obs, transition) -> list[DetectedAnchor]`: extra
      anchors of a closed step (see `detectors.py`).
    """

    extra_ignore_regions: Callable[[Observation], Sequence[Box]] | None = None
    refresh: Callable[[Screen, Observation], bool | None] | None = None
    transition_check: Callable[[Observation, Observation, Transition, Check | None], str | None] | None = None
    detect_anchors: DetectFn | None = None


@dataclass
class Judgement:
    met: bool
    verdict: str | None
    transition: Transition | None
    expect_result: CheckResult | None

    @property
    def evidence(self) -> str:
        if self.expect_result is not None:
            return self.expect_result.evidence
        if self.transition is not None:
            return "; ".join(self.transition.notes) or f"oracle: {self.verdict}"
        return ""


@dataclass
class Verification:
    """What the loop concluded. `stage` is the last look: initial | settle | refresh | wait
    ("wait": nothing could refresh, so the loop waited for the effect up to the settle timeout)."""

    met: bool
    stage: str
    after: Observation
    judgement: Judgement
    refreshed_by: str = ""
    unstable: list[Box] = field(default_factory=list)
    # changes the first after-frame showed that were gone one frame later, the page source naming nothing
    # new there (`StepLoop._probe`): maybe the action's effect that ended, so never proof of no effect
    ended: list[Box] = field(default_factory=list)
    # a first look judged beside the test (`StepLoop.judge_beside`): `judgement` is met with no verdict
    # until the session takes this one's result in its place (`TaskSession`)
    pending: Future[Judgement] | None = None

    def proven_no_effect(self, expect: Check | None) -> bool:
        """True only when the evidence shows the action did not take effect (TSR: no blind retry):
        the expect is still unmet, or with no expect the oracle still sees no change at all, and no
        change the first after-frame showed ended before the probe could tell effect from flicker."""
        if self.met or self.ended:
            return False
        if expect is not None:
            return self.judgement.expect_result is not None and not self.judgement.expect_result.ok
        return self.judgement.verdict == "no_change"


@dataclass
class _Probe:
    """What the stability probe found: `unstable` (set aside when judging), of which `ended` (gone in
    the probe's frame, unexplained: `Verification.ended`), notes for the transition, the probe's frame."""

    again: Observation
    unstable: list[Box] = field(default_factory=list)
    ended: list[Box] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class _KnownBars:
    """The oracle for settle polls of a step that reads no trees: the status bar from `StatusBars`."""

    oracle: VisualOracle
    bars: StatusBars

    def compare(self, before: Frame, after: Frame, tree: UITree | None = None, *, ignore: Sequence[Box] = (),
                unstable: Sequence[Box] = ()) -> Transition:
        width, height = after.size
        return self.oracle.compare(before, after, tree, ignore=ignore, unstable=unstable,
                                   status_bars=self.bars.boxes(tree, width, height))


class StepLoop:
    """Judging and recovery for the session; holds no per-test state of its own."""

    def __init__(
        self,
        screen: Screen,
        oracle: VisualOracle,
        policy: TierPolicy,
        settle_policy: SettlePolicy,
        clock: Clock,
        hooks: SessionHooks,
        observe: Callable[[str], Observation],
        note_action: Callable[[str], None],
        *,
        probe: bool = True,
        poll: Callable[[str], Observation] | None = None,
    ) -> None:
        self.screen = screen
        self.oracle = oracle
        self.policy = policy
        self.settle_policy = settle_policy
        self.clock = clock
        self.hooks = hooks
        self._observe = observe
        self._poll = poll or observe  # a settle poll (`TaskSession._observe_poll`)
        self._note_action = note_action
        self.probe = probe
        # light: the bar learnt from the trees that were read
        self.status_bars = StatusBars(str(getattr(screen, "platform", "") or ""))
        self._last_ignored: list[Box] = []  # the ignore hook's latest answer: the pixels ahead predict it holds

    def ignore(self, observation: Observation) -> list[Box]:
        if self.hooks.extra_ignore_regions is None:
            return []
        boxes = list(self.hooks.extra_ignore_regions(observation))
        for box in boxes:
            if not isinstance(box, Box):
                raise TypeError(f"extra_ignore_regions hook returned {box!r}; expected Box instances")
        self._last_ignored = boxes
        return boxes

    def judge(
        self, before: Observation | None, after: Observation, expect: Check | None, *, unstable: Sequence[Box] = (),
        trees: bool = True, previous: Observation | None = None,
    ) -> Judgement:
        """`trees=False` (a light step no check reads the trees of): the oracle fetches no page source.
        `previous`: the settle poll just before `after` (`SettleResult.previous`)."""
        transition: Transition | None = None
        verdict: str | None = None
        lazy = not trees
        # light, a check that reads no tree (a find): the oracle's pixels-only compare runs while it asks;
        # not with an ignore hook, which is asked about the after-screen after the check (it may read the tree)
        beside_find = (lazy and expect is not None and self.policy.compare and before is not None
                       and not after.tree_fetched and self.hooks.extra_ignore_regions is None)
        # the check first: its tree serves the oracle
        expect_result = expect(after) if expect is not None and lazy and not beside_find else None
        if self.policy.compare and before is not None:
            compare = self._compare_call(before, after, unstable, lazy and not after.tree_fetched, previous)
            if beside_find:
                assert expect is not None
                pending = own_thread("guistate-judge").submit(compare)
                expect_result = expect(after)
                transition = pending.result()
                if after.tree_fetched:  # the find could not decide and the check read the tree: the oracle uses it
                    transition = self._compare(before, after, unstable, False, previous)
            elif expect is not None and not lazy and (before.tree_fetched or not self.policy.step_trees):
                # the expect (a find, or the tree already read) runs while the oracle compares on its
                # thread (issue 42): neither reads what the other writes; the oracle's inputs were taken
                # above, and its dim test reads only a before-tree already read
                pending = own_thread("guistate-judge").submit(compare)
                expect_result = expect(after)  # raising, it leaves the compare to end on its own: pure work
                transition = pending.result()
            else:
                transition = compare()
            verdict = transition.verdict
            if self.hooks.transition_check is not None:
                override = self.hooks.transition_check(before, after, transition, expect)
                if override is not None:
                    if override not in VERDICTS:
                        raise ValueError(f"transition_check hook returned {override!r}; expected one of {VERDICTS}")
                    verdict = override
        if expect is not None and not lazy and expect_result is None:
            expect_result = expect(after)
        if expect_result is not None:
            met = expect_result.ok
        elif self.policy.gate_transitions:
            met = verdict == "changed"
        else:
            met = True
        return Judgement(met, verdict, transition, expect_result)

    def _compare(self, before: Observation, after: Observation, unstable: Sequence[Box], pixels_only: bool,
                 previous: Observation | None = None) -> Transition:
        """The oracle on one pair; `pixels_only`: without the after-tree (not read: light tier)."""
        return self._compare_call(before, after, unstable, pixels_only, previous)()

    def _compare_call(self, before: Observation, after: Observation, unstable: Sequence[Box], pixels_only: bool,
                      previous: Observation | None = None) -> Callable[[], Transition]:
        """`_compare` in two halves: what it reads of the session (the ignore hook, trees already read,
        the status bar learnt) is taken now; the oracle's work is the callable returned, which touches
        only the frames and what was taken, so another thread may run it (`judge_beside`)."""
        if before.frame.same_bytes(after.frame):
            # nothing changed to snap: a step whose frames did not change reads no tree; at standard
            # and full the before-tree (already read) stands for the identical after-screen, so the
            # journal's package, route and dialog detectors read no page source either (issue 24)
            if self.policy.step_trees and before.tree_fetched and not after.tree_fetched:
                after.tree = before.tree
            tree = _tree_if_known(after)
            ahead = None
        else:
            ahead = self._pixels_ahead(before, after)  # while the page source below is read
            tree = None if pixels_only and not self.policy.step_trees else after.tree
            if ahead is not None:
                ahead[0].want()
        ignore = [*self.ignore(after), *steady_keyboard(_tree_if_known(before), tree)]
        earlier = previous.frame if previous is not None else None
        if self.policy.step_trees:
            return lambda: self.oracle.compare(
                before.frame, after.frame, tree, ignore=ignore, unstable=unstable,
                before_tree=lambda: before.tree,  # read only when the whole screen dimmed / undimmed
                previous=earlier, work=_done(ahead),
            )
        width, height = after.frame.size
        known_before = _tree_if_known(before)
        bars = self.status_bars.boxes(tree, width, height)
        return lambda: self.oracle.compare(before.frame, after.frame, tree, ignore=ignore, unstable=unstable,
                                           before_tree=lambda: known_before, previous=earlier, status_bars=bars)

    def _pixels_ahead(self, before: Observation, after: Observation) -> tuple[PixelWork, Future[None]] | None:
        """Standard and full: the compare's pixels, started on the judge thread before the
        after-screen's page source is read (issue 42), with the inputs the before-tree predicts:
        the bars and a steady keyboard where they were, a dialog of the before-screen closing, and
        the ignore hook answering as it last did (it is asked about the after-screen only once its
        tree is read: user code may read it). The compare finds them done where the after-screen
        agrees (`PixelWork`); its result is the same either way."""
        if not self.policy.step_trees or after.tree_fetched or not before.tree_fetched:
            return None
        before_tree = before.tree
        work = PixelWork(before.frame, after.frame, self.oracle.config)
        ignore = [*self._last_ignored, *steady_keyboard(before_tree, before_tree)]

        def ahead() -> None:
            self.oracle.prepare(work, before_tree, ignore=ignore, before_tree=before_tree)
            with suppress(FrameError):  # a frame OpenCV cannot decode: the compare names it
                after.frame.block_hash(self.oracle.config.scale_divisor)  # the cycle guard's fingerprint of it
        return work, own_thread("guistate-judge").submit(ahead)

    def judges_beside(self, before: Observation, after: Observation, expect: Check | None, trees: bool) -> bool:
        """Whether nothing waits for this first look's verdict, so it may be judged beside the test
        (issue 42): the tier does not gate transitions (light), the step has no check and reads no
        tree, and no `transition_check` hook overrides verdicts (user code runs on the test's
        thread). Such a step is met whatever the oracle says: the verdict, its regions and crops
        are its record's, nothing more. Frames of different sizes are judged at once: that error
        (a rotation) is the step's own."""
        return (expect is None and not trees and self.policy.compare
                and not self.policy.gate_transitions and self.hooks.transition_check is None
                and before.frame.size == after.frame.size)

    def judge_beside(self, before: Observation, after: Observation) -> Future[Judgement]:
        """The first look of a step `judges_beside` allows, judged on the `guistate-judge` thread
        while the test goes on; the result is what `judge` would have returned (met: nothing gates
        it). The session reads it before anything else is recorded (`TaskSession`, `Journal.close_later`)."""
        compare = self._compare_call(before, after, (), True)

        def judged() -> Judgement:
            transition = compare()
            return Judgement(True, transition.verdict, transition, None)
        return own_thread("guistate-judge").submit(judged)

    def complete(self, before: Observation | None, verification: Verification, *, trees: bool) -> None:
        """Light tier, an unmet look: read its after-tree now, while that screen is current (a
        failure report needs it: redaction, crops snapped to containers) and, when the oracle
        judged by pixels alone and found regions, judge again with the tree. Verdict overrides
        of the hook are kept as they were."""
        after, judgement = verification.after, verification.judgement
        if trees or after.tree_fetched or after.tree_available is False:
            return
        try:
            _ = after.tree
        except TreeExpired:
            return  # the screen moved on: the recorder fills the whole frame rather than guess
        transition = judgement.transition
        if before is None or transition is None or not transition.regions:
            return
        snapped = self._compare(before, after, verification.unstable, False)
        if judgement.verdict == transition.verdict:
            judgement.verdict = snapped.verdict
        judgement.transition = snapped

    def _probe_due(self, after: Observation, judgement: Judgement) -> bool:
        """Whether a small no-expect change decides the step, so the stability probe looks again."""
        t = judgement.transition
        if not self.probe or t is None or judgement.expect_result is not None or not self.policy.gate_transitions:
            return False
        if judgement.verdict not in ("changed", "uncertain") or t.identical_bytes or not t.regions:
            return False
        width, height = after.frame.size
        changed = Box.union_all(r.raw for r in t.regions)
        return changed is not None and changed.area <= self.oracle.config.max_unstable_fraction * width * height

    def _probe(self, before: Observation, after: Observation, judgement: Judgement) -> _Probe:
        """Stability probe, only when a small no-expect change decides the step: one more frame
        with no action; what differs between the two is flicker (banner, spinner), not effect.

        Except a change that is gone in the probe's frame (its pixels are the before-frame's again): a
        toast that ended between the two frames looks the same as a blink. When the after-tree (read
        for the change just judged) shows words there that the before-tree did not, it was the action's
        effect, seen before it ended: not flicker. Otherwise the probe cannot tell, and that change is
        `ended`: set aside like flicker, but never proof that the action had no effect (a retry would
        repeat an action whose effect was on screen). How far apart the two frames are is the machine's
        doing (a loaded one takes seconds), so the decision must not hang on whether the toast outlived
        the gap."""
        if not self._probe_due(after, judgement):
            return _Probe(again=after)
        self.clock.sleep(self.settle_policy.interval_s)
        again = self._observe("stability probe")
        # no action in between: `after`'s tree (read for the change just judged) places the flicker,
        # so the probe costs a screenshot and no page source of its own
        tree = again.tree if again.tree_fetched else _tree_if_known(after)
        if tree is not None and not again.tree_fetched and again.frame.same_bytes(after.frame):
            again.tree = tree  # the same screen, no input: the next step's before-tree is already read
        moved = self.oracle.unstable_regions(after.frame, again.frame, tree, ignore=self.ignore(again))
        if not moved:
            return _Probe(again=again)
        still = self.oracle.unstable_regions(before.frame, again.frame, tree, ignore=self.ignore(again))
        gone = [box for box in moved if not any(box.intersects(other) for other in still)]
        before_tree, after_tree = _tree_if_known(before), _tree_if_known(after)
        probe = _Probe(again=again)
        for box in moved:
            node = None
            if box in gone and before_tree is not None and after_tree is not None:
                node = appeared_in(before_tree, after_tree, box)
            where = box.to_bounds()
            if node is not None:
                probe.notes.append(f"{(node.text or node.content_desc)!r} at {where} was gone one frame later: "
                                   "the action's effect, seen before it ended (not flicker)")
                continue
            probe.unstable.append(box)
            if box in gone:
                probe.ended.append(box)
                probe.notes.append(f"the change at {where} was gone one frame later and the page source names "
                                   "nothing new there: flicker or an effect that ended, not proof of either")
        return probe

    def _after_motion(self, before: Observation, after: Observation, expect: Check | None, judgement: Judgement,
                      trees: bool, *, since: float) -> tuple[Observation, Judgement]:
        """Evidence after the motion (issue 34): the expectation held at once, but the screen says it
        is still animating (a dialog fading in, a sheet sliding): the after-frame kept for regions and
        crops is the one once the frames stop changing, within `MOTION_BOUND_S`. Only a screen that
        can tell (`in_motion()`, the web) is asked, one cheap question; where nothing moves, nothing
        waits. If the expectation no longer holds on the settled frame, the first judgement stands.
        A no-expect step whose small change the stability probe would judge is asked too: a switch's
        knob still sliding differs in the probe's frame, and was taken for flicker (a stale screen).
        A dialog that appeared is looked at once more even when nothing is listed as moving: UI5 Web
        Components' popups open faint under a class a timer drops 50 ms later (no animation), and the
        dialog's crop was that faint first frame; while the page still says it moves after the frames
        held still (a dialog kept faint longer), the look goes on within the same bound.

        Wait only for what is not yet drawn (issue 42): with nothing listed as moving, the look again
        comes one poll interval after `since` (the action had returned; the after-frame was asked for
        later), not one interval after this step's screenshot and judgement: the time they took is
        time the screen had to draw (UI5's timer runs from the popup's opening, in the action). A look
        again whose bytes are the after-frame's keeps the first judgement (the same pixels, the same
        tree: judging them again repeats it). A page that says it changed nothing since the after-frame
        was asked for (`drawn_when_shot`: a browser page its scripts watch) is not looked at again: that
        frame is what the screen still shows."""
        in_motion = getattr(self.screen, "in_motion", None)
        if in_motion is None:
            return after, judgement
        moving = in_motion()
        if moving is None or not (moving or _dialog_appeared(before, after)):
            return after, judgement
        drawn = getattr(self.screen, "drawn_when_shot", None)
        if not moving and drawn is not None and drawn(after):
            return after, judgement  # the page changed nothing since the after-frame was asked for
        bound = self._motion_bound()
        deadline = self.clock.monotonic() + bound.timeout_s
        waited = None if moving else bound.interval_s - (self.clock.monotonic() - since)
        result = self._settle(after, bound, trees, stop_when_stable=True, first_wait_s=waited)
        # still frames, yet the page says it still moves (a dialog held faint a while): look on, and
        # once it says it stopped, once more: the frame before that answer may predate the stop
        moved = False  # an animation that ended is placed by its end time (in_motion): no look more
        while result.stable and self.clock.monotonic() < deadline:
            still = bool(in_motion())
            if not (still or moved):
                break
            moved = still
            left = replace(bound, timeout_s=max(deadline - self.clock.monotonic(), bound.interval_s))
            result = self._settle(result.observation, left, trees, stop_when_stable=True)
        if result.observation is after or result.observation.frame.same_bytes(after.frame):
            return after, judgement
        settled = self.judge(before, result.observation, expect, trees=trees)
        return (result.observation, settled) if settled.met else (after, judgement)

    def _through_motion(self, before: Observation, after: Observation, expect: Check, judgement: Judgement,
                        trees: bool) -> tuple[Observation, Judgement]:
        """The first look is unmet while the screen says it is animating (a backdrop fading in before
        its dialog is shown, as Bootstrap's modal does): that look was taken mid-motion, not on a
        stale screen. The first look waits, within `MOTION_BOUND_S`, until the expectation holds or
        the frames stop changing. A met look then waits again for the frames to stop changing and
        keeps that frame: the frame the check first held on can show the dialog still sliding in (a
        finished CSS transition leaves `getAnimations()`, so a later motion question says "still"),
        or the list before its redraw (the check reads the page after the screenshot). An expectation
        still unmet settles and refreshes as before (and is a stale screen)."""
        in_motion = getattr(self.screen, "in_motion", None)
        if in_motion is None or not in_motion():
            return after, judgement
        bound = self._motion_bound()
        moved = self._settle(after, bound, trees, until=lambda obs: expect(obs).ok, stop_when_stable=True)
        judged = self.judge(before, moved.observation, expect, trees=trees, previous=moved.previous)
        if not judged.met:
            return moved.observation, judged
        calm = self._settle(moved.observation, bound, trees, stop_when_stable=True)
        if calm.observation is not moved.observation:
            settled = self.judge(before, calm.observation, expect, trees=trees, previous=calm.previous)
            if settled.met:
                return calm.observation, settled
        return moved.observation, judged

    def _motion_bound(self) -> SettlePolicy:
        """The settle policy of a met step's wait for its evidence: at most `MOTION_BOUND_S`."""
        return replace(self.settle_policy, timeout_s=min(MOTION_BOUND_S, self.settle_policy.timeout_s))

    def _settle(self, start: Observation, policy: SettlePolicy, trees: bool, *, stop_when_stable: bool,
                until: Callable[[Observation], bool] | None = None, placed_by: UITree | None = None,
                first_wait_s: float | None = None) -> SettleResult:
        """`settle` on this loop's screen, clock, ignore regions and frame tracking; a step that reads
        no trees (light) compares with the status bars already known (`_KnownBars`)."""
        oracle = self.oracle if trees else _KnownBars(self.oracle, self.status_bars)
        return settle(self.screen, oracle, start, policy, self.clock, ignore=self.ignore, observe=self._poll,
                      until=until, stop_when_stable=stop_when_stable, trees=trees, placed_by=placed_by,
                      first_wait_s=first_wait_s)

    def _until_drawn(self, before: Observation, after: Observation, expect: Check, judgement: Judgement,
                     trees: bool) -> tuple[Observation, Judgement]:
        """The expectation held, yet the pixels show no change while the page source shows something
        new on screen: the frame was taken before the screen drew it (a dialog whose fade had not
        begun: the tree is written at once, the pixels a frame or more later). The screen wins: the
        after-frame kept as evidence is the first that shows a change, within `MOTION_BOUND_S`;
        if none does, the step keeps its first judgement and its transition says what was not drawn."""
        t = judgement.transition
        if judgement.verdict != "no_change" or t is None or not before.tree_fetched:
            return after, judgement
        if not (trees or after.tree_fetched):
            return after, judgement  # light: no page source read for this question
        try:
            before_tree, after_tree = before.tree, after.tree
        except TreeExpired:
            return after, judgement
        if before_tree is None or after_tree is None:
            return after, judgement
        node = undrawn_change(before_tree, after_tree, [*t.ignored, *t.unstable])
        if node is None:
            return after, judgement
        bound = self._motion_bound()

        def drawn(obs: Observation) -> bool:
            return self.oracle.compare(before.frame, obs.frame, before_tree, ignore=self.ignore(obs),
                                       unstable=t.unstable).verdict != "no_change"
        result = self._settle(after, bound, trees, until=drawn, stop_when_stable=False, placed_by=after_tree)
        if result.stopped_early:
            settled = self.judge(before, result.observation, expect, trees=trees, previous=result.previous)
            if settled.met:
                return result.observation, settled
        what = next((n.text or n.content_desc for n in node.walk() if n.text or n.content_desc), node.cls)
        t.notes.append(f"the page source shows {what!r} on screen; the screen did not draw a change "
                       f"within {bound.timeout_s:.1f} s")
        return after, judgement

    def verify(
        self,
        record: StepRecord,
        before: Observation | None,
        after: Observation,
        expect: Check | None,
        refreshers: Sequence[tuple[str, RefreshFn | None]],
        *,
        stage: str = "initial",
        acted_at: float | None = None,
    ) -> Verification:
        """Judge `after`; settle and refresh while unmet. Appends an `Attempt` per look to `record`.
        `acted_at`: when the action had returned, before `after` was asked for (None: when this
        call began)."""
        started = self.clock.monotonic()
        trees = record.reads_trees
        judgement = self.judge(before, after, expect, trees=trees)
        first = after  # asked for after `acted_at`; a later frame (a wait below) since it was judged
        unstable: list[Box] = []
        if not judgement.met and before is not None and expect is not None:
            after, judgement = self._through_motion(before, after, expect, judgement, trees)
        latest = after  # the newest frame: settling continues from it
        if judgement.met and before is not None and expect is not None:
            after, judgement = self._until_drawn(before, after, expect, judgement, trees)
        if judgement.met and before is not None and (expect is not None or self._probe_due(after, judgement)):
            since = (started if acted_at is None else acted_at) if after is first else self.clock.monotonic()
            after, judgement = self._after_motion(before, after, expect, judgement, trees, since=since)
            latest = after
        ended: list[Box] = []
        if judgement.met and before is not None:
            probe = self._probe(before, after, judgement)
            unstable, ended, latest = probe.unstable, probe.ended, probe.again
            if unstable:
                judgement = self.judge(before, after, expect, unstable=unstable, trees=trees)
            if judgement.transition is not None:
                judgement.transition.notes.extend(probe.notes)
            if ended and not judgement.met:
                judgement.verdict = "uncertain"  # a change was on screen: not `no_change`
        self._attempt(record, stage, judgement, started)
        if judgement.met:
            return Verification(True, stage, after, judgement, unstable=unstable)
        verification = self._recover(record, before, after, latest, expect, unstable, refreshers, judgement)
        verification.ended = ended
        return verification

    def _recover(self, record: StepRecord, before: Observation | None, after: Observation, latest: Observation,
                 expect: Check | None, unstable: list[Box], refreshers: Sequence[tuple[str, RefreshFn | None]],
                 judgement: Judgement) -> Verification:
        """An unmet first look: settle and judge again, then refresh (or, with nothing to refresh, wait
        for the effect) and judge again; the action is never repeated here."""
        if self.policy.settle:
            # with a refresh to follow, stop at the first still screen and refresh (TSR fig. 2);
            # with none, wait for the effect itself up to the settle timeout
            wait = not self.policy.refresh
            verification = self._settle_and_judge(record, before, latest, expect, unstable, "settle", wait=wait,
                                                  judged=after)
            if verification.met or not self.policy.refresh:
                return verification
            after = verification.after
        if self.policy.refresh:
            started = self.clock.monotonic()
            how = self.refresh(after, refreshers)
            if how:
                verification = self._settle_and_judge(record, before, self._observe("after refresh"), expect, unstable,
                                                      "refresh", wait=False, refreshed_by=how, started=started,
                                                      judged=after)
                return verification
            record.attempts[-1].refreshed_by = "nothing to refresh"
            return self._settle_and_judge(record, before, after, expect, unstable, "wait", wait=True, judged=after)
        return Verification(judgement.met, record.attempts[-1].stage, after, judgement, unstable=unstable)

    def _settle_and_judge(
        self, record: StepRecord, before: Observation | None, start: Observation, expect: Check | None,
        unstable: list[Box], stage: str, *, wait: bool, refreshed_by: str = "", started: float | None = None,
        judged: Observation | None = None,
    ) -> Verification:
        """Settle from `start` and judge the screen it settles on. `judged`: the step's last judged
        screen, whose tree (read for that judgement) places the polls' ignored regions when `start`'s
        is not read (settle's `placed_by`): the polls read no page source of their own."""
        started = self.clock.monotonic() if started is None else started
        trees = record.reads_trees
        until = self._until(before, expect, unstable, trees) if wait else None
        result = self._settle(start, self.settle_policy, trees, until=until, stop_when_stable=not wait,
                              placed_by=_tree_if_known(judged) if judged is not None else None)
        # a settled screen has no flicker left: judge without probe regions; a screen that never
        # settled keeps flickering, so the probe's regions still apply
        judgement = self.judge(before, result.observation, expect, unstable=() if result.stable else unstable,
                               trees=trees, previous=result.previous)
        self._attempt(record, stage, judgement, started, polls=result.polls, refreshed_by=refreshed_by)
        return Verification(judgement.met, stage, result.observation, judgement, refreshed_by=refreshed_by,
                            unstable=unstable)

    def _until(self, before: Observation | None, expect: Check | None, unstable: Sequence[Box],
               trees: bool) -> Callable[[Observation], bool]:
        """What ends a settle that waits for the effect, asked of each poll at the least cost that
        answers it: with an expect, the expect alone decides "met" (`judge`), so the oracle is not
        run on the poll (a locator check is a find where the screen answers finds; a check that
        needs the tree reads the poll's own). With none, a poll whose pixels show no change against
        the before-screen (placed by the before-tree) is unmet without its own tree; any other is
        judged in full, with its own tree (and the hook's verdict)."""
        if expect is not None:
            return lambda obs: expect(obs).ok

        def met(obs: Observation) -> bool:
            if (trees and before is not None and self.policy.gate_transitions and self.policy.compare
                    and self.hooks.transition_check is None and not obs.tree_fetched):
                pixels = self.oracle.compare(before.frame, obs.frame, _tree_if_known(before), ignore=self.ignore(obs),
                                             unstable=unstable)
                if pixels.verdict == "no_change":  # a wrong "no" only waits longer: the last poll is judged in full
                    return False
            return self.judge(before, obs, expect, unstable=unstable, trees=trees).met
        return met

    def refresh(self, observation: Observation, refreshers: Sequence[tuple[str, RefreshFn | None]]) -> str:
        """Run the first available refresh; returns what refreshed, or "" if nothing could."""
        for label, fn in refreshers:
            if fn is not None:
                self._note_action(f"refresh ({label})")
                return "" if fn() is False else label
        if self.hooks.refresh is not None:
            handled = self.hooks.refresh(self.screen, observation)
            if handled is not None:
                self._note_action("refresh (hook)")
                return "refresh hook" if handled else ""
        if refreshable_list(observation.tree) is not None:
            self._note_action("refresh (pull-to-refresh)")
            return "pull-to-refresh" if self.screen.pull_to_refresh() else ""
        return ""

    def record_attempt(self, record: StepRecord, stage: str, judgement: Judgement, ended: float) -> None:
        """The attempt of a look judged beside the test, once judged: none of its time was the step's
        (`ended`: when the step ended)."""
        self._attempt(record, stage, judgement, ended, ended=ended)

    def _attempt(
        self, record: StepRecord, stage: str, judgement: Judgement, started: float, *, polls: int = 0,
        refreshed_by: str = "", ended: float | None = None,
    ) -> None:
        # the items' boxes: a scrim (the dimmed screen behind a dialog) is no place the step acted on
        regions = [r.box.as_list() for r in judgement.transition.regions if r.kind != "scrim"] \
            if judgement.transition else []
        record.attempts.append(Attempt(
            stage=stage,
            verdict=judgement.verdict,
            expect_ok=None if judgement.expect_result is None else judgement.expect_result.ok,
            evidence=judgement.evidence,
            met=judgement.met,
            regions=regions,
            polls=polls,
            refreshed_by=refreshed_by,
            elapsed_s=(self.clock.monotonic() if ended is None else ended) - started,
        ))


def _dialog_appeared(before: Observation, after: Observation) -> bool:
    """A dialog is in the after-tree and not in the before-tree; only trees already read are asked."""
    if not (before.tree_fetched and after.tree_fetched):
        return False
    try:
        overlay = find_overlay(before.tree, after.tree)
    except TreeExpired:
        return False
    return overlay is not None and overlay.change == "appeared"


def _done(ahead: tuple[PixelWork, Future[None]] | None) -> PixelWork | None:
    """The work ahead once it has ended (at once on the judge thread: it ran first)."""
    if ahead is None:
        return None
    ahead[1].result()
    return ahead[0]


def _tree_if_known(observation: Observation) -> UITree | None:
    """A light step's before-tree for the dim test, only if already read: a pixels-only step
    fetches no page source (and the before-screen has usually moved on by now)."""
    return observation.tree if observation.tree_fetched else None
