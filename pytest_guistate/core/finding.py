"""Locator checks answered by the driver: the question a `visible`/`gone` check asks, as a find.

A page source costs a phone-paced driver as much as a screenshot or more (issue 24: ~450 ms on
UiAutomator2, 1-4 s on XCUITest); a careful script checks an expectation with one find. A check
that is a plain locator (text / desc / id) states its question as a `NodeQuery`; an `Observation`
whose screen can find (`Observation(finder=...)`) answers it with a `FindAnswer` while the screen
is still the observation's, or says it cannot decide (None) - then the check reads the tree as
before. The finder must give the verdict the tree would give (the rules of `checks.visible`:
displayed, on screen, not under the soft keyboard, not behind a modal that takes the touches), so
it declines whenever one of those rules needs the tree to decide.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pytest_guistate.core.geometry import Box

__all__ = ["FindAnswer", "Finder", "FoundNode", "NodeQuery"]


@dataclass(frozen=True)
class NodeQuery:
    """What a locator check looks for: `text` (shown text, or the description when `desc` is not
    given), `id`, `desc` (Android content-desc; iOS label or name); substrings unless `exact`."""

    text: str | None = None
    id: str | None = None
    desc: str | None = None
    exact: bool = False

    @property
    def given(self) -> list[tuple[str, str]]:
        return [(kind, value) for kind, value in (("text", self.text), ("id", self.id), ("desc", self.desc))
                if value is not None]


@dataclass(frozen=True)
class FoundNode:
    """A matching element the driver found visible; `label`/`kind`/`bounds` as far as it told them."""

    label: str
    kind: str = "element"
    bounds: Box | None = None


@dataclass(frozen=True)
class FindAnswer:
    """The driver's answer: the matching elements visible by the tree's rules (empty: none), and how
    it asked (the strategy, for the evidence line)."""

    found: Sequence[FoundNode]
    via: str


# (query) -> the answer, or None when the find cannot decide (the caller reads the tree)
Finder = Callable[[NodeQuery], FindAnswer | None]
