"""Allure output, only when allure-pytest is active (`--alluredir`).

allure-pytest registers its `AllureListener` as the pytest plugin "allure_listener" only when
`--alluredir` is given; without it this module finds nothing and does nothing (nothing is
imported from allure at all). Guistate steps happen before the adapter hears of them (it is a
session listener), so `allure.step` as a context manager cannot be used; instead each finished
step is added through the listener's `AllureReporter` (`start_step` + attachments + `stop_step`),
which is how allure-pytest itself records steps, with the real start/stop times and status.
A step's title says what the plugin did ("[guistate 4] confirm — refreshed"), and a failed step's
first attachment is its before | after pair with the regions drawn (issue 15: one click).
Attachments are the recorder's files: redacted before they were written. The recorder writes
them on its own thread, so a step stays open in Allure (a child of the test, named explicitly)
until its files exist, and every step is closed at the session's finish, before a passed test's
folder may be discarded.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

from pytest_guistate.report.html import images_carried, render_page
from pytest_guistate.report.images import as_png, image_size
from pytest_guistate.report.recorder import ArtifactRecorder
from pytest_guistate.report.side_by_side import side_by_side

__all__ = ["AllureAdapter", "allure_listener", "step_title"]

RECOVERED = ("settled", "refreshed", "retried")  # outcomes where the plugin acted before the step passed


def step_title(record: Any) -> str:
    """`[guistate 4] confirm`, plus what the plugin did: `— refreshed (pull-to-refresh)`, `— settled`,
    `— retried`, or for a failure `— failed after settle and refresh`. In a hybrid app the context the
    step acted in comes first: `[guistate 4 @WEBVIEW_com.example] sign in` (issue 37)."""
    context = getattr(record, "context", "") or ""
    where = f" @{context}" if context and getattr(record, "kind", "") != "context" else ""
    title = f"[guistate {record.index}{where}] {record.name}"
    attempts = list(getattr(record, "attempts", None) or [])
    by = next((a.refreshed_by for a in reversed(attempts) if a.stage == "refresh" and a.refreshed_by), "")
    if record.outcome in RECOVERED:
        return f"{title} — {record.outcome}" + (f" ({by})" if record.outcome == "refreshed" and by else "")
    if record.outcome == "failed":
        stages = {a.stage for a in attempts}
        tried = [word for stage, word in (("settle", "settle"), ("wait", "settle"), ("refresh", "refresh"),
                                          ("retry", "retry")) if stage in stages]
        tried = list(dict.fromkeys(tried))
        return f"{title} — failed" + (f" after {' and '.join(tried)}" if tried else "")
    return title


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
        # steps that get a side-by-side (failed, refreshed): step -> (regions, expect box, failed)
        self._failed: dict[int, tuple[list[list[int]], list[int] | None, bool]] = {}

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
        duration = record.duration_s or 0.0
        # when the step ended, not when it is reported: a step judged beside the test is reported later
        stop = record.wall + duration if isinstance(getattr(record, "wall", None), float) else time.time()
        status = Status.FAILED if record.outcome == "failed" else Status.PASSED
        params = [Parameter(name="outcome", value=record.outcome or "running"),
                  Parameter(name="verdict", value=str(record.verdict))]
        if record.expect:
            params.append(Parameter(name="expect", value=self._recorder.redactor.text(record.expect)))
        if getattr(record, "cache", ""):  # issue 21: hit | miss | live, beside the title's "[cache]"
            params.append(Parameter(name="cache", value=record.cache))
        if getattr(record, "heal", ""):  # issue 45: the memory healed its locator; the edit it proposes
            params.append(Parameter(name="heal", value=self._recorder.redactor.text(record.heal)))
        step = TestStepResult(name=self._recorder.redactor.text(step_title(record)),
                              start=_ms(stop - duration), parameters=params)
        step_uuid = str(uuid.uuid4())
        # parent = the test, named: the step stays open (so later steps must not nest in it)
        # until the recorder's writer has its crops on disk; they are attached, then it stops
        self._reporter.start_step(test.uuid, step_uuid, step)
        details = None
        if record.outcome == "failed":
            details = StatusDetails(message=self._recorder.redactor.text(record.explanation or record.error or ""))
        if record.outcome in ("failed", "refreshed"):  # issue 23: a refreshed step gets its before | after too
            regions = [list(r["box"]) for r in record.regions if isinstance(r, dict) and r.get("box")]
            self._failed[index] = (regions, record.expect_box, record.outcome == "failed")
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
            if index in self._failed and files is not None:
                self._attach_pair(index, files, step_uuid)
            befores = list((files or {}).get("crops_before") or [])
            for position, rel in enumerate((files or {}).get("crops") or []):
                if position < len(befores) and befores[position]:
                    self._attach_file(befores[position], f"step {index} region {position} before", step_uuid)
                self._attach_file(rel, f"step {index} region {position} after", step_uuid)
            self._reporter.stop_step(step_uuid, **stop)
            self._open.pop(0)

    def _attach_pair(self, index: int, files: dict[str, Any], parent: str) -> None:
        """A failed or refreshed step's before | after with its regions drawn, first in the step:
        from the whole frames when kept (full tier, any failure), else from its first crop pair."""
        *_, AttachmentType = self._types
        regions, expect_box, failed = self._failed.pop(index)
        frames = files.get("frames") or {}
        before, after = frames.get("before"), frames.get("after")
        folder = self._recorder.folder
        if before and after:
            screen = files.get("screen")
            png = side_by_side((folder / before).read_bytes(), (folder / after).read_bytes(), regions,
                               screen_width=int(screen[0]) if screen else None, expect_box=expect_box)
        else:
            crops, befores = list(files.get("crops") or []), list(files.get("crops_before") or [])
            if not crops or not befores or not befores[0]:
                return  # nothing to pair (the step failed before its after-frame was taken)
            after_crop = (folder / crops[0]).read_bytes()
            width, height = image_size(after_crop)
            png = side_by_side((folder / befores[0]).read_bytes(), after_crop, [[0, 0, width, height]])
        del failed  # the same image for both: a refreshed step's change is as worth a look
        self._reporter.attach_data(str(uuid.uuid4()), png, name=f"step {index} before | after",
                                   attachment_type=AttachmentType.PNG, parent_uuid=parent)

    def _attach_file(self, rel: str, name: str, parent: str | None) -> None:
        *_, AttachmentType = self._types
        data = (self._recorder.folder / rel).read_bytes()
        if rel.endswith((".jpg", ".jpeg")):
            kind = AttachmentType.JPG
        else:  # a crop is stored as lossless WebP (issue 44); Allure shows PNG: its own copy is one
            data, kind = as_png(data), AttachmentType.PNG
        self._reporter.attach_data(str(uuid.uuid4()), data, name=name, attachment_type=kind, parent_uuid=parent)

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
    def _scrub_names(self, test: Any) -> None:
        """allure-pytest names the result after `item.name` and lists the parameter values: a
        secret in a parametrize id is replaced as in the artifacts folder's name (`ident`)."""
        redactor = self._recorder.redactor
        if not redactor.active:
            return
        test.name = redactor.ident(test.name or "")
        test.titlePath = [redactor.ident(part) for part in test.titlePath or []]
        for parameter in test.parameters or []:
            parameter.value = redactor.ident(str(parameter.value))

    def _query_steps(self, test: Any, queries: list[dict[str, Any]]) -> None:
        """One Allure step per `guistate.query` (issue 46): the question, type, value and who read it
        as parameters, each cited element's crop attached."""
        Parameter, Status, _, TestStepResult, _ = self._types
        text = self._recorder.redactor.text
        for query in queries:
            value = json.dumps(query.get("value"), ensure_ascii=False)
            now = _ms(time.time())
            params = [Parameter(name="question", value=text(str(query.get("question", "")))),
                      Parameter(name="type", value=str(query.get("type", ""))), Parameter(name="value", value=text(value)),
                      Parameter(name="read by", value="action cache" if query.get("source") == "cache" else "model")]
            failed = bool(query.get("problems"))
            step = TestStepResult(name=text(f"query {query.get('question', '')!r} -> {value}"), start=now,
                                  parameters=params)
            step_uuid = str(uuid.uuid4())
            self._reporter.start_step(test.uuid, step_uuid, step)
            for item in query.get("evidence") or []:
                rel = item.get("crop") if isinstance(item, dict) else None
                if rel and (self._recorder.folder / str(rel)).is_file():
                    self._attach_file(str(rel), text(f"read {item.get('path') or 'the value'}: {item.get('label', '')}"),
                                      step_uuid)
            self._reporter.stop_step(step_uuid, stop=now, status=Status.FAILED if failed else Status.PASSED)

    def finish(self, finished: Any, *, goal: str, tier: str, failed: bool,
               queries: list[dict[str, Any]] | None = None) -> None:
        """Labels, description, and the test-level attachments in the order a person opens them:
        report.html, timeline, progress (then anchors and triage). Failed tests get them all; at
        tier full a passed test gets report.html (when kept), the timeline and the progress."""
        from allure_commons.model2 import Label
        from allure_commons.types import AttachmentType

        test = self._reporter.get_test(None)
        if test is None:
            return
        self._scrub_status(test)
        self._scrub_names(test)
        if goal:
            test.description = self._recorder.redactor.text(goal)
        test.labels.append(Label(name="guistate_tier", value=tier))
        if queries:
            self._query_steps(test, queries)
        if finished.triage is not None:
            test.labels.append(Label(name="guistate_triage", value=finished.triage.label))
        if not failed and tier != "full":
            return

        def attach(body: bytes, name: str, attachment_type: Any) -> None:
            # parent = the test itself: during fixture teardown the last executable is the fixture
            self._reporter.attach_data(str(uuid.uuid4()), body, name=name, attachment_type=attachment_type,
                                       parent_uuid=test.uuid)

        report: Path | None = finished.report
        if report is not None and report.is_file() and finished.report_model is not None:
            # Allure stores an attachment alone, away from crops/ and frames/: this copy carries its images
            page = render_page(images_carried(finished.report_model, report.parent))
            attach(page.encode("utf-8"), "guistate report.html", AttachmentType.HTML)
        attach(finished.timeline_svg.encode("utf-8"), "guistate timeline", AttachmentType.SVG)
        attach(finished.progress_text.encode("utf-8"), "guistate progress", AttachmentType.TEXT)
        if not failed:
            return
        attach(finished.anchors_json.encode("utf-8"), "guistate anchors", AttachmentType.JSON)
        if finished.triage is not None:
            attach(finished.triage.line().encode("utf-8"), "guistate triage", AttachmentType.TEXT)
