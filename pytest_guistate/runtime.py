"""Per-run and per-test glue between pytest and the core: the part plugin.py delegates to.

`GuistateRuntime` lives in `config.stash` for the whole run (it owns the embedded sim server,
the pytest-cache step counts used by the auto tier, and the run's records). Per-test state is
kept in `item.stash`, never as attributes on items.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from pytest_guistate.config import GuistateConfig
from pytest_guistate.core.tiers import Tier

if TYPE_CHECKING:
    from pytest_guistate.core.session import TaskSession
    from pytest_guistate.devices.sim.server import SimServer

__all__ = [
    "GuistateRuntime",
    "RUNTIME_KEY",
    "SESSION_KEY",
    "REPORTS_KEY",
    "remember_report",
    "attach_failure_section",
    "default_refresh",
    "marker_kwargs",
]

RUNTIME_KEY = pytest.StashKey["GuistateRuntime"]()
SESSION_KEY = pytest.StashKey["TaskSession"]()
REPORTS_KEY = pytest.StashKey[dict[str, pytest.TestReport]]()
_CACHE_PREFIX = "guistate/steps/"


def _cache_key(nodeid: str) -> str:
    return _CACHE_PREFIX + re.sub(r"[^A-Za-z0-9_.:-]+", "_", nodeid)


@dataclass
class GuistateRuntime:
    """Run-wide state: the embedded phone server and the auto-tier memory."""

    config: pytest.Config
    settings: GuistateConfig
    _sim: SimServer | None = field(default=None, init=False)

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
        cache = self.config.cache
        if cache is None:
            return None
        value = cache.get(_cache_key(nodeid), None)
        return int(value) if isinstance(value, int) else None

    def store_step_count(self, nodeid: str, steps: int) -> None:
        cache = self.config.cache
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

    def close(self) -> None:
        self.stop_sim()


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


def did_test_fail(item: pytest.Item) -> bool:
    """A missing call report means the test did not pass (pytest-playwright's issue #89)."""
    reports = item.stash.get(REPORTS_KEY, {})
    call = reports.get("call")
    setup = reports.get("setup")
    if setup is not None and setup.failed:
        return True
    return call is None or call.failed


def attach_failure_section(item: pytest.Item, report: pytest.TestReport) -> None:
    """Put the task progress into the failure itself, so terminal and JUnit XML both show it."""
    if not report.failed or report.when != "call":
        return
    session = item.stash.get(SESSION_KEY, None)
    if session is None:
        return
    try:
        text = session.failure_section()
    except Exception as exc:  # never hide the test's own failure behind ours
        text = f"(guistate could not summarise the task state: {type(exc).__name__}: {exc})"
    longrepr = report.longrepr
    if hasattr(longrepr, "addsection"):
        longrepr.addsection("guistate", text)  # type: ignore[union-attr]
    else:
        report.sections.append(("guistate", text))


def default_refresh(screen: Any) -> bool | None:
    """The plugin's own refresh: pull to refresh where a scrollable list is on screen."""
    pull = getattr(screen, "pull_to_refresh", None)
    if pull is None:
        return None
    try:
        return bool(pull())
    except Exception as exc:
        warnings.warn(f"guistate: pull-to-refresh failed ({type(exc).__name__}: {exc})", stacklevel=2)
        return False
