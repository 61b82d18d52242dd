"""Reports for the browser tests, journaled from real runs on the simulated phone."""

from __future__ import annotations

from pathlib import Path

from pytest_guistate.core.errors import StepFailed
from pytest_guistate.report.finish import FinishedTest, finalize
from tests.helpers.scenario import Run, start

# app text that would run, or be evaluated by a template engine, if the viewer ever treated data as code
HOSTILE = "</script><img src=x onerror=alert(1)>{{7*7}}"


def hostile_run(root: Path) -> tuple[Run, FinishedTest]:
    """The Settings login form with hostile text typed into the email field (app text in the UI
    tree, the state and the step names), then a step that fails."""
    run = start(root, tier="full", nodeid="tests/test_hostile.py::test_hostile[</script>]")
    s, phone = run.session, run.phone
    s.goal(f"Survive {HOSTILE}", plan=[f"typed {HOSTILE}", "never"])
    s.perform("tap the email field", lambda: phone.tap(*phone.find_key("settings/username").bounds.center))
    s.perform(f"type {HOSTILE}", lambda: phone.type_text("settings/username", HOSTILE))
    s.milestone(f"typed {HOSTILE}")
    s.remember("odd text", HOSTILE)
    error: BaseException | None = None
    try:
        s.perform(f"expect {HOSTILE}", lambda: None, expect="Welcome {{7*7}}", idempotent=False)
    except StepFailed as exc:
        error = exc
    assert error is not None
    s.finish("failed", error)
    return run, finalize(run.recorder, outcome="failed", error=f"StepFailed: {error}", retain="on", root=root)
