"""The step loop against the real simulated phone (Feed app, TSR figure 2) on a virtual clock.

The bar (refresh before retry, core/steploop.py): zero duplicate non-idempotent actions. The Feed deletes by adapter
position, so a blind re-tap on the stale list would delete the *next* post; `action_log()` is
the ground truth of what really happened.
"""

from __future__ import annotations

import pytest

from pytest_guistate.core.anchors import AnchorType
from pytest_guistate.core.checks import gone, visible
from pytest_guistate.core.errors import StepFailed
from pytest_guistate.core.settle import SettlePolicy, VirtualClock
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.devices.sim.phone import Phone
from tests.helpers.direct_screen import DirectScreen

FEED = "com.guistate.feed"


def feed(**faults: object) -> tuple[TaskSession, DirectScreen, Phone, VirtualClock]:
    clock = VirtualClock()
    phone = Phone(app_package=FEED, clock=clock, seed=1, faults=dict(faults))
    screen = DirectScreen(phone)
    session = TaskSession(screen, clock=clock, name="test_feed", settle=SettlePolicy(timeout_s=3.0, interval_s=0.15))
    session.goal("delete Bob's post", plan=[("feed open", visible("Feed", exact=True)),
                                            ("confirm dialog", visible("Delete post?")),
                                            ("post deleted", gone("Bob", exact=True))])
    return session, screen, phone, clock


def deletes(phone: Phone) -> list[str]:
    return [entry["post_id"] for entry in phone.action_log() if entry["action"] == "delete_post"]


def delete_bob(session: TaskSession, screen: DirectScreen) -> None:
    session.perform("open delete dialog", lambda: screen.tap_text("Delete", nth=1), expect=visible("Delete post?"))
    session.perform("confirm delete", lambda: screen.tap_id("android:id/button1"), expect=gone("Bob", exact=True),
                    idempotent=False)


@pytest.mark.parametrize("delay", [0.0, 0.5, 2.0, 3.0])
def test_stale_feed_delete_happens_exactly_once(delay: float) -> None:
    session, screen, phone, clock = feed(refresh_delay=delay)
    delete_bob(session, screen)
    confirm = session.steps[-1]
    assert deletes(phone) == ["p2"]
    assert confirm.actions == 1
    if delay == 0.0:
        assert confirm.outcome == "ok" and session.episodes == 0
    else:
        assert confirm.outcome in ("settled", "refreshed") and session.episodes == 1
        assert any(a.data.get("kind") == "stale_screen" for a in session.anchors)
    session.assert_complete()
    assert clock.t - 1000.0 < 3.0  # virtual seconds: refresh beats waiting out the delay


def test_stale_feed_recovers_without_refresh_when_delay_elapses_while_settling() -> None:
    # refresh disabled for this step: the loop must wait (settle) rather than re-tap
    session, screen, phone, _ = feed(refresh_delay=0.3)
    session.perform("open delete dialog", lambda: screen.tap_text("Delete", nth=1), expect=visible("Delete post?"))
    rec = session.perform("confirm delete", lambda: screen.tap_id("android:id/button1"), idempotent=False,
                          expect=gone("Bob", exact=True), refresh=lambda: False)
    assert deletes(phone) == ["p2"]
    assert rec.outcome == "settled" and [a.stage for a in rec.attempts] == ["initial", "settle", "wait"]
    assert rec.attempts[1].refreshed_by == "nothing to refresh"


def test_dropped_tap_on_idempotent_step_is_retried() -> None:
    session, screen, phone, _ = feed()
    drops = [True, False]

    def flaky_open() -> None:
        phone.set_faults({"drop_tap_rate": 1.0 if drops.pop(0) else 0.0})
        screen.tap_text("Delete", nth=1)

    rec = session.perform("open delete dialog", flaky_open, expect=visible("Delete post?"))
    assert rec.outcome == "retried" and rec.actions == 2 and len(phone.dropped()) == 1
    session.perform("confirm delete", lambda: screen.tap_id("android:id/button1"), expect=gone("Bob", exact=True),
                    idempotent=False)
    assert deletes(phone) == ["p2"]


def test_dropped_tap_on_non_idempotent_step_fails_with_explanation() -> None:
    session, screen, phone, _ = feed()
    session.perform("open delete dialog", lambda: screen.tap_text("Delete", nth=1), expect=visible("Delete post?"))
    phone.set_faults({"drop_tap_rate": 1.0})
    with pytest.raises(StepFailed) as info:
        session.perform("confirm delete", lambda: screen.tap_id("android:id/button1"), expect=gone("Bob", exact=True),
                        idempotent=False)
    phone.set_faults({"drop_tap_rate": 0.0})
    text = str(info.value)
    assert "step 2 'confirm delete' failed: expected text 'Bob' gone" in text
    assert "non-idempotent" in text and "the action ran 1 time(s)" in text
    assert "text 'Bob' still visible at" in text
    assert deletes(phone) == [] and len(phone.dropped()) == 1
    assert session.progress.current == "post deleted"
    section = session.failure_section()
    assert "[>] post deleted  <- current" in section and "step 'confirm delete' failed" in section
    failed = [a for a in session.anchors if a.type is AnchorType.EXCEPTION and a.data.get("kind") == "step_failed"]
    assert failed and failed[0].crops


@pytest.mark.parametrize("seed", range(6))
def test_random_drops_never_duplicate_a_delete(seed: int) -> None:
    session, screen, phone, _ = feed(refresh_delay=2.0, drop_tap_rate=0.4, seed=seed)
    try:
        delete_bob(session, screen)
    except StepFailed as failure:
        assert deletes(phone) == [], failure  # a confirm tap that was lost is reported, never repeated
        return
    assert deletes(phone) == ["p2"]
