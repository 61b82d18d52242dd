"""Redaction: a password typed into the Login (Settings) app reaches no saved file."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from pytest_guistate.core.geometry import Box
from pytest_guistate.report.redact import REDACTED, Redactor, fill_boxes
from tests.helpers.scenario import PASSWORD


def _png(width: int, height: int, colour: tuple[int, int, int]) -> bytes:
    ok, data = cv2.imencode(".png", np.full((height, width, 3), colour, np.uint8))
    assert ok
    return data.tobytes()


def _decode(data: bytes) -> np.ndarray:
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None
    return image


def test_fill_boxes_uses_screen_coordinates_with_an_origin() -> None:
    crop = _png(100, 50, (255, 255, 255))  # a crop whose top-left sits at (200, 300) on screen
    out = _decode(fill_boxes(crop, [Box(210, 310, 230, 320)], origin=(200, 300)))
    assert (out[10:20, 10:30] != 255).all()
    assert (out[0:10, :] == 255).all() and (out[:, 40:] == 255).all()


def test_boxes_outside_the_image_leave_the_bytes_untouched() -> None:
    crop = _png(100, 50, (255, 255, 255))
    assert fill_boxes(crop, [Box(0, 0, 50, 50)], origin=(500, 500)) is crop


def test_undecodable_bytes_are_never_written_unredacted() -> None:
    with pytest.raises(ValueError, match="cannot redact"):
        fill_boxes(b"not an image", [Box(0, 0, 5, 5)])


def test_secrets_are_scrubbed_deeply_and_short_ones_refused() -> None:
    redactor = Redactor(secrets={"hunter22"})
    data = {"name": "type 'hunter22'", "nested": [{"hunter22": "x hunter22 y"}], "n": 3}
    assert redactor.scrub(data) == {"name": f"type '{REDACTED}'", "nested": [{REDACTED: f"x {REDACTED} y"}], "n": 3}
    with pytest.raises(ValueError, match="too short"):
        redactor.add_secret("ab")


def test_the_typed_password_appears_in_no_saved_file(failed_run) -> None:  # type: ignore[no-untyped-def]
    _, done, root = failed_run
    files = [p for p in Path(root).rglob("*") if p.is_file()]
    assert any(p.name == "journal.jsonl" for p in files) and any(p.suffix == ".html" for p in files)
    needle = PASSWORD.encode()
    leaks = [p for p in files if needle in p.read_bytes()]
    assert leaks == []
    assert REDACTED.encode() in (done.folder / "journal.jsonl").read_bytes()  # the step name was scrubbed


def test_the_password_field_is_filled_in_frames_and_crops(failed_run) -> None:  # type: ignore[no-untyped-def]
    run, done, _ = failed_run
    files = run.recorder.step_files
    # step 4 typed the password: its crop covers the password field and must be one solid fill
    typed = next(i for i, step in enumerate(run.recorder.steps, 1) if "type" in step["name"] and REDACTED in step["name"])
    crop = _decode((done.folder / files[typed]["crops"][0]).read_bytes())
    field = run.session.steps[typed - 1].transition["crops"][0]["box"]
    password = Box(*field)
    assert password.area > 0
    flat = crop.reshape(-1, 3)
    assert (flat == flat[0]).all(axis=1).mean() > 0.9, "the password crop should be (almost) all fill colour"
    # the before frame of the login step still shows the form: the field's box is filled there
    before = _decode((done.folder / files[typed + 1]["frames"]["before"]).read_bytes())
    scale = before.shape[1] / 1080
    assert len(run.recorder.frames) > 0  # the recorder saw the observations (password boxes)
    x, y = int((password.left + password.width // 2) * scale), int((password.top + password.height // 2) * scale)
    assert tuple(int(v) for v in before[y, x]) == pytest.approx((40, 40, 40), abs=12)
