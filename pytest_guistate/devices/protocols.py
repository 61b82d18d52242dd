"""What `Device`'s mixins rely on from each other, as typed `Protocol`s (as Appium's python-client
types its mixins against `CanExecuteCommands`).

`Device` (devices/device.py) is the session plumbing and the screen's kind; observing, locating,
inputs and apps are mixins in their own modules. A mixin subclasses the protocols it needs, so
mypy checks every attribute it reads, and `Device`, which inherits them all, must implement every
member (an unimplemented one makes it abstract). The protocols come last in `Device`'s MRO: their
empty bodies never shadow an implementation.
"""

from __future__ import annotations

from typing import Any, Protocol

from appium.webdriver.webdriver import WebDriver
from appium.webdriver.webelement import WebElement

from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.uitree import UITree

__all__ = ["CanDrive", "CanFind", "CanObserve"]


class CanDrive(Protocol):
    """One Appium session: its driver, where it runs, what kind of screen it drives, and the two
    ways to call it (a read, and an input, which is counted)."""

    driver: WebDriver
    url: str
    is_sim: bool
    action_count: int

    @property
    def is_web(self) -> bool: ...

    @property
    def platform(self) -> str: ...

    @property
    def scale(self) -> float: ...

    @property
    def size(self) -> tuple[int, int]: ...

    def _call(self, what: str, fn: Any) -> Any: ...

    def _act(self, what: str, fn: Any) -> Any: ...


class CanObserve(CanDrive, Protocol):
    """Screenshots and trees (devices/observing.py), with the counts that tell whether the newest
    observation still shows the current screen."""

    _shots: int
    _newest: tuple[Observation, int, int] | None

    def screenshot(self, *, source: str = "") -> Frame: ...

    def ui_tree(self) -> UITree: ...

    def _current_tree(self) -> UITree: ...


class CanFind(CanDrive, Protocol):
    """Elements by locator (devices/locating.py); `_waited` says the last find polled."""

    _waited: bool

    def find(
        self,
        text: str | None = None,
        *,
        desc: str | None = None,
        id: str | None = None,
        xpath: str | None = None,
        timeout: float = 0.0,
    ) -> WebElement: ...

    def box_of(self, element: WebElement) -> Box: ...
