"""What a failing full-tier test writes, counted (issue 38, evidence per step): each image is
stored once, and nothing is stored larger than it needs to be.

- report.html draws every frame from its file under `frames/` instead of carrying a second copy;
- a failed step with no changed region keeps its whole screen as its crop pair: encoded like every
  other crop, lossless WebP (issue 44; the sim sends its screenshots as fast PNG, 5x the bytes);
- the stored JPEG frames are progressive: the same decoded pixels as a baseline JPEG, fewer bytes.

The flow runs on a frozen clock and its failed step refreshes nothing, so that step changes
nothing on the screen.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest
from lxml import html as lxml_html

from pytest_guistate.core.oracle_types import CROP_PNG_PARAMS
from pytest_guistate.report.journal import read_journal

SUITE = '''
import pytest
from pytest_guistate import gone

ODD_POST = "//*[contains(@resource-id, ':id/text') and contains(@text, 'onerror')]"


@pytest.mark.guistate(app="com.guistate.feed", caps={"guistate:clock": "frozen"})
def test_flow(device, guistate):
    guistate.goal("open and cancel the dialog, then report the odd post", plan=[])
    guistate.perform("ask to delete Bob's post", lambda: device.tap(desc="Delete post by Bob"),
                     expect="Delete post by Bob?")
    guistate.perform("cancel", lambda: device.tap(id="android:id/button2"), expect=gone("Delete post by Bob?"))
    # a refresh that does nothing: the Feed's pull-to-refresh would redraw the list (a changed region)
    guistate.perform("report the odd post", lambda: device.tap(xpath=ODD_POST), expect="Reported as spam",
                     idempotent=False, refresh=lambda: None)
'''


@pytest.fixture
def folder(inner: Callable[..., pytest.RunResult], pytester: pytest.Pytester) -> Path:
    pytester.makepyfile(test_flow=SUITE)
    artifacts = pytester.path / "artifacts"
    inner("--guistate=full", f"--guistate-artifacts={artifacts}").assert_outcomes(failed=1)
    [test] = [p for p in artifacts.iterdir() if p.is_dir()]
    return test


def _decode(path: Path) -> np.ndarray:
    pixels = cv2.imdecode(np.frombuffer(path.read_bytes(), np.uint8), cv2.IMREAD_COLOR)
    assert pixels is not None, path
    return pixels


def test_the_report_draws_frames_from_their_files_and_carries_no_copy(folder: Path) -> None:
    text = (folder / "report.html").read_text(encoding="utf-8")
    page = lxml_html.fromstring(text)
    frames = page.xpath("//*[local-name()='image' and starts-with(@id, 'frame-')]/@href")
    stored = sorted(p.relative_to(folder).as_posix() for p in (folder / "frames").iterdir())
    assert len(stored) == 2 and sorted(frames) == stored  # the feed and the dialog, each drawn once from its file
    # issue 44: no image is carried either (before: the crops' display copies and the thumbnails' JPEGs)
    carried = re.findall(r"data:image/(?:jpeg|png|webp);base64,", text)
    thumbs = page.xpath("//*[local-name()='image' and @class='thumb']/@href")
    assert carried == [] and thumbs and all((folder / t).is_file() for t in thumbs)


def test_a_failed_steps_whole_screen_pair_is_stored_lossless_and_small(folder: Path) -> None:
    [step] = [e for e in read_journal(folder).steps if e["record"]["index"] == 3]
    crops = [*step["files"]["crops_before"], *step["files"]["crops"]]
    assert len(crops) == 2 and all(rel.endswith(".webp") for rel in crops)
    for rel in crops:
        path = folder / rel
        pixels = _decode(path)
        assert pixels.shape[:2] == (2400, 1080)  # the whole screen: the step changed nothing
        compact = cv2.imencode(".png", pixels, CROP_PNG_PARAMS)[1].tobytes()
        # lossless WebP (issue 44): well under the crops' PNG of the same pixels (~2.5x on the sim)
        assert path.stat().st_size <= len(compact) * 0.6, rel


def test_stored_frames_are_progressive_jpegs(folder: Path) -> None:
    """Progressive coding stores the same DCT coefficients as a baseline JPEG (the same decoded
    pixels) in ~14% fewer bytes on the sim's screens."""
    frames = sorted((folder / "frames").iterdir())
    assert frames
    for path in frames:
        data = path.read_bytes()
        # SOF2 marks a progressive frame, SOF0 a baseline one (0xFF in the coded data is always stuffed)
        assert data[:2] == b"\xff\xd8" and b"\xff\xc2" in data and b"\xff\xc0" not in data, path.name
        assert _decode(path).shape[:2] == (1200, 540)  # half size, as before
