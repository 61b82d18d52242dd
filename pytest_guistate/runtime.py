"""Per-run and per-test glue between pytest and the core: the part plugin.py delegates to.

`GuistateRuntime` lives in `config.stash` for the whole run (it owns the embedded sim server,
the pytest-cache step counts used by the auto tier, and the run's records), and builds and
finishes each test's `GuistateSession`: `new_session` wires the session to its recorder (journal,
report), the Allure adapter, the pluggy hooks (as the core's plain callables), the live progress
line, the cross-run memory and the LLM; `finish_session` closes the record. What a test needs
between the two is kept in `item.stash`, never as attributes on items.
"""

from __future__ import annotations

import os
import re
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from pytest_guistate.config import GuistateConfig
from pytest_guistate.core.errors import RecordingFailed
from pytest_guistate.core.tiers import Tier, TierPolicy, choose_tier
from pytest_guistate.extensions import anchor_detector, locate, redaction_source
from pytest_guistate.guistate_fixture import GuistateSession
from pytest_guistate.progress import terminal_progress
from pytest_guistate.stash_keys import APPIUM_SESSION_KEY, LIVE_KEY, REPORT_NAMES_KEY, REPORTS_KEY, marker_kwargs

if TYPE_CHECKING:
    from pytest_guistate.core.steploop import SessionHooks
    from pytest_guistate.devices.sim.server import SimServer
    from pytest_guistate.memory.bridge import MemoryBridge  # noqa: F401 - named in a StashKey string
    from pytest_guistate.memory.heal import Healer
    from pytest_guistate.report.allure_adapter import AllureAdapter
    from pytest_guistate.report.recorder import ArtifactRecorder
    from pytest_guistate.report.run_ledger import RunLedger
    from pytest_guistate.report.summary import SummaryPart

__all__ = ["RUNTIME_KEY", "GuistateRuntime", "default_refresh"]

RUNTIME_KEY = pytest.StashKey["GuistateRuntime"]()
_CACHE_PREFIX = "guistate/steps/"


def _cache_key(nodeid: str) -> str:
    return _CACHE_PREFIX + re.sub(r"[^A-Za-z0-9_.:-]+", "_", nodeid)


@dataclass
class _TestRecording:
    recorder: ArtifactRecorder
    adapter: AllureAdapter | None
    started: float
    test_id: str  # the node id as names may show it (`Redactor.ident`), fixed when the test started


RECORDER_KEY = pytest.StashKey[_TestRecording]()
MEMORY_KEY = pytest.StashKey["MemoryBridge"]()


@dataclass
class GuistateRuntime:
    """Run-wide state (the embedded phone server, the auto-tier memory, the run's records) and
    each test's session, built and finished."""

    config: pytest.Config
    settings: GuistateConfig
    _sim: SimServer | None = field(default=None, init=False)
    _summary_part: SummaryPart | None = field(default=None, init=False)
    _healer: Healer | None = field(default=None, init=False)
    _summary_lock: int | None = field(default=None, init=False)  # fd of `<summary>.lock`, held for the run
    heal_lines: list[str] = field(default_factory=list, init=False)  # for the terminal summary
    heal_proposals: int = field(default=0, init=False)  # heals proposed as patches (`guistate heal-diff`)
    export_lines: list[str] = field(default_factory=list, init=False)  # `--guistate-export`: what was written
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
        from pytest_guistate.report.run_ledger import masked_ids
        from pytest_guistate.report.summary import write_incomplete

        if self.ledger is None or self.settings.summary_path is None or self.config.option.collectonly:
            return  # --collect-only runs nothing: no test is lost (the gate still refuses an empty summary)
        first = not self.ledger.collected
        self.ledger.add_collected(nodeids)
        if first and self.ledger.collected:
            try:
                write_incomplete(self.settings.summary_path, shard=self.settings.shard,
                                 collected=masked_ids(self.ledger.collected))  # no secret of an id, unknown yet
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
        """Controller, at configure: unwritable dirs and a summary another run holds are usage errors (config.py)."""
        from pytest_guistate.config import check_paths

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

    # -- one test's session ---------------------------------------------------------------------
    def new_session(self, item: pytest.Item, device: Any) -> GuistateSession:
        """Build the test's task session with its recorder (journal, report) and Allure adapter."""
        from pytest_guistate.core.settle import SettlePolicy
        from pytest_guistate.devices.command_log import CommandLog
        from pytest_guistate.report.allure_adapter import AllureAdapter
        from pytest_guistate.report.artifacts import create_test_folder
        from pytest_guistate.report.recorder import ArtifactRecorder, RecordingScreen
        from pytest_guistate.report.redact import Redactor
        from pytest_guistate.report.run_meta import run_metadata

        redactor = Redactor(source=redaction_source(self.config, item))
        redactor.start()  # patterns known up front scrub the very first journal line and every name
        test_id = redactor.ident(item.nodeid)  # what folders, cache keys and reports may call the test
        item.stash[REPORT_NAMES_KEY] = (test_id, redactor.ident(item.location[2]))
        tier, reason, auto_from_plan = self.resolve_tier(item, test_id)
        options = marker_kwargs(item)
        folder = create_test_folder(self.settings.artifacts_dir, test_id, worker=self.worker)
        appium_session = item.stash.get(APPIUM_SESSION_KEY, None)  # new or reused, which reset (issue 12)
        recorder = ArtifactRecorder(
            folder, nodeid=item.nodeid, tier=tier.value, redactor=redactor, worker=self.worker,
            extra_meta={"tier_reason": reason, "device": getattr(device, "url", ""), **run_metadata(device),
                        **({"appium_session": appium_session.to_dict()} if appium_session else {})},
            background=True,  # crops are encoded and written off the step loop (issue 6)
        )
        recorder.driver_log = self._driver_log(device)
        commands = CommandLog.attach(getattr(device, "driver", None))
        if commands is not None:
            commands.take()  # what the fixtures sent before the test: not a step's
            recorder.command_source = commands.take  # the viewer's action log (issue 23)
        adapter = AllureAdapter.for_pluginmanager(self.config.pluginmanager, recorder)
        # issue 42: a passed step's images wait for the outcome when a passing test's folder is deleted
        # (retain failure/off) and no Allure step attaches its crops as it goes
        recorder.defer = self.settings.retain.value != "on" and adapter is None
        settle_timeout = float(options.get("settle_timeout") or self.settings.settle_timeout_s)
        if hasattr(device, "decode_ahead"):
            device.decode_ahead = tier is not Tier.OFF  # no oracle at `off`: never decode pixels ahead

        def retier(new_tier: Tier) -> None:
            recorder.tier = new_tier.value
            recorder.before_crops = new_tier in (Tier.STANDARD, Tier.FULL)

        session = GuistateSession(
            RecordingScreen(device, recorder),
            policy=TierPolicy.for_tier(tier, max_plan_length=self.settings.plan_ceiling),
            hooks=self._hooks(item),
            listeners=[recorder, *([adapter] if adapter is not None else [])],
            settle=SettlePolicy(timeout_s=settle_timeout),
            name=test_id,
            artifacts=recorder,
            tier_reason=reason,
            auto_from_plan=self.settings.thresholds if auto_from_plan else None,
            redactor=redactor,
            retier_hook=retier,
        )
        recorder.bind(session)
        from pytest_guistate.config import cycle_limit_for, cycle_limit_setting

        session.cycles.limit = cycle_limit_for(item, self.settings.cycle_limit)
        session.cycles.limit_setting = cycle_limit_setting(item)
        live = terminal_progress(self.config, test_id, session)
        if live is not None:
            session.journal.listeners.append(live)
            item.stash[LIVE_KEY] = live
        if hasattr(device, "on_secret"):
            device.on_secret = session.secret
        if hasattr(device, "on_context"):
            device.on_context = session.context_switched  # a context switch is a step (issue 37)
        if hasattr(device, "on_waited"):
            device.on_waited = session.look_again_before  # a locator waited: the before-screen is taken again
        healer = self.healer()
        if healer is not None and hasattr(device, "memory"):
            from pytest_guistate.memory.bridge import MemoryBridge

            caps = getattr(device.driver, "capabilities", None) or {}
            version = str(caps.get("guistate:appVersion") or caps.get("appium:appVersion") or "")
            bridge = MemoryBridge(healer, session, test_id, app_version=version)
            device.memory = bridge
            session.flow_store = healer.store
            session.journal.listeners.insert(0, bridge)  # before the recorder: heal crops go with the step
            item.stash[MEMORY_KEY] = bridge
        item.stash[RECORDER_KEY] = _TestRecording(recorder, adapter, time.monotonic(), test_id)
        if self.settings.llm.mode.value != "off":
            from pytest_guistate.llm.facade import open_llm

            llm_settings = self.settings.llm
            session.llm_factory = lambda: open_llm(
                llm_settings, session, device, test_file=item.path, test_name=redactor.ident(item.name),
                scrub=redactor.scrub, spans=redactor.spans
            )
        return session

    def _export(self, item: pytest.Item, session: GuistateSession, *, passed: bool) -> None:
        """`--guistate-export=DIR`: a passed LLM-driven test's action cache as a scripted test in DIR."""
        folder = item.config.getoption("guistate_export", None)
        cache = getattr(session.llm, "cache", None)
        path = getattr(cache, "path", None)
        if not folder or not passed or path is None or not path.is_file():
            return
        from pathlib import Path

        from pytest_guistate.llm.export import export_test

        try:
            Path(folder).mkdir(parents=True, exist_ok=True)
            written, _ = export_test(path, Path(folder))
        except (ValueError, OSError, SyntaxError) as exc:
            self.export_lines.append(f"{item.nodeid}: not exported ({exc})")
        else:
            self.export_lines.append(f"{item.nodeid}: exported to {written}")

    def finish_session(self, item: pytest.Item, session: GuistateSession, *, failed: bool) -> None:
        """Close the record: FINISH anchor, report.html, summary part, JUnit properties, Allure."""
        from pytest_guistate.report.finish import finalize

        reports = item.stash.get(REPORTS_KEY, {})
        call = reports.get("call")
        outcome = "failed" if failed else ("skipped" if call is not None and call.skipped else "passed")
        error = call.longreprtext if (call is not None and call.failed) else None
        llm_tokens, llm_cost, cache_report, queries = 0, None, None, None
        recording = item.stash[RECORDER_KEY]
        try:
            self._write_driver_log(recording.recorder)
            if session.llm is not None:
                session.llm.close(passed=outcome == "passed")
                llm_report = session.llm.report()
                totals = llm_report.get("usage", {}).get("totals", {})
                llm_tokens, llm_cost = int(totals.get("total_tokens", 0)), totals.get("cost_usd")
                recording.recorder.write_event("llm", llm_report)
                cache_report = llm_report.get("cache")
                self._export(item, session, passed=outcome == "passed")
                queries = llm_report.get("queries")
        finally:
            session.finish(outcome)
            done = finalize(
                recording.recorder, outcome=outcome, error=error, retain=self.settings.retain.value,
                root=self.settings.artifacts_dir, llm_tokens=llm_tokens,
                duration_s=round(time.monotonic() - recording.started, 3), worker=self.worker,
                timeline=recording.adapter is not None,
            )
        if recording.adapter is not None:
            recording.adapter.finish(done, goal=session.goal_text, tier=session.tier.value, failed=failed,
                                     queries=queries)
        from pytest_guistate.report.summary import junit_properties

        done.summary.llm_cost_usd = llm_cost
        if cache_report:
            from pytest_guistate.report.gate.cache import cache_summary

            done.summary.llm_cache = cache_summary(cache_report)
            self.cache_lines.extend(_cache_lines(done.summary.nodeid, cache_report))
        locate(done.summary, item, call)
        bridge = item.stash.get(MEMORY_KEY, None)
        if bridge is not None and bridge.heals:
            done.summary.heals = recording.recorder.redactor.scrub(list(bridge.heals))
            self.heal_lines.extend(f"{done.summary.nodeid}: {h['title']}" for h in done.summary.heals)
            proposals = [h["proposal"] for h in done.summary.heals if isinstance(h.get("proposal"), dict)]
            if proposals:  # `guistate heal-diff` reads them from the run's artifacts dir
                from pytest_guistate.memory.heal_proposal import append_proposals

                append_proposals(self.settings.artifacts_dir, proposals)
                self.heal_proposals += len(proposals)
        item.user_properties.extend(junit_properties(done.summary))
        if self._summary_part is not None:
            self._summary_part.add(done.summary)
        self.finished_rows.append(done.summary.to_dict())
        self.store_step_count(recording.test_id, len(session.steps))
        if done.write_error is not None:  # the summary has the test; now say the disk refused its record
            raise done.write_error

    def _driver_log(self, device: Any) -> Any:
        """Where this test's driver log comes from: the named Appium log file, else the embedded sim."""
        from pytest_guistate.report.driver_log import DriverLogTail

        if self.settings.driver_log is not None:
            return DriverLogTail(self.settings.driver_log).start()
        sim = self._sim
        if sim is not None and getattr(device, "url", None) == sim.url:
            return ("sim", time.time())
        return None

    def _write_driver_log(self, recorder: Any) -> None:
        from pytest_guistate.report.driver_log import DriverLogTail, sim_request_lines

        source = getattr(recorder, "driver_log", None)
        if isinstance(source, DriverLogTail):
            lines, note = source.lines()
            recorder.write_event("driver_log", {"source": str(source.path), "lines": lines, "note": note})
        sim = self._sim
        if isinstance(source, tuple) and sim is not None:
            lines = sim_request_lines(sim.request_log(), source[1])
            recorder.write_event("driver_log", {"source": "the embedded sim's request log", "lines": lines,
                                                "note": ""})

    @contextmanager
    def test_budget(self, item: pytest.Item) -> Iterator[None]:
        """The whole-test watchdog around the call phase: the marker's budget, else the option (config.py)."""
        from pytest_guistate.config import budget_for, budget_setting
        from pytest_guistate.core import watchdog

        watchdog.arm(budget_for(item, self.settings.test_timeout_s), item.nodeid, budget_setting(item))
        try:
            yield
        finally:
            watchdog.disarm()

    def _hooks(self, item: pytest.Item) -> SessionHooks:
        """Bridge the pluggy hooks onto the core's plain callables."""
        from pytest_guistate.core.steploop import SessionHooks

        hook = self.config.hook

        def ignore(observation: Any) -> list[Any]:
            boxes: list[Any] = []
            for result in hook.pytest_guistate_ignore_regions(observation=observation, item=item):
                boxes.extend(result or [])
            return boxes

        def refresh(screen: Any, observation: Any) -> bool | None:
            # Read the screen's tree before any implementation acts: a hook that pulls to refresh and then
            # reads `observation.package` would otherwise find it expired (a check answered by a find, issue
            # 24, leaves the tree unread). The default implementation reads it anyway.
            observation.tree  # noqa: B018 - fetched for its side effect
            return hook.pytest_guistate_refresh(screen=screen, observation=observation, item=item)  # type: ignore[no-any-return]

        def transition_check(before: Any, after: Any, transition: Any, expect: Any) -> str | None:
            return hook.pytest_guistate_transition_check(  # type: ignore[no-any-return]
                before=before, after=after, transition=transition, expect=expect, item=item
            )

        # Only the plugin's own (trylast) refresh implemented: let the core pull to refresh itself, so
        # records say "pull-to-refresh" rather than "refresh hook".
        own = self.config.pluginmanager.get_plugin("guistate")
        user_refresh = any(impl.plugin is not own for impl in hook.pytest_guistate_refresh.get_hookimpls())
        # none implemented: None, so a settle poll that waits for a change can be judged by its pixels first
        checks = bool(hook.pytest_guistate_transition_check.get_hookimpls())
        # none implemented: None, so the oracle's pixels can start before the after-screen is asked about
        ignores = bool(hook.pytest_guistate_ignore_regions.get_hookimpls())
        return SessionHooks(
            extra_ignore_regions=ignore if ignores else None, refresh=refresh if user_refresh else None,
            transition_check=transition_check if checks else None,
            detect_anchors=anchor_detector(self.config, item),
        )


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


def _cache_lines(nodeid: str, report: dict[str, Any]) -> list[str]:
    """The terminal summary's lines for one test's action cache: misses, live steps, a rewrite."""
    from pytest_guistate.report.gate.cache import healed_steps

    lines = [f"{nodeid}: {message}" for message in report.get("miss_messages") or []]
    lines += [f"{nodeid}: action cache {line}" for line in healed_steps(report)]
    if report.get("live") and report.get("hit_rate") is not None:
        lines.append(f"{nodeid}: {report['live']} live LLM step(s), hit rate {report['hit_rate']:.2f}")
    if report.get("rewritten") and str(report.get("mode", "")).startswith("cache"):
        lines.append(f"{nodeid}: action cache rewritten: {report['path']}")
        lines.extend(f"    {line}" for line in report.get("change") or [] if line[:1] in "+-" and line[:3] not in ("+++", "---"))
    return lines
