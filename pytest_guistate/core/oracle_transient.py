"""Known transient shapes: changes the platform draws on its own, not changes of the app (issue 33).

On real phones the pixels of an action's after-frame hold more than the action's effect: a list's
scrollbar fades in or out at its edge for a second after any touch, and a text cursor blinks (that
one is `VisualOracle._classify`'s, with the focused field from the tree). Snapping a scrollbar's
12 px strip to its list made the whole list the change (92% of the screen on a real launcher app).
A change of one of these shapes is left out of the regions and named in `Transition.transients`,
so a reader sees what was set aside and why. The rules are about shapes, not apps:
- scrollbar: a thin strip (at most `_BAR_MAX_WIDTH` of the screen's width wide, at least
  `_BAR_MIN_ASPECT` times as tall as wide and `_BAR_MIN_HEIGHT` of the screen tall) hugging the
  right or left edge of a scrollable node that holds it (of the screen without a tree); the same
  shape turned sideways along a bottom edge for a horizontal list.
"""

from __future__ import annotations

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle_types import Transient
from pytest_guistate.core.uitree import UINode, UITree

__all__ = ["TransientShapes"]

_BAR_MAX_WIDTH = 0.02  # of the screen's width (a 4 dp bar with its 1/2-scale rounding)
_BAR_MIN_ASPECT = 4.0
_BAR_MIN_HEIGHT = 0.03  # of the screen's height: a scroll thumb, not a row's accent stripe
_EDGE = 0.02  # of the screen's width: how far from the list's edge the strip may lie
_LIST_HINTS = ("RecyclerView", "ListView", "ScrollView", "GridView", "WebView", "Table", "CollectionView")


class TransientShapes:
    """The scrollable nodes of one after-tree, looked up once per compare."""

    def __init__(self, tree: UITree | None, screen: Box) -> None:
        self.screen = screen
        self.lists: list[UINode] = []
        if tree is not None:
            self.lists = [n for n in tree.nodes() if n.bounds is not None and not n.bounds.is_empty
                          and (n.is_scrollable or any(h in n.cls for h in _LIST_HINTS))]
        self.tree = tree

    def kind_of(self, box: Box) -> Transient | None:
        """The transient `box` is, if its shape is a known one."""
        return self._scrollbar(box)

    def _scrollbar(self, box: Box) -> Transient | None:
        screen = self.screen
        thin = _BAR_MAX_WIDTH * screen.width
        edge = _EDGE * screen.width
        vertical = box.width <= thin and box.height >= max(_BAR_MIN_ASPECT * box.width, _BAR_MIN_HEIGHT * screen.height)
        horizontal = box.height <= thin and box.width >= max(_BAR_MIN_ASPECT * box.height, _BAR_MIN_HEIGHT * screen.width)
        if not (vertical or horizontal):
            return None
        hosts: list[tuple[Box, str]] = [(n.bounds, n.label or n.cls) for n in self.lists
                                        if n.bounds is not None and n.bounds.expand(round(edge)).contains(box)]
        if self.tree is None:
            hosts = [(screen, "screen")]
        for bounds, name in hosts:
            at_side = abs(box.right - bounds.right) <= edge or abs(box.left - bounds.left) <= edge
            at_bottom = abs(box.bottom - bounds.bottom) <= edge
            if (vertical and at_side) or (horizontal and at_bottom):
                return Transient("scrollbar", box, name)
        return None
