"""Screenshots that are not a usable screen fail the step naming what came back and from where (issue 14)."""

from __future__ import annotations

import base64
import functools
import struct
import zlib

import cv2
import numpy as np
import pytest

from pytest_guistate.core.frame import Frame, FrameError, check_png
from pytest_guistate.report.images import image_size

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


@functools.cache
def bomb_png(side: int = 20000) -> bytes:
    """A `side` x `side` white PNG of a few hundred KB (1-bit grey, one zlib stream): decoded to BGR it
    would be side*side*3 bytes (1.2 GB at 20000). Built by hand: no encoder would allocate it first."""
    row = b"\x00" + b"\xff" * ((side + 7) // 8)
    packer = zlib.compressobj(9)
    idat = b"".join(packer.compress(row) for _ in range(side)) + packer.flush()

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def bomb(value: str) -> str:
    return _b64(bomb_png())


def twice_the_screen(value: str) -> str:
    return _b64(bomb_png(5000))


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
    ("decompression bomb", Rule("GET", r"/screenshot$", "value", value=bomb, armed=False),
     ("is 20000x20000 (400.0 megapixels), above the frame limit", "refused from its PNG header without decoding")),
    ("above twice the screen", Rule("GET", r"/screenshot$", "value", value=twice_the_screen, armed=False),
     (("is 5000x5000 (25.0 megapixels), above the frame limit (2x the longest side of the session's 1080x2400 "
      "screen)"),)),
    ("rotated mid-test", Rule("GET", r"/screenshot$", "value", value=rotated, armed=False),
     ("the screen rotated between before and after", "is 1080x2400, after (step 2 after) is 2400x1080")),
]


@pytest.mark.parametrize(("what", "rule", "names"), CASES, ids=[c[0] for c in CASES])
def test_a_bad_frame_is_named(run_inner, proxy, what: str, rule: Rule, names: tuple[str, ...]) -> None:
    if rule.value in (bomb, twice_the_screen):
        rule.value("")  # built once here (cached), not by the proxy inside the 1 s deadline of the screenshot
    proxy.add(rule)
    out = run_inner(two_steps())
    out.result.assert_outcomes(failed=1)
    out.assert_contract(bound_s=30, names=("FrameError", *names), steps=["open the delete dialog"])
    # issue 22: the step that failed while reading the screen is journaled, with its error, before the finish line
    events = out.journal()
    assert events[-1]["type"] == "finish"
    failed = [e["record"] for e in events if e["type"] == "step"][-1]
    assert failed["name"] == "cancel the dialog" and failed["outcome"] == "failed", failed
    assert failed["error"].startswith("FrameError: ")
    assert "failed while reading the screen after the action" in failed["explanation"]
    if what != "rotated mid-test":
        assert f"screenshot from {proxy.url}" in out.text, "the message does not say where the frame came from"


def test_no_path_decodes_a_frame_above_the_hard_cap() -> None:
    """Issue 22: whatever made the Frame (the sim, a test), its pixels are never decoded above the cap."""
    png = bomb_png()
    with pytest.raises(FrameError, match=r"the frame is 20000x20000 \(400.0 megapixels\), above the frame limit "
                                         r"\(the hard cap of 10000 px a side and 50 megapixels\)"):
        _ = Frame(png).bgr
    with pytest.raises(FrameError, match="above the frame limit"):
        _ = Frame(png).small(2)
    with pytest.raises(FrameError, match=r"screenshot from http://phone:4723 is 20000x20000"):
        check_png(png, "http://phone:4723")
    with pytest.raises(ValueError, match="an image too large to read"):  # Pillow's bomb error, in words
        image_size(png)
    check_png(bomb_png(2000), "http://phone:4723", screen=(1080, 2400))  # within 2x the screen: accepted
