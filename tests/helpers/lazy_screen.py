"""`LazyScreen`: the sim phone with the tree fetched on first read, counted, and only while current.

The core's tests of who reads page sources (issue 12, issue 38) run the step loop over it: it
refuses a late tree the way `Device` does (`TreeExpired` once an input was sent or a newer
screenshot taken) and counts `page_source_calls` as `Device` does.
"""

from __future__ import annotations

from pytest_guistate.core.frame import Frame
from pytest_guistate.core.observation import Observation, TreeExpired
from pytest_guistate.core.uitree import parse_page_source
from pytest_guistate.devices.sim.phone import Phone
from tests.helpers.direct_screen import DirectScreen

__all__ = ["LazyScreen"]


class LazyScreen:
    """The sim phone with the tree fetched on first read, counted, and only while current."""

    def __init__(self, phone: Phone) -> None:
        self.direct = DirectScreen(phone)
        self.phone = phone
        self.page_source_calls = 0
        self.action_count = 0
        self._shots = 0

    def observe(self) -> Observation:
        self._shots += 1
        shot, inputs = self._shots, self.action_count

        def current() -> bool:
            return (self._shots, self.action_count) == (shot, inputs)

        def fetch():  # type: ignore[no-untyped-def]
            if not current():
                raise TreeExpired("the screen moved on")
            self.page_source_calls += 1
            return parse_page_source(self.phone.page_source())

        return Observation(Frame(self.phone.screenshot_png()), fetch_tree=fetch, tree_current=current,
                           package_of=lambda tree: self.phone.current_package())

    def pull_to_refresh(self) -> bool:
        self.action_count += 1
        return self.direct.pull_to_refresh()

    def tap_text(self, text: str) -> None:
        self.action_count += 1
        self.direct.tap_text(text)

    def tap(self, x: int, y: int) -> None:
        self.action_count += 1
        self.direct.tap(x, y)

    def tap_id(self, resource_id: str) -> None:
        self.action_count += 1
        self.direct.tap_id(resource_id)

    def type_text(self, key: str, text: str) -> None:
        self.action_count += 1
        self.phone.type_text(key, text)
