"""Redaction before anything is written: password fields and named regions filled, secrets scrubbed.

Issue 4: "Frames and crops pass through redaction before anything is written". Redaction
happens at write time, never on the observation itself: the oracle must still see a password
field change when a character is typed, or typing a password would look like "no effect".

Three sources of what to hide:
- the password-marked nodes of the screen the image was taken from (`UITree.password_boxes()`),
  given to the redactor with `observe(tree)` (or per call);
- fixed regions named by an option or the `pytest_guistate_redact_regions` hook (screen pixels);
- secret strings (passwords a test typed): every string written to the journal, JSON or HTML is
  scrubbed of them, so "type 'hunter2' into password" becomes "type '[redacted]' into password";
- the `pytest_guistate_redact` hook (hookspecs.py), through `source`: per observed screen a
  `Redaction` of extra boxes and text patterns; a pattern scrubs every text written from then on
  and fills the screen nodes whose text or description it matches.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from pytest_guistate.core.geometry import Box

__all__ = ["MIN_SECRET_LEN", "REDACTED", "Redaction", "Redactor", "fill_boxes", "fill_pixels", "id_placeholder",
           "local_boxes", "scrub_repr"]

REDACTED = "[redacted]"
MIN_SECRET_LEN = 3  # shorter strings would scrub ordinary words ("a", "ok"); refused loudly
_FILL_BGR = (40, 40, 40)  # solid dark grey: clearly a redaction, not a rendering glitch


def id_placeholder(secret: str) -> str:
    """What stands for a secret inside a test id: `redacted-` and 8 hex digits of its SHA-256, so two
    ids that differ only in their secret keep distinct names, the same in every run. A digest of a
    low-entropy value (a 4-digit PIN) can be guessed by trying them all: give such a parameter `ids=`."""
    return "redacted-" + hashlib.sha256(secret.encode("utf-8")).hexdigest()[:8]


def fill_boxes(image: bytes, boxes: Iterable[Box], *, origin: tuple[int, int] = (0, 0)) -> bytes:
    """Fill `boxes` (screen pixels) solid in an encoded image whose top-left sits at `origin`.

    Returns the input bytes untouched when no box touches the image (no decode/encode cost);
    otherwise a PNG. Raises ValueError for bytes OpenCV cannot decode: an image we cannot redact
    must not be written.
    """
    boxes = [b for b in boxes if not b.is_empty]
    if not boxes:
        return image
    pixels = cv2.imdecode(np.frombuffer(image, np.uint8), cv2.IMREAD_COLOR)
    if pixels is None:
        raise ValueError(f"cannot redact: {len(image)} bytes are not an image OpenCV can decode")
    if not fill_pixels(pixels, boxes, origin=origin):
        return image
    ok, encoded = cv2.imencode(".png", pixels)
    if not ok:
        raise ValueError("OpenCV could not encode the redacted image")
    return encoded.tobytes()


def local_boxes(boxes: Iterable[Box], size: tuple[int, int], *, origin: tuple[int, int] = (0, 0)) -> list[Box]:
    """`boxes` (screen pixels) in the coordinates of a `size` (width, height) image at `origin`,
    clipped to it; boxes that miss the image are dropped. Needs no pixels, only the size."""
    width, height = size
    ox, oy = origin
    local = (Box(b.left - ox, b.top - oy, b.right - ox, b.bottom - oy).clamp(width, height) for b in boxes)
    return [b for b in local if not b.is_empty]


def fill_pixels(pixels: np.ndarray, boxes: Iterable[Box], *, origin: tuple[int, int] = (0, 0)) -> bool:
    """Fill `boxes` in decoded BGR pixels in place (the pixel half of `fill_boxes`, for callers
    that already hold pixels); True when any box touched the image."""
    height, width = pixels.shape[:2]
    touched = local_boxes(boxes, (width, height), origin=origin)
    for local in touched:
        pixels[local.top : local.bottom, local.left : local.right] = _FILL_BGR
    return bool(touched)


@dataclass
class Redaction:
    """What a `pytest_guistate_redact` implementation returns: boxes (screen pixels) to fill in
    the observed screen's images, and regular expressions to scrub from every text."""

    boxes: list[Box] = field(default_factory=list)
    patterns: list[str | re.Pattern[str]] = field(default_factory=list)


RedactionSource = Callable[[Any], Iterable["Redaction | None"]]


@dataclass
class Redactor:
    """What must not reach disk for one test: fixed regions, the current screen's password
    boxes, secret strings, and what the redact hook adds (`source`, called per observation)."""

    regions: list[Box] = field(default_factory=list)
    secrets: set[str] = field(default_factory=set)
    password_boxes: list[Box] = field(default_factory=list)
    patterns: list[re.Pattern[str]] = field(default_factory=list)
    source: RedactionSource | None = None

    def __post_init__(self) -> None:
        for secret in list(self.secrets):
            self.add_secret(secret)
        for pattern in list(self.patterns):
            self.add_pattern(pattern)

    def add_pattern(self, pattern: str | re.Pattern[str]) -> None:
        """Scrub every later text of matches of `pattern`; refuses one that matches the empty
        string (it would scrub between every two characters)."""
        if not isinstance(pattern, (str, re.Pattern)):
            raise TypeError(f"a redaction pattern must be a str or re.Pattern, got {type(pattern).__name__}")
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"redaction pattern {pattern!r} is not a valid regular expression: {exc}") from None
        if compiled.search("") is not None:
            raise ValueError(f"redaction pattern {compiled.pattern!r} matches the empty string; it would scrub "
                             "every text")
        if all(p.pattern != compiled.pattern or p.flags != compiled.flags for p in self.patterns):
            self.patterns.append(compiled)

    def ask(self, observation: Any) -> list[Box]:
        """Ask the redact hook about one observation (None: at the start); keeps its patterns,
        returns its boxes. A wrong type is an error naming it: a redaction must not be skipped."""
        boxes: list[Box] = []
        for found in self.source(observation) if self.source is not None else []:
            if found is None:
                continue
            if not isinstance(found, Redaction):
                raise TypeError(f"pytest_guistate_redact returned {found!r}; expected a pytest_guistate.Redaction")
            for pattern in found.patterns:
                self.add_pattern(pattern)
            for box in found.boxes:
                if not isinstance(box, Box):
                    raise TypeError(f"pytest_guistate_redact returned the box {box!r}; expected Box instances")
                boxes.append(box)
        return boxes

    def start(self) -> None:
        """Ask the redact hook once before anything is written: its patterns scrub from the first
        line on, its boxes become fixed regions of every screen."""
        self.regions.extend(self.ask(None))

    def screen_boxes(self, observation: Any) -> list[Box]:
        """Everything to fill in this screen's images: password fields, the hook's boxes and the
        nodes whose text or description a pattern matches."""
        tree = getattr(observation, "tree", None)
        boxes = list(tree.password_boxes()) if tree is not None else []
        boxes += self.ask(observation)
        if self.patterns and tree is not None:
            boxes += [node.bounds for node in tree.nodes() if node.bounds is not None
                      and any(p.search(node.text) or p.search(node.content_desc) for p in self.patterns)]
        return boxes

    def add_secret(self, secret: str) -> None:
        if not isinstance(secret, str):
            raise TypeError(f"a secret must be a str, got {type(secret).__name__}")
        if len(secret) < MIN_SECRET_LEN:
            raise ValueError(
                f"secret of {len(secret)} characters is too short to scrub safely (min {MIN_SECRET_LEN})"
            )
        self.secrets.add(secret)

    def observe(self, tree: Any) -> None:
        """Remember the password boxes of the screen the next images come from."""
        boxes = tree.password_boxes() if tree is not None else []
        self.password_boxes = list(boxes)

    def boxes(self, extra: Iterable[Box] = ()) -> list[Box]:
        return [*self.regions, *self.password_boxes, *extra]

    def image(self, data: bytes, *, origin: tuple[int, int] = (0, 0), extra: Iterable[Box] = ()) -> bytes:
        return fill_boxes(data, self.boxes(extra), origin=origin)

    def text(self, value: str) -> str:
        for secret in sorted(self.secrets, key=len, reverse=True):
            if secret in value:
                value = value.replace(secret, REDACTED)
        for pattern in self.patterns:
            value = pattern.sub(REDACTED, value)
        return value

    def spans(self, value: str) -> list[tuple[int, int]]:
        """Where `value` holds a secret or a pattern's match, as (start, end), sorted and not
        overlapping (a longer secret wins): what the action cache replaces by placeholders."""
        found: list[tuple[int, int]] = []
        for secret in sorted(self.secrets, key=len, reverse=True):
            found += [(m.start(), m.end()) for m in re.finditer(re.escape(secret), value)]
        for pattern in self.patterns:
            found += [(m.start(), m.end()) for m in pattern.finditer(value) if m.end() > m.start()]
        kept: list[tuple[int, int]] = []
        for start, end in sorted(found, key=lambda span: (span[0], -span[1])):
            if not kept or start >= kept[-1][1]:
                kept.append((start, end))
        return kept

    def ident(self, value: str) -> str:
        """`value`, a test id or name that becomes a folder, file or report name, with every secret
        and pattern match replaced by its `id_placeholder` (`text` would make ids collide)."""
        for secret in sorted(self.secrets, key=len, reverse=True):
            value = value.replace(secret, id_placeholder(secret))
        for pattern in self.patterns:
            value = pattern.sub(lambda match: id_placeholder(match.group(0)), value)
        return value

    @property
    def active(self) -> bool:
        """True when there is any text to scrub."""
        return bool(self.secrets or self.patterns)

    def scrub(self, value: Any) -> Any:
        """Deep copy of JSON-like data with every secret replaced in keys and string values."""
        if not self.active:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.scrub(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.scrub(v) for v in value]
        return value


def scrub_repr(obj: Any, text: Callable[[str], str]) -> None:
    """Scrub, in place, every string inside a pytest failure representation (`report.longrepr`:
    traceback entries, source lines, locals, the crash message, sections), keeping its structure
    so the terminal and JUnit XML render it as before. Duck-typed: nothing here imports pytest."""
    seen: set[int] = set()

    def clean(value: Any) -> Any:
        if isinstance(value, str):
            return text(value)
        if isinstance(value, (list, tuple)):
            items = [clean(v) for v in value]
            return items if isinstance(value, list) else tuple(items)
        if hasattr(value, "__dict__") and type(value).__module__.startswith("_pytest") and id(value) not in seen:
            seen.add(id(value))
            for name, attribute in list(vars(value).items()):
                object.__setattr__(value, name, clean(attribute))
        return value

    clean(obj)
