"""The cycle detector: A-B-A-B or A-A-A with no milestone is a CYCLE anchor, then a failure (issue 14)."""

from __future__ import annotations

import json

from pytest_guistate.core.cycles import ScreenKey, find_cycle

A, B, C = ScreenKey(0, "a"), ScreenKey(0, "b"), ScreenKey(0, "c")


def test_find_cycle_periods() -> None:
    assert find_cycle([A, A]) is None
    assert find_cycle([A, A, A]) == (1, 3)
    assert find_cycle([C, A, B, A, B]) == (2, 4)
    assert find_cycle([A, B, C, A, B, C]) == (3, 6)
    assert find_cycle([A, B, C, A]) is None
    assert find_cycle([A, B, A]) is None  # A-B-A is a round trip, not yet a loop


def test_a_clock_tick_is_the_same_screen_a_new_tree_is_not() -> None:
    assert ScreenKey(0b1011, "a").same(ScreenKey(0b1001, "a"))
    assert not ScreenKey(0, "a").same(ScreenKey(0xFFFF, "a"))
    assert not ScreenKey(0, "a").same(ScreenKey(0, "b"))


LOOP = '''
import pytest
from pytest_guistate import gone

SECRET = "hunter2-never-in-logs"


@pytest.mark.guistate(app="com.guistate.feed"{marker})
def test_open_close_forever(device, guistate):
    guistate.secret(SECRET)
    guistate.goal("Delete Bob's post", plan=["post gone"])
    for _ in range(10):
        with guistate.step("open the delete dialog", expect="Delete post by Bob?"):
            device.tap(desc="Delete post by Bob")
        with guistate.step("cancel", expect=gone("Delete post by Bob?")):
            device.tap(id="android:id/button2")
'''


def test_an_open_close_loop_is_anchored_then_fails_with_its_screens(run_inner, pytester) -> None:
    out = run_inner(LOOP.format(marker=""), "--guistate-device=sim")
    out.result.assert_outcomes(failed=1)
    out.assert_contract(bound_s=60, names=("CycleDetected", "went round in a loop (A-B-A-B-A-B-A-B, period 2)",
                                           "over steps 1-8", "limit 8 steps"), steps=["open the delete dialog"])
    anchors = [e["anchor"] for e in out.journal() if e["type"] == "anchor"]
    cycles = [a for a in anchors if a["data"].get("kind") == "cycle"]
    assert [a["data"]["failed"] for a in cycles] == [False, True]
    assert cycles[0]["data"]["steps"] == [1, 2, 3, 4] and cycles[0]["step"] == 4
    assert cycles[1]["data"]["steps"] == list(range(1, 9))
    folder = out.folders()[0]
    # a crop is named by its file, or by its handle when its step's images came later (a `files` line, issue 42)
    names = {n: rel for e in out.journal() if e["type"] in ("step", "files") for n, rel in e["files"]["names"].items()}
    for anchor in cycles:
        assert len(anchor["crops"]) == 2, "the loop's two screens"
        for name in anchor["crops"]:
            assert (folder / names.get(name, name)).is_file(), f"crop {name} of the cycle anchor is not on disk"
    assert len(out.finished_steps()) == 8
    anchors_json = json.loads((folder / "anchors.json").read_text("utf-8"))
    assert "cycle" in json.dumps(anchors_json)


def test_the_limit_is_set_per_test_and_zero_only_anchors(run_inner) -> None:
    out = run_inner(LOOP.format(marker=", cycle_limit=0"), "--guistate-device=sim")
    out.result.assert_outcomes(passed=1)
    kinds = [e["anchor"]["data"].get("kind") for e in out.journal() if e["type"] == "anchor"] if out.folders() else []
    assert out.folders() == [] or kinds.count("cycle") == 1
    out = run_inner(LOOP.format(marker=", cycle_limit='many'"), "--guistate-device=sim")
    assert "cycle_limit='many') must be an integer >= 0" in out.text
