"""A tiny but real `PhoneModel` for the server's tests: a note list that draws itself with Pillow.

It lets the server be tested independently of the real phone's apps: tapping "Add" appends a
row, tapping a row's delete button removes that row, an edit field takes text, and every state
change is visible in both the tree and the pixels.
"""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable
from typing import Any

from PIL import Image, ImageDraw

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.sim.model import AppState, SimError, SimNode

PKG = "com.example.notes"
ROW_H = 120


def wait_until(condition: Callable[[], bool], what: str, timeout_s: float = 10.0) -> None:
    """Poll `condition` until it holds; fail naming `what` after `timeout_s` (a bound, not a timing).

    Tests wait for the state they need (a find polling inside the server) instead of sleeping a
    guessed time that a busy machine can overrun.
    """
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:g}s waiting until {what}")
        time.sleep(0.005)


class TinyPhone:
    def __init__(self, width: int = 360, height: int = 640) -> None:
        self.width, self.height = width, height
        self.rows = ["alpha", "beta", "gamma"]
        self.field = ""
        self.focused = False
        self.running = True
        self.log: list[dict[str, Any]] = []
        self.faults: dict[str, Any] = {}
        self.closed = False
        self.root_calls = 0  # every look at the tree (a find's poll is one): tests wait on it
        self._calls_lock = threading.Lock()

    @classmethod
    def from_capabilities(cls, caps: dict[str, Any]) -> TinyPhone:
        screen = caps.get("guistate:screen", {"width": 360, "height": 640})
        if not isinstance(screen.get("width"), int) or screen["width"] < 100:
            raise ValueError(f"guistate:screen width must be an int >= 100, got {screen!r}")
        return cls(screen["width"], screen["height"])

    def _node(self, key: str, cls: str, box: Box, **kw: Any) -> SimNode:
        return SimNode(key=key, cls=cls, bounds=box, package=PKG, **kw)

    def root(self) -> SimNode:
        with self._calls_lock:
            self.root_calls += 1
        w = self.width
        children = [
            self._node(
                "title", "android.widget.TextView", Box(0, 0, w, 80), text="Notes", resource_id=f"{PKG}:id/title"
            ),
            self._node(
                "add",
                "android.widget.Button",
                Box(w - 120, 0, w, 80),
                text="Add",
                content_desc="add note",
                resource_id=f"{PKG}:id/add",
                clickable=True,
            ),
            self._node(
                "field",
                "android.widget.EditText",
                Box(0, 80, w, 160),
                text=self.field,
                focusable=True,
                focused=self.focused,
                clickable=True,
                resource_id=f"{PKG}:id/field",
            ),
        ]
        for i, name in enumerate(self.rows):
            top = 160 + i * ROW_H
            delete = self._node(
                f"row/{name}/delete",
                "android.widget.ImageButton",
                Box(w - 100, top, w, top + ROW_H),
                content_desc=f"delete {name}",
                clickable=True,
                resource_id=f"{PKG}:id/delete",
            )
            label = self._node(
                f"row/{name}/label",
                "android.widget.TextView",
                Box(0, top, w - 100, top + ROW_H),
                text=name,
                resource_id=f"{PKG}:id/label",
            )
            children.append(
                self._node(
                    f"row/{name}", "android.widget.LinearLayout", Box(0, top, w, top + ROW_H), children=[label, delete]
                )
            )
        return self._node("root", "android.widget.FrameLayout", Box(0, 0, w, self.height), children=children)

    def page_source(self) -> str:
        def dump(node: SimNode) -> str:
            inner = "".join(dump(child) for child in node.children)
            return f'<{node.cls} text="{node.text}" bounds="{node.bounds.to_bounds()}">{inner}</{node.cls}>'

        return f"<hierarchy>{dump(self.root())}</hierarchy>"

    def screenshot_png(self) -> bytes:
        image = Image.new("RGB", (self.width, self.height), "white")
        draw = ImageDraw.Draw(image)
        for node in self.root().walk():
            if node.cls == "android.widget.LinearLayout":
                draw.rectangle(node.bounds.as_list(), outline="gray")
            elif node.cls == "android.widget.ImageButton":
                draw.rectangle(node.bounds.as_list(), fill="red")
            elif node.text:
                draw.text((node.bounds.left + 8, node.bounds.top + 8), node.text, fill="black")
        out = io.BytesIO()
        image.save(out, format="PNG", compress_level=1)
        return out.getvalue()

    def _hit(self, x: int, y: int) -> SimNode | None:
        hits = [n for n in self.root().walk() if n.bounds.contains_point(x, y) and (n.clickable or n.focusable)]
        return hits[-1] if hits else None

    def tap(self, x: int, y: int) -> None:
        node = self._hit(x, y)
        self.focused = node is not None and node.key == "field"
        if node is None:
            return
        if node.key == "add":
            self.rows.append(f"note{len(self.rows)}")
            self.log.append({"action": "add", "row": self.rows[-1]})
        elif node.key.endswith("/delete"):
            name = node.key.split("/")[1]
            self.rows.remove(name)
            self.log.append({"action": "delete", "row": name})

    def long_press(self, x: int, y: int, duration_ms: int) -> None:
        self.log.append({"action": "long_press", "x": x, "y": y, "ms": duration_ms})

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None:
        self.log.append({"action": "swipe", "from": [x1, y1], "to": [x2, y2], "ms": duration_ms})

    def type_text(self, key: str, text: str) -> None:
        if key != "field":
            raise SimError("invalid element state", f"{key} is not editable")
        self.field += text

    def clear_text(self, key: str) -> None:
        if key != "field":
            raise SimError("invalid element state", f"{key} is not editable")
        self.field = ""

    def back(self) -> None:
        self.log.append({"action": "back"})

    def activate_app(self, package: str) -> None:
        if package != PKG:
            raise SimError("invalid argument", f"{package} is not installed")
        self.running = True

    def terminate_app(self, package: str) -> bool:
        was, self.running = self.running, False
        return package == PKG and was

    def app_state(self, package: str) -> int:
        if package != PKG:
            return AppState.NOT_INSTALLED
        return AppState.RUNNING_IN_FOREGROUND if self.running else AppState.NOT_RUNNING

    def current_package(self) -> str:
        return PKG

    def set_faults(self, faults: dict[str, Any]) -> None:
        self.faults.update(faults)

    def action_log(self) -> list[dict[str, Any]]:
        return list(self.log)

    def ground_truth(self) -> dict[str, Any]:
        return {"changed": [Box(0, 0, 1, 1)], "faults": self.faults}

    def close(self) -> None:
        self.closed = True
