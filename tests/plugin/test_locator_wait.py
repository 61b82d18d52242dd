"""Locators wait, as a user meets it through the plugin (issue 34): `--guistate-locator-timeout` and
ini `guistate_locator_timeout` set the device's wait (bad values are usage errors), and a step whose
locator waited for its element takes its before-screen again right before the tap, so the oracle
compares against the screen the action met, not the spinner before the results."""

from __future__ import annotations

from collections.abc import Callable

import pytest

SUITE = '''
import pytest
from pytest_guistate import visible


@pytest.mark.guistate(app="com.guistate.shopa", faults={"search_delay": 1.5})
def test_open_a_late_result(device, guistate):
    device.type("Phone Case\\n", id="search")
    assert not device.exists(id="result_row")  # the spinner is up: the results come in 1.5 s
    with guistate.step("open the first result", expect=visible(id="product_price")) as opened:
        device.tap(id="result_row")  # waits for it
    assert opened.before.frame.source.endswith("before the action (after a locator's wait)")
    assert opened.before.tree.by_id("result_row"), "the before-screen is the one with the results"
    assert opened.transition is not None and opened.transition.verdict == "changed"


def test_the_wait_is_the_option(device):
    with open("wait.txt", "w") as out:
        out.write(str(device.locator_timeout))
'''


def test_a_waited_tap_retakes_the_before_screen(pytester: pytest.Pytester,
                                                 inner: Callable[..., pytest.RunResult]) -> None:
    pytester.makepyfile(SUITE)
    result = inner("--guistate=standard", "-k", "late_result")
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(("args", "ini", "wanted"), [
    ((), "", "5.0"),
    (("--guistate-locator-timeout=0",), "", "0.0"),
    ((), "guistate_locator_timeout = 2.5", "2.5"),
    (("--guistate-locator-timeout=1",), "guistate_locator_timeout = 2.5", "1.0"),
])
def test_the_locator_timeout_comes_from_the_option_then_the_ini(
    pytester: pytest.Pytester, inner: Callable[..., pytest.RunResult], args: tuple[str, ...], ini: str, wanted: str,
) -> None:
    pytester.makepyfile(SUITE)
    if ini:
        pytester.makeini(f"[pytest]\n{ini}\n")
    result = inner(*args, "-k", "is_the_option")
    result.assert_outcomes(passed=1)
    assert (pytester.path / "wait.txt").read_text() == wanted


def test_a_bad_locator_timeout_is_a_usage_error(pytester: pytest.Pytester,
                                                inner: Callable[..., pytest.RunResult]) -> None:
    pytester.makepyfile(SUITE)
    result = inner("--guistate-locator-timeout=-1", "-k", "is_the_option")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--guistate-locator-timeout: must be >= 0 seconds, got '-1'*"])
