"""Screenshots as the oracle sees them: PNG bytes, decoded lazily, with a capture time.

Decoding a 1080x2400 PNG costs ~24 ms while diffing two decoded frames costs ~3 ms
(../shared/MEASURED.md), so a `Frame` decodes at most once and keeps a downscaled grey copy for
the oracle; identical PNG bytes are detected before any decode. `prefetch()` starts that decode
on a background thread (OpenCV releases the GIL), so it overlaps the page-source request a
device makes next instead of adding to the step (issue 6: ~13-15 ms of a real Appium step).
"""

from __future__ import annotations

import hashlib
import struct
import threading
import time
from collections import OrderedDict
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import cv2
import numpy as np

from pytest_guistate.core.threads import own_thread

__all__ = ["MAX_FRAME_PIXELS", "MAX_FRAME_SIDE", "SCREEN_FACTOR", "Frame", "FrameError", "check_png", "check_size",
           "describe_bytes", "png_size", "size_change_text"]


class FrameError(ValueError):
    """A screenshot that cannot be used (corrupt, empty, not an image)."""


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# Frames larger than this are refused from the PNG header, before any decode (issue 22: a 1.2 MB
# 20000x20000 PNG decoded to 1.2 GB of pixels). The hard cap is well above the largest screens
# (a 5K desktop window 5120x2880 = 14.7 MP, an iPad Pro 2752x2064) and keeps one decoded frame
# under ~150 MB; once the session knows its screen, a frame more than SCREEN_FACTOR times its longest
# side on either axis is refused too (a rotation swaps the sides and still passes).
MAX_FRAME_SIDE = 10_000
MAX_FRAME_PIXELS = 50_000_000
SCREEN_FACTOR = 2


_HASH_SAMPLES = 128  # pixels across the frame's short side `block_hash` reads
RECENT_COPIES = 8  # the oracle's copies of this many recent screens are kept by their bytes' digest
_RECENT_BYTES = 64 << 20  # and no more than this in all (8 phone screens at half size take ~16 MB)


class _RecentCopies:
    """The oracle's reduced copies of the last screens decoded, by their PNG's digest (issue 42): a
    screen seen again with the very same bytes (the list a cancelled dialog leaves, a launch screen
    after a reset: `Device.known_screens`) takes its copy from here instead of a ~15 ms decode, so its
    compare can begin at once. Equal digests are equal pixels; the arrays are never written in place."""

    def __init__(self, count: int, limit: int) -> None:
        self._copies: OrderedDict[tuple[str, int], np.ndarray] = OrderedDict()
        self._count, self._limit = count, limit
        self._lock = threading.Lock()

    def get(self, digest: str, scale_divisor: int) -> np.ndarray | None:
        with self._lock:
            copy = self._copies.get((digest, scale_divisor))
            if copy is not None:
                self._copies.move_to_end((digest, scale_divisor))
            return copy

    def put(self, digest: str, scale_divisor: int, copy: np.ndarray) -> None:
        with self._lock:
            self._copies[(digest, scale_divisor)] = copy
            self._copies.move_to_end((digest, scale_divisor))
            while len(self._copies) > self._count or sum(c.nbytes for c in self._copies.values()) > self._limit:
                self._copies.popitem(last=False)


_recent_copies = _RecentCopies(RECENT_COPIES, _RECENT_BYTES)


def _decode_pool() -> ThreadPoolExecutor:
    """One decode thread per process (`threads.own_thread`)."""
    return own_thread("guistate-decode")


def _imdecode(png: bytes) -> np.ndarray | None:
    _refuse_oversized(png)
    return cv2.imdecode(np.frombuffer(png, dtype=np.uint8), cv2.IMREAD_COLOR)


def _refuse_oversized(png: bytes, where: str = "") -> None:
    """The hard cap for every decode, whatever made the Frame (a device checks its screen's limit first)."""
    try:
        width, height = png_size(png)
    except FrameError:
        return  # not a PNG header: the decoder names what it is
    check_size(width, height, f"the frame{f' ({where})' if where else ''}")


def check_size(width: int, height: int, subject: str, screen: tuple[int, int] | None = None) -> None:
    """Refuse a frame too large to decode: above the hard cap, or above SCREEN_FACTOR times the
    session's `screen` (width, height) on either axis. `subject` starts the message ("screenshot
    from URL": it names the device)."""
    limit = MAX_FRAME_SIDE
    basis = f"the hard cap of {MAX_FRAME_SIDE} px a side and {MAX_FRAME_PIXELS // 1_000_000} megapixels"
    if screen is not None and max(screen) > 0:
        relative = SCREEN_FACTOR * max(screen)
        if relative < limit:
            limit = relative
            basis = f"{SCREEN_FACTOR}x the longest side of the session's {screen[0]}x{screen[1]} screen"
    if width > limit or height > limit or width * height > MAX_FRAME_PIXELS:
        raise FrameError(f"{subject} is {width}x{height} ({width * height / 1e6:.1f} megapixels), "
                         f"above the frame limit ({basis}); refused from its PNG header without decoding it "
                         "(a decompression bomb, or the capture is not of the screen)")


def _downscale(bgr: np.ndarray, scale_divisor: int) -> np.ndarray:
    height, width = bgr.shape[:2]
    size = (max(1, width // scale_divisor), max(1, height // scale_divisor))
    if scale_divisor == 2 and width % 2 == 0 and height % 2 == 0:
        # halving even sides, both are the mean of each 2x2 block rounded half up ((sum + 2) >> 2),
        # bit for bit (tests/core/test_frame_decode.py); the bilinear path costs ~0.8 ms against 1.5-6 ms
        # for a 1080x2340 frame on a loaded machine (issue 43)
        return cv2.resize(bgr, size, interpolation=cv2.INTER_LINEAR)
    return cv2.resize(bgr, size, interpolation=cv2.INTER_AREA)


def _decode_small(png: bytes, scale_divisor: int) -> np.ndarray | None:
    """The 1/2-scale pixels straight from the PNG, without the full-size image (~15 against ~21 ms
    decode + resize for a 1082x2402 Chromium frame): OpenCV's reduced decode of an even-sized PNG
    is bit-identical to `_downscale(full, 2)` (INTER_AREA; checked in tests/core/test_frame_decode.py).
    None where that does not hold (another divisor, an odd side, not a PNG header): decode in full."""
    if scale_divisor != 2:
        return None
    try:
        width, height = png_size(png)
    except FrameError:
        return None
    if width % 2 or height % 2:
        return None
    check_size(width, height, "the frame")
    return cv2.imdecode(np.frombuffer(png, dtype=np.uint8), cv2.IMREAD_REDUCED_COLOR_2)


def _decode_ahead(png: bytes, scale_divisor: int) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(full, small) pixels; full is None when only the oracle's small copy was needed and made."""
    small = _decode_small(png, scale_divisor)
    if small is not None:
        return None, small
    image = _imdecode(png)
    small = _downscale(image, scale_divisor) if image is not None and scale_divisor > 1 else None
    return image, small


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk, without decoding; `FrameError` if it is no PNG."""
    if len(png) < 24 or not png.startswith(_PNG_SIGNATURE) or png[12:16] != b"IHDR":
        raise FrameError(f"not a PNG image (starts with {png[:8]!r})")
    width, height = struct.unpack(">II", png[16:24])
    return int(width), int(height)


def describe_bytes(data: bytes | str, limit: int = 60) -> str:
    """What a payload looks like, for messages: HTML, JSON, a JPEG, empty, or its first bytes."""
    raw = data.encode("utf-8", "replace") if isinstance(data, str) else data
    head = raw[:512].lstrip().lower()
    shown = raw[:limit].decode("utf-8", "replace").strip().replace("\n", " ")
    if not raw.strip():
        return "an empty body"
    if head.startswith((b"<!doctype html", b"<html", b"<head", b"<body")) or b"<html" in head[:200]:
        return f"an HTML page ({len(raw)} bytes, starts with {shown!r})"
    if head.startswith((b"{", b"[")):
        return f"JSON, not an image ({len(raw)} bytes, starts with {shown!r})"
    if raw.startswith(b"\xff\xd8\xff"):
        return f"a JPEG image ({len(raw)} bytes), not a PNG"
    if head.startswith(b"<"):
        return f"XML or text markup ({len(raw)} bytes, starts with {shown!r})"
    return f"{len(raw)} bytes starting with {raw[:16]!r}"


def check_png(png: bytes, where: str, screen: tuple[int, int] | None = None) -> None:
    """Refuse, before anything decodes it, a screenshot that is not a usable PNG of a screen;
    the message names what came back and from `where` (the device URL). `screen`: the session's
    screen size once known, for the size limit (`check_size`)."""
    if not png:
        raise FrameError(f"screenshot from {where} is empty (0 bytes)")
    if not png.startswith(_PNG_SIGNATURE):
        raise FrameError(f"screenshot from {where} is not a PNG: the server sent {describe_bytes(png)}")
    width, height = png_size(png)
    if width < 2 or height < 2:
        raise FrameError(f"screenshot from {where} is a {width}x{height} frame, not a screen (a placeholder: is the "
                         "display off, the device locked, or the window secure?)")
    check_size(width, height, f"screenshot from {where}", screen)
    if b"IEND" not in png[-12:]:
        raise FrameError(f"screenshot from {where} is a truncated PNG: {len(png)} bytes of a {width}x{height} image "
                         "with no IEND chunk at the end (the transfer was cut short)")
    if len(png) * 200 < width * height:  # compresses like a uniform screen: only then is it worth a decode
        grey = cv2.imdecode(np.frombuffer(png, dtype=np.uint8), cv2.IMREAD_REDUCED_GRAYSCALE_8)
        if grey is not None and int(grey.max()) <= 2:
            raise FrameError(f"screenshot from {where} is entirely black ({width}x{height}, every pixel 0): a secure "
                             "window (FLAG_SECURE), the screen off or a locked device; the visual oracle cannot "
                             "judge it")


def size_change_text(before: Frame, after: Frame) -> str:
    """Why two frames cannot be compared: a rotation (width and height swapped) or another size change."""
    (bw, bh), (aw, ah) = before.size, after.size
    what = "the screen rotated" if (bw, bh) == (ah, aw) else "the screen size changed"
    return (f"{what} between before and after: before{before._where()} is {bw}x{bh}, after{after._where()} is "
            f"{aw}x{ah}; frames of different sizes cannot be compared (lock the orientation for the test, or "
            "start a new step after the rotation)")


@dataclass(eq=False)
class Frame:
    """One screenshot. `png` is what the device sent; pixels are decoded on first use."""

    png: bytes
    timestamp: float = field(default_factory=time.time)
    source: str = ""  # e.g. "step 3 before", for error messages and reports
    _bgr: np.ndarray | None = field(default=None, repr=False)
    _digest: str | None = field(default=None, repr=False)
    _grey_cache: dict[int, np.ndarray] = field(default_factory=dict, repr=False)
    _small_cache: dict[int, np.ndarray] = field(default_factory=dict, repr=False)
    _block_hashes: dict[int, int] = field(default_factory=dict, repr=False)  # kept when the pixels are released
    _decoding: Future[tuple[np.ndarray | None, np.ndarray | None]] | None = field(default=None, repr=False)
    _decoding_divisor: int = field(default=1, repr=False)
    # one full-size decode per frame, whichever thread needs it first (the step loop, the report
    # writer, `prefetch_full`'s task): the others wait for it rather than decode the same bytes again
    _full_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _full_queued: bool = field(default=False, repr=False)
    _generation: int = field(default=0, repr=False)  # bumped by release_pixels: a late decode is dropped
    released: bool = field(default=False, repr=False)  # the session's frame window dropped its pixels once

    @classmethod
    def from_array(cls, bgr: np.ndarray, *, timestamp: float | None = None, source: str = "") -> Frame:
        """Wrap already-decoded pixels (BGR, uint8); PNG bytes are produced on demand."""
        if bgr.ndim != 3 or bgr.shape[2] != 3 or bgr.dtype != np.uint8:
            raise FrameError(f"expected an HxWx3 uint8 BGR image, got shape {bgr.shape} dtype {bgr.dtype}")
        ok, encoded = cv2.imencode(".png", bgr)
        if not ok:
            raise FrameError("OpenCV could not encode the frame as PNG")
        frame = cls(png=encoded.tobytes(), timestamp=time.time() if timestamp is None else timestamp, source=source)
        frame._bgr = bgr
        return frame

    def again(self, *, timestamp: float | None = None, source: str = "") -> Frame:
        """A new screenshot with this one's very bytes (issue 42: a screen that did not change): a
        Frame of its own (time, source, its own release) with the digest and the oracle's half-size
        copies (decoded, or decoding) of this one, so the same bytes are not checked and decoded for
        the oracle again. Its bytes are a copy of their own and its full-size pixels are decoded for
        it when asked (who decodes a frame in full, and on which thread, stays per frame: the
        memory's learning and the report take them from the frame they hold). A released frame
        shares nothing decoded: its pixels are gone."""
        twin = Frame(png=bytes(bytearray(self.png)), timestamp=time.time() if timestamp is None else timestamp,
                     source=source)
        twin._digest = self._digest
        twin._block_hashes = self._block_hashes  # the same bytes: the same hash (ints, never changed once set)
        if not self.released:
            twin._small_cache = dict(self._small_cache)  # the arrays are shared, never written in place
            twin._grey_cache = dict(self._grey_cache)
            if self._decoding is not None:
                twin._decoding, twin._decoding_divisor = self._decoding, self._decoding_divisor
        return twin

    @property
    def digest(self) -> str:
        """Content hash of the PNG bytes: equal digests mean identical screenshots, no decode needed."""
        if self._digest is None:
            self._digest = hashlib.blake2b(self.png, digest_size=16).hexdigest()
        return self._digest

    def prefetch(self, scale_divisor: int = 2) -> None:
        """Start decoding (and the oracle's 1/`scale_divisor` copy) on the background thread;
        `bgr`/`small` then wait for it instead of decoding. Nothing happens for a frame already
        decoded (or decoding) or with no bytes. A frame whose digest is known and whose very bytes
        were decoded for one of the last screens takes that copy instead (`_RecentCopies`)."""
        if self._bgr is None and self._decoding is None and self.png and scale_divisor not in self._small_cache:
            recent = _recent_copies.get(self._digest, scale_divisor) if self._digest is not None else None
            if recent is not None:
                self._small_cache[scale_divisor] = recent
                return
            self._decoding_divisor = scale_divisor
            self._decoding = _decode_pool().submit(_decode_ahead, self.png, scale_divisor)

    def prefetch_full(self) -> None:
        """Start the full-size decode on the background thread, for a reader known to need every
        pixel later: the cross-run memory crops a tapped element's look from the before-frame once
        the step passed (issue 38), and the oracle's half-size decode does not serve it. `bgr`
        then finds the pixels decoded (or waits for that decode) instead of decoding on the step
        loop. Nothing happens for a frame already decoded (or queued) or with no bytes."""
        if self._bgr is None and not self._full_queued and self.png:
            self._full_queued = True
            _decode_pool().submit(self._decode_full, self._generation)

    def _decode_full(self, generation: int) -> None:
        """`prefetch_full`'s task: skipped when another thread is decoding this frame now (it
        will set the pixels) or the frame was released since; a corrupt frame is left for `bgr`
        to name."""
        if not self._full_lock.acquire(blocking=False):
            return
        try:
            if self._bgr is None and generation == self._generation:
                image = _imdecode(self.png)
                if image is not None and generation == self._generation:
                    self._bgr = image
        except FrameError:
            pass  # oversized: `bgr` raises it again, naming the frame, where it is asked for
        finally:
            self._full_lock.release()

    @property
    def bgr(self) -> np.ndarray:
        """Full-resolution pixels (decoded once). Raises `FrameError` naming the frame if corrupt."""
        image = self._bgr
        if image is None:
            if not self.png:
                raise FrameError(f"empty screenshot{self._where()}")
            with self._full_lock:
                image = self._bgr
                if image is None:
                    image = self._take_pending()
                    if image is None:
                        image = _imdecode(self.png)
                    if image is None:
                        head = self.png[:8]
                        raise FrameError(
                            f"corrupt screenshot{self._where()}: {len(self.png)} bytes that OpenCV cannot decode "
                            f"(starts with {head!r}; a PNG starts with b'\\x89PNG\\r\\n\\x1a\\n')"
                        )
                    self._bgr = image
        return image

    def _take_pending(self) -> np.ndarray | None:
        """Wait for a `prefetch` (if any), keep its small copy; its full pixels, or None."""
        pending, self._decoding = self._decoding, None
        if pending is None:
            return None
        try:
            image, small = pending.result()
        except CancelledError:  # a twin's frame released it before it ran (`again`): decode here
            return None
        if small is not None:
            self._small_cache[self._decoding_divisor] = small
            if self._digest is not None:
                _recent_copies.put(self._digest, self._decoding_divisor, small)
        return image

    @property
    def has_pixels(self) -> bool:
        """Whether decoded pixels are in memory now (a pending `prefetch` does not count). A reader
        other than the session (the report recorder) takes them with `decoded()` and must not call
        `bgr`/`small` on a released frame: that would decode and keep pixels alive outside the
        session's frame window."""
        return self._bgr is not None

    def decoded(self) -> np.ndarray | None:
        """The full-resolution pixels if decoded now, else None; never decodes. One attribute
        read, so a report writer on another thread gets pixels or None, never a torn state."""
        return self._bgr

    def decoded_small(self, scale_divisor: int) -> np.ndarray | None:
        """The cached 1/`scale_divisor` copy if there is one, else None; never computes it."""
        return self._small_cache.get(scale_divisor)

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels; read from the PNG header when nothing is decoded yet."""
        if self._bgr is None:
            try:
                return png_size(self.png)
            except FrameError:
                pass  # not a PNG header: decoding below names the real problem
        height, width = self.bgr.shape[:2]
        return width, height

    def grey(self, scale_divisor: int = 1) -> np.ndarray:
        """Greyscale pixels at 1/`scale_divisor` size, cached (the oracle's working copy)."""
        cached = self._grey_cache.get(scale_divisor)
        if cached is None:
            grey = cv2.cvtColor(self.bgr, cv2.COLOR_BGR2GRAY)
            if scale_divisor > 1:
                grey = _downscale(grey, scale_divisor)
            self._grey_cache[scale_divisor] = grey
            cached = grey
        return cached

    def small(self, scale_divisor: int = 1) -> np.ndarray:
        """Colour pixels at 1/`scale_divisor` size, cached: the oracle diffs colour, because two
        button colours can have the same grey level (blue (200,120,20) vs green (40,160,40) differ
        by 11 grey levels but 160 in the blue channel). At 1/2 scale the full image is not
        decoded for it (`_decode_small`); `bgr` decodes it when something needs full size."""
        if scale_divisor <= 1:
            return self.bgr
        cached = self._small_cache.get(scale_divisor)
        if cached is None and self._decoding is not None:
            image = self._take_pending()  # a background decode fills the cache
            if image is not None:
                self._bgr = image  # prefetch runs only on a frame with no pixels
            cached = self._small_cache.get(scale_divisor)
        if cached is None:
            if self._bgr is None:
                cached = _decode_small(self.png, scale_divisor)
            if cached is None:
                cached = _downscale(self.bgr, scale_divisor)  # names a corrupt frame
            self._small_cache[scale_divisor] = cached
        return cached

    def block_hash(self, scale_divisor: int = 2) -> int:
        """A 64-bit average hash of the screen (8x8 block means against their mean, of the 1/`scale_divisor`
        copy), cached: the cycle guard's fingerprint of a look (`cycles.screen_key`), which the step loop
        computes on the judge thread while the page source is read. The block means come from every
        `stride`-th pixel (each block still averages ~1000 of them): an area resize of the whole copy
        cost 2-8 ms a step for 64 numbers (issue 42)."""
        cached = self._block_hashes.get(scale_divisor)
        if cached is None:
            small = self.small(scale_divisor)
            stride = max(1, min(small.shape[:2]) // _HASH_SAMPLES)
            sampled = np.ascontiguousarray(small[::stride, ::stride])  # a strided view costs cv2 a slower copy
            grey = cv2.cvtColor(cv2.resize(sampled, (8, 8), interpolation=cv2.INTER_AREA), cv2.COLOR_BGR2GRAY)
            bits = (grey > grey.mean()).flatten()
            cached = self._block_hashes[scale_divisor] = int(np.packbits(bits).view(">u8")[0]) if bits.size == 64 else 0
        return cached

    def release_pixels(self) -> None:
        """Drop decoded pixels but keep PNG bytes, so long tests keep memory flat. `released`
        tells later readers (crops) to decode for themselves rather than keep pixels on it."""
        self._bgr = None
        self.released = True
        self._generation += 1  # a full decode still queued or running keeps nothing
        self._full_queued = False
        if self._decoding is not None:
            self._decoding.cancel()  # a decode already running finishes; its result is dropped
            self._decoding = None
        self._grey_cache.clear()
        self._small_cache.clear()

    def same_bytes(self, other: Frame) -> bool:
        """Equal PNG bytes. Compares bytes directly (memcmp, ~0.02 ms for 375 KB) unless both
        digests are already known: hashing two fresh frames costs ~0.8 ms."""
        if self.png is other.png:
            return True
        if len(self.png) != len(other.png):
            return False
        if self._digest is not None and other._digest is not None:
            return self._digest == other._digest
        return self.png == other.png

    def _where(self) -> str:
        return f" ({self.source})" if self.source else ""
