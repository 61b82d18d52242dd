"""`--guistate-session=worker` on the iOS persona (issue 12): the same isolation as on Android,
with XCUITest's locators (accessibility ids, alert buttons named by their titles, `activeAppInfo`).

Each "leave" test leaves state behind; the next one, in the same session, checks it is gone. A
reset hook that resets nothing makes exactly those checks fail, so the isolation is the reset's.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.helpers.journal_meta import sessions

from .session_reuse_helpers import NO_RESET_HOOK, failed_calls, run_worker

LEFTOVERS_IOS = '''
import pytest

FEED, SETTINGS = "com.guistate.feed", "com.guistate.settings"


@pytest.mark.guistate(app=SETTINGS)
def test_01_leave_logged_in(device, guistate):
    device.type("qa@example.com", id="username")
    device.type("correct-horse", id="password")
    device.tap(id="login")
    assert device.exists(id="account")


@pytest.mark.guistate(app=SETTINGS)
def test_02_not_logged_in(device, guistate):
    assert device.exists(id="login") and not device.exists(id="account")


@pytest.mark.guistate(app=FEED)
def test_03_leave_a_deleted_post(device, guistate):
    device.tap(desc="Delete post by Carol")
    device.tap(id="Delete")
    assert not device.exists(desc="Delete post by Carol")


@pytest.mark.guistate(app=FEED)
def test_04_the_post_is_back(device, guistate):
    assert device.exists(desc="Delete post by Carol")


@pytest.mark.guistate(app=FEED)
def test_05_leave_an_alert_open(device, guistate):
    device.tap(desc="Delete post by Bob")
    assert device.exists(id="Cancel")


@pytest.mark.guistate(app=FEED)
def test_06_no_alert(device, guistate):
    assert not device.exists(id="Cancel")


@pytest.mark.guistate(app=FEED)
def test_07_leave_another_app_in_front(device, guistate):
    device.activate_app("com.guistate.gallery")
    assert device.mobile("activeAppInfo")["bundleId"] == "com.guistate.gallery"


@pytest.mark.guistate(app=FEED)
def test_08_the_app_is_in_front(device, guistate):
    assert device.mobile("activeAppInfo")["bundleId"] == FEED
'''

CHECKS_IOS = ["test_02_not_logged_in", "test_04_the_post_is_back", "test_06_no_alert", "test_08_the_app_is_in_front"]


def test_on_ios_state_a_test_leaves_is_gone_in_the_next_one_sharing_its_session(
    pytester: pytest.Pytester, inner: Callable[..., pytest.RunResult]
) -> None:
    pytester.makepyfile(test_leftovers_ios=LEFTOVERS_IOS)
    run_worker(inner, pytester, "--guistate-platform=ios").assert_outcomes(passed=8)
    seen = sessions(pytester.path / "artifacts")
    assert len(seen) == 8
    assert len({s["session_id"] for s in seen.values()}) == 1
    for name in CHECKS_IOS:
        assert seen[name]["state"] == "reused", seen[name]
        assert seen[name]["reset"].startswith("sim: mobile: guistateReset"), seen[name]


def test_on_ios_without_the_reset_the_same_state_leaks(
    pytester: pytest.Pytester, inner: Callable[..., pytest.RunResult]
) -> None:
    pytester.makeconftest(NO_RESET_HOOK)
    pytester.makepyfile(test_leftovers_ios=LEFTOVERS_IOS)
    result = run_worker(inner, pytester, "--guistate-platform=ios")
    assert failed_calls(result) == CHECKS_IOS
