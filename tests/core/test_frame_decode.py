"""`Frame.prefetch`: the background decode gives the same pixels as decoding on demand, and a
corrupt or released frame behaves exactly as without it (issue 6, per-step overhead)."""

from __future__ import annotations

import os
import signal
import threading
import time

import cv2
import numpy as np
import pytest

from pytest_guistate.core import frame as frame_module
from pytest_guistate.core.frame import Frame, FrameError
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle import VisualOracle


def _png(seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    image = np.full((480, 270, 3), 240, np.uint8)
    image[100:180, 20:250] = rng.integers(0, 255, (80, 230, 3), dtype=np.uint8)
    ok, encoded = cv2.imencode(".png", image)
    assert ok
    return encoded.tobytes()


def test_prefetched_pixels_and_half_scale_copy_equal_an_on_demand_decode() -> None:
    png = _png(1)
    ahead, plain = Frame(png), Frame(png)
    ahead.prefetch()
    assert not ahead.has_pixels  # pixels are the frame's only once something asks for them
    assert np.array_equal(ahead.bgr, plain.bgr)
    assert ahead.has_pixels
    assert np.array_equal(ahead.small(2), plain.small(2))
    assert ahead.small(2).shape == (240, 135, 3)


def test_oracle_verdict_is_the_same_with_and_without_prefetch() -> None:
    before_png, after_png = _png(1), _png(2)
    plain = VisualOracle().compare(Frame(before_png), Frame(after_png))
    before, after = Frame(before_png), Frame(after_png)
    before.prefetch()
    after.prefetch()
    ahead = VisualOracle().compare(before, after)
    assert ahead.verdict == plain.verdict == "changed"
    assert [r.box for r in ahead.regions] == [r.box for r in plain.regions]
    assert all(r.box.intersects(Box(20, 100, 250, 180)) for r in ahead.regions)


def test_corrupt_prefetched_frame_raises_frame_error_naming_it() -> None:
    frame = Frame(b"\x89PNG\r\n\x1a\nnot really", source="step 4 after")
    frame.prefetch()
    with pytest.raises(FrameError, match="corrupt screenshot \\(step 4 after\\)"):
        _ = frame.bgr
    with pytest.raises(FrameError, match="step 4 after"):  # asking again gives the same answer
        _ = frame.bgr


def test_release_while_decoding_keeps_the_frame_usable() -> None:
    frame = Frame(_png(3))
    frame.prefetch()
    frame.release_pixels()
    assert not frame.has_pixels
    assert frame.bgr.shape == (480, 270, 3)  # decoded again on demand


def test_prefetch_of_an_empty_or_decoded_frame_does_nothing() -> None:
    empty = Frame(b"", source="dead device")
    empty.prefetch()
    with pytest.raises(FrameError, match="empty screenshot \\(dead device\\)"):
        _ = empty.bgr
    decoded = Frame.from_array(np.zeros((10, 10, 3), np.uint8))
    decoded.prefetch()
    assert decoded.has_pixels and decoded.bgr.shape == (10, 10, 3)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX-only")
def test_a_forked_child_decodes_ahead_with_its_own_thread() -> None:
    png = _png(4)
    Frame(png).prefetch()  # the parent's decode thread exists now
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a prefetch must not wait on the parent's (absent) thread
        signal.alarm(10)  # a hang ends the child by SIGALRM: the assertion below fails, nothing hangs
        os.close(read)
        frame = Frame(png)
        frame.prefetch()
        os.write(write, b"%d" % frame.bgr.shape[0])
        os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    answer = os.read(read, 16)
    os.close(read)
    assert os.WIFEXITED(status) and answer == b"480"


@pytest.mark.parametrize("size", [(2402, 1082), (480, 270), (2, 2)], ids=["chromium-pixel7", "small", "tiny"])
@pytest.mark.parametrize("content", ["noise", "smooth"])
def test_the_reduced_decode_equals_the_full_decode_downscaled(size: tuple[int, int], content: str) -> None:
    """`small(2)` of an even-sized PNG comes straight from OpenCV's reduced decode: the oracle's
    thresholds were tuned on INTER_AREA halves, so the two must be bit-identical."""
    rng = np.random.default_rng(7)
    image = rng.integers(0, 256, (*size, 3), dtype=np.uint8)
    if content == "smooth":
        image = cv2.GaussianBlur(image, (0, 0), 3)
    png = cv2.imencode(".png", image)[1].tobytes()
    reduced, full = Frame(png), Frame(png)
    expected = cv2.resize(full.bgr, (size[1] // 2, size[0] // 2), interpolation=cv2.INTER_AREA)
    assert np.array_equal(reduced.small(2), expected)
    assert not reduced.has_pixels  # the full image was not decoded for it
    ahead = Frame(png)
    ahead.prefetch()
    assert np.array_equal(ahead.small(2), expected) and not ahead.has_pixels
    assert np.array_equal(ahead.bgr, full.bgr)  # full size when asked


@pytest.mark.parametrize("size", [(2340, 1080), (2402, 1082), (480, 270), (2, 2)])
@pytest.mark.parametrize("content", ["noise", "smooth", "levels"])
def test_halving_decoded_pixels_equals_inter_area(size: tuple[int, int], content: str) -> None:
    """A frame already decoded (a JPEG, pixels handed over) is halved by the faster bilinear path,
    which must give INTER_AREA's very pixels, colour and grey: the thresholds were tuned on them."""
    rng = np.random.default_rng(11)
    image = rng.integers(0, 256, (*size, 3), dtype=np.uint8)
    if content == "smooth":
        image = cv2.GaussianBlur(image, (0, 0), 3)
    elif content == "levels":  # flat areas and hard edges, each 2x2 block's sum at every remainder mod 4
        image = (image // 85 * 85).astype(np.uint8)
    frame = Frame.from_array(image)
    half = (size[1] // 2, size[0] // 2)
    assert np.array_equal(frame.small(2), cv2.resize(image, half, interpolation=cv2.INTER_AREA))
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    assert np.array_equal(frame.grey(2), cv2.resize(grey, half, interpolation=cv2.INTER_AREA))


def test_an_odd_sized_frame_is_halved_from_its_full_decode() -> None:
    """The reduced decode rounds an odd side up, INTER_AREA down: odd sizes take the full decode."""
    image = np.random.default_rng(3).integers(0, 256, (101, 61, 3), dtype=np.uint8)
    frame = Frame(cv2.imencode(".png", image)[1].tobytes())
    assert frame.small(2).shape == (50, 30, 3)
    assert np.array_equal(frame.small(2), cv2.resize(image, (30, 50), interpolation=cv2.INTER_AREA))
    assert frame.has_pixels


def test_comparing_two_frames_decodes_only_their_halves() -> None:
    before, after = Frame(_png(1)), Frame(_png(2))
    transition = VisualOracle().compare(before, after)
    assert transition.verdict == "changed"
    assert not before.has_pixels and not after.has_pixels  # crops are cut when used
    assert transition.crops[0].png  # ... and then decode the after-frame once
    assert after.has_pixels and not before.has_pixels


def test_a_corrupt_frame_still_names_itself_through_small() -> None:
    bad = Frame(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00\x00\x01\x00\x00\x00\x01\x00" + b"junk" * 10,
                source="step 2 after")
    with pytest.raises(FrameError, match=r"corrupt screenshot \(step 2 after\)"):
        bad.small(2)


def _drained() -> None:
    """Wait for the decode thread's queue: what a step's requests give it time for."""
    frame_module._decode_pool().submit(lambda: None).result()


def _spy_decodes(monkeypatch: pytest.MonkeyPatch, delay_s: float = 0.0) -> list[str]:
    """The threads of every full decode from now on (`delay_s` widens the window for a race)."""
    threads: list[str] = []
    decode = frame_module._imdecode

    def spied(png: bytes) -> np.ndarray | None:
        threads.append(threading.current_thread().name)
        time.sleep(delay_s)
        return decode(png)

    monkeypatch.setattr(frame_module, "_imdecode", spied)
    return threads


def test_a_full_prefetch_decodes_on_the_decode_thread_with_the_same_pixels(monkeypatch: pytest.MonkeyPatch) -> None:
    """`prefetch_full` (the memory's learning, issue 38): given the time a tap takes, the full-size
    decode is done off the caller's thread, once; the pixels are the on-demand decode's, with or
    without the oracle's half decode queued first."""
    png = _png(5)
    plain = Frame(png).bgr
    threads = _spy_decodes(monkeypatch)
    for half_first in (False, True):
        ahead = Frame(png)
        if half_first:
            ahead.prefetch()  # the oracle's half-size decode, queued first
        ahead.prefetch_full()
        _drained()
        assert ahead.has_pixels
        assert np.array_equal(ahead.bgr, plain)
    assert len(threads) == 2 and all(name.startswith("guistate-decode") for name in threads)


def test_threads_asking_for_a_frames_pixels_at_once_decode_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The step loop, the report writer and a prefetch may want one frame's pixels at the same time:
    one decodes, the others wait for it (before, each decoded the same bytes again)."""
    threads = _spy_decodes(monkeypatch, delay_s=0.05)
    frame = Frame(_png(7))
    frame.prefetch_full()
    seen: list[np.ndarray] = []
    readers = [threading.Thread(target=lambda: seen.append(frame.bgr)) for _ in range(3)]
    for reader in readers:
        reader.start()
    seen.append(frame.bgr)
    for reader in readers:
        reader.join()
    _drained()
    assert len(threads) == 1 and len(seen) == 4 and all(image is seen[0] for image in seen)


def test_a_full_prefetch_of_a_corrupt_or_released_frame_behaves_as_without_it() -> None:
    bad = Frame(b"\x89PNG\r\n\x1a\nnot really", source="step 6 before")
    bad.prefetch_full()
    _drained()
    with pytest.raises(FrameError, match="corrupt screenshot \\(step 6 before\\)"):
        _ = bad.bgr
    frame = Frame(_png(6))
    frame.prefetch_full()
    frame.release_pixels()
    _drained()
    assert not frame.has_pixels  # a decode queued before the release keeps nothing
    assert frame.bgr.shape == (480, 270, 3)  # decoded again on demand


def _noisy_png(seed: int = 3) -> bytes:
    pixels = np.random.default_rng(seed).integers(0, 255, (240, 120, 3), dtype=np.uint8)
    return cv2.imencode(".png", pixels)[1].tobytes()


def test_a_frame_again_shares_what_is_decoded_and_releases_on_its_own() -> None:
    """Issue 42: a screenshot with the very bytes of one decoded is a Frame of its own (source, time,
    release) sharing the oracle's decoded copy; releasing either leaves the other's pixels alone."""
    first = Frame(_noisy_png(), source="after")
    small = first.small(2)
    twin = first.again(source="settle poll 1")
    assert twin is not first and twin.png == first.png and twin.source == "settle poll 1"
    assert twin.decoded_small(2) is small and twin.same_bytes(first)
    first.release_pixels()
    assert twin.small(2) is small
    late = first.again(source="poll 2")  # from a released frame: its bytes only
    assert late.decoded_small(2) is None and np.array_equal(late.small(2), small)


def test_a_twin_decodes_itself_when_the_shared_decode_was_cancelled() -> None:
    first = Frame(_noisy_png(), source="after")
    gate = threading.Event()
    blocker = frame_module._decode_pool().submit(gate.wait, 10)  # the decode thread is busy: the prefetch waits
    first.prefetch()
    twin = first.again(source="poll")
    first.release_pixels()  # cancels the queued decode the twin shares
    gate.set()
    blocker.result()
    expected = cv2.resize(cv2.imdecode(np.frombuffer(first.png, np.uint8), cv2.IMREAD_COLOR), (60, 120),
                          interpolation=cv2.INTER_AREA)
    assert np.array_equal(twin.small(2), expected)


def test_a_screen_decoded_lately_is_not_decoded_again_and_the_oldest_is_forgotten() -> None:
    """Issue 42: the same bytes seen again (a dialog cancelled back to its list) take the oracle's copy
    decoded for them before, when the frame's digest is known before its prefetch (as `Device` does)."""
    pngs = [_png(100 + seed) for seed in range(frame_module.RECENT_COPIES + 1)]
    first = Frame(pngs[0])
    _ = first.digest
    first.prefetch()
    decoded = first.small(2)
    again = Frame(bytes(bytearray(pngs[0])))
    _ = again.digest
    again.prefetch()
    assert again._decoding is None, "the same bytes were sent to the decoder again"
    assert again.small(2) is decoded
    unknown = Frame(bytes(bytearray(pngs[0])))  # no digest asked for: nothing to look up by
    unknown.prefetch()
    assert unknown._decoding is not None and np.array_equal(unknown.small(2), decoded)
    for png in pngs[1:]:  # as many other screens as are kept: the first is the oldest, forgotten
        other = Frame(png)
        _ = other.digest
        other.prefetch()
        other.small(2)
    late = Frame(bytes(bytearray(pngs[0])))
    _ = late.digest
    late.prefetch()
    assert late._decoding is not None and np.array_equal(late.small(2), decoded)
