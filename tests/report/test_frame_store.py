"""The recorder stores frames from pixels the session already decoded (issue 6), byte for byte
what decoding the PNG again would give, and never keeps released frames decoded."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from pytest_guistate.core.artifact_names import crop_name
from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle_types import Crop
from pytest_guistate.report import frame_store
from pytest_guistate.report.images import FrameFormat, decode, encode_frame, encode_pixels, frame_divisor
from pytest_guistate.report.recorder import ArtifactRecorder
from pytest_guistate.report.redact import fill_boxes

SIZE = (240, 420)  # (width, height), even: the half-scale copy is the stored size
FIELD = Box(40, 100, 200, 140)  # a password field on the "login" screen


@dataclass
class Tree:
    boxes: list[Box]

    def password_boxes(self) -> list[Box]:
        return self.boxes


@dataclass
class Obs:
    frame: Frame
    tree: Tree


def _screen(seed: int, size: tuple[int, int] = SIZE) -> Frame:
    """A frame with texture everywhere (so JPEG and PNG bytes depend on every pixel)."""
    rng = np.random.default_rng(seed)
    width, height = size
    pixels = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
    cv2.rectangle(pixels, (20, 200), (220, 300), (200, 120, 20), -1)
    return Frame.from_array(pixels)


def _fresh(frame: Frame) -> Frame:
    """The same PNG as a new `Frame` with nothing decoded (as a screenshot arrives)."""
    return Frame(png=frame.png)


class DecodeCounter:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        original = frame_store.decode

        def counting(data: bytes) -> np.ndarray:
            self.calls += 1
            return original(data)

        monkeypatch.setattr(frame_store, "decode", counting)


def _step(recorder: ArtifactRecorder, before: Frame, after: Frame, index: int = 1,
          boxes: list[Box] | None = None) -> dict[str, Any]:
    """Observe `before` then `after` as the session does, put what a full-tier step puts, record it."""
    for frame, source in ((before, f"step {index} observe"), (after, f"step {index} after")):
        frame.source = source
        recorder.on_observation(Obs(frame, Tree(list(boxes or []))))
    region = Box(20, 200, 220, 300)
    # as the session puts a crop: its bound encode, whose pixels the recorder stores (issue 44)
    crop = recorder.put(crop_name(index, 0), Crop(region, region_index=0, source=after).encode)
    names = [recorder.put(f"step{index:03d}-before.png", before.png), recorder.put(f"step{index:03d}-after.png", after.png)]
    recorder.on_step({"index": index, "name": "tap", "crops": [crop], "frames": names,
                      "transition": {"crops": [{"box": [region.left, region.top, region.right, region.bottom]}]}})
    return recorder.step_files[index]


def _recorder(tmp_path: Path, **kwargs: Any) -> ArtifactRecorder:
    (tmp_path / "t").mkdir()
    return ArtifactRecorder(tmp_path / "t", nodeid="t.py::test", tier="full", **kwargs)


@pytest.mark.parametrize(("size", "fmt", "expected"), [
    ((1080, 2400), FrameFormat(), 2),
    ((1080, 2400), FrameFormat("png", 0.25), 4),
    ((1083, 2400), FrameFormat(), None),  # round(541.5) = 542 but 1083 // 2 = 541
    ((1080, 2400), FrameFormat("jpeg", 0.3), None),
    ((1080, 2400), FrameFormat("jpeg", 1.0), None),
])
def test_frame_divisor_only_when_the_half_scale_copy_is_the_stored_size(
        size: tuple[int, int], fmt: FrameFormat, expected: int | None) -> None:
    assert frame_divisor(size, fmt) == expected


def test_the_oracles_half_scale_copy_encodes_to_the_same_bytes() -> None:
    frame = _screen(1)
    fmt = FrameFormat()
    assert encode_pixels(frame.small(2), fmt, prescaled=True) == encode_frame(frame.png, fmt)


def test_decoded_frames_are_stored_without_a_decode_and_byte_identical(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before, after = _screen(1), _screen(2)
    before.small(2), after.small(2)  # what the oracle leaves behind
    counter = DecodeCounter(monkeypatch)
    recorder = _recorder(tmp_path)
    files = _step(recorder, before, after)
    assert counter.calls == 0
    folder = tmp_path / "t"
    assert (folder / files["frames"]["after"]).read_bytes() == encode_frame(after.png, FrameFormat())
    assert (folder / files["frames"]["before"]).read_bytes() == encode_frame(before.png, FrameFormat())
    cut = decode((folder / files["crops_before"][0]).read_bytes())
    assert np.array_equal(cut, before.bgr[200:300, 20:220])


def test_released_frames_are_decoded_once_and_stay_released(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before, after = _fresh(_screen(1)), _fresh(_screen(2))
    counter = DecodeCounter(monkeypatch)
    recorder = _recorder(tmp_path)
    after_pixels = _screen(2).bgr  # for the crop the "oracle" cut; not the recorder's frame
    files = _step(recorder, before, Frame(png=after.png, _bgr=after_pixels))
    # before: one decode serves its before-crop and its stored frame; after: decoded already
    assert counter.calls == 1
    assert not before.has_pixels, "the recorder must not keep a released frame's pixels alive"
    assert recorder.frames.pixels._local == {}, "local decodes are dropped once the step is written"
    assert (tmp_path / "t" / files["frames"]["before"]).read_bytes() == encode_frame(before.png, FrameFormat())


def test_a_probe_with_the_after_frames_bytes_lends_nothing_but_its_twin_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stability probe's bytes equal the after-frame's, so the oracle never decodes the probe;
    the session then puts the probe's PNG as the step's after-frame."""
    before, after = _screen(1), _screen(2)
    counter = DecodeCounter(monkeypatch)
    recorder = _recorder(tmp_path)
    for frame, source in ((before, "step 1 observe"), (after, "step 1 after")):
        frame.source = source
        recorder.on_observation(Obs(frame, Tree([])))
    probe = _fresh(after)
    probe.source = "step 1 stability probe"
    recorder.on_observation(Obs(probe, Tree([])))
    recorder.on_step({"index": 1, "name": "tap", "crops": [],
                      "frames": [recorder.put("step001-before.png", before.png),
                                 recorder.put("step001-after.png", probe.png)]})
    assert counter.calls == 0 and not probe.has_pixels
    assert (tmp_path / "t" / recorder.step_files[1]["frames"]["after"]).read_bytes() == \
        encode_frame(after.png, FrameFormat())


def test_a_frame_stored_once_is_not_encoded_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second, third = _screen(1), _screen(2), _screen(3)
    recorder = _recorder(tmp_path)
    _step(recorder, first, second, index=1)
    encodes = 0
    original = frame_store.encode_pixels

    def counting(*args: Any, **kwargs: Any) -> bytes:
        nonlocal encodes
        encodes += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(frame_store, "encode_pixels", counting)
    files = _step(recorder, second, third, index=2)  # step 2's before is step 1's after
    assert encodes == 1  # only the new after-frame
    assert files["frames"]["before"] == recorder.step_files[1]["frames"]["after"]
    assert recorder.bytes_by_step[2] < recorder.bytes_by_step[1]


@pytest.mark.parametrize("fmt", [FrameFormat(), FrameFormat("png", 1.0), FrameFormat("jpeg", 0.3)])
def test_password_fields_are_filled_from_pixels_without_touching_the_sessions_copy(
        tmp_path: Path, fmt: FrameFormat) -> None:
    before, after = _screen(1), _screen(2)
    untouched = before.bgr.copy(), after.bgr.copy()
    recorder = _recorder(tmp_path, frame_format=fmt)
    files = _step(recorder, before, after, boxes=[FIELD])
    folder = tmp_path / "t"
    expected = encode_frame(fill_boxes(before.png, [FIELD]), fmt)  # the decode-again path
    assert (folder / files["frames"]["before"]).read_bytes() == expected
    assert np.array_equal(before.bgr, untouched[0]) and np.array_equal(after.bgr, untouched[1])
    stored = decode(expected)
    scale = stored.shape[1] / SIZE[0]
    y, x = int(120 * scale), int(120 * scale)
    assert tuple(int(v) for v in stored[y, x]) == pytest.approx((40, 40, 40), abs=12)


def test_before_crops_fill_the_password_boxes_of_the_before_screen(tmp_path: Path) -> None:
    before, after = _screen(1), _screen(2)
    recorder = _recorder(tmp_path)
    overlapping = Box(0, 250, 240, 260)  # crosses the crop box (20, 200)-(220, 300)
    files = _step(recorder, before, after, boxes=[overlapping])
    cut = decode((tmp_path / "t" / files["crops_before"][0]).read_bytes())
    assert (cut[50:60] == (40, 40, 40)).all()  # rows 250..260 of the screen
    assert np.array_equal(cut[:50], before.bgr[200:250, 20:220])
    assert not (before.bgr[250:260] == (40, 40, 40)).all(), "the session's pixels stay as captured"


def test_an_odd_sized_screen_resizes_from_full_pixels(tmp_path: Path) -> None:
    size = (243, 423)
    before, after = _screen(1, size), _screen(2, size)
    before.small(2), after.small(2)  # 121x211, but the stored size is round(121.5)=122 x round(211.5)=212
    recorder = _recorder(tmp_path, frame_format=FrameFormat("jpeg", 0.5))
    files = _step(recorder, before, after)
    assert (tmp_path / "t" / files["frames"]["after"]).read_bytes() == encode_frame(after.png, FrameFormat())
