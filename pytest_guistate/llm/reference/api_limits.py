"""What the Messages API refuses with a 400 `invalid_request_error`, checked before a request is answered.

The reference server applies these (issue 21 item 7) so a first live run that would be refused by the
real API is refused offline too, with the API's own error shape; `prompt.py` keeps the plugin's own
requests inside them. The limits (Anthropic's vision and prompt-caching documentation):

- an image over 5 MB of base64, or over 8000 px on a side;
- more than 20 images in one request: then over 2000 px on a side;
- more than 100 images in one request;
- an assistant `tool_use` whose `tool_result` is not in the next (user) message, or a `tool_result`
  naming no `tool_use` of the previous message;
- more than 4 blocks with `cache_control`.
"""

from __future__ import annotations

import base64
import binascii
import io
from collections.abc import Iterator
from typing import Any

from PIL import Image, UnidentifiedImageError

__all__ = ["MANY_IMAGES", "MANY_IMAGES_SIDE", "MAX_CACHE_BREAKPOINTS", "MAX_IMAGES", "MAX_IMAGE_BASE64",
           "MAX_IMAGE_SIDE", "RequestRefused", "base64_length", "check_request"]

MAX_IMAGE_BASE64 = 5 * 1024 * 1024
MAX_IMAGE_SIDE = 8000
MANY_IMAGES = 20
MANY_IMAGES_SIDE = 2000
MAX_IMAGES = 100
MAX_CACHE_BREAKPOINTS = 4


class RequestRefused(ValueError):
    """A request the Messages API answers with HTTP 400 `invalid_request_error`; the text names the field."""


def base64_length(raw_bytes: int) -> int:
    return 4 * -(-raw_bytes // 3)


def _blocks(body: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """Every content block with its API path, tool results' inner blocks included."""
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        for j, block in enumerate(content if isinstance(content, list) else []):
            yield f"messages.{i}.content.{j}", block
            inner = block.get("content") if isinstance(block, dict) and block.get("type") == "tool_result" else None
            for k, nested in enumerate(inner if isinstance(inner, list) else []):
                yield f"messages.{i}.content.{j}.content.{k}", nested


def _image_size(path: str, data: str) -> tuple[int, int]:
    try:
        raw = base64.b64decode(data, validate=True)
        with Image.open(io.BytesIO(raw)) as image:
            return image.size
    except (binascii.Error, ValueError, UnidentifiedImageError, OSError):
        raise RequestRefused(f"{path}.image.source.base64: The image was specified using the image/* media type, "
                             "but the data could not be processed as an image") from None


def _check_images(body: dict[str, Any]) -> None:
    images = [(path, block) for path, block in _blocks(body) if isinstance(block, dict) and block.get("type") == "image"]
    if len(images) > MAX_IMAGES:
        raise RequestRefused(f"messages: Too many images in the request: {len(images)} > {MAX_IMAGES}")
    many = len(images) > MANY_IMAGES
    side_limit = MANY_IMAGES_SIDE if many else MAX_IMAGE_SIDE
    for path, block in images:
        source = block.get("source") or {}
        if source.get("type") != "base64":
            continue
        data = str(source.get("data") or "")
        if len(data) > MAX_IMAGE_BASE64:
            raise RequestRefused(f"{path}.image.source.base64: image exceeds 5 MB maximum: {len(data)} bytes > "
                                 f"{MAX_IMAGE_BASE64} bytes")
        width, height = _image_size(path, data)
        if max(width, height) > side_limit:
            which = " for many-image requests" if many else ""
            raise RequestRefused(f"{path}.image.source.base64.data: At least one of the image dimensions exceed max "
                                 f"allowed size{which}: {side_limit} pixels (got {width}x{height})")


def _ids(message: Any, kind: str, key: str) -> list[str]:
    content = message.get("content") if isinstance(message, dict) else None
    return [str(b.get(key)) for b in content if isinstance(b, dict) and b.get("type") == kind] \
        if isinstance(content, list) else []


def _check_tool_pairs(body: dict[str, Any]) -> None:
    messages = body.get("messages") or []
    for i, message in enumerate(messages):
        if isinstance(message, dict) and message.get("role") == "assistant":
            uses = _ids(message, "tool_use", "id")
            answered = set(_ids(messages[i + 1], "tool_result", "tool_use_id")) if i + 1 < len(messages) else set()
            missing = [u for u in uses if u not in answered]
            if missing:
                raise RequestRefused(f"messages.{i + 1}: `tool_use` ids were found without `tool_result` blocks "
                                     f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                                     "corresponding `tool_result` block in the next message.")
        results = _ids(message, "tool_result", "tool_use_id")
        offered = set(_ids(messages[i - 1], "tool_use", "id")) if i > 0 else set()
        unexpected = [r for r in results if r not in offered]
        if unexpected:
            raise RequestRefused(f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` blocks: "
                                 f"{', '.join(unexpected)}. Each `tool_result` block must have a corresponding "
                                 "`tool_use` block in the previous message.")


def _check_cache_breakpoints(body: dict[str, Any]) -> None:
    marked = sum(isinstance(t, dict) and "cache_control" in t for t in body.get("tools") or [])
    system = body.get("system")
    marked += sum(isinstance(b, dict) and "cache_control" in b for b in (system if isinstance(system, list) else []))
    marked += sum(isinstance(b, dict) and "cache_control" in b for _, b in _blocks(body))
    if marked > MAX_CACHE_BREAKPOINTS:
        raise RequestRefused(f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. "
                             f"Found {marked}.")


def check_request(body: dict[str, Any]) -> None:
    """Raise `RequestRefused` for the first limit `body` breaks (see the module docstring)."""
    _check_tool_pairs(body)
    _check_cache_breakpoints(body)
    _check_images(body)
