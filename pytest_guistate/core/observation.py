"""What the core needs from a device: an observation (frame + UI tree) and a way to refresh.

The core never imports Appium; `pytest_guistate.devices.Device` implements `Screen` over an
Appium session, and tests may implement it over anything that yields real frames.

The tree may come on demand (issue 12): a page source costs a real driver as much as a
screenshot, and many steps never read it. `Observation(frame, fetch_tree=...)` fetches it on the
first read of `.tree` (once, thread-safe) and keeps when (`tree_at`). The rule that keeps a late
tree from describing another screen is the screen's: its `fetch_tree` refuses (raises
`TreeExpired`) once an input was sent or a newer screenshot taken, and the session reads the
trees it will need later before it acts (`TaskSession._note_action`). See docs/latency.md.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from pytest_guistate.core.errors import GuistateError
from pytest_guistate.core.finding import FindAnswer, Finder, NodeQuery
from pytest_guistate.core.frame import Frame
from pytest_guistate.core.uitree import UITree

__all__ = ["Observation", "Screen", "TreeExpired"]

TreeFetch = Callable[[], UITree | None]


class TreeExpired(GuistateError):
    """The tree of an observation was first read after the screen moved on: fetching it now could
    describe another screen than the frame, so it is refused rather than guessed."""


class Observation:
    """The screen at one moment: what the oracle compares and what checks are evaluated on.

    `tree` is given (eager) or fetched on first read through `fetch_tree` (on demand); `package`
    is given, or derived from the tree by `package_of` when first read. `tree_current` (from the
    screen) says, without fetching, whether the tree may still be fetched (`tree_available`).
    """

    def __init__(
        self,
        frame: Frame,
        tree: UITree | None = None,
        package: str = "",
        timestamp: float | None = None,
        *,
        fetch_tree: TreeFetch | None = None,
        package_of: Callable[[UITree | None], str] | None = None,
        tree_current: Callable[[], bool] | None = None,
        finder: Finder | None = None,
        known_screen: bool = False,
    ) -> None:
        self.frame = frame
        self.timestamp = time.time() if timestamp is None else timestamp
        self._tree = tree
        self._fetch = fetch_tree
        self._package = package
        self._package_of = package_of
        self._lock = threading.Lock()
        self._current = tree_current
        self._finder = finder
        # `tree` is the one read for an earlier screenshot with the very same bytes (`Device.known_screens`):
        # right for everything the pixels decide, yet a locator check still asks the driver (`find`), which
        # sees a change to the tree that redrew nothing
        self.known_screen = known_screen
        # the driver context the screen was observed in ("NATIVE_APP", "WEBVIEW_x"; "" for a session never
        # seen in more than one): which context a step acted in (issue 37)
        self.context = ""
        self.finds = 0  # locator checks the driver answered without a page source
        self.tree_at: float | None = None if fetch_tree is not None else self.timestamp  # wall clock of the fetch

    @property
    def tree_fetched(self) -> bool:
        """True once the tree is known (given, or fetched) - reading `.tree` then costs nothing."""
        return self._fetch is None

    @property
    def tree_available(self) -> bool | None:
        """Whether reading `.tree` would succeed, asked without fetching it: True when known, else
        what the screen's `tree_current` says (False: it would raise `TreeExpired`); None when the
        screen gave no way to tell."""
        if self._fetch is None:
            return True
        return None if self._current is None else self._current()

    def find(self, query: NodeQuery) -> FindAnswer | None:
        """A locator check answered by the driver (issue 24), or None: no finder, the tree is
        already read for this screenshot (reading it costs nothing; a tree taken from a known screen
        does not count), the screen moved on, or the find cannot decide."""
        if self._finder is None or (self.tree_fetched and not self.known_screen):
            return None
        if self._current is not None and not self._current():
            return None
        answer = self._finder(query)
        if answer is not None:
            self.finds += 1
        return answer

    @property
    def known_package(self) -> str:
        """The package when it costs no page source (given, or the tree is already known), else ""."""
        if self._package or self.tree_fetched:
            return self.package
        return ""

    @property
    def tree(self) -> UITree | None:
        if self._fetch is not None:
            with self._lock:
                fetch = self._fetch
                if fetch is not None:
                    self._tree = fetch()  # an error leaves it unfetched: the next read tries again
                    self.tree_at = time.time()
                    self._fetch = None
        return self._tree

    @tree.setter
    def tree(self, value: UITree | None) -> None:
        with self._lock:
            self._tree, self._fetch, self.tree_at = value, None, time.time()

    @property
    def package(self) -> str:
        if not self._package and self._package_of is not None:
            self._package = self._package_of(self.tree)
            self._package_of = None
        return self._package

    @package.setter
    def package(self, value: str) -> None:
        self._package, self._package_of = value, None

    def __repr__(self) -> str:
        tree = "fetched" if self.tree_fetched else "on demand"
        return f"Observation(frame={self.frame!r}, tree {tree}, timestamp={self.timestamp:.3f})"


@runtime_checkable
class Screen(Protocol):
    """The device as the step loop sees it."""

    def observe(self) -> Observation:
        """Screenshot and page source (the page source may be fetched on first read)."""
        ...

    def pull_to_refresh(self) -> bool:
        """Pull down on the first scrollable list on screen; False when there is none."""
        ...
