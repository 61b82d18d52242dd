"""Token counting for the reference server and the cost benchmark.

Images follow Anthropic's documented rule: an image whose long edge exceeds 1568 px (or whose area
exceeds ~1.15 megapixels) is first scaled down keeping its aspect ratio, then costs
`width * height / 750` tokens. Text uses an *approximation* (no Claude tokenizer is available
offline): letter runs cost one token per 5 letters (at least 1), digit runs one per 3 digits,
runs of other symbols one per 2 characters. It is deterministic and within ~20% of BPE counts on
English and JSON, which is enough to compare configurations; it is not the API's count.
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Iterable
from typing import Any

from pytest_guistate.core.frame import png_size

__all__ = ["TEXT_COUNTER", "block_tokens", "image_tokens", "request_tokens", "text_tokens"]

TEXT_COUNTER = "guistate-approx-1 (letter runs/5, digit runs/3, symbol runs/2)"
MAX_LONG_EDGE = 1568
MAX_PIXELS = 1_150_000
_PIECES = re.compile(r"[^\W\d_]+|\d+|[^\w\s]+|_+")


def image_tokens(width: int, height: int) -> int:
    """Anthropic's rule: resize to fit 1568 px / 1.15 MP, then w*h/750 (rounded up)."""
    if width <= 0 or height <= 0:
        raise ValueError(f"image size must be positive, got {width}x{height}")
    scale = min(1.0, MAX_LONG_EDGE / max(width, height), math.sqrt(MAX_PIXELS / (width * height)))
    w, h = max(1, int(width * scale)), max(1, int(height * scale))
    return math.ceil(w * h / 750)


def text_tokens(text: str) -> int:
    total = 0
    for piece in _PIECES.findall(text):
        if piece[0].isdigit():
            total += math.ceil(len(piece) / 3)
        elif piece[0].isalpha():
            total += math.ceil(len(piece) / 5)
        else:
            total += math.ceil(len(piece) / 2)
    return total


def block_tokens(block: Any) -> int:
    """Tokens of one content block (text, image, tool_use, tool_result) or a plain string."""
    if isinstance(block, str):
        return text_tokens(block)
    if not isinstance(block, dict):
        return text_tokens(json.dumps(block, default=str))
    kind = block.get("type")
    if kind == "text":
        return text_tokens(str(block.get("text", "")))
    if kind == "image":
        source = block.get("source") or {}
        if source.get("type") == "base64":
            width, height = png_size(base64.b64decode(source.get("data", "")))
            return image_tokens(width, height)
        return image_tokens(1000, 1000)  # URL images: size unknown here; a fixed, stated guess
    if kind == "tool_use":
        return text_tokens(str(block.get("name", ""))) + text_tokens(json.dumps(block.get("input", {})))
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, list):
            return sum(block_tokens(b) for b in content)
        return text_tokens(str(content))
    return text_tokens(json.dumps(block, default=str))


def _content_tokens(content: Any) -> int:
    if isinstance(content, str):
        return text_tokens(content)
    return sum(block_tokens(b) for b in content or [])


def request_segments(body: dict[str, Any]) -> list[tuple[int, bool]]:
    """The request in Anthropic's cache order (tools, system, messages) as (tokens, breakpoint) pieces."""
    pieces: list[tuple[int, bool]] = []
    for tool in body.get("tools") or []:
        spec = {k: v for k, v in tool.items() if k != "cache_control"}
        pieces.append((text_tokens(json.dumps(spec, sort_keys=True)), "cache_control" in tool))
    system = body.get("system")
    if isinstance(system, str):
        pieces.append((text_tokens(system), False))
    else:
        for block in system or []:
            pieces.append((block_tokens(block), "cache_control" in block))
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            pieces.append((text_tokens(content) + 4, False))
            continue
        for block in content or []:
            pieces.append((block_tokens(block), isinstance(block, dict) and "cache_control" in block))
        pieces.append((4, False))  # role framing
    return pieces


def request_tokens(body: dict[str, Any]) -> int:
    return sum(tokens for tokens, _ in request_segments(body))


def sum_tokens(values: Iterable[int]) -> int:
    return sum(values)
