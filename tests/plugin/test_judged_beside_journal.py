"""A step judged beside the test (issue 42) is journaled as its own: its commands, its source line,
its verdict, in step order, before the test's failure - though it is recorded during the next step."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

InnerRun = Callable[..., pytest.RunResult]

INNER = """
import pytest

@pytest.mark.guistate(app="com.guistate.feed", tier="light")
def test_three_taps(device, guistate):
    guistate.goal("open and cancel Bob's delete dialog, then fail")
    guistate.perform("open the dialog", lambda: device.tap(desc="Delete post by Bob"))
    with guistate.step("cancel it") as s:
        device.tap(id="android:id/button2")
    assert s.transition is not None and s.transition.verdict == "changed"
    guistate.perform("open it again", lambda: device.tap(desc="Delete post by Bob"))
    assert False, "red on purpose, after a step judged beside the test"
"""


def test_each_step_judged_beside_keeps_its_own_commands_and_line_in_order(inner: InnerRun,
                                                                          pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_beside=INNER)
    out = pytester.path / "artifacts"
    result = inner("--guistate-device=sim", f"--guistate-artifacts={out}", "--guistate-memory=off")
    result.assert_outcomes(failed=1)
    [journal] = list(Path(out).glob("*/journal.jsonl"))
    events = [json.loads(line) for line in journal.read_text("utf-8").splitlines()]
    steps = [e for e in events if e["type"] == "step"]
    assert [e["record"]["name"] for e in steps] == ["open the dialog", "cancel it", "open it again"]
    assert [e["record"]["verdict"] for e in steps] == ["changed", "changed", "changed"]
    taps = [[c["command"] for c in e["commands"] if c["command"].startswith("clickElement")] for e in steps]
    assert [len(t) for t in taps] == [1, 1, 1], taps  # each step its own tap, none of the next step's
    assert "Delete post by Bob" in taps[0][0] and "button2" in taps[1][0] and "Delete post by Bob" in taps[2][0], taps
    lines = [e["source"]["code"] for e in steps]
    assert "open the dialog" in lines[0] and "cancel it" in lines[1] and "open it again" in lines[2], lines
    kinds = [e["type"] for e in events]
    assert kinds.index("finish") > max(i for i, k in enumerate(kinds) if k == "step")
