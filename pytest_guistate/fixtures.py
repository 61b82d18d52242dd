"""The fixtures users meet: `device`, `guistate`, and the overridable capabilities.

As in pytest-playwright, options become session fixtures a project can override in its
conftest (`guistate_capabilities` plays the part of `browser_context_args`); per-test
fixtures close what they create.
"""

from __future__ import annotations

import contextlib
import copy
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from pytest_guistate.config import get_config
from pytest_guistate.core.errors import RecordingFailed
from pytest_guistate.items import SESSION_KEY, did_test_fail, marker_kwargs
from pytest_guistate.runtime import RUNTIME_KEY, GuistateRuntime

if TYPE_CHECKING:
    from pytest_guistate.devices.device_list import DeviceSpec
    from pytest_guistate.devices.pool import DevicePool

__all__ = ["device", "guistate", "guistate_capabilities", "guistate_device_lease", "guistate_device_url"]

# What a UiAutomator2 session needs; the sim accepts the same, a real server gets these merged
# under the project's --guistate-caps file.
DEFAULT_CAPABILITIES: dict[str, Any] = {
    "platformName": "Android",
    "appium:automationName": "UiAutomator2",
    "appium:newCommandTimeout": 300,
}


@pytest.fixture(scope="session")
def guistate_capabilities(pytestconfig: pytest.Config) -> dict[str, Any]:
    """Capabilities for every session of the run; override in conftest.py to compute them."""
    caps = dict(DEFAULT_CAPABILITIES)
    caps.update(get_config(pytestconfig).capabilities)
    return caps


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


def _run_id(config: pytest.Config) -> str:
    """xdist's id shared by every worker of one run; a fresh one for a run without xdist."""
    workerinput = getattr(config, "workerinput", None)
    return str(workerinput["testrunuid"]) if workerinput else uuid.uuid4().hex


@pytest.fixture(scope="session")
def guistate_device_lease(pytestconfig: pytest.Config) -> Iterator[_EmbeddedSim | DevicePool]:
    """This test process's device: the embedded sim, or one leased from the pool for the process's lifetime
    (a dead device is swapped for a free one by the `device` fixture)."""
    settings = get_config(pytestconfig)
    runtime = pytestconfig.stash[RUNTIME_KEY]
    if settings.uses_sim:
        yield _EmbeddedSim(runtime)
        runtime.stop_sim()
        return
    from pytest_guistate.devices.pool import DevicePool

    pool = DevicePool(settings.pool, run_id=_run_id(pytestconfig), worker=runtime.worker,
                      wait_s=settings.device_wait_s)
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
        caps["appium:appPackage"] = options["app"]
    if options.get("faults"):
        caps["guistate:faults"] = dict(options["faults"])
    caps.update(options.get("caps") or {})
    return caps


@pytest.fixture
def device(
    request: pytest.FixtureRequest,
    guistate_device_lease: _EmbeddedSim | DevicePool,
    guistate_capabilities: dict[str, Any],
) -> Iterator[Any]:
    """A fresh Appium session (fresh app state) for this test; `device.driver` is the raw client.

    Capabilities: the run's, then the pool device's own (udid, vendor options), then the marker's.
    """
    import urllib3
    from appium import webdriver
    from appium.options.common import AppiumOptions
    from selenium.common.exceptions import WebDriverException

    from pytest_guistate.devices.device import Device, DeviceError
    from pytest_guistate.devices.timeouts import bounded_connection

    settings = get_config(request.config)
    lease = guistate_device_lease
    pooled = not isinstance(lease, _EmbeddedSim)

    def open_session(url: str, caps: dict[str, Any]) -> Any:
        executor = bounded_connection(url, *settings.deadlines)  # a deadline on every request (issue 14)
        return webdriver.Remote(executor, options=AppiumOptions().load_capabilities(caps))

    while True:  # each pass either opens a session or takes one device out of the pool
        spec = lease.acquire()  # raises DeviceError naming every device when none is left
        run_caps = {**guistate_capabilities, **spec.capabilities}
        caps = _session_capabilities(request, run_caps)
        try:
            driver = open_session(spec.url, caps)
            break
        except WebDriverException as exc:  # the server answered and refused
            refusal = (exc.msg or str(exc)).strip()
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
                                  f"{(again.msg or str(again)).strip()}")
            continue
        except (OSError, urllib3.exceptions.HTTPError) as again:
            lease.mark_dead(spec, f"no Appium server answers at {spec.label}: {again}")
            continue
        if caps == run_caps:
            driver = second  # the same capabilities worked the second time: a blip
            break
        _quit_quietly(second)
        raise DeviceError(
            f"could not open an Appium session on {spec.label} with this test's capabilities: {refusal} "
            "(the device accepts the run's capabilities, so the marker's app/caps/faults are the problem; "
            "the device stays in the pool)"
        )
    dev = Device(driver, url=spec.display_url, is_sim=settings.uses_sim)
    yield dev
    close_error: Exception | None = None
    try:
        dev.close()
    except (OSError, urllib3.exceptions.HTTPError) as exc:
        close_error = exc
    if close_error is not None or did_test_fail(request.node):
        reason = lease.probe(spec)
        if reason is not None:
            lease.mark_dead(spec, reason)
            raise DeviceError(
                f"device {spec.label} died: {reason}; it is taken out of the pool and this worker's "
                "next tests get another free device, if any"
            ) from None  # the probe's reason is the evidence; the test's own failure shows the driver error
    if close_error is not None:
        raise DeviceError(f"ending the Appium session on {spec.label} failed: {close_error}") from close_error


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
    except Exception as exc:
        warnings.warn(f"guistate: finishing the task record of {request.node.nodeid} failed: {exc}", stacklevel=1)
