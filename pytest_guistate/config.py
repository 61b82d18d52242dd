"""Options and ini values parsed once into a frozen `GuistateConfig`, kept in `config.stash`, and
every check of what the user asked for: the options, the output paths, the marker's keywords.

Every option has an ini twin (`guistate_*`), so a project can pin its choices in `pytest.ini`
or `pyproject.toml` and CI can still override them on the command line.

Output paths are checked once at configure (issue 14): fail fast, not once per test. A directory no
file can be created in (a parent that is a regular file, a read-only mount, no permission) would
fail every test at its first step; it is a usage error naming the option and the OS error instead.
The summary file gets a lock for the run (`report/summary.py`), so a second concurrent run with the
same `--guistate-summary` is refused rather than clobbering the first's.

Per-test fault limits (issue 14): `guistate_test_timeout` / `--guistate-test-timeout` (seconds,
default 0 = none) sets the whole-test watchdog's budget for every test; `@pytest.mark.guistate(
timeout=...)` (or `test_timeout=`) overrides it per test, 0 switching it off. Off by default because
a test's honest length varies by orders of magnitude (a scripted check takes seconds, an LLM run
minutes) and every device call already has its own deadline; set it in CI for LLM runs and long
flows. The budget covers the call phase (not fixture setup, whose session creation has its own
deadline), and ends the test with `TestTimeout` (core/watchdog.py): an ordinary failure, so the
journal is closed and report.html built by the usual teardown. `runtime.py` arms it.
"""

from __future__ import annotations

import enum
import math
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from pytest_guistate.core.tiers import AutoThresholds, Tier
from pytest_guistate.devices.device_list import (
    SIM,
    DeviceListError,
    DeviceSpec,
    JsonFileError,
    parse_device_option,
    read_json_file,
)
from pytest_guistate.llm.options import add_llm_options, build_llm_settings
from pytest_guistate.llm.settings import LLMSettings, Mode
from pytest_guistate.report.diskio import probe_dir
from pytest_guistate.report.summary import SummaryBusy, lock_summary
from pytest_guistate.stash_keys import marker_kwargs

__all__ = [
    "CONFIG_KEY",
    "MARKER_KWARGS",
    "GuistateConfig",
    "Retain",
    "SessionMode",
    "add_options",
    "budget_for",
    "budget_setting",
    "build_config",
    "check_marker_kwargs",
    "check_paths",
    "cycle_limit_for",
    "cycle_limit_setting",
    "get_config",
]


class Retain(enum.Enum):
    """When per-test artifacts are kept (as pytest-playwright's `retain-on-failure`)."""

    ON = "on"
    FAILURE = "failure"
    OFF = "off"

    def __str__(self) -> str:
        return self.value


PLATFORMS = ("android", "ios")


class SessionMode(enum.Enum):
    """How long an Appium session lives (issue 12): one per test, or one per worker reset between tests."""

    TEST = "test"
    WORKER = "worker"

    def __str__(self) -> str:
        return self.value


SHARD_ENV = "GUISTATE_SHARD"


@dataclass(frozen=True)
class GuistateConfig:
    """Everything the plugin reads from options and ini, validated once at configure time."""

    tier: Tier
    pool: tuple[DeviceSpec, ...] = ()  # empty: the embedded simulated phone
    capabilities: dict[str, Any] = field(default_factory=dict)
    artifacts_dir: Path = Path("guistate-artifacts")
    retain: Retain = Retain.FAILURE
    summary_path: Path | None = None
    driver_log: Path | None = None  # an Appium server log whose lines each report shows (issue 23)
    thresholds: AutoThresholds = field(default_factory=AutoThresholds)
    plan_ceiling: int = 12  # >= 1
    settle_timeout_s: float = 3.0
    llm: LLMSettings = field(default_factory=lambda: LLMSettings(mode=Mode.OFF))
    memory_path: Path | None = None  # cross-run memory of UI functions; None = off
    device_wait_s: float = 0.0  # how long a test process waits for a pool device another one holds
    platform: str = "android"  # default capabilities: UiAutomator2 (android) or XCUITest (ios), issue 11
    session: SessionMode = SessionMode.TEST  # worker: one Appium session per worker, app reset between tests
    command_timeout_s: float | None = None  # per device call; None = the platform default (timeouts.py)
    session_timeout_s: float | None = None  # per new Appium session; None = the platform default
    locator_timeout_s: float | None = None  # how long locators wait; None = devices/timeouts.LOCATOR_TIMEOUT_S
    test_timeout_s: float = 0.0  # wall-clock budget per test; 0 = none (the marker's timeout= still applies)
    cycle_limit: int = 8  # steps in a screen loop with no milestone before the test fails; 0 = never
    shard: str | None = None  # this run's CI shard name in the summary (issue 27)

    @property
    def devices(self) -> tuple[str, ...]:
        """The devices' URLs, or `("sim",)`."""
        return tuple(spec.url for spec in self.pool) if self.pool else (SIM,)

    @property
    def deadlines(self) -> tuple[float, float]:
        """(per device call, per new session) in seconds: the options, else the platform's defaults."""
        from pytest_guistate.devices import timeouts

        sim = self.uses_sim
        command = self.command_timeout_s or (timeouts.SIM_COMMAND_TIMEOUT_S if sim else timeouts.COMMAND_TIMEOUT_S)
        session = self.session_timeout_s or (timeouts.SIM_SESSION_TIMEOUT_S if sim else timeouts.SESSION_TIMEOUT_S)
        return command, session

    @property
    def uses_sim(self) -> bool:
        return not self.pool

    @property
    def enabled(self) -> bool:
        return self.tier is not Tier.OFF


CONFIG_KEY = pytest.StashKey[GuistateConfig]()


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("guistate", "GUI task state, visual oracle and anchored reports")
    group.addoption(
        "--guistate",
        dest="guistate_tier",
        choices=[t.value for t in Tier],
        default=None,
        help="What to record per step: off, light, standard, full, or auto (by test length). Default: auto.",
    )
    group.addoption(
        "--guistate-device",
        dest="guistate_device",
        default=None,
        metavar="sim|URL[,URL...]|@FILE.json",
        help="'sim' (default: the embedded simulated phone), an Appium server URL (http://127.0.0.1:4723), "
        "a device pool as a comma list of URLs, or @FILE.json listing {url, capabilities, name} per device. "
        "Each test process (xdist worker) leases one device of the pool for its lifetime.",
    )
    group.addoption(
        "--guistate-caps",
        dest="guistate_caps",
        default=None,
        metavar="FILE.json",
        help="JSON file of Appium capabilities merged over the defaults.",
    )
    group.addoption(
        "--guistate-platform",
        dest="guistate_platform",
        choices=PLATFORMS,
        default=None,
        help="Default capabilities: android (UiAutomator2, default) or ios (XCUITest); on the simulated phone "
        "this picks its persona. --guistate-caps still wins.",
    )
    group.addoption(
        "--guistate-artifacts",
        dest="guistate_artifacts",
        default=None,
        metavar="DIR",
        help="Directory for per-test artifacts. Default: guistate-artifacts.",
    )
    group.addoption(
        "--guistate-retain",
        dest="guistate_retain",
        choices=[r.value for r in Retain],
        default=None,
        help="Keep per-test artifacts: on (always), failure (default), off.",
    )
    group.addoption(
        "--guistate-memory",
        dest="guistate_memory",
        default=None,
        metavar="PATH|off",
        help="Cross-run memory of UI functions for self-healing locators (SQLite). "
        "Default: .guistate/memory.sqlite; 'off' disables it.",
    )
    group.addoption(
        "--guistate-summary",
        dest="guistate_summary",
        default=None,
        metavar="PATH",
        help="Write a JSON summary of the run (for CI merge gates).",
    )
    group.addoption(
        "--guistate-shard",
        dest="guistate_shard",
        default=None,
        metavar="NAME",
        help=f"This run's CI shard name, recorded in the summary for `guistate gate` over several shards "
        f"(default: ${SHARD_ENV}, else ini guistate_shard).",
    )
    group.addoption(
        "--guistate-driver-log",
        dest="guistate_driver_log",
        default=None,
        metavar="PATH",
        help="An Appium server log file (appium --log PATH): each test's report shows the lines written "
        "while it ran. The embedded sim's request log is shown without it.",
    )
    group.addoption(
        "--guistate-session",
        dest="guistate_session",
        choices=[m.value for m in SessionMode],
        default=None,
        help="Appium session lifetime: test (default: a new session per test) or worker (one per test "
        "process, the app reset between tests; a failed test's session is replaced).",
    )
    group.addoption(
        "--guistate-command-timeout",
        dest="guistate_command_timeout",
        default=None,
        metavar="SECONDS",
        help="Deadline of every device call (screenshot, page source, tap, ...). Default: 60 on a real "
        "server, 20 on the sim.",
    )
    group.addoption(
        "--guistate-locator-timeout",
        dest="guistate_locator_timeout",
        default=None,
        metavar="SECONDS",
        help="How long tap/type/find wait for their element to be attached, visible, not moving and "
        "enabled (default 5; 0 = one look). A call's timeout= overrides it.",
    )
    group.addoption(
        "--guistate-test-timeout",
        dest="guistate_test_timeout",
        default=None,
        metavar="SECONDS",
        help="Wall-clock budget per test (0 = none, the default); marker timeout= overrides it.",
    )
    add_llm_options(parser)
    parser.addini("guistate", "default tier (off|light|standard|full|auto)", default="auto")
    parser.addini("guistate_device", "sim, Appium server URL(s) or @FILE.json", default=SIM)
    parser.addini("guistate_driver_log", "an Appium server log file shown per test in report.html", default="")
    parser.addini("guistate_device_wait", "seconds a test process waits for a pool device held by another",
                  default="0")
    parser.addini("guistate_caps", "JSON file of Appium capabilities", default="")
    parser.addini("guistate_platform", "android|ios: the default capabilities' platform", default="android")
    parser.addini("guistate_session", "Appium session lifetime: test|worker", default=SessionMode.TEST.value)
    parser.addini("guistate_artifacts", "artifacts directory", default="guistate-artifacts")
    parser.addini("guistate_retain", "on|failure|off", default=Retain.FAILURE.value)
    parser.addini("guistate_summary", "path of the JSON run summary", default="")
    parser.addini("guistate_shard", "CI shard name recorded in the summary (option and $GUISTATE_SHARD win)",
                  default="")
    parser.addini("guistate_memory", "cross-run memory file, or off", default=".guistate/memory.sqlite")
    parser.addini("guistate_light_max_steps", "auto tier: at most this many steps → light", default="8")
    parser.addini("guistate_standard_max_steps", "auto tier: at most this many steps → standard", default="25")
    parser.addini("guistate_plan_ceiling", "warn when a plan has more milestones than this", default="12")
    parser.addini("guistate_settle_timeout", "seconds to wait for a screen to settle", default="3.0")
    parser.addini("guistate_command_timeout", "seconds a device call may take (empty: 60 real, 20 sim)",
                  default="")
    parser.addini("guistate_session_timeout", "seconds opening an Appium session may take (empty: 300 real, "
                  "30 sim)", default="")
    parser.addini("guistate_locator_timeout", "seconds locators wait for their element to be ready (empty: 5)",
                  default="")
    parser.addini("guistate_test_timeout", "wall-clock seconds per test, 0 = none", default="0")
    parser.addini("guistate_cycle_limit", "fail after this many steps of a screen loop with no milestone, 0 = never",
                  default="8")


def _choice(value: str, enum_type: type[enum.Enum], what: str) -> Any:
    try:
        return enum_type(value.strip().lower())
    except ValueError:
        allowed = ", ".join(str(m.value) for m in enum_type)
        raise pytest.UsageError(f"{what}: {value!r} is not one of {allowed}") from None


_N = TypeVar("_N", int, float)


def _ini_number(config: pytest.Config, name: str, convert: Callable[[str], _N], what: str) -> _N:
    """An ini value that must be a number >= 0; a usage error names the setting otherwise."""
    raw = str(config.getini(name))
    try:
        value = convert(raw)
    except ValueError:
        raise pytest.UsageError(f"ini {name}: {raw!r} is not {what}") from None
    if value < 0:
        raise pytest.UsageError(f"ini {name}: must be >= 0, got {value}")
    return value


def _positive_int(config: pytest.Config, name: str) -> int:
    return _ini_number(config, name, int, "an integer")


def _load_caps(path_text: str, rootdir: Path) -> dict[str, Any]:
    if not path_text:
        return {}
    try:
        data = read_json_file(path_text, rootdir)
    except JsonFileError as exc:
        raise pytest.UsageError(f"--guistate-caps: {exc}") from None
    if not isinstance(data, dict):
        raise pytest.UsageError(f"--guistate-caps: {path_text} must hold a JSON object of capabilities")
    return data


def _devices(value: str, rootdir: Path) -> tuple[DeviceSpec, ...]:
    """`sim` → `()` (the embedded phone); URLs or `@FILE.json` → the device pool (issue 6)."""
    if value.strip() in ("", SIM):
        return ()
    try:
        return parse_device_option(value, rootdir)
    except DeviceListError as exc:
        raise pytest.UsageError(f"--guistate-device: {exc}") from None


def _seconds(config: pytest.Config, name: str) -> float:
    return _ini_number(config, name, float, "a number of seconds")


def _deadline(raw: str, what: str, *, zero_ok: bool = False) -> float | None:
    """A timeout in seconds; empty → None (the default); bad or non-positive values name the setting."""
    raw = raw.strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise pytest.UsageError(f"{what}: {raw!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero_ok):
        raise pytest.UsageError(f"{what}: must be {'>= 0' if zero_ok else '> 0'} seconds, got {raw!r}")
    return value


def _memory_path(value: str) -> Path | None:
    value = value.strip()
    return None if value.lower() in ("", "off", "none") else Path(value)


def build_config(config: pytest.Config) -> GuistateConfig:
    """Read options (command line first, then ini) into one validated object."""
    opt = config.option

    def pick(option: str, ini: str) -> str:
        value = getattr(opt, option, None)
        return str(value) if value is not None else str(config.getini(ini))

    summary = pick("guistate_summary", "guistate_summary")
    return GuistateConfig(
        tier=_choice(pick("guistate_tier", "guistate"), Tier, "--guistate"),
        pool=_devices(pick("guistate_device", "guistate_device"), config.rootpath),
        device_wait_s=_seconds(config, "guistate_device_wait"),
        session=_choice(pick("guistate_session", "guistate_session"), SessionMode, "--guistate-session"),
        capabilities=_load_caps(pick("guistate_caps", "guistate_caps"), config.rootpath),
        artifacts_dir=Path(pick("guistate_artifacts", "guistate_artifacts")),
        retain=_choice(pick("guistate_retain", "guistate_retain"), Retain, "--guistate-retain"),
        summary_path=Path(summary) if summary else None,
        driver_log=Path(pick("guistate_driver_log", "guistate_driver_log")) if pick(
            "guistate_driver_log", "guistate_driver_log") else None,
        thresholds=AutoThresholds(
            light_max_steps=_positive_int(config, "guistate_light_max_steps"),
            standard_max_steps=_positive_int(config, "guistate_standard_max_steps"),
        ),
        plan_ceiling=max(1, _positive_int(config, "guistate_plan_ceiling")),
        settle_timeout_s=_seconds(config, "guistate_settle_timeout"),
        llm=build_llm_settings(config),
        memory_path=_memory_path(pick("guistate_memory", "guistate_memory")),
        platform=_platform(pick("guistate_platform", "guistate_platform")),
        command_timeout_s=_deadline(pick("guistate_command_timeout", "guistate_command_timeout"),
                                    "--guistate-command-timeout"),
        session_timeout_s=_deadline(str(config.getini("guistate_session_timeout")), "ini guistate_session_timeout"),
        cycle_limit=_positive_int(config, "guistate_cycle_limit"),
        locator_timeout_s=_deadline(pick("guistate_locator_timeout", "guistate_locator_timeout"),
                                    "--guistate-locator-timeout", zero_ok=True),
        test_timeout_s=_deadline(pick("guistate_test_timeout", "guistate_test_timeout"), "--guistate-test-timeout",
                                 zero_ok=True) or 0.0,
        shard=_shard(config),
    )


def _shard(config: pytest.Config) -> str | None:
    """--guistate-shard, else $GUISTATE_SHARD (a CI matrix sets it), else ini guistate_shard; blank = none."""
    value = getattr(config.option, "guistate_shard", None)
    if value is None:
        value = os.environ.get(SHARD_ENV) or str(config.getini("guistate_shard"))
    value = value.strip()
    if any(ch in value for ch in "\r\n"):
        raise pytest.UsageError(f"--guistate-shard: a shard name is one line, got {value!r}")
    return value or None


def _platform(value: str) -> str:
    value = value.strip().lower()
    if value not in PLATFORMS:
        raise pytest.UsageError(f"guistate_platform must be one of {', '.join(PLATFORMS)}, got {value!r}")
    return value


def get_config(config: pytest.Config) -> GuistateConfig:
    return config.stash[CONFIG_KEY]


def check_paths(settings: GuistateConfig) -> int | None:
    """Probe the artifacts, summary and memory directories; lock the summary. Returns the lock's fd."""
    summary, memory = settings.summary_path, settings.memory_path
    for option, folder in (("--guistate-artifacts", settings.artifacts_dir),
                           ("--guistate-summary", summary.parent if summary else None),
                           ("--guistate-memory", memory.parent if memory else None)):
        problem = probe_dir(folder) if folder is not None else None
        if problem:
            raise pytest.UsageError(f"{option}: {problem}")
    if summary is None:
        return None
    try:
        return lock_summary(summary)
    except (SummaryBusy, OSError) as exc:
        raise pytest.UsageError(f"--guistate-summary: {exc}") from None


# What @pytest.mark.guistate(...) understands; anything else is probably a typo.
MARKER_KWARGS = ("tier", "app", "faults", "caps", "settle_timeout", "timeout", "test_timeout", "cycle_limit", "session")


def check_marker_kwargs(item: pytest.Item) -> None:
    """Warn (at collection) about marker keywords nothing reads: `timout=5` would silently do nothing."""
    unknown = sorted(set(marker_kwargs(item)) - set(MARKER_KWARGS))
    if unknown:
        warnings.warn(pytest.PytestConfigWarning(
            f"{item.nodeid}: @pytest.mark.guistate got unknown keyword(s) {', '.join(unknown)}; known: "
            f"{', '.join(MARKER_KWARGS)}"), stacklevel=1)


def _budget_key(options: dict[str, Any]) -> str | None:
    """The marker keyword that sets the test's budget, if any (`test_timeout=` wins over `timeout=`)."""
    return "test_timeout" if "test_timeout" in options else "timeout" if "timeout" in options else None


def budget_setting(item: pytest.Item) -> str:
    """Where the test's budget comes from, for its `TestTimeout` message: a user who set the marker's
    `timeout=` looks for that, not for an ini key they never set."""
    key = _budget_key(marker_kwargs(item))
    return "guistate_test_timeout" if key is None else f"marker {key}="


def cycle_limit_setting(item: pytest.Item) -> str:
    """Where the test's loop limit comes from, for its `CycleDetected` message (as `budget_setting`)."""
    return "marker cycle_limit=" if "cycle_limit" in marker_kwargs(item) else "ini guistate_cycle_limit"


def budget_for(item: pytest.Item, default_s: float) -> float:
    """The test's budget in seconds (0 = none): the marker's `timeout=`/`test_timeout=`, else the option."""
    options = marker_kwargs(item)
    key = _budget_key(options)
    if key is None:
        return default_s
    raw = options[key]
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.guistate({key}={raw!r}) is not a number of "
                                "seconds") from None
    if not math.isfinite(value) or value < 0:
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.guistate({key}={raw!r}) must be >= 0 seconds")
    return value


def cycle_limit_for(item: pytest.Item, default: int) -> int:
    """Steps a screen loop may run without a milestone (core/cycles.py): the marker's `cycle_limit=`, else the ini."""
    raw = marker_kwargs(item).get("cycle_limit", default)
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.guistate(cycle_limit={raw!r}) must be an integer >= 0")
    return raw
