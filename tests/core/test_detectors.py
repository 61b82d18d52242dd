"""Detected anchors take the step's crops that overlap their box (issue 23: the step's first crop was
taken because `crop(\\d+)` never matched the real names `crops/step-0003-r0.png`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pytest_guistate.core.artifact_names import crop_name
from pytest_guistate.core.detectors import _crops_for
from pytest_guistate.core.geometry import Box


@dataclass
class _Region:
    box: Box


@dataclass
class _Transition:
    crops: list[_Region] = field(default_factory=list)


@dataclass
class _Record:
    index: int
    crops: list[str] = field(default_factory=list)


def _step_with_three_crops() -> tuple[_Record, _Transition]:
    boxes = [Box(0, 0, 100, 100), Box(0, 500, 1080, 700), Box(0, 1800, 1080, 2000)]
    record = _Record(3, [crop_name(3, i) for i in range(len(boxes))])
    return record, _Transition([_Region(b) for b in boxes])


def test_an_anchor_with_a_box_takes_the_crops_it_overlaps() -> None:
    record, transition = _step_with_three_crops()
    assert _crops_for(record, transition, Box(10, 550, 300, 1900)) == [crop_name(3, 1), crop_name(3, 2)]
    assert _crops_for(record, transition, Box(10, 1850, 300, 1900)) == [crop_name(3, 2)]


def test_an_anchor_without_a_box_takes_every_crop() -> None:
    record, transition = _step_with_three_crops()
    assert _crops_for(record, transition, None) == record.crops


def test_a_box_that_overlaps_no_crop_takes_none() -> None:
    record, transition = _step_with_three_crops()
    assert _crops_for(record, transition, Box(500, 1000, 600, 1100)) == []
