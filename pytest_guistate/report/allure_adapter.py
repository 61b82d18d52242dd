"""Allure output, only when allure-pytest is active (`--alluredir`).

allure-pytest registers its `AllureListener` as the pytest plugin "allure_listener" only when
`--alluredir` is given; without it this module finds nothing and does nothing (nothing is
imported from allure at all). Guistate steps happen before the adapter hears of them (it is a
session listener), so `allure.step` as a context manager cannot be used; instead each finished
step is added through the listener's `AllureReporter` (`start_step` + attachments + `stop_step`),
which is how allure-pytest itself records steps, with the real start/stop times and status.
Attachments are the recorder's files: redacted before they were written. The recorder writes
them on its own thread, so a step stays open in Allure (a child of the test, named explicitly)
until its files exist, and every step is closed at the session's finish, before a passed test's
folder may be discarded.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

from pytest_guistate.report.recorder import ArtifactRecorder

__all__ = ["AllureAdapter", "allure_listener"]


def allure_listener(pluginmanager: Any) -> Any | None:
    """allure-pytest's listener when `--alluredir` is active, else None."""
    return pluginmanager.get_plugin("allure_listener")


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


class AllureAdapter:
    """A session listener writing guistate steps into the current Allure test result."""

    def __init__(self, listener: Any, recorder: ArtifactRecorder) -> None:
        from allure_commons.model2 import (
            Parameter,
            Status,
            StatusDetails,
            TestStepResult,
        )
        from allure_commons.types import AttachmentType

        self._reporter = listener.allure_logger
        self._recorder = recorder
        self._types = (Parameter, Status, StatusDetails, TestStepResult, AttachmentType)
        self._open: list[tuple[int, str, dict[str, Any]]] = []  # (step index, Allure uuid, stop_step kwargs)

    @classmethod
    def for_pluginmanager(cls, pluginmanager: Any, recorder: ArtifactRecorder) -> AllureAdapter | None:
        listener = allure_listener(pluginmanager)
        return None if listener is None else cls(listener, recorder)

    # -- SessionListener ---------------------------------------------------------------------
    def on_step(self, record: Any) -> None:
        Parameter, Status, StatusDetails, TestStepResult, _ = self._types
        test = self._reporter.get_test(None)
        if test is None:
            return  # no Allure test is open (e.g. a session used outside a test)
        index = int(record.index)
        stop = time.time()
        duration = record.duration_s or 0.0
        status = Status.FAILED if record.outcome == "failed" else Status.PASSED
        params = [Parameter(name="outcome", value=record.outcome or "running"),
                  Parameter(name="verdict", value=str(record.verdict))]
        if record.expect:
            params.append(Parameter(name="expect", value=self._recorder.redactor.text(record.expect)))
        step = TestStepResult(name=self._recorder.redactor.text(f"[guistate {index}] {record.name}"),
                              start=_ms(stop - duration), parameters=params)
        step_uuid = str(uuid.uuid4())
        # parent = the test, named: the step stays open (so later steps must not nest in it)
        # until the recorder's writer has its crops on disk; they are attached, then it stops
        self._reporter.start_step(test.uuid, step_uuid, step)
        details = None
        if record.outcome == "failed":
            details = StatusDetails(message=self._recorder.redactor.text(record.explanation or record.error or ""))
        self._open.append((index, step_uuid, {"stop": _ms(stop), "status": status, "statusDetails": details}))
        self._settle(wait=False)

    def on_finish(self, session: Any) -> None:
        """Before the finish can discard a passed test's folder: attach every step's crops."""
        self._settle(wait=True)

    def _settle(self, *, wait: bool) -> None:
        """Attach the crops of open steps whose files are written, in order, and stop them;
        `wait`: wait for the recorder first and stop every open step (missing files: none)."""
        if wait:
            self._recorder.drain()
        while self._open:
            index, step_uuid, stop = self._open[0]
            files = self._recorder.step_files.get(index)
            if files is None and not wait:
                return
            befores = list((files or {}).get("crops_before") or [])
            for position, rel in enumerate((files or {}).get("crops") or []):
                if position < len(befores) and befores[position]:
                    self._attach_file(befores[position], f"step {index} region {position} before", step_uuid)
                self._attach_file(rel, f"step {index} region {position} after", step_uuid)
            self._reporter.stop_step(step_uuid, **stop)
            self._open.pop(0)

    def _attach_file(self, rel: str, name: str, parent: str | None) -> None:
        *_, AttachmentType = self._types
        path = self._recorder.folder / rel
        kind = AttachmentType.PNG if rel.endswith(".png") else AttachmentType.JPG
        self._reporter.attach_data(str(uuid.uuid4()), path.read_bytes(), name=name, attachment_type=kind,
                                   parent_uuid=parent)

    def _scrub_status(self, test: Any) -> None:
        """allure-pytest takes the failure's message and trace from pytest itself: scrub them too."""
        redactor = self._recorder.redactor
        details = getattr(test, "statusDetails", None)
        if not redactor.active or details is None:
            return
        for name in ("message", "trace"):
            value = getattr(details, name, None)
            if isinstance(value, str):
                setattr(details, name, redactor.text(value))

    # -- after the test ----------------------------------------------------------------------
    def finish(self, finished: Any, *, goal: str, tier: str, failed: bool) -> None:
        """Labels, description and (on failure) the timeline, report, tracker and anchors."""
        from allure_commons.model2 import Label
        from allure_commons.types import AttachmentType

        test = self._reporter.get_test(None)
        if test is None:
            return
        self._scrub_status(test)
        if goal:
            test.description = self._recorder.redactor.text(goal)
        test.labels.append(Label(name="guistate_tier", value=tier))
        if finished.triage is not None:
            test.labels.append(Label(name="guistate_triage", value=finished.triage.label))
        if not failed:
            return
        def attach(key: str, body: bytes, *, name: str, attachment_type: Any) -> None:
            # parent = the test itself: during fixture teardown the last executable is the fixture
            self._reporter.attach_data(key, body, name=name, attachment_type=attachment_type, parent_uuid=test.uuid)

        attach(str(uuid.uuid4()), finished.timeline_svg.encode("utf-8"), name="guistate timeline",
               attachment_type=AttachmentType.SVG)
        attach(str(uuid.uuid4()), finished.progress_text.encode("utf-8"), name="guistate progress",
               attachment_type=AttachmentType.TEXT)
        attach(str(uuid.uuid4()), finished.anchors_json.encode("utf-8"), name="guistate anchors",
               attachment_type=AttachmentType.JSON)
        if finished.triage is not None:
            attach(str(uuid.uuid4()), finished.triage.line().encode("utf-8"), name="guistate triage",
                   attachment_type=AttachmentType.TEXT)
        report: Path | None = finished.report
        if report is not None and report.is_file():
            attach(str(uuid.uuid4()), report.read_bytes(), name="guistate report.html",
                   attachment_type=AttachmentType.HTML)
