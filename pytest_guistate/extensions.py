"""The pytest side of the extension hooks and of what CI needs to know about a test.

- `anchor_detector` / `redaction_source`: the `pytest_guistate_detect_anchors` and
  `pytest_guistate_redact` hooks as the plain callables the core and the recorder take (the core
  never imports pytest); None when no plugin or conftest implements them.
- `scrub_report`: a failure's text (terminal, JUnit XML, Allure's trace) scrubbed of secrets
  and the redact hook's patterns; `rename_report`: the test's id in pytest's own names likewise.
- `locate`: the test's file and lines in the run summary, for CI annotations on source lines.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_guistate.report.redact import Redactor, scrub_repr

if TYPE_CHECKING:
    from pytest_guistate.core.detectors import DetectedAnchor, DetectFn
    from pytest_guistate.report.redact import Redaction, RedactionSource
    from pytest_guistate.report.summary import TestSummary

__all__ = ["anchor_detector", "locate", "redaction_source", "rename_report", "scrub_report"]


def anchor_detector(config: pytest.Config, item: pytest.Item) -> DetectFn | None:
    hook = config.hook.pytest_guistate_detect_anchors
    if not hook.get_hookimpls():
        return None

    def detect(record: Any, before: Any, after: Any, transition: Any) -> list[DetectedAnchor]:
        found: list[DetectedAnchor] = []
        for result in hook(step=record.index, before=before, after=after, transition=transition, record=record,
                           item=item):
            found.extend(result or [])
        return found

    return detect


def redaction_source(config: pytest.Config, item: pytest.Item) -> RedactionSource | None:
    hook = config.hook.pytest_guistate_redact
    if not hook.get_hookimpls():
        return None

    def source(observation: Any) -> Iterable[Redaction | None]:
        return list(hook(observation=observation, item=item))

    return source


def scrub_report(report: pytest.TestReport, redactor: Redactor | None) -> None:
    """Scrub the failure representation in place (call it after the guistate section is added)."""
    if redactor is None or not redactor.active:
        return
    report.sections = [(name, redactor.text(content)) for name, content in report.sections]  # captured output
    if report.longrepr is None:
        return
    if isinstance(report.longrepr, str):
        report.longrepr = redactor.text(report.longrepr)
        return
    if isinstance(report.longrepr, tuple):  # a skip: (path, line, reason)
        path, line, reason = report.longrepr
        report.longrepr = (path, line, redactor.text(reason))
        return
    scrub_repr(report.longrepr, redactor.text)
    if redactor.text(str(report.longrepr)) != str(report.longrepr):  # a part the walk could not reach
        report.longrepr = redactor.text(str(report.longrepr))


def rename_report(report: pytest.TestReport, names: tuple[str, str] | None) -> None:
    """The JUnit testcase name, the `-r` summary line and the failure headline come from
    `report.nodeid` and `report.location`: give them the id without secrets. The report, not the
    item: node ids are read-only for plugins (pytest-dev/pytest#5259; `--lf` and IDEs key on them).
    Every phase gets the names fixed at the test's start, so JUnit keeps one testcase per test."""
    if names is None:
        return
    nodeid, domain = names
    if report.nodeid != nodeid:
        report.nodeid = nodeid
    path, line, old = report.location
    if old != domain:
        report.location = (path, line, domain)


def _display_path(item: pytest.Item) -> str:
    """The test file relative to where pytest was started (what a CI checkout sees), else to rootdir."""
    path = Path(item.path)
    for base in (item.config.invocation_params.dir, item.config.rootpath):
        try:
            return path.resolve().relative_to(Path(base).resolve()).as_posix()
        except ValueError:
            continue
    return Path(item.location[0]).as_posix()


def _def_line(item: pytest.Item) -> int | None:
    """The 1-based line of the test's `def`: pytest's location is its first decorator's line."""
    line = item.location[1]
    if line is None:
        return None
    try:
        lines, start = inspect.getsourcelines(item.obj)  # type: ignore[attr-defined]
    except (AttributeError, OSError, TypeError):
        return line + 1
    for offset, text in enumerate(lines):
        if re.match(r"\s*(async\s+)?def\s", text):
            return start + offset
    return line + 1


def _failure_line(item: pytest.Item, report: pytest.TestReport | None) -> int | None:
    """The last line of the test's own file the failure's traceback went through (1-based)."""
    longrepr = getattr(report, "longrepr", None) if report is not None and report.failed else None
    chain = getattr(longrepr, "chain", None)
    tracebacks = [entry[0] for entry in chain] if chain else [getattr(longrepr, "reprtraceback", None)]
    own = Path(item.path).resolve()
    base = Path(item.config.invocation_params.dir)
    for traceback in reversed(tracebacks):
        for entry in reversed(getattr(traceback, "reprentries", None) or []):
            location = getattr(entry, "reprfileloc", None)
            if location is not None and (base / str(location.path)).resolve() == own:
                return int(location.lineno)
    return None


def locate(summary: TestSummary, item: pytest.Item, call: pytest.TestReport | None) -> None:
    """Fill the summary's `file`, `line` (the def) and `fail_line` (where it failed)."""
    summary.file = _display_path(item)
    summary.line = _def_line(item)
    summary.fail_line = _failure_line(item, call)
