"""The oracle's crops are cut from the after-frame when first used, with the same pixels as an
eager copy, whether the session still holds the frame decoded or has released it."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle import VisualOracle
from pytest_guistate.core.oracle_types import Crop


def screens() -> tuple[Frame, Frame, np.ndarray]:
    before = np.full((800, 400, 3), 250, np.uint8)
    after = before.copy()
    cv2.rectangle(after, (60, 300), (340, 500), (40, 60, 200), thickness=-1)  # a dialog appears
    cv2.putText(after, "Delete?", (90, 410), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (255, 255, 255), 2)
    png = lambda img: cv2.imencode(".png", img)[1].tobytes()
    return Frame(png=png(before), timestamp=0.0), Frame(png=png(after), timestamp=1.0), after


@pytest.mark.parametrize("released", [False, True], ids=["frame-decoded", "frame-released"])
def test_a_crop_holds_the_after_frames_pixels_of_its_box(released: bool) -> None:
    before, after, drawn = screens()
    transition = VisualOracle().compare(before, after)
    assert transition.verdict == "changed" and transition.crops
    crop = transition.crops[0]
    assert "pending" in repr(crop)  # nothing encoded yet
    if released:
        after.release_pixels()
    box = crop.box
    assert box.contains(Box(60, 300, 341, 501))
    expected = drawn[box.top:box.bottom, box.left:box.right]
    assert np.array_equal(crop.pixels, expected)
    assert np.array_equal(cv2.imdecode(np.frombuffer(crop.png, np.uint8), cv2.IMREAD_COLOR), expected)
    # a released frame is cut from a decode of its own, not decoded back onto the frame; one the
    # session still holds is decoded once on the frame, for all of its crops
    assert after.has_pixels is not released
    assert np.array_equal(crop.pixels, expected)  # from the PNG now


def test_a_crop_of_a_corrupt_frame_names_it() -> None:
    class Corrupt:
        png = b"\x89PNG\r\n\x1a\n not really"
        released = True

        @property
        def bgr(self) -> np.ndarray:
            raise AssertionError("a released frame is not decoded onto itself")

        def decoded(self) -> None:
            return None

    crop = Crop(Box(0, 0, 10, 10), None, 0, source=Corrupt())
    with pytest.raises(ValueError, match=r"crop \[0, 0, 10, 10\]: its frame holds bytes OpenCV cannot decode"):
        crop.encode()


def test_a_crop_needs_something_to_cut() -> None:
    with pytest.raises(ValueError, match="needs PNG bytes, pixels or a frame"):
        Crop(Box(0, 0, 1, 1))
