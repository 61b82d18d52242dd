"""Waiting for the screen to settle: poll frames until they stop changing, within a bound.

TSR figure 2, step 1: after an action with no (or uncertain) visible effect, wait until frames
stop changing before judging. "Stop changing" means `stable_frames` consecutive frames the
oracle calls `no_change` (identical bytes first, which costs nothing; the oracle already ignores
the status bar and a focused field's cursor). Nothing is learnt as "unstable" while settling: a
spinner that keeps turning is a screen still loading (pull-to-refresh), and a late one-off change
(a tick appearing) is the action's effect; both must keep the loop waiting, never be masked.
Known flicker (an animated banner) belongs in ignore regions (hook `extra_ignore_regions`).

Time goes through a `Clock` so tests (and the simulated phone) can run on a virtual clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation, Screen
from pytest_guistate.core.oracle_types import Transition
from pytest_guistate.core.uitree import UITree

__all__ = ["Clock", "SettlePolicy", "SettleResult", "SystemClock", "VirtualClock", "settle"]


class Clock(Protocol):
    """Monotonic time and sleep; inject a virtual clock in tests."""

    def monotonic(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


class VirtualClock:
    """A clock that only moves when slept on: tests and the simulated phone share it
    (`Phone(clock=vc)` calls it; the session sleeps on it), so waiting costs no real time."""

    def __init__(self, start: float = 1000.0) -> None:
        self.t = float(start)

    def __call__(self) -> float:
        return self.t

    def monotonic(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError(f"cannot sleep a negative time ({seconds})")
        self.t += seconds

    advance = sleep


@dataclass(frozen=True)
class SettlePolicy:
    """Bounds of one settle: give up after `timeout_s`; poll every `interval_s`."""

    timeout_s: float = 3.0
    interval_s: float = 0.15
    stable_frames: int = 2  # consecutive frames judged identical (the first counts as one)

    def __post_init__(self) -> None:
        if self.timeout_s < 0 or self.interval_s <= 0:
            raise ValueError(f"need timeout_s >= 0 and interval_s > 0, got {self.timeout_s}, {self.interval_s}")
        if self.stable_frames < 2:
            raise ValueError(f"stable_frames must be >= 2 (two frames to compare), got {self.stable_frames}")


@dataclass
class SettleResult:
    observation: Observation  # the last frame taken
    polls: int  # observations taken while settling
    stable: bool  # False: timed out while frames were still changing
    elapsed_s: float
    stopped_early: bool = False  # `until` was satisfied before the screen was stable
    # the poll before `observation`, no input in between: what still moved between the two (a
    # fading ripple's steps can be too small to count as a change), VisualOracle.compare's `previous`
    previous: Observation | None = None


class _Comparer(Protocol):
    def compare(
        self, before: Frame, after: Frame, tree: UITree | None = None, *,
        ignore: Sequence[Box] = (), unstable: Sequence[Box] = (),
    ) -> Transition: ...


def settle(
    screen: Screen,
    oracle: _Comparer,
    start: Observation,
    policy: SettlePolicy,
    clock: Clock,
    *,
    ignore: Callable[[Observation], Sequence[Box]] = lambda obs: (),
    unstable: Sequence[Box] = (),
    until: Callable[[Observation], bool] | None = None,
    observe: Callable[[str], Observation] | None = None,
    stop_when_stable: bool = True,
    trees: bool = True,
    placed_by: UITree | None = None,
    first_wait_s: float | None = None,
) -> SettleResult:
    """Poll `screen` from `start` until stable, `until(obs)` holds, or the timeout.

    Always takes at least one new observation (the caller's frame may be mid-redraw).
    `observe(source)` replaces `screen.observe()` (the session uses it to track frames).
    `stop_when_stable=False` waits for `until` (or the timeout) even on a still screen: used when
    no refresh can follow, so an effect that lands late (a delayed redraw) is still caught.
    `trees=False` (light, a step no check reads): compare the pixels with only a tree already read.
    `first_wait_s`: how long before the first poll, when not a whole interval: a caller whose frame
    was taken a while ago (its judgement took time) has waited that part of the interval already.

    A poll reads no page source of its own for the stability test (`trees=True`): the pixels
    decide, and the latest tree already read (a poll's that `until` read, else `start`'s, else
    `placed_by`: the step's after-tree) places what they must ignore (status bar, a focused field's
    cursor, transient shapes); no input was sent since it was read, so those are where it says.
    Only with no tree read at all does a poll read its own, as every poll did before. A poll with
    the very bytes of the one before takes that one's tree (a known screen: a locator check still
    asks the driver). The tree of the screen the caller keeps is read by the caller's judgement;
    `until` reads a poll's own tree when its check needs one (never a borrowed one).
    """
    began = clock.monotonic()
    deadline = began + policy.timeout_s
    previous = start
    known = start.tree if start.tree_fetched else placed_by  # the latest tree already read
    run = 1
    polls = 0
    while True:
        clock.sleep(policy.interval_s if first_wait_s is None or polls else max(0.0, first_wait_s))
        current = observe(f"settle poll {polls + 1}") if observe is not None else screen.observe()
        polls += 1
        same = previous.frame.same_bytes(current.frame)
        if same and trees and previous.tree_fetched and not current.tree_fetched:
            current.tree = previous.tree  # the same screen, no input in between: its tree is already read
            current.known_screen = True
        if until is not None and until(current):
            return SettleResult(current, polls, False, clock.monotonic() - began, stopped_early=True)
        if same:
            run += 1
        else:
            tree = _placing_tree(current, known) if trees else current.tree if current.tree_fetched else None
            verdict = oracle.compare(previous.frame, current.frame, tree, ignore=ignore(current),
                                     unstable=unstable).verdict
            run = run + 1 if verdict == "no_change" else 1
        if trees and current.tree_fetched:
            known = current.tree
        last, previous = previous, current
        if run >= policy.stable_frames and (stop_when_stable or until is None):
            return SettleResult(current, polls, True, clock.monotonic() - began, previous=last)
        if clock.monotonic() >= deadline:
            return SettleResult(current, polls, False, clock.monotonic() - began)


def _placing_tree(current: Observation, known: UITree | None) -> UITree | None:
    """The tree that places a poll's ignored regions: its own when already read, else the latest
    one read, else (none read yet) its own, read now."""
    if current.tree_fetched or known is None:
        return current.tree
    return known
