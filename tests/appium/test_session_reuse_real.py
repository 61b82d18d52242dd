"""`--guistate-session=worker` against real Appium 3 + headless Chromium (issue 12).

An inner run (a subprocess, as a user runs it) keeps one chromium session for its tests and
resets it between them. Each "leave" test leaves browser state behind — a login cookie and
local storage, a cart in session storage, an open confirm dialog and a JavaScript alert, a
second window in front — and the next test, in the same session, finds none of it. A failed
test hands a new session to the next; a session deleted on the server is replaced once, with a
warning.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pytest_guistate.devices.web_feed import FeedServer
from tests.helpers.journal_meta import sessions

pytestmark = pytest.mark.appium

INNER = '''
import urllib.request

import pytest
from selenium.common.exceptions import NoAlertPresentException

FEED = {page!r}
START = "data:,"  # where chromedriver opens a new session, and where the reset returns


def storage(device):
    return device.driver.execute_script(
        "return [document.cookie, localStorage.length, sessionStorage.length, location.href]")


def test_01_leave_logged_in_with_a_cart(device, guistate):
    device.open_url(FEED)
    device.driver.execute_script(
        "document.cookie = 'session=alice; path=/'; localStorage.setItem('user', 'alice');"
        "sessionStorage.setItem('cart', '1 x USB-C Cable');")
    assert storage(device)[:3] == ["session=alice", 1, 1]


def test_02_nothing_of_it_is_left(device, guistate):
    assert device.driver.current_url == START
    device.open_url(FEED)
    assert storage(device)[:3] == ["", 0, 0]


def test_03_leave_a_deleted_post_and_a_dialog_open(device, guistate):
    device.open_url(FEED)
    device.tap("Delete")
    device.tap(id="confirm_delete")
    device.tap("Delete")
    assert device.exists(text="Delete post?")
    device.driver.execute_script("setTimeout(() => alert('left open'), 0)")


def test_04_the_post_is_back_and_no_dialog(device, guistate):
    with pytest.raises(NoAlertPresentException):
        device.driver.switch_to.alert.text
    assert device.driver.current_url == START
    device.open_url(FEED)
    assert device.exists("Alice")
    assert not device.exists(text="Delete post?")


def test_05_leave_another_window_in_front(device, guistate):
    device.driver.switch_to.new_window("window")
    device.open_url(FEED)
    assert len(device.driver.window_handles) == 2


def test_06_one_window(device, guistate):
    assert len(device.driver.window_handles) == 1
    assert device.driver.current_url == START


def test_07_fails(device, guistate):
    assert device.exists("No such post")


def test_08_after_a_failure(device, guistate):
    pass


def test_09_session_deleted_on_the_server(device, guistate_device_url):
    request = urllib.request.Request(f"{{guistate_device_url}}/session/{{device.driver.session_id}}", method="DELETE")
    urllib.request.urlopen(request).read()


def test_10_after_the_server_ended_it(device, guistate):
    device.open_url(FEED)
    assert device.exists("Alice")


def test_11_reused_again(device, guistate):
    pass
'''


def test_worker_sessions_on_real_chromium_isolate_every_test(
    pytester: pytest.Pytester, feed_server: FeedServer, inner_device: Callable[[int], tuple[str, ...]],
) -> None:
    device_options = inner_device(119)
    pytester.makepyfile(test_inner=INNER.format(page=feed_server.page_url(delay_ms=0)))
    artifacts = pytester.path / "artifacts"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--guistate=light", "--guistate-session=worker", *device_options,
        "--guistate-retain=on", "--guistate-memory=off",
        f"--guistate-artifacts={artifacts}", "-W", "always::pytest_guistate.worker_sessions.SessionReuseWarning",
    )
    result.assert_outcomes(passed=10, failed=1)
    failed = [line for line in result.outlines if line.startswith("FAILED")]
    assert len(failed) == 1 and "test_07_fails" in failed[0], failed
    result.stdout.fnmatch_lines(["*guistate: the Appium session * was ended by the server*"])

    seen = sessions(artifacts)
    first = seen["test_01_leave_logged_in_with_a_cart"]
    assert first["state"] == "new"
    for name in ("test_02_nothing_of_it_is_left", "test_04_the_post_is_back_and_no_dialog", "test_06_one_window"):
        assert seen[name]["state"] == "reused" and seen[name]["session_id"] == first["session_id"], seen[name]
        assert seen[name]["reset"].startswith("chromium: "), seen[name]
    assert "1 extra window(s) closed" in seen["test_06_one_window"]["reset"]
    assert seen["test_08_after_a_failure"]["state"] == "new"
    assert "test_07_fails) failed" in seen["test_08_after_a_failure"]["reason"]
    assert seen["test_10_after_the_server_ended_it"]["state"] == "new"
    assert "the server ended the previous session" in seen["test_10_after_the_server_ended_it"]["reason"]
    assert seen["test_11_reused_again"]["state"] == "reused"
