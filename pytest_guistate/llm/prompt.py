"""What the model is shown: tagged text sections, the UI tree's elements, and downscaled images.

Every user message is a list of content blocks; text sections are wrapped in `<tag>...</tag>` so
the reference policy (and cassette matching) can read them back without guessing. Element
bounds are given in the pixels of the *shown* image, the same space as a `tap(x, y)` answer;
`ImageScale.to_device` maps such a point back to the device's screenshot pixels.
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from pytest_guistate.core.frame import Frame, png_size
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.uitree import UINode, UITree
from pytest_guistate.core.uitree_platform import IOS
from pytest_guistate.llm.reference.api_limits import MANY_IMAGES, MAX_IMAGE_BASE64, MAX_IMAGE_SIDE, base64_length

__all__ = [
    "SYSTEMUI",
    "ImageScale",
    "cap_images",
    "context_of",
    "downscale_png",
    "element_lines",
    "elements_text",
    "fit_png",
    "image_block",
    "parse_elements",
    "parse_sections",
    "section",
    "shown_image",
]

SYSTEMUI = "com.android.systemui"  # the status bar: a ticking clock and a battery, never part of a task
_SECTION_RE = re.compile(r"<([a-z_]+)>\n(.*?)\n</\1>", re.DOTALL)


@dataclass(frozen=True)
class ImageScale:
    """A frame of `device` size shown to the model at `shown` size (aspect ratio kept)."""

    device: tuple[int, int]
    shown: tuple[int, int]

    @classmethod
    def for_frame(cls, width: int, height: int, divisor: float) -> ImageScale:
        if divisor < 1:
            raise ValueError(f"downscale divisor must be >= 1, got {divisor}")
        return cls((width, height), (max(1, round(width / divisor)), max(1, round(height / divisor))))

    def to_device(self, x: float, y: float) -> tuple[int, int]:
        """A point in the shown image -> the device pixel at the same relative position.

        The shown pixel (x, y) covers device pixels [x*sx, (x+1)*sx); its centre is (x+0.5)*sx.
        Out-of-image points raise: a model answering outside the picture is an error, not a tap."""
        (dw, dh), (sw, sh) = self.device, self.shown
        if not (0 <= x < sw and 0 <= y < sh):
            raise ValueError(f"point ({x}, {y}) is outside the {sw}x{sh} image the model was shown")
        return min(dw - 1, int((x + 0.5) * dw / sw)), min(dh - 1, int((y + 0.5) * dh / sh))

    def to_shown(self, box: Box) -> Box:
        (dw, dh), (sw, sh) = self.device, self.shown
        return Box(box.left * sw // dw, box.top * sh // dh, -(-box.right * sw // dw), -(-box.bottom * sh // dh))


def section(tag: str, body: str) -> dict[str, Any]:
    return {"type": "text", "text": f"<{tag}>\n{body}\n</{tag}>"}


def parse_sections(blocks: Iterable[Any]) -> dict[str, str]:
    """Tag -> body for every tagged text section in `blocks` (later sections win)."""
    found: dict[str, str] = {}
    for block in blocks:
        text = block if isinstance(block, str) else (block.get("text") if isinstance(block, dict) else None)
        if not isinstance(text, str):
            continue
        for tag, body in _SECTION_RE.findall(text):
            found[tag] = body
    return found


def downscale_png(png: bytes, divisor: float, *, max_width: int | None = None) -> tuple[bytes, tuple[int, int]]:
    """Re-encode a PNG at 1/`divisor` size (INTER_AREA), optionally capped to `max_width`."""
    image = cv2.imdecode(np.frombuffer(png, dtype=np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise ValueError(f"cannot decode a {len(png)}-byte image for the model")
    height, width = image.shape[:2]
    factor = 1.0 / divisor
    if max_width is not None and width * factor > max_width:
        factor = max_width / width
    if factor < 1.0:
        size = (max(1, round(width * factor)), max(1, round(height * factor)))
        image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    ok, encoded = cv2.imencode(".png", image)
    if not ok:
        raise ValueError("OpenCV could not encode the downscaled image")
    return encoded.tobytes(), (image.shape[1], image.shape[0])


def _over_limits(png: bytes) -> float:
    """How many times too large `png` is for the API (<= 1: it fits): 8000 px a side, 5 MB of base64."""
    width, height = png_size(png)
    return max(max(width, height) / MAX_IMAGE_SIDE, math.sqrt(base64_length(len(png)) / MAX_IMAGE_BASE64))


def fit_png(png: bytes) -> bytes:
    """`png` unchanged when the API accepts it, else downscaled until it does (issue 21 item 7)."""
    divisor = _over_limits(png)
    while divisor > 1.0:
        png, _ = downscale_png(png, divisor * 1.05)
        divisor = _over_limits(png)
    return png


def image_block(png: bytes) -> dict[str, Any]:
    png = fit_png(png)
    return {"type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(png).decode("ascii")}}


def shown_image(frame: Frame, divisor: float) -> tuple[dict[str, Any], ImageScale]:
    """The current frame as the model sees it, and the mapping back to device pixels. A frame the API
    would refuse at `divisor` (over 8000 px a side or 5 MB of base64) is shown smaller, with its scale."""
    width, height = frame.size
    while True:
        scale = ImageScale.for_frame(width, height, divisor)
        if scale.shown == scale.device:
            png = frame.png
        else:
            ok, encoded = cv2.imencode(".png", cv2.resize(frame.bgr, scale.shown, interpolation=cv2.INTER_AREA))
            if not ok:
                raise ValueError("OpenCV could not encode the downscaled frame")
            png = encoded.tobytes()
        over = _over_limits(png)
        if over <= 1.0:
            return image_block(png), scale
        divisor *= over * 1.05


def cap_images(blocks: list[dict[str, Any]], limit: int = MANY_IMAGES) -> list[dict[str, Any]]:
    """At most `limit` images, the newest kept (the current screenshot is the last block): at 20 or
    fewer the API's 2000 px many-image rule and its 100-image cap never apply."""
    images = [i for i, block in enumerate(blocks) if block.get("type") == "image"]
    dropped = set(images[: max(0, len(images) - limit)])
    if not dropped:
        return blocks
    note = {"type": "text", "text": f"({len(dropped)} older image(s) left out: at most {limit} per request)"}
    return [note] + [block for i, block in enumerate(blocks) if i not in dropped]


def _parents(tree: UITree) -> dict[int, UINode]:
    parents: dict[int, UINode] = {}
    for node in tree.nodes():
        for child in node.children:
            parents[id(child)] = node
    return parents


def _context(node: UINode, parents: dict[int, UINode], limit: int = 48) -> str:
    """What an element belongs to: its own children's texts (a list row), else the texts of the
    nearest ancestor that holds any ("Delete" -> the row's author and post)."""
    def texts_of(root: UINode) -> list[str]:
        return [n.text or n.content_desc for n in root.walk()
                if n is not node and (n.text or n.content_desc) and not (n.clickable and n is not root)]
    texts = texts_of(node) if node.children else []
    current = parents.get(id(node))
    while not texts and current is not None:
        texts = texts_of(current)
        current = parents.get(id(current))
    joined = " · ".join(dict.fromkeys(texts))  # a row's name often repeats as its image's description
    return joined if len(joined) <= limit else joined[: limit - 1] + "…"


def context_of(tree: UITree, node: UINode) -> str:
    """The texts of the row or container an element sits in (`in` of an element line), for any
    element: a price label's row is its product's name (a query's cached read, issue 46)."""
    return _context(node, _parents(tree))


def _names(node: UINode) -> dict[str, Any]:
    """How a row names its node. Android: text, content-desc, resource-id (as before). iOS: the
    label (or a text's value), the accessibility id when it is not just the label again, a field's
    typed value and a control's state -- never a switch's "0" as its name (issue 11)."""
    if node.platform != IOS:
        names: dict[str, Any] = {}
        if node.text:
            names["text"] = node.text
        if node.content_desc:
            names["desc"] = node.content_desc
        if node.resource_id:
            names["rid"] = node.resource_id.rpartition("/")[2]
        hint = node.attrs.get("hint")
        if hint and node.is_editable and hint != node.text:
            names["hint"] = hint  # an empty input's only name
        return names
    names = {"text": node.text} if node.text else {}
    if node.content_desc and node.content_desc != node.text:
        names["rid"] = node.content_desc
    if node.checkable:
        names["checked"] = node.checked
    elif node.value and node.value not in node.text and not node.password and node.kind != "Button":
        names["value"] = node.value
    return names


def _skipped(node: UINode, tree: UITree, modal: Box | None, controls: set[int]) -> bool:
    """Never part of a task: the status bar (a ticking clock), the keys of the soft keyboard on
    both platforms (typing is `type_text`; its action keys -- Return / Search -- stay, and the
    keyboard itself is one `Keyboard` row), and on iOS rows beyond the screen and the screen
    beneath an Alert (WebDriverAgent lists both; Android does not)."""
    if node.package == SYSTEMUI or node.bounds is None or node.bounds.is_empty or not node.displayed:
        return True
    if node.keyboard and id(node) not in controls:
        return True
    if node.platform != IOS:
        return False
    if node.kind in ("Key", "StatusBar"):
        return True
    if modal is not None:  # the dialog's nodes, and a control still reachable around it (a popover's dismiss region)
        return not modal.contains(node.bounds) and id(node) not in controls
    screen = tree.screen_box
    return screen is not None and not screen.intersects(node.bounds)


def element_lines(tree: UITree, scale: ImageScale, *, limit: int = 80) -> list[dict[str, Any]]:
    """The screen's controls (`tree.controls()`, a disabled one marked `disabled`) and text nodes
    (without the status bar), bounds in shown-image pixels; a soft keyboard that is up is one
    `{"id": "keyboard", "kind": "Keyboard", "at": ...}` row at the end (its keys are not listed).

    The same rows on both platforms: `kind` is the short type (`Button` for android.widget.Button
    and XCUIElementTypeButton), `tap`/`edit`/`scroll` come from the node's roles."""
    parents = _parents(tree)
    controls = {id(n) for n in tree.controls()}
    top = tree.modal() if tree.platform == IOS else None
    modal = top.bounds if top is not None else None
    rows: list[dict[str, Any]] = []
    for node in tree.nodes():
        if len(rows) >= limit:
            break
        if _skipped(node, tree, modal, controls):
            continue
        assert node.bounds is not None
        is_action = id(node) in controls
        if not is_action and not (node.text or node.content_desc):
            continue
        row: dict[str, Any] = {"id": node.index_path, "kind": node.kind}
        row.update(_names(node))
        row["at"] = scale.to_shown(node.bounds).as_list()
        if node.is_tappable:
            row["tap"] = True
        if node.is_editable:
            row["edit"] = True
        if node.is_scrollable:
            row["scroll"] = True
        if node.focused:
            row["focused"] = True
        if not node.enabled:
            row["disabled"] = True
        if is_action and not node.is_scrollable:
            context = _context(node, parents)
            if context:
                row["in"] = context
        rows.append(row)
    keys = tree.keyboard_box
    if keys is not None:  # not a node id: no tap target (Android's IME root may span the screen)
        rows.append({"id": "keyboard", "kind": "Keyboard", "at": scale.to_shown(keys).as_list()})
    return rows


def elements_text(rows: list[dict[str, Any]]) -> str:
    return "\n".join(json.dumps(row, ensure_ascii=False, separators=(",", ":")) for row in rows)


def parse_elements(body: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in body.splitlines() if line.strip().startswith("{")]
