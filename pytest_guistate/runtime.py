"""Per-run and per-test glue between pytest and the core: the part plugin.py delegates to.

`GuistateRuntime` lives in `config.stash` for the whole run (it owns the embedded sim server,
the pytest-cache step counts used by the auto tier, and the run's records). Per-test state is
kept in `item.stash`, never as attributes on items; building and finishing a test's session is
the `SessionsMixin` of runtime_session.py.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from pytest_guistate.config import GuistateConfig
from pytest_guistate.core.errors import RecordingFailed
from pytest_guistate.core.tiers import Tier, choose_tier
from pytest_guistate.items import marker_kwargs
from pytest_guistate.runtime_session import SessionsMixin

if TYPE_CHECKING:
    from pytest_guistate.devices.sim.server import SimServer
    from pytest_guistate.memory.heal import Healer
    from pytest_guistate.report.run_ledger import RunLedger
    from pytest_guistate.report.summary import SummaryPart

__all__ = ["RUNTIME_KEY", "GuistateRuntime", "default_refresh"]

RUNTIME_KEY = pytest.StashKey["GuistateRuntime"]()
_CACHE_PREFIX = "guistate/steps/"


def _cache_key(nodeid: str) -> str:
    return _CACHE_PREFIX + re.sub(r"[^A-Za-z0-9_.:-]+", "_", nodeid)


@dataclass
class GuistateRuntime(SessionsMixin):
    """Run-wide state: the embedded phone server and the auto-tier memory."""

    config: pytest.Config
    settings: GuistateConfig
    _sim: SimServer | None = field(default=None, init=False)
    _summary_part: SummaryPart | None = field(default=None, init=False)
    _healer: Healer | None = field(default=None, init=False)
    _summary_lock: int | None = field(default=None, init=False)  # fd of `<summary>.lock`, held for the run
    heal_lines: list[str] = field(default_factory=list, init=False)  # for the terminal summary
    cache_lines: list[str] = field(default_factory=list, init=False)  # action cache misses and rewrites (issue 21)
    finished_rows: list[dict[str, Any]] = field(default_factory=list, init=False)  # this process's tests, for the index
    ledger: RunLedger | None = field(default=None, init=False)  # controller: collected vs finished (run_ledger.py)

    def sim_url(self) -> str:
        """Start the embedded simulated phone on a free loopback port (once per process)."""
        if self._sim is None:
            from pytest_guistate.devices.sim.server import SimServer

            self._sim = SimServer(host="127.0.0.1", port=0)
            self._sim.start()
        return self._sim.url

    def stop_sim(self) -> None:
        if self._sim is not None:
            self._sim.stop()
            self._sim = None

    def last_step_count(self, nodeid: str) -> int | None:
        cache = getattr(self.config, "cache", None)
        if cache is None:
            return None
        value = cache.get(_cache_key(nodeid), None)
        return int(value) if isinstance(value, int) else None

    def store_step_count(self, nodeid: str, steps: int) -> None:
        cache = getattr(self.config, "cache", None)
        if cache is not None:
            cache.set(_cache_key(nodeid), int(steps))

    def requested_tier(self, item: pytest.Item) -> tuple[Tier, Tier | None]:
        """The run's tier and the marker's tier (if any) for this test."""
        marker_tier = marker_kwargs(item).get("tier")
        parsed: Tier | None = None
        if marker_tier is not None:
            try:
                parsed = Tier(str(marker_tier))
            except ValueError:
                allowed = ", ".join(t.value for t in Tier)
                raise pytest.UsageError(
                    f"{item.nodeid}: @pytest.mark.guistate(tier={marker_tier!r}) is not one of {allowed}"
                ) from None
        return self.settings.tier, parsed

    @property
    def worker(self) -> str | None:
        """xdist's worker id (`gw0`), None in the controller or without xdist."""
        workerinput = getattr(self.config, "workerinput", None)
        return str(workerinput["workerid"]) if workerinput else None

    def resolve_tier(self, item: pytest.Item, test_id: str | None = None) -> tuple[Tier, str, bool]:
        """The tier for one test, why, and whether a declared plan may still choose it (auto)."""
        requested, marker_tier = self.requested_tier(item)
        if requested is Tier.OFF:
            return Tier.OFF, "option", False  # --guistate=off switches recording off for every test
        last = self.last_step_count(test_id or item.nodeid) if requested is Tier.AUTO else None
        tier, reason = choose_tier(
            requested, marker_tier=marker_tier, last_step_count=last, thresholds=self.settings.thresholds
        )
        return tier, reason, reason == "default"

    def start_summary(self) -> None:
        """Controller: clear stale part files, mark the summary incomplete; every process: open its own part."""
        from pytest_guistate.report.run_ledger import RunLedger
        from pytest_guistate.report.summary import SummaryPart, reset_parts, write_incomplete

        path = self.settings.summary_path
        if path is None:
            return
        if self.worker is None:
            reset_parts(path)  # after check_paths() took the summary's lock: only this run's parts are here
            try:
                write_incomplete(path, shard=self.settings.shard)  # a run killed from here on is never "passed"
            except OSError as exc:  # e.g. a full disk: at least never leave the last run's summary to be gated
                path.unlink(missing_ok=True)
                print(f"guistate: could not mark {path} as in progress ({exc}); the old summary was removed",
                      file=sys.stderr)
            self.ledger = RunLedger()
        self._summary_part = SummaryPart(path, self.worker)

    @property
    def distributing(self) -> bool:
        """This process is xdist's controller: the workers collect and run, it only hears of it."""
        return self.worker is None and self.config.pluginmanager.get_plugin("dsession") is not None

    def record_collected(self, nodeids: list[str]) -> None:
        """Controller: the tests the run must account for (after -k/-m deselection)."""
        from pytest_guistate.report.summary import write_incomplete

        if self.ledger is None or self.settings.summary_path is None or self.config.option.collectonly:
            return  # --collect-only runs nothing: no test is lost (the gate still refuses an empty summary)
        first = not self.ledger.collected
        self.ledger.add_collected(nodeids)
        if first and self.ledger.collected:
            try:
                write_incomplete(self.settings.summary_path, shard=self.settings.shard,
                                 collected=self.ledger.collected)
            except OSError as exc:  # the end of the run writes the full list again; the marker is a bonus
                print(f"guistate: could not update {self.settings.summary_path} ({exc})", file=sys.stderr)

    def record_report(self, report: pytest.TestReport) -> None:
        if self.ledger is not None and self.worker is None:
            self.ledger.report(report.nodeid, str(report.when), report.outcome)

    def record_crash(self, nodeid: str, reason: str) -> None:
        if self.ledger is not None:
            self.ledger.crash(nodeid, reason)

    def record_worker_down(self, worker: str, error: object) -> None:
        if self.ledger is not None and error:
            self.ledger.worker_down(worker, error)

    def record_stop(self, session: pytest.Session, exitstatus: int) -> None:
        """Why the run ended before its tests did: -x/--maxfail, Ctrl-C, a collection error."""
        if self.ledger is None or self.ledger.stop_reason:
            return
        dsession = self.config.pluginmanager.get_plugin("dsession")
        reasons = [session.shouldfail, session.shouldstop, getattr(dsession, "shouldstop", None)]
        reason = next((str(r) for r in reasons if r), None)
        if reason is None and exitstatus == pytest.ExitCode.INTERRUPTED:
            reason = "interrupted"
        self.ledger.stop_reason = reason

    def record_interrupt(self, message: str) -> None:
        if self.ledger is not None and not self.ledger.stop_reason:
            self.ledger.stop_reason = message

    def check_paths(self) -> None:
        """Controller, at configure: unwritable dirs and a summary another run holds are usage errors (paths.py)."""
        from pytest_guistate.paths import check_paths

        if self.worker is None:
            self._summary_lock = check_paths(self.settings)

    def write_summary(self) -> None:
        """Controller: merge every worker's part into the one summary file."""
        from pytest_guistate.report.summary import merge_parts

        if self.settings.summary_path is not None and self.worker is None:
            merge_parts(self.settings.summary_path, ledger=self.ledger, shard=self.settings.shard)

    def write_index(self) -> None:
        """Controller: the run's index.html in the artifacts dir, when any test folder was kept."""
        from pytest_guistate.report.index import read_summary_tests, rows_from_summary, write_index

        root = self.settings.artifacts_dir
        if self.worker is not None or not root.is_dir() or not any(root.glob("*/journal.jsonl")):
            return
        summary = self.settings.summary_path
        tests = self.finished_rows
        try:
            if summary is not None and summary.is_file():
                tests = read_summary_tests(summary)  # every worker's tests, merged
            write_index(root, rows_from_summary(tests))
        except (OSError, ValueError, RecordingFailed) as exc:  # RecordingFailed: e.g. the disk is full
            # at session end pytest no longer shows warnings: say it on stderr
            print(f"guistate: could not write the run index {root / 'index.html'}: {exc}", file=sys.stderr)

    def healer(self) -> Healer | None:
        """The cross-run memory, opened on first use (one SQLite connection per process)."""
        path = self.settings.memory_path
        if path is None:
            return None
        if self._healer is None:
            from pytest_guistate.core.errors import GuistateWarning
            from pytest_guistate.memory.heal import Healer
            from pytest_guistate.memory.recover import open_store

            store, note = open_store(path)  # a damaged file is set aside, never deleted (issue 14)
            if note:
                warnings.warn(GuistateWarning(note), stacklevel=2)
            self._healer = Healer(store)
        return self._healer

    def close(self) -> None:
        self.stop_sim()
        if self._summary_lock is not None:
            os.close(self._summary_lock)
            self._summary_lock = None
        if self._healer is not None:
            self._healer.store.close()
            self._healer = None


def default_refresh(screen: Any) -> bool | None:
    """The plugin's own refresh: pull to refresh where a scrollable list is on screen."""
    pull = getattr(screen, "pull_to_refresh", None)
    if pull is None:
        return None
    try:
        return bool(pull())
    except Exception as exc:  # noqa: BLE001 - any failure of a refresh is a warning: the step decides
        warnings.warn(f"guistate: pull-to-refresh failed ({type(exc).__name__}: {exc})", stacklevel=2)
        return False
