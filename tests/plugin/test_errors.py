"""Errors a user meets: LLM steps with the LLM off, an Appium URL nobody answers, a failed test's sim."""

from __future__ import annotations

import socket
from collections.abc import Callable

import pytest

InnerRun = Callable[..., pytest.RunResult]


def test_llm_steps_with_the_llm_off_name_the_options(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest


        @pytest.mark.guistate(app="com.guistate.feed")
        def test_run(device, guistate):
            guistate.goal("Delete Carol's post")
            guistate.run("Delete Carol's post")


        @pytest.mark.guistate(app="com.guistate.feed")
        def test_check(device, guistate):
            guistate.check("Carol's post is listed")
        """
    )
    result = inner("--guistate-llm=off")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([
        "*LLMNotConfigured: guistate.run() needs an LLM: run with --guistate-llm=replay*",
        "*LLMNotConfigured: guistate.check() needs an LLM: run with --guistate-llm=replay*",
    ])
    assert "ANTHROPIC_API_KEY" in result.stdout.str() and "ini guistate_llm" in result.stdout.str()
    # nothing was tapped on the user's behalf: the guistate section shows no step
    assert "last step" not in result.stdout.str()


def closed_port() -> int:
    """A loopback port that was just free: nothing listens there."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_appium_url_nobody_answers_errors_the_device_fixture(inner: InnerRun, pytester: pytest.Pytester) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    pytester.makepyfile(
        """
        def test_needs_device(device):
            pass


        def test_needs_guistate(guistate):
            pass


        def test_plain():
            pass
        """
    )
    result = inner(f"--guistate-device={url}")
    result.assert_outcomes(passed=1, errors=2)
    expected = f"DeviceError: no Appium server answers at {url}"
    errors = [line for line in result.outlines if line.startswith("E ") and "Error" in line]
    assert sum(expected in line for line in result.outlines if line.startswith("E ")) >= 2, (
        f"each setup error must say {expected!r}; the last error line was {errors[-1] if errors else None!r}")


def test_the_sim_serves_a_fresh_app_after_a_failed_test(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        from pytest_guistate import gone

        FEED = pytest.mark.guistate(app="com.guistate.feed")


        @FEED
        def test_deletes_then_fails(device, guistate):
            with guistate.step("open the delete dialog", expect="Delete post by Carol?"):
                device.tap(desc="Delete post by Carol")
            with guistate.step("confirm", expect=gone("Carol"), idempotent=False):
                device.tap(id="android:id/button1")
            device.tap(text="No such button")


        @FEED
        def test_next(device, guistate):
            assert device.exists(text="Carol"), "the previous test's delete leaked into this session"
            assert [e["action"] for e in device.action_log()] == ["open_app"]
            with guistate.step("open the delete dialog", expect="Delete post by Carol?"):
                device.tap(desc="Delete post by Carol")
        """
    )
    result = inner("--guistate=light")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*No such button*"])
