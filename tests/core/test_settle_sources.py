"""Settle polls judge stability by pixels; a tree is read per settled screen, not per poll (issue 38).

The step loop over the real simulated phone on a virtual clock (`LazyScreen` counts page sources and
refuses a late tree as `Device` does). The latest tree already read places what the pixels must
ignore, a poll the expect must judge is judged on its own screen (a find, or its own tree), and
stability is never declared while the screen still changes.
"""

from __future__ import annotations

import dataclasses
from itertools import pairwise

import pytest

from pytest_guistate.core.checks import Check, gone, visible
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.oracle import VisualOracle
from pytest_guistate.core.settle import SettlePolicy, VirtualClock, settle
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.core.tiers import TierPolicy
from pytest_guistate.devices.sim.phone import Phone
from tests.helpers.lazy_screen import LazyScreen

POLICY = SettlePolicy(timeout_s=3.0, interval_s=0.15)


def session_on(app: str, tier: str = "standard", **faults: float) -> tuple[TaskSession, LazyScreen, Phone]:
    clock = VirtualClock()
    phone = Phone(app_package=app, clock=clock, seed=1, faults=dict(faults))
    screen = LazyScreen(phone)
    return TaskSession(screen, policy=TierPolicy.for_tier(tier), clock=clock, settle=POLICY), screen, phone


@pytest.mark.parametrize("tier", ["standard", "full"])
def test_a_late_redraw_reads_the_settled_screen_not_every_poll(tier: str) -> None:
    session, screen, phone = session_on("com.guistate.feed", tier, refresh_delay=1.0)
    session.perform("open the dialog", lambda: screen.tap_text("Delete"), expect=visible("Delete post?"))
    confirm = session.perform("confirm", lambda: screen.tap_id("android:id/button1"),
                              expect=gone("Alice", exact=True), idempotent=False)
    assert [e["action"] for e in phone.action_log() if e["action"] == "delete_post"] == ["delete_post"]
    assert confirm.outcome in ("settled", "refreshed") and confirm.actions == 1
    polls = sum(a.polls for a in confirm.attempts)
    assert polls >= 3, confirm.attempts
    # its first look (the before is the step before's after) and one screen per later look
    assert confirm.page_sources is not None and confirm.page_sources <= len(confirm.attempts), (
        confirm.page_sources, polls)


def test_a_spinner_keeps_the_settle_waiting_and_only_the_results_are_read() -> None:
    session, screen, _ = session_on("com.guistate.shopa", search_delay=1.2)
    search = session.perform("search", lambda: screen.type_text("shop/search", "Phone Case\n"),
                             expect=visible(id="result_row"), idempotent=False)
    assert search.outcome == "settled", search.attempts
    settled = search.attempts[-1]
    # stable only once the spinner stopped: 1.2 s of turning is at least 7 polls of 0.15 s
    assert settled.met and settled.polls >= 7, settled
    assert search.page_sources is not None and search.page_sources <= 1 + len(search.attempts), search.page_sources


def test_a_blinking_cursor_settles_placed_by_the_tree_already_read() -> None:
    clock = VirtualClock()
    screen = LazyScreen(Phone(app_package="com.guistate.settings", clock=clock, seed=1))
    screen.type_text("settings/username", "qa@example.com")
    start = screen.observe()
    assert start.tree is not None and any(n.focused for n in start.tree.nodes())  # read once: its cursor blinks
    reads = screen.page_source_calls
    polls: list[Observation] = []

    def observe(source: str) -> Observation:
        polls.append(screen.observe())
        return polls[-1]

    # five still frames span 0.75 s: the cursor (0.53 s on, 0.53 s off) blinks within them
    five = SettlePolicy(timeout_s=3.0, interval_s=0.15, stable_frames=5)
    result = settle(screen, VisualOracle(), start, five, clock, observe=observe)
    assert result.stable and result.polls == 4, result
    frames = [start, *polls]
    assert any(not a.frame.same_bytes(b.frame) for a, b in pairwise(frames)), "no blink"
    assert screen.page_source_calls == reads, "no poll read a page source of its own"


def test_a_check_that_needs_the_tree_reads_each_new_polls_own() -> None:
    """Never a borrowed tree for a new screen: a poll whose pixels are new is judged on its own tree;
    only a poll with the very pixels of the one before shares its tree (a known screen)."""
    session, screen, _ = session_on("com.guistate.feed", refresh_delay=1.0)
    session.loop.policy = dataclasses.replace(session.policy, refresh=False)  # wait for the effect itself
    seen: list[tuple[bytes, object, bool]] = []

    def alice_gone(obs: Observation) -> bool:
        tree = obs.tree
        seen.append((obs.frame.png, tree, obs.known_screen))
        return tree is not None and not tree.find_text("Alice", exact=True)

    session.perform("open the dialog", lambda: screen.tap_text("Delete"), expect=visible("Delete post?"))
    confirm = session.perform("confirm", lambda: screen.tap_id("android:id/button1"),
                              expect=Check("Alice gone (tree)", alice_gone), idempotent=False)
    assert confirm.outcome == "settled" and confirm.attempts[-1].met, confirm.attempts
    polls = seen[1:-1]  # the first look and the final judgement are not polls
    assert len(polls) >= 5 and any(a[0] != b[0] for a, b in pairwise(polls))
    for (png_before, tree_before, _), (png, tree, known) in pairwise(polls):
        if png != png_before:
            assert tree is not tree_before, "a new screen was judged with a tree read for another"
        elif tree is tree_before:
            assert known, "a shared tree is marked a known screen (a locator check still asks the driver)"
