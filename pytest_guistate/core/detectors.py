"""Anchors from a project's own detectors (the `pytest_guistate_detect_anchors` hook, hookspecs.py).

The built-in detectors (route changes, pop-ups, stale screens, failed steps) live in
`task_journal.py`; an app knows moments they cannot see: a captcha, its own error banner, a
"session expired" page. The pytest layer turns the `pytest_guistate_detect_anchors` hook into one
callable (`SessionHooks.detect_anchors`); this module validates what it returns and places each
anchor exactly as a built-in one: on the step, with the app, with the step's crops, and linked
by the same rules (an EXCEPTION "blocks" the milestone that was current when it completes; a
failed step's own EXCEPTION is placed after them, so it stays the step's last word). A detector that raises is reported as a `GuistateWarning` naming what is missing,
never allowed to fail the test it observes.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_guistate.core.anchors import AnchorPlacer, AnchorType
from pytest_guistate.core.artifact_names import crop_region
from pytest_guistate.core.errors import GuistateWarning
from pytest_guistate.core.geometry import Box

if TYPE_CHECKING:
    from pytest_guistate.core.observation import Observation
    from pytest_guistate.core.oracle_types import Transition
    from pytest_guistate.core.records import StepRecord

__all__ = ["DETECTABLE", "DetectFn", "DetectedAnchor", "run_detectors"]

# SUBGOAL and FINISH belong to the progress tracker: a detector cannot complete a milestone or end a test
DETECTABLE = (AnchorType.EXCEPTION, AnchorType.STATE_CHANGE, AnchorType.CONTEXT_INFO, AnchorType.DEPENDENCY)

DetectFn = Callable[["StepRecord", "Observation | None", "Observation | None", "Transition | None"],
                    Sequence[Any]]


@dataclass
class DetectedAnchor:
    """One anchor a detector found on a step.

    `box` (screen pixels) says where: the anchor gets the step's crops that overlap it (all of
    them when no box is given) and keeps the box in its data, so a viewer can draw it.
    """

    title: str
    type: AnchorType | str = AnchorType.EXCEPTION
    detail: str = ""
    box: Box | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.title, str) or not self.title.strip():
            raise ValueError(f"a detected anchor needs a non-empty title, got {self.title!r}")
        try:
            self.type = AnchorType(self.type)
        except ValueError:
            raise ValueError(f"detected anchor {self.title!r}: type {self.type!r} is not one of "
                             f"{[t.value for t in AnchorType]}") from None
        if self.type not in DETECTABLE:
            raise ValueError(f"detected anchor {self.title!r}: a detector may return "
                             f"{[t.value for t in DETECTABLE]}, not {self.type.value} (milestones and the "
                             "finish belong to the progress tracker)")
        if self.box is not None and not isinstance(self.box, Box):
            raise TypeError(f"detected anchor {self.title!r}: box must be a Box, got {type(self.box).__name__}")


def _crops_for(record: StepRecord, transition: Transition | None, box: Box | None) -> list[str]:
    """The step's crops whose region overlaps `box` (none when none does: the box itself stays in
    the anchor's data); all of them without a box or without the transition that placed them."""
    if box is None or transition is None:
        return list(record.crops)
    chosen = []
    for name in record.crops:
        number = crop_region(name)
        if number is not None and number < len(transition.crops) and transition.crops[number].box.intersects(box):
            chosen.append(name)
    return chosen


def run_detectors(journal: AnchorPlacer, detect: DetectFn, record: StepRecord, before: Observation | None,
                  after: Observation | None, transition: Transition | None, app: str) -> None:
    """Call the detectors for one closed step and place what they found through `journal` (the
    session's, which applies the tier's anchor rules)."""
    try:
        found = list(detect(record, before, after, transition) or [])
        for item in found:
            if not isinstance(item, DetectedAnchor):
                raise TypeError(f"returned {item!r}; expected pytest_guistate.DetectedAnchor instances")
    except Exception as exc:  # noqa: BLE001 - a detector must not fail the test it watches; say what is lost
        warnings.warn(GuistateWarning(
            f"guistate anchor detector raised {type(exc).__name__}: {exc}; detected anchors of step "
            f"{record.index} {record.name!r} are missing"), stacklevel=2)
        return
    for item in found:
        data = {"kind": "detected", **item.data}
        if item.box is not None:
            data["box"] = item.box.as_list()
        crops = _crops_for(record, transition, item.box)
        if item.type is AnchorType.EXCEPTION:
            journal.exception(item.title, record, app=app, crops=crops, detail=item.detail, data=data)
            continue
        anchor = journal.anchor(AnchorType(item.type), item.title, step_index=record.index, detail=item.detail,
                                app=app, crops=crops, data=data)
        if anchor is not None:
            record.anchors.append(anchor.id)
