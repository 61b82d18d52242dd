"""Anchors: the few moments of a long test that explain it, linked causally (AndroTMem, seed 003).

A 40-step test produces hundreds of frames; a failure report needs the handful that matter: the
milestones reached (SUBGOAL), where the app or screen changed (STATE_CHANGE), data carried across
steps or apps with its source (DEPENDENCY, CONTEXT_INFO), what went wrong (EXCEPTION) and the end
(FINISH). Links say why one moment led to another. The graph is a DAG: a link that would close a
cycle is refused, because "A caused B caused A" is a bug in whoever produced it.

Direction: `link(src, dst, type)` reads as a sentence, "src <type> dst" ("s1 enables s2",
"dep result_of ctx"). For the acyclicity check every link is oriented cause -> effect:
prerequisite/enables/blocks point forward, result_of points back (its dst is the cause).
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pytest_guistate.core.records import StepRecord

__all__ = ["ANCHOR_SCHEMA", "Anchor", "AnchorGraph", "AnchorPlacer", "AnchorType", "Link", "LinkType"]

ANCHOR_SCHEMA = "guistate.anchors/1"


class AnchorType(str, enum.Enum):
    SUBGOAL = "SUBGOAL"
    STATE_CHANGE = "STATE_CHANGE"
    DEPENDENCY = "DEPENDENCY"
    EXCEPTION = "EXCEPTION"
    CONTEXT_INFO = "CONTEXT_INFO"
    FINISH = "FINISH"


class LinkType(str, enum.Enum):
    PREREQUISITE = "prerequisite"
    ENABLES = "enables"
    BLOCKS = "blocks"
    RESULT_OF = "result_of"


@dataclass
class Anchor:
    """One key moment. `crops` are names in the session's artifact store (bytes live there)."""

    id: str
    type: AnchorType
    step_index: int | None
    title: str
    detail: str = ""
    app: str = ""
    timestamp: float = field(default_factory=time.time)
    crops: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type.value,
            "step": self.step_index,
            "title": self.title,
            "detail": self.detail,
            "app": self.app,
            "timestamp": round(self.timestamp, 3),
            "crops": list(self.crops),
            "data": dict(self.data),
        }

    def line(self) -> str:
        """One plain-text timeline line for terminal and JUnit reports."""
        step = f"step {self.step_index}" if self.step_index is not None else "setup"
        app = f" [{self.app}]" if self.app else ""
        detail = f" - {self.detail}" if self.detail else ""
        return f"{self.id:>4} {self.type.value:<12} {step:<8} {self.title}{app}{detail}"


@dataclass(frozen=True)
class Link:
    src: str
    dst: str
    type: LinkType

    def to_dict(self) -> dict[str, str]:
        return {"src": self.src, "dst": self.dst, "type": self.type.value}


class AnchorGraph:
    """Anchors in creation order plus typed links; refuses cycles. Listeners see each new anchor."""

    def __init__(self, on_add: Callable[[Anchor], None] | None = None) -> None:
        self._anchors: dict[str, Anchor] = {}
        self._links: list[Link] = []
        self._effects: dict[str, set[str]] = {}  # cause -> effects, for the cycle check
        self._on_add = on_add

    def __len__(self) -> int:
        return len(self._anchors)

    def __iter__(self) -> Iterator[Anchor]:
        return iter(list(self._anchors.values()))

    def __getitem__(self, anchor_id: str) -> Anchor:
        try:
            return self._anchors[anchor_id]
        except KeyError:
            raise KeyError(f"no anchor {anchor_id!r}; known: {list(self._anchors)}") from None

    @property
    def links(self) -> list[Link]:
        return list(self._links)

    def add(
        self,
        type: AnchorType,
        title: str,
        *,
        step_index: int | None = None,
        detail: str = "",
        app: str = "",
        crops: list[str] | None = None,
        data: dict[str, Any] | None = None,
        timestamp: float | None = None,
    ) -> Anchor:
        if not isinstance(type, AnchorType):
            type = AnchorType(type)
        anchor = Anchor(
            id=f"a{len(self._anchors) + 1}",
            type=type,
            step_index=step_index,
            title=title,
            detail=detail,
            app=app,
            timestamp=time.time() if timestamp is None else timestamp,
            crops=list(crops or []),
            data=dict(data or {}),
        )
        self._anchors[anchor.id] = anchor
        if self._on_add is not None:
            self._on_add(anchor)
        return anchor

    def link(self, src: Anchor | str, dst: Anchor | str, type: LinkType | str) -> Link:
        """Add "src <type> dst". Raises ValueError for unknown anchors, self-links and cycles."""
        link_type = type if isinstance(type, LinkType) else LinkType(type)
        src_id = src.id if isinstance(src, Anchor) else src
        dst_id = dst.id if isinstance(dst, Anchor) else dst
        for anchor_id in (src_id, dst_id):
            if anchor_id not in self._anchors:
                raise ValueError(f"cannot link unknown anchor {anchor_id!r}; known: {list(self._anchors)}")
        if src_id == dst_id:
            raise ValueError(f"anchor {src_id} cannot be linked to itself")
        cause, effect = (dst_id, src_id) if link_type is LinkType.RESULT_OF else (src_id, dst_id)
        if self._reaches(effect, cause):
            raise ValueError(
                f"link {src_id} {link_type.value} {dst_id} would make a cycle: {effect} already leads to {cause}"
            )
        link = Link(src_id, dst_id, link_type)
        if link not in self._links:
            self._links.append(link)
            self._effects.setdefault(cause, set()).add(effect)
        return link

    def _reaches(self, start: str, goal: str) -> bool:
        stack, seen = [start], set()
        while stack:
            node = stack.pop()
            if node == goal:
                return True
            if node in seen:
                continue
            seen.add(node)
            stack.extend(self._effects.get(node, ()))
        return False

    def last(self, n: int) -> list[Anchor]:
        return list(self._anchors.values())[-n:] if n > 0 else []

    def of_type(self, type: AnchorType) -> list[Anchor]:
        return [a for a in self._anchors.values() if a.type is type]

    def links_of(self, anchor: Anchor | str) -> list[Link]:
        anchor_id = anchor.id if isinstance(anchor, Anchor) else anchor
        return [link for link in self._links if anchor_id in (link.src, link.dst)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": ANCHOR_SCHEMA,
            "anchors": [a.to_dict() for a in self._anchors.values()],
            "links": [link.to_dict() for link in self._links],
        }


class AnchorPlacer(Protocol):
    """Who places anchors on a test's steps by the tier's rules (the session's `Journal`).

    What the satellites that find anchors (detectors, the cycle guard) need, instead of the
    session: `anchor` adds one when the tier records anchors (None otherwise); `exception` adds an
    EXCEPTION on `record`, linked "blocks" to the milestone that was current when it completes."""

    def anchor(self, type: AnchorType, title: str, *, step_index: int | None = None, detail: str = "",
               app: str = "", crops: list[str] | None = None, data: dict[str, Any] | None = None) -> Anchor | None: ...

    def exception(self, title: str, record: StepRecord | None, **kwargs: Any) -> Anchor | None: ...
