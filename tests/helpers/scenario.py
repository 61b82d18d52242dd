"""A realistic in-process scenario on the simulated phone, journaled by `ArtifactRecorder`.

Settings app login (a password typed into a password field), then toggles, then a step whose
expectation is never met, so the test fails with anchors, crops and frames to report.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_guistate.core.errors import StepFailed
from pytest_guistate.core.settle import SettlePolicy
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.core.tiers import TierPolicy
from pytest_guistate.devices.sim.apps.settings import CREDENTIALS
from pytest_guistate.devices.sim.phone import ManualClock, Phone
from pytest_guistate.report.artifacts import create_test_folder
from pytest_guistate.report.finish import FinishedTest, finalize
from pytest_guistate.report.recorder import ArtifactRecorder, RecordingScreen
from pytest_guistate.report.redact import Redactor
from tests.helpers.direct_screen import DirectScreen

PASSWORD = CREDENTIALS[1]
XSS = "<img src=x onerror=alert(1)>"


class VirtualClock:
    """The session's Clock over the phone's ManualClock: sleeping advances the phone's time."""

    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock

    def monotonic(self) -> float:
        return self.clock()

    def sleep(self, seconds: float) -> None:
        self.clock.advance(seconds)


@dataclass
class Run:
    recorder: ArtifactRecorder
    session: TaskSession
    screen: DirectScreen
    phone: Phone


def start(root: Path, tier: str = "full", nodeid: str = "tests/test_login.py::test_login[sim]",
          more_listeners: Callable[[ArtifactRecorder], list[Any]] | None = None, **recorder_kwargs: Any) -> Run:
    clock = ManualClock()
    phone = Phone(app_package="com.guistate.settings", clock=clock, wall_start=1_700_000_000.0)
    screen = DirectScreen(phone)
    folder = create_test_folder(root, nodeid)
    recorder = ArtifactRecorder(folder, nodeid=nodeid, tier=tier, redactor=Redactor(secrets={PASSWORD}),
                                **recorder_kwargs)
    session = TaskSession(RecordingScreen(screen, recorder), policy=TierPolicy.for_tier(tier),
                          listeners=[recorder, *(more_listeners(recorder) if more_listeners else [])],
                          artifacts=recorder, clock=VirtualClock(clock),
                          settle=SettlePolicy(timeout_s=0.6, interval_s=0.1))
    recorder.bind(session)
    return Run(recorder, session, screen, phone)


def login_and_fail(run: Run) -> None:
    """Log in (typing the password), flip a toggle, then expect something that never appears."""
    s, phone = run.session, run.phone
    s.goal(f"Sign in and enable dark mode {XSS}", plan=["signed in", "dark mode on", "synced"])
    s.perform("tap the email field", lambda: phone.tap(*phone.find_key("settings/username").bounds.center))
    s.perform("type the email", lambda: phone.type_text("settings/username", CREDENTIALS[0]))
    s.perform("tap the password field", lambda: phone.tap(*phone.find_key("settings/password").bounds.center))
    s.perform(f"type {PASSWORD!r} into password", lambda: phone.type_text("settings/password", PASSWORD),
              idempotent=False)
    s.remember("password used", PASSWORD)
    s.perform("tap Log in", lambda: phone.tap(*phone.find_key("settings/login").bounds.center),
              expect="Wi-Fi", idempotent=False)
    s.milestone("signed in")
    s.perform(f"toggle dark mode {XSS}", lambda: phone.tap(*phone.find_key("settings/row/dark_mode").bounds.center),
              expect="On")
    s.milestone("dark mode on")
    s.perform("wait for sync", lambda: None, expect="Synced just now", idempotent=False)


def run_failing(root: Path, tier: str = "full", **kwargs: Any) -> tuple[Run, FinishedTest]:
    run = start(root, tier, **kwargs)
    error: BaseException | None = None
    try:
        login_and_fail(run)
    except StepFailed as exc:
        error = exc
    assert error is not None, "the scenario must fail at 'wait for sync'"
    run.session.finish("failed", error)
    done = finalize(run.recorder, outcome="failed", error=f"StepFailed: {error}", retain="on", root=root)
    return run, done
