"""The per-test part of `GuistateRuntime`: one test's `GuistateSession`, built and finished.

`new_session` wires the session to its recorder (journal, report), the Allure adapter, the
pluggy hooks (as the core's plain callables), the live progress line, the cross-run memory and
the LLM; `finish_session` closes the record. What a test needs between the two is kept in
`item.stash`, never as attributes on items. The run-wide rest is in runtime.py, which this mixin
reads through `CanRun`.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from pytest_guistate.config import GuistateConfig
from pytest_guistate.core.tiers import Tier, TierPolicy
from pytest_guistate.extensions import anchor_detector, locate, redaction_source
from pytest_guistate.items import APPIUM_SESSION_KEY, LIVE_KEY, REPORT_NAMES_KEY, REPORTS_KEY, marker_kwargs
from pytest_guistate.progress import terminal_progress
from pytest_guistate.testsession import GuistateSession

if TYPE_CHECKING:
    from pytest_guistate.core.steploop import SessionHooks
    from pytest_guistate.memory.bridge import MemoryBridge  # noqa: F401 - named in a StashKey string
    from pytest_guistate.memory.heal import Healer
    from pytest_guistate.report.allure_adapter import AllureAdapter
    from pytest_guistate.report.recorder import ArtifactRecorder
    from pytest_guistate.report.summary import SummaryPart

__all__ = ["CanRun", "SessionsMixin"]


@dataclass
class _TestRecording:
    recorder: ArtifactRecorder
    adapter: AllureAdapter | None
    started: float
    test_id: str  # the node id as names may show it (`Redactor.ident`), fixed when the test started


RECORDER_KEY = pytest.StashKey[_TestRecording]()
MEMORY_KEY = pytest.StashKey["MemoryBridge"]()


class CanRun(Protocol):
    """What a test's session needs of the run (`GuistateRuntime`, runtime.py)."""

    config: pytest.Config
    settings: GuistateConfig
    heal_lines: list[str]
    cache_lines: list[str]
    finished_rows: list[dict[str, Any]]
    _summary_part: SummaryPart | None

    @property
    def worker(self) -> str | None: ...

    def resolve_tier(self, item: pytest.Item, test_id: str | None = None) -> tuple[Tier, str, bool]: ...

    def store_step_count(self, nodeid: str, steps: int) -> None: ...

    def healer(self) -> Healer | None: ...


class SessionsMixin(CanRun):
    """Build, watch and finish one test's session."""

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
        from pytest_guistate.budgets import cycle_limit_for

        session.cycles.limit = cycle_limit_for(item, self.settings.cycle_limit)
        live = terminal_progress(self.config, test_id, session)
        if live is not None:
            session.journal.listeners.append(live)
            item.stash[LIVE_KEY] = live
        if hasattr(device, "on_secret"):
            device.on_secret = session.secret
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
                scrub=redactor.scrub
            )
        return session

    def finish_session(self, item: pytest.Item, session: GuistateSession, *, failed: bool) -> None:
        """Close the record: FINISH anchor, report.html, summary part, JUnit properties, Allure."""
        from pytest_guistate.report.finish import finalize

        reports = item.stash.get(REPORTS_KEY, {})
        call = reports.get("call")
        outcome = "failed" if failed else ("skipped" if call is not None and call.skipped else "passed")
        error = call.longreprtext if (call is not None and call.failed) else None
        llm_tokens, llm_cost, cache_report = 0, None, None
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
        finally:
            session.finish(outcome)
            done = finalize(
                recording.recorder, outcome=outcome, error=error, retain=self.settings.retain.value,
                root=self.settings.artifacts_dir, llm_tokens=llm_tokens,
                duration_s=round(time.monotonic() - recording.started, 3), worker=self.worker,
            )
        if recording.adapter is not None:
            recording.adapter.finish(done, goal=session.goal_text, tier=session.tier.value, failed=failed)
        from pytest_guistate.report.summary import junit_properties

        done.summary.llm_cost_usd = llm_cost
        if cache_report:
            from pytest_guistate.report.cache_gate import cache_summary

            done.summary.llm_cache = cache_summary(cache_report)
            self.cache_lines.extend(_cache_lines(done.summary.nodeid, cache_report))
        locate(done.summary, item, call)
        bridge = item.stash.get(MEMORY_KEY, None)
        if bridge is not None and bridge.heals:
            done.summary.heals = recording.recorder.redactor.scrub(list(bridge.heals))
            self.heal_lines.extend(f"{done.summary.nodeid}: {h['title']}" for h in done.summary.heals)
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
        sim = getattr(self, "_sim", None)
        if sim is not None and getattr(device, "url", None) == sim.url:
            return ("sim", time.time())
        return None

    def _write_driver_log(self, recorder: Any) -> None:
        from pytest_guistate.report.driver_log import DriverLogTail, sim_request_lines

        source = getattr(recorder, "driver_log", None)
        if isinstance(source, DriverLogTail):
            lines, note = source.lines()
            recorder.write_event("driver_log", {"source": str(source.path), "lines": lines, "note": note})
        sim = getattr(self, "_sim", None)
        if isinstance(source, tuple) and sim is not None:
            lines = sim_request_lines(sim.request_log(), source[1])
            recorder.write_event("driver_log", {"source": "the embedded sim's request log", "lines": lines,
                                                "note": ""})

    def test_budget(self, item: pytest.Item) -> AbstractContextManager[None]:
        """The whole-test watchdog around the call phase (`budgets.py`)."""
        from pytest_guistate.budgets import watch

        return watch(item, self.settings.test_timeout_s)

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
        return SessionHooks(
            extra_ignore_regions=ignore, refresh=refresh if user_refresh else None, transition_check=transition_check,
            detect_anchors=anchor_detector(self.config, item),
        )


def _cache_lines(nodeid: str, report: dict[str, Any]) -> list[str]:
    """The terminal summary's lines for one test's action cache: misses, live steps, a rewrite."""
    lines = [f"{nodeid}: {message}" for message in report.get("miss_messages") or []]
    if report.get("live") and report.get("hit_rate") is not None:
        lines.append(f"{nodeid}: {report['live']} live LLM step(s), hit rate {report['hit_rate']:.2f}")
    if report.get("rewritten") and str(report.get("mode", "")).startswith("cache"):
        lines.append(f"{nodeid}: action cache rewritten: {report['path']}")
        lines.extend(f"    {line}" for line in report.get("change") or [] if line[:1] in "+-" and line[:3] not in ("+++", "---"))
    return lines
