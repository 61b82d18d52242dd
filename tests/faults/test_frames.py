"""Screenshots that are not a usable screen fail the step naming what came back and from where (issue 14)."""

from __future__ import annotations

import base64

import cv2
import numpy as np
import pytest

from .conftest import two_steps
from .fault_proxy import Rule


def _png(bgr: np.ndarray) -> bytes:
    ok, encoded = cv2.imencode(".png", bgr)
    assert ok
    return encoded.tobytes()


def _pixels(value: str) -> np.ndarray:
    image = cv2.imdecode(np.frombuffer(base64.b64decode(value), np.uint8), cv2.IMREAD_COLOR)
    assert image is not None
    return image


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def truncated(value: str) -> str:
    png = base64.b64decode(value)
    return _b64(png[: len(png) // 2])


def one_pixel(value: str) -> str:
    return _b64(_png(np.zeros((1, 1, 3), np.uint8)))


def black(value: str) -> str:
    return _b64(_png(np.zeros_like(_pixels(value))))


def jpeg(value: str) -> str:
    ok, encoded = cv2.imencode(".jpg", _pixels(value))
    assert ok
    return _b64(encoded.tobytes())


def rotated(value: str) -> str:
    return _b64(_png(cv2.rotate(_pixels(value), cv2.ROTATE_90_CLOCKWISE)))


HTML_PAGE = "<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>"

CASES = [
    ("HTML instead of JSON", Rule("GET", r"/screenshot$", "html", status=200, body=HTML_PAGE, armed=False),
     ("is not base64 PNG data: the server sent an HTML page", "502 Bad Gateway")),
    ("truncated PNG", Rule("GET", r"/screenshot$", "value", value=truncated, armed=False),
     ("is a truncated PNG", "no IEND chunk")),
    ("1x1 frame", Rule("GET", r"/screenshot$", "value", value=one_pixel, armed=False),
     ("is a 1x1 frame, not a screen",)),
    ("all-black frame", Rule("GET", r"/screenshot$", "value", value=black, armed=False),
     ("is entirely black (1080x2400",)),
    ("JPEG, not PNG", Rule("GET", r"/screenshot$", "value", value=jpeg, armed=False),
     ("is not a PNG: the server sent a JPEG image",)),
    ("rotated mid-test", Rule("GET", r"/screenshot$", "value", value=rotated, armed=False),
     ("the screen rotated between before and after", "is 1080x2400, after (step 2 after) is 2400x1080")),
]


@pytest.mark.parametrize(("what", "rule", "names"), CASES, ids=[c[0] for c in CASES])
def test_a_bad_frame_is_named(run_inner, proxy, what: str, rule: Rule, names: tuple[str, ...]) -> None:
    proxy.add(rule)
    out = run_inner(two_steps())
    out.result.assert_outcomes(failed=1)
    out.assert_contract(bound_s=30, names=("FrameError", *names), steps=["open the delete dialog"])
    if what != "rotated mid-test":
        assert f"screenshot from {proxy.url}" in out.text, "the message does not say where the frame came from"
