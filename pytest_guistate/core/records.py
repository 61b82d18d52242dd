"""What the step loop remembers of each step: JSON-safe records plus an artifact store for bytes.

Records never hold PNG bytes or pixels (a 500-step test must stay small in memory and in the
journal); crops and frames go into an `ArtifactSink` under names the records refer to. The
default sink keeps them in memory; the reporters may pass one that writes to disk.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["JUDGED_FIELDS", "OUTCOMES", "ArtifactSink", "Attempt", "MemoryArtifacts", "StepRecord", "stored_names"]

OUTCOMES = ("ok", "settled", "refreshed", "retried", "failed")
# what a step's judgement and its bookkeeping fill in (`StepRecord.pending`): read before they are, they are waited for
JUDGED_FIELDS = frozenset({
    "outcome", "verdict", "attempts", "episode", "ended", "regions", "crops", "frames", "package_after",
    "context_after", "route_changed", "anchors", "error", "explanation", "transition", "state", "page_sources",
})


@dataclass
class Attempt:
    """One verification of a step: the first look, after settling, after a refresh, after a retry."""

    stage: str  # initial | settle | refresh | retry
    verdict: str | None  # oracle verdict vs the before-frame (None when not compared)
    expect_ok: bool | None  # None when the step has no expect
    evidence: str  # the expect's evidence, or the oracle's notes
    met: bool
    regions: list[list[int]] = field(default_factory=list)
    polls: int = 0  # frames taken while settling
    refreshed_by: str = ""  # what refreshed (step callable, session callable, hook, pull-to-refresh)
    elapsed_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "verdict": self.verdict,
            "expect_ok": self.expect_ok,
            "evidence": self.evidence,
            "met": self.met,
            "regions": [list(r) for r in self.regions],
            "polls": self.polls,
            "refreshed_by": self.refreshed_by,
            "elapsed_s": round(self.elapsed_s, 4),
        }


@dataclass
class StepRecord:
    """One step (`step` block or `perform`). `outcome` is one of OUTCOMES, "" while running."""

    index: int  # 1-based, as reports number steps
    name: str
    kind: str  # "step" | "perform"
    expect: str | None
    idempotent: bool
    started: float = 0.0  # session clock (monotonic) at the start
    ended: float | None = None  # session clock at the end
    wall: float = field(default_factory=time.time)  # wall-clock start, for reports
    outcome: str = ""
    verdict: str | None = None
    confirmed: bool = False  # the effect was confirmed (expect met / visible change)
    attempts: list[Attempt] = field(default_factory=list)
    actions: int = 0  # how many times the action ran (perform); 1 for a step block
    regions: list[dict[str, Any]] = field(default_factory=list)
    crops: list[str] = field(default_factory=list)  # artifact names
    frames: list[str] = field(default_factory=list)  # artifact names (tier full, or failure)
    package_before: str = ""
    package_after: str = ""
    reused_before: bool = False  # the before-observation was the previous step's after-observation
    episode: bool = False  # a stale-screen episode (first check unmet)
    route_changed: bool = False  # app or screen changed (a STATE_CHANGE anchor was due)
    anchors: list[str] = field(default_factory=list)
    error: str | None = None
    explanation: str = ""
    transition: dict[str, Any] | None = None
    state: dict[str, Any] | None = None  # TaskState snapshot (tier full)
    # on failure, for triage: the expect judged on the before-screen ({ok, evidence, box}), and
    # where the final unmet expect located its element (None when it located nothing)
    expect_before: dict[str, Any] | None = None
    expect_box: list[int] | None = None
    # page sources the device fetched during the step (tree on demand, issue 12); None when the
    # screen does not count them
    page_sources: int | None = None
    page_sources_at_start: int | None = field(default=None, repr=False)
    # an LLM run's step in an action-cache mode (issue 21): "hit" (replayed from the cache and verified),
    # "miss" (replayed, its cached effect did not show) or "live" (the actor's, after a miss); "" otherwise.
    # A replayed step that acted on a target the memory healed says so: "hit (healed: ...)" or
    # "miss (false heal prevented)"
    cache: str = ""
    # the driver context the step acted in and the one its after-screen was in (issue 37: a hybrid app's
    # NATIVE_APP / WEBVIEW_x); "" for a session never seen in more than one context
    context: str = ""
    context_after: str = ""
    # a web view that went away or appeared during the step (issue 44), in words; "" when none did
    web_view: str = ""
    # the memory healed the locator this step's test wrote: the edit it proposes (issue 45, `guistate heal-diff`)
    heal: str = ""
    # whether this step reads its trees (light tier: only with a check, `TaskSession._reads_trees`)
    reads_trees: bool = field(default=True, repr=False)
    # a step whose look is judged beside the test (issue 42): what records it once judged
    # (`Journal.flush`); reading any field the judgement fills calls it first (`JUDGED_FIELDS`)
    pending: Callable[[], None] | None = field(default=None, repr=False, compare=False)

    def __getattribute__(self, name: str) -> Any:
        if name in JUDGED_FIELDS:
            pending = object.__getattribute__(self, "pending")
            if pending is not None:
                pending()  # the journal clears `pending` first, then fills these fields
        return object.__getattribute__(self, name)

    @property
    def duration_s(self) -> float | None:
        return None if self.ended is None else self.ended - self.started

    @property
    def retries(self) -> int:
        return max(0, self.actions - 1)

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "name": self.name,
            "kind": self.kind,
            "expect": self.expect,
            "idempotent": self.idempotent,
            "outcome": self.outcome,
            "verdict": self.verdict,
            "confirmed": self.confirmed,
            "actions": self.actions,
            "retries": self.retries,
            "attempts": [a.to_dict() for a in self.attempts],
            "regions": list(self.regions),
            "crops": list(self.crops),
            "frames": list(self.frames),
            "package_before": self.package_before,
            "package_after": self.package_after,
            "reused_before": self.reused_before,
            "episode": self.episode,
            "route_changed": self.route_changed,
            "anchors": list(self.anchors),
            "error": self.error,
            "explanation": self.explanation,
            "transition": self.transition,
            "state": self.state,
            "expect_before": self.expect_before,
            "expect_box": self.expect_box,
            "page_sources": self.page_sources,
            **({"cache": self.cache} if self.cache else {}),
            **({"heal": self.heal} if self.heal else {}),
            **({"context": self.context, "context_after": self.context_after or self.context}
               if self.context or self.context_after else {}),
            **({"web_view": self.web_view} if self.web_view else {}),
            "wall": round(self.wall, 3),
            "duration_s": None if self.duration_s is None else round(self.duration_s, 4),
        }


PngSource = bytes | Callable[[], bytes]


class ArtifactSink(Protocol):
    """Where crops and frames go. `put` returns the name records refer to at once; `data` is the
    bytes or a callable producing them (e.g. `crop.encode`), so a sink that writes on its own
    thread also encodes there; `cut_from` is the frame a crop was cut from, so a sink that redacts
    fills it with that screen's boxes and no other's."""

    def put(self, name: str, data: PngSource, media_type: str = "image/png", *, cut_from: Any = None) -> str: ...


def stored_names(sink: ArtifactSink, names: list[str]) -> list[str]:
    """The files artifact `names` are stored as, for text a person reads (a failure message, the
    report section): a sink that stores each image once by content (the recorder, issue 44) knows
    a crop as `crops/<digest>.png`, not by the handle `put` returned; any other sink keeps names."""
    where = getattr(sink, "stored_paths", None)
    return [str(n) for n in where(names)] if callable(where) else list(names)


class MemoryArtifacts:
    """Default sink: bytes in a dict (PNG bytes only, never decoded pixels)."""

    def __init__(self) -> None:
        self.items: dict[str, tuple[bytes, str]] = {}

    def put(self, name: str, data: PngSource, media_type: str = "image/png", *, cut_from: Any = None) -> str:
        if callable(data):
            data = data()
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(f"artifact {name!r} must be bytes, got {type(data).__name__}")
        self.items[name] = (bytes(data), media_type)
        return name

    def get(self, name: str) -> bytes:
        try:
            return self.items[name][0]
        except KeyError:
            raise KeyError(f"no artifact {name!r}; stored: {sorted(self.items)[:20]}") from None

    def __len__(self) -> int:
        return len(self.items)

    @property
    def total_bytes(self) -> int:
        return sum(len(data) for data, _ in self.items.values())
