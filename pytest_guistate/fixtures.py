"""The fixtures users meet: `device`, `guistate`, and the overridable capabilities.

As in pytest-playwright, options become session fixtures a project can override in its
conftest (`guistate_capabilities` plays the part of `browser_context_args`); per-test
fixtures close what they create.
"""

from __future__ import annotations

import contextlib
import copy
import sys
import uuid
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from pytest_guistate.config import GuistateConfig, SessionMode, get_config
from pytest_guistate.core.errors import RecordingFailed
from pytest_guistate.runtime import RUNTIME_KEY, GuistateRuntime
from pytest_guistate.stash_keys import APPIUM_SESSION_KEY, SESSION_KEY, SessionInfo, did_test_fail, marker_kwargs
from pytest_guistate.worker_sessions import HeldSession, SessionKeeper, session_mode, test_failed

if TYPE_CHECKING:
    from pytest_guistate.devices.device_list import DeviceSpec
    from pytest_guistate.devices.pool import DevicePool

__all__ = [
    "device",
    "guistate",
    "guistate_capabilities",
    "guistate_device_lease",
    "guistate_device_url",
    "guistate_session_keeper",
]

# What a UiAutomator2 session needs; the sim accepts the same, a real server gets these merged
# under the project's --guistate-caps file.
DEFAULT_CAPABILITIES: dict[str, Any] = {
    "platformName": "Android",
    "appium:automationName": "UiAutomator2",
    "appium:newCommandTimeout": 300,
}
# `--guistate-platform=ios` (issue 11): an XCUITest session; on the sim, its iOS persona.
IOS_CAPABILITIES: dict[str, Any] = {
    "platformName": "iOS",
    "appium:automationName": "XCUITest",
    "appium:newCommandTimeout": 300,
}


@pytest.fixture(scope="session")
def guistate_capabilities(pytestconfig: pytest.Config) -> dict[str, Any]:
    """Capabilities for every session of the run; override in conftest.py to compute them."""
    return _run_capabilities(get_config(pytestconfig))


def _run_capabilities(settings: GuistateConfig) -> dict[str, Any]:
    """The defaults of the platform, then --guistate-caps: what is known before any fixture runs."""
    return {**(IOS_CAPABILITIES if settings.platform == "ios" else DEFAULT_CAPABILITIES), **settings.capabilities}


@dataclass
class _EmbeddedSim:
    """The lease for the default device: this process's own simulated phone, never shared."""

    runtime: GuistateRuntime

    def acquire(self) -> DeviceSpec:
        from pytest_guistate.devices.device_list import DeviceSpec

        return DeviceSpec(self.runtime.sim_url(), name="sim")

    def probe(self, spec: DeviceSpec) -> str | None:
        return None  # in-process: it ends with the run, not during it

    def mark_dead(self, spec: DeviceSpec, reason: str) -> None:
        from pytest_guistate.devices.errors import DeviceError

        raise DeviceError(f"the embedded simulated phone does not answer: {reason}")


def announce_hub_capacity(config: pytest.Config) -> None:
    """Controller: say before the first test when a Grid hub of the pool will queue sessions (issue 35).
    Matched against the defaults and --guistate-caps: a conftest's capabilities fixture runs later."""
    settings = get_config(config)
    if hasattr(config, "workerinput") or not settings.pool:
        return
    from pytest_guistate.devices.grid import hub_capacity

    caps = _run_capabilities(settings)
    workers = int(getattr(config.option, "numprocesses", None) or 1)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    for line in hub_capacity(settings.pool, caps, workers):
        if reporter is not None:
            reporter.write_line(f"guistate: {line}")
        else:
            print(f"guistate: {line}", file=sys.stderr)


def _run_id(config: pytest.Config) -> str:
    """xdist's id shared by every worker of one run; a fresh one for a run without xdist."""
    workerinput = getattr(config, "workerinput", None)
    return str(workerinput["testrunuid"]) if workerinput else uuid.uuid4().hex


@pytest.fixture(scope="session")
def guistate_device_lease(pytestconfig: pytest.Config) -> Iterator[_EmbeddedSim | DevicePool]:
    """This test process's device: the embedded sim, or one leased from the pool for the process's lifetime
    (a dead device is swapped for a free one by the `device` fixture). A Grid hub's slots are matched
    against the defaults and --guistate-caps (issue 35; an overridden capabilities fixture may be
    narrower in scope than this one)."""
    settings = get_config(pytestconfig)
    runtime = pytestconfig.stash[RUNTIME_KEY]
    if settings.uses_sim:
        yield _EmbeddedSim(runtime)
        runtime.stop_sim()
        return
    from pytest_guistate.devices.pool import DevicePool

    workerinput = getattr(pytestconfig, "workerinput", None)
    pool = DevicePool(settings.pool, run_id=_run_id(pytestconfig), worker=runtime.worker,
                      wait_s=settings.device_wait_s, capabilities=_run_capabilities(settings),
                      workers=int(workerinput.get("workercount", 1)) if workerinput else 1)
    yield pool
    pool.close()


@pytest.fixture
def guistate_device_url(guistate_device_lease: _EmbeddedSim | DevicePool) -> str:
    """The Appium server URL this test process uses now (the sim's, or its leased pool device's)."""
    return guistate_device_lease.acquire().url


def _session_capabilities(request: pytest.FixtureRequest, base: dict[str, Any]) -> dict[str, Any]:
    caps = copy.deepcopy(base)
    options = marker_kwargs(request.node)
    if options.get("app"):
        from pytest_guistate.devices.ios import is_ios

        wanted = {**caps, **(options.get("caps") or {})}  # the marker's own caps may make it an iOS session
        if wanted.get("browserName"):
            # the chromium driver ignores appium:appPackage: the test would run on a blank page and fail far
            # from the cause (an element "not on screen")
            raise pytest.UsageError(
                f"{request.node.nodeid}: @pytest.mark.guistate(app={options['app']!r}) names an app, but this is a "
                f"browser session (browserName {wanted['browserName']!r}), which has no apps: open the page in the "
                "test with device.open_url(url)")
        caps["appium:bundleId" if is_ios(wanted) else "appium:appPackage"] = options["app"]
    if options.get("faults"):
        caps["guistate:faults"] = dict(options["faults"])
    caps.update(options.get("caps") or {})
    return caps


@pytest.fixture(scope="session")
def guistate_session_keeper(guistate_device_lease: _EmbeddedSim | DevicePool) -> Iterator[SessionKeeper]:
    """The Appium session this test process keeps between tests (`--guistate-session=worker`);
    it ends before the device lease is released."""
    keeper = SessionKeeper()
    yield keeper
    keeper.close()


@pytest.fixture
def device(
    request: pytest.FixtureRequest,
    guistate_device_lease: _EmbeddedSim | DevicePool,
    guistate_capabilities: dict[str, Any],
    guistate_session_keeper: SessionKeeper,
) -> Iterator[Any]:
    """A fresh Appium session (fresh app state) for this test; `device.driver` is the raw client.

    With `--guistate-session=worker` the previous test's session, with its app reset, when it may
    be reused (see `worker_sessions.py`). Capabilities: the run's, then the pool device's own (udid,
    vendor options), then the marker's.
    """
    import urllib3

    from pytest_guistate.devices.device import Device, DeviceError
    from pytest_guistate.devices.reset import driver_kind

    settings = get_config(request.config)
    lease = guistate_device_lease
    keeper = guistate_session_keeper
    mode = session_mode(request.node, settings.session)
    spec = lease.acquire()  # raises DeviceError naming every device when none is left
    wanted = _session_capabilities(request, {**guistate_capabilities, **spec.capabilities})
    held, why = keeper.checkout(mode, spec, wanted, _reset_hook(request))
    if held is not None:
        info = SessionInfo(mode.value, "reused", reset=why, session_id=str(held.device.driver.session_id),
                           tests=held.tests)
    else:
        driver, spec, caps = _open_driver(request, lease, guistate_capabilities)
        dev = Device(driver, url=spec.display_url, is_sim=settings.uses_sim)
        kind = driver_kind(caps, is_sim=settings.uses_sim)
        start_url = _start_url(dev) if mode is SessionMode.WORKER and dev.browser else ""
        held = HeldSession(dev, spec, caps, kind, start_url)
        info = SessionInfo(mode.value, "new", reason=why, session_id=str(driver.session_id))
    request.node.stash[APPIUM_SESSION_KEY] = info
    dev = held.device
    if settings.locator_timeout_s is not None:
        dev.locator_timeout = settings.locator_timeout_s
    if not isinstance(lease, _EmbeddedSim) and lease.grid(held.spec) is not None:
        dev.named_death = _named_death(lease, held.spec, str(dev.driver.session_id))
    yield dev
    failed = test_failed(request.node)
    if mode is SessionMode.WORKER and not failed:
        keeper.keep(held)  # the next test resets the app and goes on in this session
        return
    if mode is SessionMode.WORKER:
        keeper.dropped(f"the previous test ({request.node.nodeid}) failed; its session was closed")
    elif settings.session is SessionMode.WORKER:
        keeper.dropped("the previous test had its own session (session='test')")
    close_error: Exception | None = None
    hub_pool = None if isinstance(lease, _EmbeddedSim) or lease.grid(spec) is None else lease
    session_id = str(dev.driver.session_id)
    node_uri = None
    if hub_pool is not None and did_test_fail(request.node):
        from pytest_guistate.devices.hub import session_node

        node_uri = session_node(spec, session_id)  # before the session is deleted: the hub then forgets it
    try:
        dev.close()
    except (OSError, urllib3.exceptions.HTTPError) as exc:
        close_error = exc
    if close_error is not None or did_test_fail(request.node):
        if hub_pool is not None:
            _raise_if_node_died(request, hub_pool, spec, session_id, node_uri, close_error)
        reason = lease.probe(spec)
        if reason is not None:
            lease.mark_dead(spec, reason)
            raise DeviceError(
                f"device {spec.label} died: {reason}; it is taken out of the pool and this worker's "
                "next tests get another free device, if any"
            ) from None  # the probe's reason is the evidence; the test's own failure shows the driver error
    if close_error is not None:
        raise DeviceError(f"ending the Appium session on {spec.label} failed: {close_error}") from close_error


def _open_driver(
    request: pytest.FixtureRequest, lease: _EmbeddedSim | DevicePool, guistate_capabilities: dict[str, Any]
) -> tuple[Any, DeviceSpec, dict[str, Any]]:
    """Open a new Appium session on the leased device; a dead or broken device is swapped (issue 6)."""
    import urllib3
    from appium import webdriver
    from appium.options.common import AppiumOptions
    from selenium.common.exceptions import WebDriverException

    from pytest_guistate.devices.capabilities import with_native_web_screenshot
    from pytest_guistate.devices.device import DeviceError
    from pytest_guistate.devices.driver_ports import with_driver_ports
    from pytest_guistate.devices.grid import trim_grid_message
    from pytest_guistate.devices.hub import HubOut
    from pytest_guistate.devices.timeouts import bounded_connection

    settings = get_config(request.config)
    pooled = not isinstance(lease, _EmbeddedSim)

    def open_session(url: str, caps: dict[str, Any], session_timeout_s: float | None = None) -> Any:
        command_s, session_s = settings.deadlines
        # a deadline on every request (issue 14); through a hub, what is left of its one deadline (issue 35)
        executor = bounded_connection(url, command_s, session_timeout_s or session_s)
        caps = with_driver_ports(url, caps)  # Chromium on this machine: a chromedriver of its own
        caps = with_native_web_screenshot(caps)  # UiAutomator2: the whole phone in a web view context too
        return webdriver.Remote(executor, options=AppiumOptions().load_capabilities(caps))

    while True:  # each pass either opens a session or takes one device out of the pool
        spec = lease.acquire()  # raises DeviceError naming every device when none is left
        run_caps = {**guistate_capabilities, **spec.capabilities}
        caps = _session_capabilities(request, run_caps)
        grid_pool = None if isinstance(lease, _EmbeddedSim) else lease
        try:
            if grid_pool is not None and grid_pool.grid(spec) is not None:
                return _open_through_hub(request, grid_pool, spec, caps, open_session), spec, caps
            return open_session(spec.url, caps), spec, caps
        except HubOut:
            continue  # every node behind the hub failed: it is out; the next device, if any
        except WebDriverException as exc:  # the server answered and refused
            refusal = trim_grid_message((exc.msg or str(exc)).strip())
            if not pooled:
                raise DeviceError(f"could not open an Appium session on {spec.label}: {refusal}") from exc
        except (OSError, urllib3.exceptions.HTTPError) as exc:
            # nothing ran on it yet, so this test can safely move to another device
            lease.mark_dead(spec, f"no Appium server answers at {spec.label}: {exc}")
            continue
        # One refusal may be this test's own capabilities (marker app/caps/faults) or a blip; a
        # device that also refuses the run's capabilities right after is broken (its server
        # answers /status, but e.g. UiAutomator2 lost the phone): take it out, move this test on.
        try:
            second = open_session(spec.url, run_caps)
        except WebDriverException as again:
            lease.mark_dead(spec, f"refused two new Appium sessions in a row: {refusal}; then: "
                                  f"{trim_grid_message((again.msg or str(again)).strip())}")
            continue
        except (OSError, urllib3.exceptions.HTTPError) as again:
            lease.mark_dead(spec, f"no Appium server answers at {spec.label}: {again}")
            continue
        if caps == run_caps:
            return second, spec, caps  # the same capabilities worked the second time: a blip
        _quit_quietly(second)
        raise DeviceError(
            f"could not open an Appium session on {spec.label} with this test's capabilities: {refusal} "
            "(the device accepts the run's capabilities, so the marker's app/caps/faults are the problem; "
            "the device stays in the pool)"
        )


def _named_death(pool: DevicePool, spec: DeviceSpec, session_id: str) -> Callable[[str], str | None]:
    """What a device behind a hub asks when a call fails (issue 44): the node's named death, or None."""
    from pytest_guistate.devices.hub import named_death

    return lambda error_text: named_death(pool, spec, session_id, error_text)


def _raise_if_node_died(
    request: pytest.FixtureRequest, pool: DevicePool, spec: DeviceSpec, session_id: str, node_uri: str | None,
    close_error: Exception | None,
) -> None:
    """A test on a hub failed, or ending its session did: when the node that ran it is dead, end the
    test with `device … died` naming that node (issue 35); the hub stays in the pool."""
    from pytest_guistate.devices.errors import DeviceError
    from pytest_guistate.devices.grid import trim_grid_message
    from pytest_guistate.devices.hub import hub_session_died, session_node
    from pytest_guistate.stash_keys import REPORTS_KEY

    node_uri = node_uri or session_node(spec, session_id)
    call = request.node.stash.get(REPORTS_KEY, {}).get("call")
    evidence = f"{close_error or ''} {call.longreprtext if call is not None and call.failed else ''}"
    why = hub_session_died(pool, spec, node_uri, evidence)
    if why is None:
        return
    if session_node(spec, session_id) is None:
        slot = "its session is deleted, so its slot is free"
    else:
        slot = ("the plugin asked the hub to delete its session, but the node cannot end it without its Appium: "
                "the hub holds that slot until the node's session timeout")
    ended = f" (ending the session said: {trim_grid_message(str(close_error), 200)})" if close_error else ""
    raise DeviceError(f"device {spec.label} died: {why}; {slot}{ended}; the hub stays in the pool and the next "
                      "tests go to its other nodes") from None


def _open_through_hub(
    request: pytest.FixtureRequest, pool: DevicePool, spec: DeviceSpec, caps: dict[str, Any], open_session: Any,
) -> Any:
    """A session through a Selenium Grid hub (issue 35, `devices/hub.py`): a wait for a slot is shown on
    the live line and, once the session is open, named in a warning with the time it took."""
    from pytest_guistate.devices.capabilities import with_native_web_screenshot
    from pytest_guistate.devices.driver_ports import with_driver_ports
    from pytest_guistate.devices.hub import open_through_hub
    from pytest_guistate.devices.pool import DevicePoolWarning
    from pytest_guistate.progress import wait_line

    line = wait_line(request.config, request.node.nodeid)
    session_s = get_config(request.config).deadlines[1]
    sent = with_native_web_screenshot(with_driver_ports(spec.url, caps))  # as sent: found in the hub's queue
    try:
        driver, waited = open_through_hub(pool, spec, sent, lambda seconds: open_session(spec.url, sent, seconds),
                                          session_s, line.show)
    finally:
        line.clear()
    if waited.seconds:
        warnings.warn(DevicePoolWarning(
            f"guistate: {request.node.nodeid} waited {waited.seconds:.1f} s for a session from hub {spec.label} "
            f"({waited.why})"), stacklevel=2)
    return driver


def _reset_hook(request: pytest.FixtureRequest) -> Any:
    """The user's `pytest_guistate_reset_app` as the keeper's callable (None: the built-in reset)."""
    from pytest_guistate.devices.reset import ResetOutcome, ResetUnavailable

    def call(dev: Any, caps: dict[str, Any]) -> ResetOutcome | None:
        answer = request.config.hook.pytest_guistate_reset_app(device=dev, capabilities=caps, item=request.node)
        if answer is None:
            return None
        if not answer:
            raise ResetUnavailable("the pytest_guistate_reset_app hook said this session cannot be reset")
        return ResetOutcome("hook", "pytest_guistate_reset_app")

    return call


def _start_url(dev: Any) -> str:
    """The page a browser session opened on: where a reset returns (chromedriver: `data:,`)."""
    try:
        return str(dev.driver.current_url)
    except Exception as exc:  # noqa: BLE001 - a reset then loads about:blank; say so
        warnings.warn(f"guistate: could not read the start URL of the browser session ({exc}); "
                      "resets will load about:blank", stacklevel=2)
        return ""


def _quit_quietly(driver: Any) -> None:
    """End a probe session; a failure here changes nothing about what the caller reports."""
    with contextlib.suppress(Exception):
        driver.quit()


@pytest.fixture
def guistate(request: pytest.FixtureRequest, device: Any) -> Iterator[Any]:
    """The per-test task state machine: goal, plan, steps, milestones, facts, assertions."""
    runtime = request.config.stash[RUNTIME_KEY]
    session = runtime.new_session(request.node, device)
    request.node.stash[SESSION_KEY] = session
    yield session
    failed = did_test_fail(request.node)
    try:
        runtime.finish_session(request.node, session, failed=failed)
    except RecordingFailed:
        raise  # the disk refused the record (issue 14): an error of this test, not a warning
    except Exception as exc:  # noqa: BLE001 - a reporter's failure must not turn a finished test red; say so
        warnings.warn(f"guistate: finishing the task record of {request.node.nodeid} failed: {exc}", stacklevel=1)
