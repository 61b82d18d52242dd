"""`DirectScreen`: the core's `Screen` over an in-process simulated phone, no HTTP in between.

The step loop's own tests (and benchmarks) drive a `PhoneModel` directly: same pixels, same
page source as the WebDriver server would serve, without a server, so stale-screen and
dropped-tap scenarios run in milliseconds on a virtual clock.
"""

from __future__ import annotations

from pytest_guistate.core.detect import refreshable_list
from pytest_guistate.core.frame import Frame
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.uitree import UINode, parse_page_source
from pytest_guistate.devices.sim.model import PhoneModel

__all__ = ["DirectScreen"]


class DirectScreen:
    """`Screen` over a `PhoneModel`. `action_count` counts inputs sent through this adapter, so a
    session can tell a still-fresh observation from one an action has made stale."""

    def __init__(self, phone: PhoneModel, *, swipe_ms: int = 300) -> None:
        self.phone = phone
        self.swipe_ms = swipe_ms
        self.action_count = 0

    def observe(self) -> Observation:
        now = getattr(self.phone, "now", None)
        frame = Frame(self.phone.screenshot_png())
        tree = parse_page_source(self.phone.page_source())
        observation = Observation(frame=frame, tree=tree, package=self.phone.current_package())
        if callable(now):
            frame.timestamp = observation.timestamp = float(now())
        return observation

    def pull_to_refresh(self) -> bool:
        """Drag down from the top of the first list on screen; False when there is none."""
        target = refreshable_list(parse_page_source(self.phone.page_source()))
        if target is None or target.bounds is None:
            return False
        box = target.bounds
        x = box.center[0]
        y1 = box.top + max(4, box.height // 10)
        y2 = min(box.bottom - 1, y1 + max(box.height // 2, 1))
        self.action_count += 1
        self.phone.swipe(x, y1, x, y2, self.swipe_ms)
        return True

    def tap(self, x: int, y: int) -> None:
        self.action_count += 1
        self.phone.tap(int(x), int(y))

    def find(self, text: str, *, exact: bool = True) -> UINode:
        """The first displayed node whose text or content-desc is `text`; LookupError lists what is there."""
        tree = parse_page_source(self.phone.page_source())
        for node in tree.find_text(text, exact=exact):
            if node.displayed and node.bounds is not None and not node.bounds.is_empty:
                return node
        shown = sorted({n.text or n.content_desc for n in tree.nodes() if n.text or n.content_desc})
        raise LookupError(f"no visible node with text or content-desc {text!r}; on screen: {shown[:30]}")

    def tap_text(self, text: str, *, exact: bool = True, nth: int = 0) -> None:
        """Tap the centre of the `nth` visible node showing `text` (0 = first)."""
        tree = parse_page_source(self.phone.page_source())
        nodes = [n for n in tree.find_text(text, exact=exact)
                 if n.displayed and n.bounds is not None and not n.bounds.is_empty]
        if len(nodes) <= nth:
            self.find(text, exact=exact)  # raises with the list of what is on screen
            raise LookupError(f"only {len(nodes)} visible node(s) show {text!r}; asked for index {nth}")
        x, y = nodes[nth].bounds.center  # type: ignore[union-attr]
        self.tap(x, y)

    def tap_id(self, resource_id: str) -> None:
        """Tap the centre of the last visible node with this resource-id (topmost window wins)."""
        tree = parse_page_source(self.phone.page_source())
        nodes = [n for n in tree.by_resource_id(resource_id)
                 if n.displayed and n.bounds is not None and not n.bounds.is_empty]
        if not nodes:
            ids = sorted({n.resource_id for n in tree.nodes() if n.resource_id})
            raise LookupError(f"no visible node with resource-id {resource_id!r}; on screen: {ids[:30]}")
        x, y = nodes[-1].bounds.center  # type: ignore[union-attr]
        self.tap(x, y)

    def back(self) -> None:
        self.action_count += 1
        self.phone.back()

    def home(self) -> None:
        """The HOME key (Android) or the home button (the iOS persona): the launcher / SpringBoard."""
        self.action_count += 1
        self.phone.press_home()
