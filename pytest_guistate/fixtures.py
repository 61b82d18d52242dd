"""The fixtures users meet: `device`, `guistate`, and the overridable capabilities.

As in pytest-playwright, options become session fixtures a project can override in its
conftest (`guistate_capabilities` plays the part of `browser_context_args`); per-test
fixtures close what they create.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_guistate.config import get_config
from pytest_guistate.runtime import RUNTIME_KEY, SESSION_KEY, did_test_fail, marker_kwargs

__all__ = ["device", "guistate", "guistate_capabilities", "guistate_device_url"]

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


@pytest.fixture(scope="session")
def guistate_device_url(pytestconfig: pytest.Config) -> Iterator[str]:
    """The Appium server URL: the embedded sim (started here, once per worker) or the option's URL."""
    settings = get_config(pytestconfig)
    runtime = pytestconfig.stash[RUNTIME_KEY]
    if settings.uses_sim:
        yield runtime.sim_url()
        runtime.stop_sim()
    else:
        yield settings.devices[0]


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
    request: pytest.FixtureRequest, guistate_device_url: str, guistate_capabilities: dict[str, Any]
) -> Iterator[Any]:
    """A fresh Appium session (fresh app state) for this test; `device.driver` is the raw client."""
    import urllib3
    from appium import webdriver
    from appium.options.common import AppiumOptions
    from selenium.common.exceptions import WebDriverException

    from pytest_guistate.devices.device import Device, DeviceError

    settings = get_config(request.config)
    caps = _session_capabilities(request, guistate_capabilities)
    options = AppiumOptions().load_capabilities(caps)
    try:
        driver = webdriver.Remote(guistate_device_url, options=options)
    except WebDriverException as exc:
        raise DeviceError(
            f"could not open an Appium session on {guistate_device_url}: {(exc.msg or str(exc)).strip()}"
        ) from exc
    except (OSError, urllib3.exceptions.HTTPError) as exc:
        raise DeviceError(f"no Appium server answers at {guistate_device_url}: {exc}") from exc
    dev = Device(driver, url=guistate_device_url, is_sim=settings.uses_sim)
    yield dev
    dev.close()


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
    except Exception as exc:
        warnings.warn(f"guistate: finishing the task record of {request.node.nodeid} failed: {exc}", stacklevel=1)
