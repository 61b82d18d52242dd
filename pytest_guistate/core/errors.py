"""Errors and warnings the step loop raises: assertion subclasses, so pytest reports them as failures.

`StepFailed`, `MilestoneNotVisible` and `ProgressIncomplete` subclass `AssertionError` because
each is a test verdict ("the app did not do what the test expects"), not a harness crash. Their
messages are plain text (no ANSI) so they read the same in a terminal and in JUnit XML.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_guistate.core.records import StepRecord

__all__ = [
    "GuistateError",
    "GuistateWarning",
    "MilestoneNotVisible",
    "ProgressIncomplete",
    "QueryFailed",
    "QueryUnverified",
    "RecordingFailed",
    "StepFailed",
]


class GuistateWarning(UserWarning):
    """Something the test author should know about but that does not fail the test."""


class GuistateError(Exception):
    """Misuse of the API (e.g. a step opened inside another step)."""


class RecordingFailed(Exception):
    """The test's record can no longer be written (disk full, file-size limit): the test stops here
    rather than run on unrecorded. Unlike other listener errors it is raised, not warned (issue 14)."""


class StepFailed(AssertionError):
    """A step's effect could not be confirmed after settle and refresh (or a retry).

    `record` is the `StepRecord` of the step, with the attempts that decided it.
    """

    def __init__(self, message: str, record: StepRecord | None = None) -> None:
        super().__init__(message)
        self.record = record


class MilestoneNotVisible(AssertionError):
    """`milestone(name)` was declared but its check fails on the current screen: the screen wins."""

    def __init__(self, message: str, milestone: str, evidence: str) -> None:
        super().__init__(message)
        self.milestone = milestone
        self.evidence = evidence


class ProgressIncomplete(AssertionError):
    """`assert_complete()` found milestones of the plan that were never reached."""

    def __init__(self, message: str, completed: list[str], current: str | None, remaining: list[str]) -> None:
        super().__init__(message)
        self.completed = completed
        self.current = current
        self.remaining = remaining


class QueryFailed(AssertionError):
    """`guistate.query` got no value: the model could not answer, or its answer is not of the asked type
    or shape. `said` is what the model answered (its explanation, or the raw value), for the message."""

    def __init__(self, message: str, question: str, said: str = "") -> None:
        super().__init__(message)
        self.question = question
        self.said = said


class QueryUnverified(AssertionError):
    """`guistate.query` got a value its cited evidence does not hold up (an element not on screen, a
    text that does not show the value, a password field or a secret): never returned as if read."""

    def __init__(
        self,
        message: str,
        question: str,
        value: object,
        problems: list[str],
        evidence: list[dict[str, Any]] | None = None,
        observation: object = None,
    ) -> None:
        super().__init__(message)
        self.question = question
        self.value = value
        self.problems = problems
        self.evidence = evidence if evidence is not None else []  # the cited elements on screen (their boxes)
        self.observation = observation  # the screen it was asked on: the record crops what was cited
