"""A bounded, readable transcript of each Messages call, for the trace viewer.

Cassettes hold the full requests (to replay them); the viewer needs what a person reads: the
newest user turn's text (the screen description, task state and question), the model's answer
(text and tool calls) and small thumbnails of the images sent. Texts are cut to `MAX_CHARS`
and at most `MAX_IMAGES` thumbnails are kept per call, so a 30-turn run adds tens of kilobytes.
The recorder scrubs registered secrets from it before it reaches the journal.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

__all__ = ["MAX_CHARS", "MAX_IMAGES", "transcript_entry"]

MAX_CHARS = 4000
MAX_IMAGES = 2
THUMB_SIDE = 160


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + f"\n... ({len(text) - MAX_CHARS} more characters)"


def _thumb(block: dict[str, Any]) -> str | None:
    from pytest_guistate.report.images import data_uri, thumbnail

    source = block.get("source") or {}
    try:
        raw = base64.b64decode(str(source.get("data", "")), validate=True)
        return data_uri(thumbnail(raw, THUMB_SIDE))
    except (binascii.Error, ValueError):
        return None


def transcript_entry(purpose: str, step: int | None, messages: list[dict[str, Any]], answer: Any,
                     usage: dict[str, Any]) -> dict[str, Any]:
    """{purpose, step, prompt, images[], answer, usage} of one call (only the newest user turn)."""
    last: dict[str, Any] = next((m for m in reversed(messages) if m.get("role") == "user"), {})
    content = last.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    texts: list[str] = []
    images: list[str] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "image" and len(images) < MAX_IMAGES:
            thumb = _thumb(block)
            if thumb:
                images.append(thumb)
        elif block.get("type") == "tool_result":
            texts.append(f"[tool result] {json.dumps(block.get('content'), ensure_ascii=False, default=str)}")
    said = []
    for block in getattr(answer, "content", None) or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            said.append(str(getattr(block, "text", "")))
        elif kind == "tool_use":
            said.append(f"{getattr(block, 'name', '')}({json.dumps(getattr(block, 'input', {}), ensure_ascii=False)})")
    return {"purpose": purpose, "step": step, "prompt": _cut("\n".join(texts)), "images": images,
            "answer": _cut("\n".join(said)), "usage": usage}
