"""pytest11 entry point: options, markers, hookspecs and the hook wiring. No logic lives here.

Every hook hands off to `runtime.py` (per run and per test) or the core (the layers: pyproject.toml's import-linter contracts).
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

from pytest_guistate import hookspecs
from pytest_guistate.config import CONFIG_KEY, add_options, build_config, check_marker_kwargs
from pytest_guistate.fixtures import (  # noqa: F401
    announce_hub_capacity,
    device,
    guistate,
    guistate_capabilities,
    guistate_device_lease,
    guistate_device_url,
    guistate_session_keeper,
)
from pytest_guistate.ledger_hooks import LedgerHooks
from pytest_guistate.runtime import RUNTIME_KEY, GuistateRuntime, default_refresh
from pytest_guistate.stash_keys import attach_failure_section, remember_report
from pytest_guistate.worker_sessions import session_mode

MARKER = (
    "guistate(tier=None, app=None, faults=None, caps=None, settle_timeout=None, session=None, timeout=None, "
    "cycle_limit=None): per-test guistate settings — tier (off|light|standard|full|auto), app package to start in, "
    "sim fault injection, extra Appium capabilities, session (test: a new Appium session for this test | worker: "
    "reuse the worker's), wall-clock budget in seconds (also test_timeout=), steps a screen loop may run "
    "(cycle_limit=)"
)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER)
    guistate_config = build_config(config)
    config.stash[CONFIG_KEY] = guistate_config
    config.stash[RUNTIME_KEY] = GuistateRuntime(config, guistate_config)
    config.stash[RUNTIME_KEY].check_paths()
    config.pluginmanager.register(LedgerHooks(config.stash[RUNTIME_KEY]), "guistate-ledger")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # a typo in @pytest.mark.guistate(tier=..., session=...) stops the run before any device starts
    runtime = config.stash[RUNTIME_KEY]
    for item in items:
        runtime.requested_tier(item)
        session_mode(item, runtime.settings.session)
        check_marker_kwargs(item)


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[RUNTIME_KEY].start_summary()
    announce_hub_capacity(session.config)  # a Grid hub that will queue (issue 35)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    session.config.stash[RUNTIME_KEY].record_stop(session, exitstatus)  # ledger_hooks.py
    session.config.stash[RUNTIME_KEY].write_summary()
    session.config.stash[RUNTIME_KEY].write_index()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    lines = config.stash[RUNTIME_KEY].heal_lines
    if lines:
        terminalreporter.section("guistate: locators healed by memory")
        for line in lines:
            terminalreporter.line(line)
        proposed = config.stash[RUNTIME_KEY].heal_proposals
        if proposed:
            folder = config.stash[RUNTIME_KEY].settings.artifacts_dir
            terminalreporter.line(f"{proposed} heal(s) proposed as patches: guistate heal-diff {folder} (--apply writes them)")
    exported = config.stash[RUNTIME_KEY].export_lines
    if exported:
        terminalreporter.section("guistate: LLM runs exported as scripted tests")
        for line in exported:
            terminalreporter.line(line)
    cache_lines = config.stash[RUNTIME_KEY].cache_lines
    if cache_lines:
        terminalreporter.section("guistate: action cache")
        for line in cache_lines:
            terminalreporter.line(line)


def pytest_unconfigure(config: pytest.Config) -> None:
    runtime = config.stash.get(RUNTIME_KEY, None)
    if runtime is not None:
        runtime.close()


# trylast: the innermost wrapper, so its section and scrubbing are in place before other plugins'
# wrappers (allure-pytest's) read the report
@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    remember_report(item, report)
    attach_failure_section(item, report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    with item.config.stash[RUNTIME_KEY].test_budget(item):  # the whole-test watchdog (issue 14)
        return (yield)


@pytest.hookimpl(trylast=True)
def pytest_guistate_refresh(screen: object, observation: object, item: pytest.Item) -> bool | None:
    return default_refresh(screen)
