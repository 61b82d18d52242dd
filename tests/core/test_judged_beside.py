"""A look nothing waits for is judged beside the test (issue 42): light, no check, no verdict hook.

At light a step with no `expect=` is met whatever the oracle says, so its compare gates nothing: it
runs on the `guistate-judge` thread while the test goes on, and the step is recorded once judged -
when the next step's action has run, or when anything reads the step, the state or the test's end.
These tests hold the oracle's compare on a gate, so what runs before it finishes is visible.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from pytest_guistate.core.frame import FrameError
from pytest_guistate.core.steploop import SessionHooks
from pytest_guistate.core.task_session import TaskSession
from tests.core.test_steploop import make

GATE_S = 5.0  # how long a held compare waits at most: the old code, judging on the path, returns after it


class Steps:
    """A listener: which step was recorded, and what had happened on the screen by then."""

    def __init__(self, screen: Any) -> None:
        self.screen = screen
        self.events: list[tuple[str, int, int]] = []  # (event, step index, the screen's actions by then)

    def on_step(self, record: Any) -> None:
        self.events.append(("step", record.index, self.screen.action_count))

    def on_step_end(self, record: Any) -> None:
        self.events.append(("end", record.index, self.screen.action_count))


def observed(tier: str = "light", *, hooks: SessionHooks | None = None) -> tuple[TaskSession, Any, Steps]:
    """A session on the synthetic list screen with a `Steps` listener."""
    session, screen, _ = make(tier, hooks=hooks)
    steps = Steps(screen)
    session.journal.listeners.append(steps)
    return session, screen, steps


def hold_compare(session: TaskSession, *, fail: Exception | None = None) -> tuple[threading.Event, threading.Event]:
    """The session's compare waits for `release` (at most GATE_S); `started` tells it began."""
    started, release = threading.Event(), threading.Event()
    real = session.oracle.compare

    def held(*args: Any, **kwargs: Any) -> Any:
        started.set()
        release.wait(GATE_S)
        if fail is not None:
            raise fail
        return real(*args, **kwargs)
    session.oracle.compare = held  # type: ignore[method-assign]
    return started, release


def test_a_light_step_with_no_check_returns_while_its_look_is_judged_and_reads_as_judged() -> None:
    session, screen, steps = observed()
    started, release = hold_compare(session)
    record = session.perform("increment", screen.increment)
    assert started.wait(GATE_S) and not release.is_set()
    assert steps.events == [("end", 1, 1)], "the step was recorded before its look was judged"
    release.set()
    assert record.verdict == "changed"  # reading a judged field waits for the judgement
    assert record.regions and record.attempts[0].verdict == "changed" and record.ended is not None
    assert steps.events == [("end", 1, 1), ("step", 1, 1)]
    assert session.last_transition is not None and session.last_transition.verdict == "changed"


def test_the_next_action_runs_while_the_previous_look_is_judged_and_the_journal_keeps_step_order() -> None:
    session, screen, steps = observed()
    started, release = hold_compare(session)
    first = session.perform("increment", screen.increment)
    assert started.wait(GATE_S)

    def second_action() -> None:
        screen.increment()
        release.set()  # step 1's compare is still held while this action runs
    second = session.perform("increment again", second_action, expect="Count: 2")
    # step 1 is recorded after step 2's action ran (2 actions by then), before step 2 is
    assert steps.events == [("end", 1, 1), ("step", 1, 2), ("step", 2, 2)]
    assert first.verdict == "changed" and second.outcome == "ok"
    assert first.ended is not None and first.ended <= second.started  # its end is when it ended, not recorded
    assert [r.index for r in session.steps] == [1, 2] and screen.counter == 2


def test_a_look_that_cannot_be_judged_beside_fails_its_own_step_by_name() -> None:
    session, screen, steps = observed()
    broken = FrameError("corrupt screenshot (step 1 after): 1234 bytes that OpenCV cannot decode")
    _, release = hold_compare(session, fail=broken)
    release.set()
    first = session.perform("increment", screen.increment)
    with pytest.raises(FrameError, match="cannot decode"):
        session.perform("increment again", screen.increment)
    assert first.outcome == "failed" and first.error is not None and first.error.startswith("FrameError")
    assert "judged beside the test" in first.explanation
    second = session.steps[-1]
    assert second.outcome == "failed" and "failed while reading the screen after the action" in second.explanation
    assert [i for e, i, _ in steps.events if e == "step"] == [1, 2]  # both steps journaled, in order


@pytest.mark.parametrize("case", ["light with an expect", "standard", "a verdict hook", "judging at once"])
def test_a_look_something_waits_for_is_judged_before_the_step_returns(case: str) -> None:
    hooks = SessionHooks(transition_check=lambda *_: None) if case == "a verdict hook" else None
    session, screen, steps = observed("standard" if case == "standard" else "light", hooks=hooks)
    expect = "Count: 1" if case == "light with an expect" else None
    if case == "judging at once":
        with session.judging_at_once():
            session.perform("increment", screen.increment, expect=expect)
    else:
        session.perform("increment", screen.increment, expect=expect)
    assert steps.events == [("step", 1, 1)]
    assert session.journal._later is None


def test_the_tests_end_records_the_last_step_judged_beside() -> None:
    session, screen, steps = observed()
    session.perform("increment", screen.increment)
    session.finish("passed")
    assert [e for e, _, _ in steps.events] == ["end", "step"]
    assert session.steps[0].verdict == "changed"
