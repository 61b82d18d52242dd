"""Pixels for the simulated phone: a cached base layer plus small dynamic overlays.

The base layer (everything that only changes when app state changes) is painted with Pillow
once per distinct view tree and kept as a BGR array. The deliberate noise sources of a real
phone - the ticking status-bar clock, the blinking cursor, loading spinners - are painted per
screenshot on a copy, so a screenshot of an unchanged screen costs one array copy plus the PNG
encode, and identical frames are served from a byte cache by the phone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.sim.apps.base import RGB, Metrics, View

__all__ = ["Overlay", "Renderer", "cursor_box", "font", "text_width", "view_signature", "wrap"]

_EDIT_PAD = 24  # reference px between an EditText's left edge and its text


@lru_cache(maxsize=64)
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's bundled FreeType font (Pillow >= 10.1): no system fonts needed."""
    return ImageFont.load_default(size=max(6, size))


def text_width(text: str, size: int) -> int:
    return math.ceil(font(size).getlength(text))


@lru_cache(maxsize=4096)
def wrap(text: str, size: int, width: int, max_lines: int) -> tuple[str, ...]:
    """Greedy word wrap, ellipsizing the last line like a TextView with `maxLines` (cached: re-renders
    of a screen wrap the same strings again)."""
    words, line = text.split(), ""
    lines: list[str] = []
    for word in words:
        trial = f"{line} {word}".strip()
        if text_width(trial, size) <= width or not line:
            line = trial
        else:
            lines.append(line)
            line = word
    if line or not lines:
        lines.append(line)
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] += "\u2026"
    for i, current in enumerate(lines):
        while text_width(current, size) > width and len(current) > 1:
            current = current[:-2] + "\u2026"
        lines[i] = current
    return tuple(lines)


def _edit_text_x(view: View, scale: float) -> int:
    return view.box.left + round(_EDIT_PAD * scale)


def cursor_box(view: View, scale: float) -> Box:
    """Where the blinking cursor of a focused EditText is drawn (end of its text)."""
    size = view.style.size
    if view.password:
        advance = round(size * 0.6) * len(view.text)
    else:
        advance = text_width(view.text, size)
    x = _edit_text_x(view, scale) + advance + max(1, round(2 * scale))
    cy = (view.box.top + view.box.bottom) // 2
    half = round(size * 0.6)
    return Box(x, cy - half, x + max(2, round(4 * scale)), cy + half).intersection(view.box)


def view_signature(root: View) -> tuple[Any, ...]:
    """Everything the base layer depends on (the clock's text is an overlay, so it is left out)."""
    return tuple(
        (v.key, v.cls, v.box, "" if v.style.kind == "clock" else v.text, v.style, v.focused, v.checked,
         v.enabled, v.selected, v.password, v.clip, v.desc if v.style.kind in ("avatar", "image") else "")
        for v in root.walk()
    )


@dataclass(frozen=True)
class Overlay:
    """One dynamic part painted on top of the base layer for a single screenshot."""

    kind: str  # clock|cursor|spinner
    box: Box
    text: str = ""
    phase: int = 0  # spinner angle step
    bg: RGB = (255, 255, 255)
    fg: RGB = (33, 33, 33)
    size: int = 40


class Renderer:
    """Paints view trees for one screen size; keeps the last few base layers."""

    SPINNER_STEPS = 12

    def __init__(self, metrics: Metrics) -> None:
        self.m = metrics
        self._cache: dict[tuple[Any, ...], np.ndarray] = {}

    def base(self, root: View) -> np.ndarray:
        key = view_signature(root)
        hit = self._cache.get(key)
        if hit is None:
            image = Image.new("RGB", (self.m.width, self.m.height), (255, 255, 255))
            self._paint(ImageDraw.Draw(image), image, root, 0, 0)
            hit = cv2.cvtColor(np.asarray(image), cv2.COLOR_RGB2BGR)
            hit.setflags(write=False)
            if len(self._cache) >= 8:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = hit
        return hit

    def compose(self, base: np.ndarray, overlays: list[Overlay]) -> np.ndarray:
        frame = base.copy()
        for item in overlays:
            box = item.box.clamp(self.m.width, self.m.height)
            if box.is_empty:
                continue
            if item.kind == "cursor":
                frame[box.top:box.bottom, box.left:box.right] = item.fg[::-1]
                continue
            patch = Image.new("RGB", (box.width, box.height), item.bg)
            draw = ImageDraw.Draw(patch)
            if item.kind == "clock":
                draw.text((0, box.height // 2), item.text, font=font(item.size), fill=item.fg, anchor="lm")
            elif item.kind == "spinner":
                pad = max(2, box.width // 6)
                start = item.phase * 360 // self.SPINNER_STEPS
                draw.arc([pad, pad, box.width - pad, box.height - pad], start, start + 270, fill=item.fg,
                         width=max(2, box.width // 12))
            frame[box.top:box.bottom, box.left:box.right] = cv2.cvtColor(np.asarray(patch), cv2.COLOR_RGB2BGR)
        return frame

    @staticmethod
    def encode(frame: np.ndarray) -> bytes:
        ok, buf = cv2.imencode(".png", frame)
        if not ok:
            raise RuntimeError("cv2.imencode failed to encode the sim frame as PNG")
        return buf.tobytes()

    # -- painters -------------------------------------------------------------------------
    def _paint(self, draw: ImageDraw.ImageDraw, image: Image.Image, view: View, dx: int, dy: int) -> None:
        b = Box(view.box.left + dx, view.box.top + dy, view.box.right + dx, view.box.bottom + dy)
        self._paint_one(draw, view, b)
        if view.clip and view.children:
            sub = Image.new("RGB", (max(1, b.width), max(1, b.height)), view.style.bg or (255, 255, 255))
            sub_draw = ImageDraw.Draw(sub)
            for child in view.children:
                self._paint(sub_draw, sub, child, dx - view.box.left, dy - view.box.top)
            image.paste(sub, (b.left, b.top))
            return
        for child in view.children:
            self._paint(draw, image, child, dx, dy)

    def _paint_one(self, draw: ImageDraw.ImageDraw, view: View, b: Box) -> None:
        s, px = view.style, self.m.px
        rect = [b.left, b.top, b.right - 1, b.bottom - 1]
        if b.is_empty:
            return
        if s.shadow:
            off = max(2, px(8))
            draw.rounded_rectangle([b.left + off // 2, b.top + off, b.right - 1 + off // 2, b.bottom - 1 + off],
                                   radius=s.radius, fill=(160, 160, 160))
        if s.bg is not None and s.kind not in ("switch", "checkbox", "avatar", "check", "spinner"):
            if s.radius:
                draw.rounded_rectangle(rect, radius=s.radius, fill=s.bg, outline=s.border)
            else:
                draw.rectangle(rect, fill=s.bg, outline=s.border)
        elif s.border is not None and s.kind not in ("edit", "checkbox"):
            draw.rectangle(rect, outline=s.border, width=max(1, px(2)))
        painter = getattr(self, f"_p_{s.kind}", None)
        if painter is not None:
            painter(draw, view, b)

    def _text_block(self, draw: ImageDraw.ImageDraw, view: View, b: Box, inset: int) -> None:
        s = view.style
        lines = wrap(view.text, s.size, max(1, b.width - 2 * inset), s.max_lines)
        line_h = int(s.size * 1.25)
        if s.max_lines > 1:  # multi-line text starts at the top, like a wrapping TextView
            top = b.top + line_h // 2
        else:
            top = (b.top + b.bottom) // 2 - line_h * len(lines) // 2 + line_h // 2
        for i, line in enumerate(lines):
            if s.align == "center":
                x, anchor = (b.left + b.right) // 2, "mm"
            elif s.align == "right":
                x, anchor = b.right - inset, "rm"
            else:
                x, anchor = b.left + inset, "lm"
            y = top + i * line_h
            draw.text((x, y), line, font=font(s.size), fill=s.fg, anchor=anchor)
            if s.bold:  # faux bold: a second pass 1 px right (10x cheaper than stroke_width=1)
                draw.text((x + 1, y), line, font=font(s.size), fill=s.fg, anchor=anchor)

    def _p_row(self, draw: ImageDraw.ImageDraw, view: View, b: Box) -> None:
        """List rows carry their divider (an ItemDecoration on Android: pixels, not a node)."""
        thick = max(1, self.m.px(2))
        draw.rectangle([b.left, b.bottom - thick, b.right - 1, b.bottom - 1], fill=(224, 224, 224))

    def _p_text(self, draw: ImageDraw.ImageDraw, view: View, b: Box) -> None:
        if view.text:
            self._text_block(draw, view, b, 0)

    def _p_button(self, draw: ImageDraw.ImageDraw, view: View, b: Box) -> None:
        self._text_block(draw, view, b, self.m.px(16))

    def _p_edit(self, draw: ImageDraw.ImageDraw, view: View, b: Box) -> None:
        s, px = view.style, self.m.px
        draw.rounded_rectangle([b.left, b.top, b.right - 1, b.bottom - 1], radius=px(12), outline=s.border,
                               width=max(1, px(4) if view.focused else px(2)))
        x, cy = b.left + px(_EDIT_PAD), (b.top + b.bottom) // 2
        if view.password and view.text:
            step, r = round(s.size * 0.6), max(2, s.size // 6)
            for i in range(len(view.text)):
                cx = x + i * step + step // 2
                if cx + r < b.right:
                    draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=s.fg)
        elif view.text:
            draw.text((x, cy), view.text, font=font(s.size), fill=s.fg, anchor="lm")
        elif s.hint:
            draw.text((x, cy), s.hint, font=font(s.size), fill=(150, 150, 150), anchor="lm")

    def _p_switch(self, draw: ImageDraw.ImageDraw, view: View, b: Box) -> None:
        on = view.checked
        h = b.height
        track = [b.left, b.top + h // 4, b.right - 1, b.bottom - 1 - h // 4]
        draw.rounded_rectangle(track, radius=h // 4, fill=(view.style.bg or (0, 150, 136)) if on else (189, 189, 189))
        r = h // 2 - 2
        cx = b.right - r - 2 if on else b.left + r + 2
        draw.ellipse([cx - r, b.top + 2, cx + r, b.bottom - 3], fill=(255, 255, 255), outline=(120, 120, 120))

    def _p_checkbox(self, draw: ImageDraw.ImageDraw, view: View, b: Box) -> None:
        color = view.style.bg or (0, 150, 136)
        rect = [b.left, b.top, b.right - 1, b.bottom - 1]
        if view.checked:
            draw.rounded_rectangle(rect, radius=self.m.px(6), fill=color)
            self._checkmark(draw, b, (255, 255, 255))
        else:
            draw.rounded_rectangle(rect, radius=self.m.px(6), outline=(120, 120, 120), width=max(1, self.m.px(4)))

    def _p_check(self, draw: ImageDraw.ImageDraw, view: View, b: Box) -> None:
        if view.checked:
            draw.ellipse([b.left, b.top, b.right - 1, b.bottom - 1], fill=view.style.bg or (0, 150, 136),
                         outline=(255, 255, 255), width=max(1, self.m.px(4)))
            self._checkmark(draw, b, (255, 255, 255))
        else:
            draw.ellipse([b.left, b.top, b.right - 1, b.bottom - 1], outline=(255, 255, 255), width=max(1, self.m.px(4)))

    def _checkmark(self, draw: ImageDraw.ImageDraw, b: Box, color: RGB) -> None:
        w, h = b.width, b.height
        pts = [(b.left + w * 0.25, b.top + h * 0.52), (b.left + w * 0.43, b.top + h * 0.7),
               (b.left + w * 0.76, b.top + h * 0.32)]
        draw.line(pts, fill=color, width=max(2, w // 9))

    def _p_image(self, draw: ImageDraw.ImageDraw, view: View, b: Box) -> None:
        """A photo-like tile: sky colour (bg), a sun and a hill in the accent colour (fg)."""
        w, h = b.width, b.height
        r = max(2, min(w, h) // 8)
        sx, sy = b.left + int(w * 0.72), b.top + int(h * 0.28)
        draw.ellipse([sx - r, sy - r, sx + r, sy + r], fill=(255, 236, 179))
        draw.polygon([(b.left, b.bottom - 1), (b.left + int(w * 0.38), b.top + int(h * 0.45)),
                      (b.left + int(w * 0.75), b.bottom - 1)], fill=view.style.fg)
        if view.style.glyph:
            draw.text((b.left + self.m.px(12), b.bottom - self.m.px(12)), view.style.glyph,
                      font=font(self.m.px(30)), fill=(255, 255, 255), anchor="ld")

    def _p_avatar(self, draw: ImageDraw.ImageDraw, view: View, b: Box) -> None:
        draw.ellipse([b.left, b.top, b.right - 1, b.bottom - 1], fill=view.style.bg)
        draw.text(b.center, view.style.glyph, font=font(view.style.size), fill=view.style.fg, anchor="mm")

    def _p_spinner(self, draw: ImageDraw.ImageDraw, view: View, b: Box) -> None:
        draw.ellipse([b.left, b.top, b.right - 1, b.bottom - 1], fill=(255, 255, 255), outline=(200, 200, 200))

    def _p_battery(self, draw: ImageDraw.ImageDraw, view: View, b: Box) -> None:
        px, fg = self.m.px, view.style.fg
        nub = max(2, px(6))
        body = [b.left, b.top, b.right - 1 - nub, b.bottom - 1]
        draw.rounded_rectangle(body, radius=px(4), outline=fg, width=max(1, px(3)))
        draw.rectangle([b.right - nub, b.top + b.height // 3, b.right - 1, b.bottom - 1 - b.height // 3], fill=fg)
        inner = max(1, px(6))
        level = int((body[2] - body[0] - 2 * inner) * 0.87)
        draw.rectangle([b.left + inner, b.top + inner, b.left + inner + level, b.bottom - 1 - inner], fill=fg)

    def _p_cart(self, draw: ImageDraw.ImageDraw, view: View, b: Box) -> None:
        w, h, fg = b.width, b.height, view.style.fg
        lw = max(2, self.m.px(5))
        draw.line([(b.left + w * 0.1, b.top + h * 0.2), (b.left + w * 0.25, b.top + h * 0.2),
                   (b.left + w * 0.35, b.top + h * 0.65), (b.left + w * 0.8, b.top + h * 0.65),
                   (b.left + w * 0.88, b.top + h * 0.32), (b.left + w * 0.28, b.top + h * 0.32)], fill=fg, width=lw)
        r = max(2, w // 14)
        for cx in (b.left + w * 0.4, b.left + w * 0.75):
            draw.ellipse([cx - r, b.top + h * 0.78 - r, cx + r, b.top + h * 0.78 + r], fill=fg)
