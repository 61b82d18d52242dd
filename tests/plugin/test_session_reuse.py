"""`--guistate-session=worker` on the simulated phone (issue 12): one Appium session per worker,
the app reset between tests, and isolation proven by tests that leave state behind for the next.

Each "leave" test leaves one kind of state (logged in, a deleted post, a cart item, an open
dialog, another app in front, an "isn't responding" dialog) and the next test, running in the
same session, checks it is gone. The same suite with a reset hook that resets nothing fails
exactly at those checks, so the isolation comes from the reset, not from a new session.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from lxml import html as lxml_html

from tests.helpers.journal_meta import journal_metas, sessions

from .session_reuse_helpers import NO_RESET_HOOK, failed_calls, run_worker

LEFTOVERS = '''
import pytest

FEED, SETTINGS, SHOPA = "com.guistate.feed", "com.guistate.settings", "com.guistate.shopa"


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
    device.tap(id="android:id/button1")
    assert not device.exists(desc="Delete post by Carol")


@pytest.mark.guistate(app=FEED)
def test_04_the_post_is_back(device, guistate):
    assert device.exists(desc="Delete post by Carol")


@pytest.mark.guistate(app=SHOPA)
def test_05_leave_a_cart_item(device, guistate):
    device.type("USB-C Cable\\n", id="search")
    device.tap(xpath="//*[contains(@resource-id, ':id/name') and @text='USB-C Cable']", timeout=5)
    device.tap(id="add_to_cart")
    assert device.exists(desc="Cart, 1 items")


@pytest.mark.guistate(app=SHOPA)
def test_06_the_cart_is_empty(device, guistate):
    assert device.exists(desc="Cart, 0 items")


@pytest.mark.guistate(app=FEED)
def test_07_leave_a_dialog_open(device, guistate):
    device.tap(desc="Delete post by Bob")
    assert device.exists(id="android:id/button1")


@pytest.mark.guistate(app=FEED)
def test_08_no_dialog(device, guistate):
    assert not device.exists(id="android:id/button1")


@pytest.mark.guistate(app=FEED)
def test_09_leave_another_app_in_front(device, guistate):
    device.activate_app("com.guistate.gallery")
    assert device.mobile("getCurrentPackage") == "com.guistate.gallery"


@pytest.mark.guistate(app=FEED)
def test_10_the_app_is_in_front(device, guistate):
    assert device.mobile("getCurrentPackage") == FEED


@pytest.mark.guistate(app=FEED, faults={"popup_at_action": 1})
def test_11_leave_the_app_not_responding(device, guistate):
    device.tap(desc="Delete post by Bob")
    assert device.exists(xpath="//*[contains(@text, \\"isn't responding\\")]")


@pytest.mark.guistate(app=FEED)
def test_12_the_app_responds(device, guistate):
    assert not device.exists(xpath="//*[contains(@text, \\"isn't responding\\")]")
    assert [entry["action"] for entry in device.action_log()] == ["open_app"]  # a fresh phone
    device.tap(desc="Delete post by Bob")  # the last test's faults went with its phone
    assert not device.exists(xpath="//*[contains(@text, \\"isn't responding\\")]")
'''

CHECKS = ["test_02_not_logged_in", "test_04_the_post_is_back", "test_06_the_cart_is_empty", "test_08_no_dialog",
          "test_10_the_app_is_in_front", "test_12_the_app_responds"]


def test_state_a_test_leaves_is_gone_in_the_next_one_sharing_its_session(
    pytester: pytest.Pytester, inner: Callable[..., pytest.RunResult]
) -> None:
    pytester.makepyfile(test_leftovers=LEFTOVERS)
    run_worker(inner, pytester).assert_outcomes(passed=12)
    seen = sessions(pytester.path / "artifacts")
    assert len(seen) == 12
    assert {s["session_id"] for s in seen.values()} == {seen["test_01_leave_logged_in"]["session_id"]}
    assert seen["test_01_leave_logged_in"]["state"] == "new"
    for name in CHECKS:
        assert seen[name]["state"] == "reused", seen[name]
        assert seen[name]["reset"].startswith("sim: mobile: guistateReset"), seen[name]
    assert seen["test_12_the_app_responds"]["tests"] == 12


def test_without_the_reset_the_same_state_leaks_into_the_next_test(
    pytester: pytest.Pytester, inner: Callable[..., pytest.RunResult]
) -> None:
    """The control: a hook that claims to reset but does nothing replaces the built-in reset."""
    pytester.makeconftest(NO_RESET_HOOK)
    pytester.makepyfile(test_leftovers=LEFTOVERS)
    result = run_worker(inner, pytester)
    assert failed_calls(result) == CHECKS
    seen = sessions(pytester.path / "artifacts")
    assert seen["test_02_not_logged_in"]["reset"] == "hook: pytest_guistate_reset_app"
    # a failed check is not trusted: the next test starts in a new session, and says why
    assert seen["test_03_leave_a_deleted_post"]["state"] == "new"
    assert "test_02_not_logged_in) failed" in seen["test_03_leave_a_deleted_post"]["reason"]


def test_a_failed_or_setup_errored_test_hands_a_new_session_to_the_next(
    pytester: pytest.Pytester, inner: Callable[..., pytest.RunResult]
) -> None:
    pytester.makepyfile("""
        import pytest

        @pytest.fixture
        def broken(device):
            raise RuntimeError("fixture setup broke")

        def test_a_fails(device, guistate):
            assert device.exists(desc="Nothing like this")

        def test_b_after_failure(device, guistate):
            pass

        def test_c_setup_error(device, broken):
            pass

        def test_d_after_setup_error(device, guistate):
            pass

        def test_e_reused(device, guistate):
            pass
    """)
    run_worker(inner, pytester).assert_outcomes(passed=3, failed=1, errors=1)
    seen = sessions(pytester.path / "artifacts")
    assert seen["test_b_after_failure"]["state"] == "new"
    assert seen["test_b_after_failure"]["reason"].startswith("the previous test (test_")
    assert "test_a_fails) failed" in seen["test_b_after_failure"]["reason"]
    assert seen["test_d_after_setup_error"]["state"] == "new"
    assert "test_c_setup_error) failed" in seen["test_d_after_setup_error"]["reason"]
    assert seen["test_e_reused"]["state"] == "reused"
    assert seen["test_e_reused"]["session_id"] == seen["test_d_after_setup_error"]["session_id"]
    assert seen["test_b_after_failure"]["session_id"] != seen["test_a_fails"]["session_id"]

    [report] = [p for p in (pytester.path / "artifacts").rglob("report.html") if "test_b_after" in p.parent.name]
    badge = lxml_html.fromstring(report.read_text(encoding="utf-8")).get_element_by_id("appium-session")
    assert badge.get("data-state") == "new"
    assert "test_a_fails) failed" in badge.text_content()
    [report] = [p for p in (pytester.path / "artifacts").rglob("report.html") if "test_e_reused" in p.parent.name]
    badge = lxml_html.fromstring(report.read_text(encoding="utf-8")).get_element_by_id("appium-session")
    assert badge.get("data-state") == "reused" and "reset: sim: mobile: guistateReset" in badge.text_content()


def test_a_session_the_server_ended_is_replaced_once_with_a_warning(
    pytester: pytest.Pytester, inner: Callable[..., pytest.RunResult]
) -> None:
    """The sim deletes the session under the plugin (as Appium does after newCommandTimeout)."""
    pytester.makepyfile("""
        import urllib.request

        def test_a_session_deleted_under_us(device, guistate_device_url):
            request = urllib.request.Request(f"{guistate_device_url}/session/{device.driver.session_id}",
                                             method="DELETE")
            urllib.request.urlopen(request).read()

        def test_b_gets_a_new_one(device, guistate):
            assert device.exists(text="Feed") or device.screenshot().size

        def test_c_reuses_it(device, guistate):
            pass
    """)
    result = run_worker(inner, pytester, "-W", "always::pytest_guistate.worker_sessions.SessionReuseWarning")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*SessionReuseWarning: guistate: the Appium session * was ended by the server*"])
    assert str(result.stdout).count("was ended by the server") == 1
    seen = sessions(pytester.path / "artifacts")
    assert seen["test_b_gets_a_new_one"]["state"] == "new"
    assert "the server ended the previous session (" in seen["test_b_gets_a_new_one"]["reason"]
    assert "invalid session id" in seen["test_b_gets_a_new_one"]["reason"].lower() or \
        "no active session" in seen["test_b_gets_a_new_one"]["reason"]
    assert seen["test_c_reuses_it"]["state"] == "reused"


def test_marker_session_test_gets_its_own_session_and_capability_changes_open_one(
    pytester: pytest.Pytester, inner: Callable[..., pytest.RunResult]
) -> None:
    pytester.makepyfile("""
        import pytest

        def test_a(device, guistate):
            pass

        @pytest.mark.guistate(session="test")
        def test_b_own_session(device, guistate):
            pass

        def test_c(device, guistate):
            pass

        @pytest.mark.guistate(caps={"guistate:screen": {"width": 720, "height": 1600}})
        def test_d_other_screen(device, guistate):
            assert device.size == (720, 1600)

        def test_e(device, guistate):
            assert device.size == (1080, 2400)
    """)
    run_worker(inner, pytester).assert_outcomes(passed=5)
    seen = sessions(pytester.path / "artifacts")
    assert seen["test_b_own_session"] == {**seen["test_b_own_session"], "mode": "test", "state": "new"}
    assert "asks for its own session" in seen["test_b_own_session"]["reason"]
    assert seen["test_c"]["state"] == "new" and "had its own session" in seen["test_c"]["reason"]
    assert seen["test_d_other_screen"]["state"] == "new"
    assert "capabilities differ in guistate:screen" in seen["test_d_other_screen"]["reason"]
    assert seen["test_e"]["state"] == "new"


def test_reset_hook_false_or_raising_means_a_new_session(
    pytester: pytest.Pytester, inner: Callable[..., pytest.RunResult]
) -> None:
    pytester.makeconftest("""
        def pytest_guistate_reset_app(device, capabilities, item):
            if item.name == "test_c_hook_raises":
                raise RuntimeError("the app hangs")
            return False if item.name == "test_b_hook_declines" else None
    """)
    pytester.makepyfile("""
        def test_a(device, guistate):
            pass

        def test_b_hook_declines(device, guistate):
            pass

        def test_c_hook_raises(device, guistate):
            pass

        def test_d_builtin_reset(device, guistate):
            pass
    """)
    result = run_worker(inner, pytester, "-W", "always::pytest_guistate.worker_sessions.SessionReuseWarning")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*resetting the app in session * failed (the app hangs)*unresponsive*"])
    seen = sessions(pytester.path / "artifacts")
    assert seen["test_b_hook_declines"]["state"] == "new"
    assert "hook said this session cannot be reset" in seen["test_b_hook_declines"]["reason"]
    assert seen["test_c_hook_raises"]["state"] == "new"
    assert seen["test_c_hook_raises"]["reason"] == "the app reset failed (the app hangs)"
    assert seen["test_d_builtin_reset"]["state"] == "reused"
    assert seen["test_d_builtin_reset"]["reset"].startswith("sim: ")


def test_test_mode_is_todays_behaviour_and_the_ini_selects_worker(
    pytester: pytest.Pytester, inner: Callable[..., pytest.RunResult]
) -> None:
    pytester.makepyfile("""
        def test_a(device, guistate):
            pass

        def test_b(device, guistate):
            pass
    """)
    artifacts = pytester.path / "artifacts"
    inner("--guistate=light", "--guistate-retain=on", f"--guistate-artifacts={artifacts}").assert_outcomes(passed=2)
    seen = sessions(artifacts)
    assert [seen[n]["mode"] for n in ("test_a", "test_b")] == ["test", "test"]
    assert seen["test_a"]["session_id"] != seen["test_b"]["session_id"]
    assert seen["test_b"]["state"] == "new" and seen["test_b"]["reason"] == ""

    pytester.makeini("[pytest]\nguistate_session = worker\n")
    again = pytester.path / "again"
    inner("--guistate=light", "--guistate-retain=on", f"--guistate-artifacts={again}").assert_outcomes(passed=2)
    assert sessions(again)["test_b"]["state"] == "reused"


def test_bad_session_values_are_usage_errors(pytester: pytest.Pytester, inner: Callable[..., pytest.RunResult]) -> None:
    pytester.makepyfile("""
        import pytest

        @pytest.mark.guistate(session="per-test")
        def test_a(device):
            pass
    """)
    result = inner()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*session='per-test'* is not one of test, worker*"])
    pytester.makeini("[pytest]\nguistate_session = always\n")
    result = inner()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--guistate-session: 'always' is not one of test, worker*"])


def test_each_xdist_worker_keeps_its_own_session(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(**{f"test_w{i}": f"def test_{i}(device, guistate):\n    pass\n" for i in range(4)})
    artifacts = pytester.path / "artifacts"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile", "--guistate=light", "--guistate-session=worker",
        "--guistate-retain=on", "--guistate-memory=off", f"--guistate-artifacts={artifacts}",
    )
    result.assert_outcomes(passed=4)
    by_worker: dict[str, set[str]] = {}
    states = []
    for meta in journal_metas(artifacts):
        by_worker.setdefault(meta["worker"], set()).add(meta["appium_session"]["session_id"])
        states.append(meta["appium_session"]["state"])
    assert all(len(ids) == 1 for ids in by_worker.values()), by_worker
    assert sorted(states).count("new") == len(by_worker)
