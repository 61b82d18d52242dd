"""Context switches as a user meets them through the plugin (issue 37): `device.switch_context` and the
test's own `driver.switch_to.context(...)` are each journaled as a step with the contexts before and
after; a context the session does not list fails the test naming those it does, and nothing recorded
before it is lost."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

SUITE = '''
import pytest


@pytest.mark.guistate(app="com.guistate.feed")
def test_switches(device, guistate):
    assert device.contexts == ["NATIVE_APP"]
    device.switch_context("NATIVE_APP")
    device.driver.switch_to.context("NATIVE_APP")  # the test's own call is seen too
    with guistate.step("open the delete dialog", expect="Delete post by Carol?"):
        device.tap(desc="Delete post by Carol")
    pytest.fail("kept: show the journal")


@pytest.mark.guistate(app="com.guistate.feed")
def test_unlisted(device, guistate):
    with guistate.step("open the delete dialog", expect="Delete post by Carol?"):
        device.tap(desc="Delete post by Carol")
    device.switch_context("WEBVIEW_com.guistate.nothere")
'''


def _steps(root: Path, name: str) -> list[dict[str, Any]]:
    journal = next(p for p in root.rglob("journal.jsonl") if p.parent.name.endswith(f"-{name}"))
    events = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    return [e.get("record", e) for e in events if e.get("type") == "step"]


def test_switches_are_steps_and_an_unlisted_context_is_named(pytester: pytest.Pytester,
                                                              inner: Callable[..., pytest.RunResult]) -> None:
    pytester.makepyfile(SUITE)
    result = inner("--guistate=standard", "--guistate-artifacts=out")
    result.assert_outcomes(failed=2)
    unlisted_line = "*ContextUnavailable: switch_context('WEBVIEW_com.guistate.nothere')*the session lists ?'NATIVE_APP'?*"
    result.stdout.fnmatch_lines([unlisted_line])
    steps = _steps(pytester.path / "out", "test_switches")
    switches = [s for s in steps if s.get("kind") == "context"]
    assert [(s["name"], s["context"], s["context_after"], s["explanation"]) for s in switches] == [
        ("switch context NATIVE_APP -> NATIVE_APP", "NATIVE_APP", "NATIVE_APP", "contexts listed: NATIVE_APP"),
        ("switch context NATIVE_APP -> NATIVE_APP (the test's own driver call)", "NATIVE_APP", "NATIVE_APP", ""),
    ]
    tapped = [s for s in steps if s.get("name") == "open the delete dialog"]
    assert tapped and tapped[0]["context"] == "NATIVE_APP" and tapped[0]["outcome"] == "ok"
    unlisted = _steps(pytester.path / "out", "test_unlisted")
    assert [s["name"] for s in unlisted] == ["open the delete dialog"]  # kept, and no context of a session never switched
    assert "context" not in unlisted[0]
