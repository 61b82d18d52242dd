"""The hooks that feed the run ledger (`report/run_ledger.py`): collected tests, final reports, crashes.

Registered per run as a plugin object bound to the run's `GuistateRuntime` (hooks such as
`pytest_runtest_logreport` carry no config to find it by). The xdist hooks are optional: without
xdist they are never called; with it, the controller hears every worker's collection, reports,
crash reports (`pytest_handlecrashitem`) and workers going down (`pytest_testnodedown`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_guistate.runtime import GuistateRuntime

__all__ = ["LedgerHooks"]


class LedgerHooks:
    """One run's ledger feed; every method is a pytest (or pytest-xdist) hook."""

    def __init__(self, runtime: GuistateRuntime) -> None:
        self.runtime = runtime

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not self.runtime.distributing:  # xdist's controller collects nothing: its workers tell it
            self.runtime.record_collected([item.nodeid for item in session.items])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.runtime.record_collected(list(ids))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.runtime.record_report(report)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Any) -> None:
        reason = str(report.longrepr) if report.longrepr else f"its worker crashed while running {crashitem}"
        self.runtime.record_crash(crashitem, reason)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        self.runtime.record_worker_down(str(getattr(getattr(node, "gateway", None), "id", "?")), error)

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        message = str(excinfo.value).strip()
        self.runtime.record_interrupt(f"{excinfo.typename}: {message}" if message else excinfo.typename)
