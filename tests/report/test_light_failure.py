"""Light tier on failure keeps the failed step's before-crops too (issue 23; README: "on failure the
failed step's before/after frames and crops"), not only its after-crops."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.helpers.inner_run import run_inprocess

FAILING_FEED = """
import pytest


@pytest.mark.guistate(app="com.guistate.feed", tier="light")
def test_feed(device, guistate):
    device.find_checks = {find_checks}
    with guistate.step("open the delete dialog", expect="Delete post by Nobody?"):
        device.tap(desc="Delete post by Carol")
"""


def _failed_light_step(pytester: pytest.Pytester, *, find_checks: bool) -> tuple[Path, dict]:
    pytester.makepyfile(test_feed=FAILING_FEED.format(find_checks=find_checks))
    result = run_inprocess(pytester, "-p", "no:cacheprovider", "--guistate-retain=on", "--guistate-artifacts=art",
                           "-o", "guistate_settle_timeout=0.5")
    result.assert_outcomes(failed=1)
    [folder] = [p for p in (pytester.path / "art").iterdir() if p.is_dir()]
    events = [json.loads(line) for line in (folder / "journal.jsonl").read_text(encoding="utf-8").splitlines()]
    assert next(e for e in events if e["type"] == "meta")["tier"] == "light"
    [step] = [e for e in events if e["type"] == "step"]
    assert step["record"]["outcome"] == "failed"
    files = step["files"]
    assert set(files["frames"]) >= {"before", "after"}
    assert files["crops"], "the failed step's after-crops"
    before = [rel for rel in files.get("crops_before", []) if rel]
    assert before and len(before) == len(files["crops"]), files
    return folder, files


def _colours(path: Path) -> int:
    pixels = cv2.imdecode(np.frombuffer(path.read_bytes(), np.uint8), cv2.IMREAD_COLOR)
    assert pixels is not None and pixels.size > 0
    return len(np.unique(pixels.reshape(-1, 3), axis=0))


def test_a_failed_light_step_keeps_before_and_after_crops(pytester: pytest.Pytester) -> None:
    """A check that reads the tree reads the before-screen's too: its before-crop shows the screen."""
    folder, files = _failed_light_step(pytester, find_checks=False)
    for rel in [*files["crops_before"], *files["crops"]]:
        assert _colours(folder / rel) > 1, f"{rel} is one solid colour"


def test_an_unread_before_screen_is_withheld_whole_not_written_unredacted(pytester: pytest.Pytester) -> None:
    """A check answered by a find reads no tree at light (issue 24): the before-screen moved on before
    anyone could see whether it showed a secure field, so its crop is filled whole (docs/schema.md,
    Redaction), while the after-crops, cut from a screen read at the failure, show it."""
    folder, files = _failed_light_step(pytester, find_checks=True)
    for rel in files["crops_before"]:
        assert _colours(folder / rel) == 1, f"{rel} of an unread screen was written with its pixels"
    for rel in files["crops"]:
        assert _colours(folder / rel) > 1, f"{rel} is one solid colour"
