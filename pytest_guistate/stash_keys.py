"""What the plugin keeps on a pytest item and reads back from it (`item.stash`, never attributes).

Shared by `plugin.py` (report hooks), `fixtures.py` and `runtime.py`: the guistate session of the
test, its phase reports, its live terminal status, and the merged `@pytest.mark.guistate` options.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_guistate.guistate_fixture import GuistateSession  # noqa: F401 - named in a StashKey string
    from pytest_guistate.progress import TerminalProgress  # noqa: F401 - named in a StashKey string

__all__ = [
    "APPIUM_SESSION_KEY",
    "LIVE_KEY",
    "REPORTS_KEY",
    "REPORT_NAMES_KEY",
    "SESSION_KEY",
    "SessionInfo",
    "attach_failure_section",
    "did_test_fail",
    "marker_kwargs",
    "remember_report",
]


@dataclass
class SessionInfo:
    """What the journal's meta and the report header say about this test's Appium session.

    Defined here, beside the key it is kept under, so `worker_sessions.py` (which fills it) reads
    items without items reading it back."""

    mode: str  # test | worker
    state: str  # new | reused
    reason: str = ""  # why a new session (worker mode), e.g. "the previous test failed"
    reset: str = ""  # which reset ran before a reused session was handed over
    session_id: str = ""
    tests: int = 1  # tests this session has served, this one included

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


SESSION_KEY = pytest.StashKey["GuistateSession"]()
REPORTS_KEY = pytest.StashKey[dict[str, pytest.TestReport]]()
LIVE_KEY = pytest.StashKey["TerminalProgress"]()
APPIUM_SESSION_KEY = pytest.StashKey[SessionInfo]()  # new or reused Appium session, which reset ran
REPORT_NAMES_KEY = pytest.StashKey[tuple[str, str]]()  # (nodeid, location domain) without secrets


def marker_kwargs(item: pytest.Item) -> dict[str, Any]:
    """All `@pytest.mark.guistate(...)` keyword arguments, closest marker winning."""
    merged: dict[str, Any] = {}
    for marker in reversed(list(item.iter_markers("guistate"))):
        if marker.args:
            raise pytest.UsageError(
                f"{item.nodeid}: @pytest.mark.guistate takes keyword arguments only, got {marker.args!r}"
            )
        merged.update(marker.kwargs)
    return merged


def remember_report(item: pytest.Item, report: pytest.TestReport) -> None:
    item.stash.setdefault(REPORTS_KEY, {})[report.when] = report
    live = item.stash.get(LIVE_KEY, None)
    if live is not None and report.when == "call":
        live.clear()  # before the terminal reporter writes this test's result


def did_test_fail(item: pytest.Item) -> bool:
    """A missing call report means the test did not pass (pytest-playwright's issue #89)."""
    reports = item.stash.get(REPORTS_KEY, {})
    call = reports.get("call")
    setup = reports.get("setup")
    if setup is not None and setup.failed:
        return True
    return call is None or call.failed


def attach_failure_section(item: pytest.Item, report: pytest.TestReport) -> None:
    """Put the task progress into the failure itself, so terminal and JUnit XML both show it; then
    scrub every phase's report of the test's secrets (traceback, captured output, its names)."""
    session = item.stash.get(SESSION_KEY, None)
    if session is None:
        return
    from pytest_guistate.extensions import rename_report, scrub_report

    rename_report(report, item.stash.get(REPORT_NAMES_KEY, None))
    if not report.failed or report.when != "call":
        scrub_report(report, session.redactor)  # teardown carries every phase's captured output
        return
    try:
        text = session.failure_section()
    except Exception as exc:  # noqa: BLE001 - never hide the test's own failure behind ours
        text = f"(guistate could not summarise the task state: {type(exc).__name__}: {exc})"
    longrepr = report.longrepr
    if hasattr(longrepr, "addsection"):
        longrepr.addsection("guistate", text)  # type: ignore[union-attr]
    else:
        report.sections.append(("guistate", text))
    scrub_report(report, session.redactor)  # the traceback reaches terminals, JUnit XML and Allure too
