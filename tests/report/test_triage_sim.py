"""Triage on the simulated phone: one failing inner test per label, each with a known cause.

Each test writes a realistic failing test, runs it in-process through the plugin on the embedded
sim, and reads the label and its evidence from the run summary (`--guistate-summary`), i.e.
what a CI person sees. The settle timeout is lowered to 1 s so the stale-screen checks stay quick;
the causes (a 5 s redraw delay, a toggle already on, a tap one row too high, ...) are unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.helpers.inner_run import run_inprocess

# Shared by the inner tests: sign in to Settings, a check on a settings switch that locates it, and
# the first step of every delete on the Feed.
HELPERS = '''
from pytest_guistate import CheckResult

SETTINGS = "com.guistate.settings"
FEED = "com.guistate.feed"


def switch_is_on(title):
    def check(observation):
        for row in observation.tree.nodes():
            if any(child.text == title for child in row.children):
                switches = [n for n in row.walk() if n.cls.endswith("Switch")]
                if switches:
                    state = "on" if switches[0].checked else "off"
                    return CheckResult(switches[0].checked, f"switch {title!r} is {state}", switches[0].bounds)
        return CheckResult(False, f"no settings row titled {title!r} on screen")

    check.__name__ = f"switch {title!r} on"
    return check


def sign_in(device, guistate):
    guistate.perform("type the e-mail", lambda: device.type("qa@example.com", id="username"), idempotent=False)
    guistate.perform("type the password", lambda: device.type("correct-horse", id="password"), idempotent=False)
    guistate.perform("tap Log in", lambda: device.tap(id="login"), expect="Signed in as", idempotent=False)
    guistate.milestone("signed in")


def ask_to_delete(device, guistate, author):
    guistate.perform(f"ask to delete {author}'s post", lambda: device.tap(desc=f"Delete post by {author}"),
                     expect=f"Delete post by {author}?")
'''

InnerRun = Callable[..., dict[str, Any]]


@pytest.fixture
def triaged(pytester: pytest.Pytester) -> Iterator[InnerRun]:
    """Run one failing inner test in-process on the sim; return its row of summary.json."""

    def run(source: str, *, conftest: str | None = None) -> dict[str, Any]:
        # each inner test fails on purpose, some on a locator that finds nothing: no default 5 s wait for it
        pytester.makeini("[pytest]\nguistate_settle_timeout = 1.0\nguistate_locator_timeout = 0\n")
        pytester.makepyfile(sim_helpers=HELPERS)
        if conftest is not None:
            pytester.makeconftest(conftest)
        pytester.makepyfile(test_known_cause=source)
        result = run_inprocess(pytester, "-p", "no:cacheprovider", "--guistate=standard",
                               "--guistate-summary=summary.json")
        result.assert_outcomes(failed=1)
        document = json.loads((pytester.path / "summary.json").read_text(encoding="utf-8"))
        (row,) = document["tests"]
        assert row["outcome"] == "failed"
        return row

    yield run


def _evidence(row: dict[str, Any]) -> str:
    assert row["triage_evidence"], f"label {row['triage']!r} came without evidence"
    return "\n".join(row["triage_evidence"])


def test_a_delete_whose_list_never_redraws_is_stale_screen_repetition(triaged: InnerRun) -> None:
    # The Feed redraws 5 s after a delete and this screen cannot be refreshed (the hook says so):
    # the non-idempotent confirm is not repeated, the step fails after settling.
    row = triaged('''
        import pytest
        from pytest_guistate import gone
        from sim_helpers import FEED, ask_to_delete

        @pytest.mark.guistate(app=FEED, faults={"refresh_delay": 5})
        def test_delete_carols_post(device, guistate):
            guistate.goal("Delete Carol's post", plan=[("dialog open", "Delete post by Carol?"),
                                                       ("Carol's post gone", gone("Carol"))])
            ask_to_delete(device, guistate, "Carol")
            with guistate.step("confirm the delete", expect=gone("Carol"), idempotent=False):
                device.tap(id="android:id/button1")
            guistate.milestone("Carol's post gone")
    ''', conftest='''
        def pytest_guistate_refresh(screen, observation, item):
            return False  # this list has no pull-to-refresh
    ''')
    assert row["triage"] == "stale_screen_repetition"
    evidence = _evidence(row)
    assert "step 2 'confirm the delete'" in evidence
    assert "never showed after initial -> settle -> wait" in evidence
    assert "'Carol'" in evidence and "still visible" in evidence
    # "dialog open" left the screen when the dialog closed: a regression conflict is recorded,
    # and it is not mistaken for a hallucinated milestone
    assert row["conflicts"] == 1 and row["stale_episodes"] == 1


def test_a_milestone_the_screen_contradicts_is_progress_hallucination(triaged: InnerRun) -> None:
    row = triaged('''
        import pytest
        from pytest_guistate import gone
        from sim_helpers import FEED

        @pytest.mark.guistate(app=FEED)
        def test_delete_carols_post(device, guistate):
            guistate.goal("Delete Carol's post", plan=[("dialog open", "Delete post by Carol?"),
                                                       ("Carol's post gone", gone("Carol"))])
            with guistate.step("open the delete dialog on Carol's post", expect="Delete post by Carol?"):
                device.tap(desc="Delete post by Carol")
            with guistate.step("cancel (by mistake)", expect=gone("Delete post by Carol?")):
                device.tap(id="android:id/button2")
            guistate.milestone("Carol's post gone")  # claimed, but Carol's post is still there
    ''')
    assert row["triage"] == "progress_hallucination"
    evidence = _evidence(row)
    assert "milestone \"Carol's post gone\" claimed but not on screen" in evidence
    assert "'Carol' (substring) still visible" in evidence


def test_deleting_a_post_below_the_fold_is_hidden_operation(triaged: InnerRun) -> None:
    # Judy's post is the 10th: its row (and its Delete button) is not drawn until the list scrolls.
    row = triaged('''
        import pytest
        from pytest_guistate import gone
        from sim_helpers import FEED, ask_to_delete

        @pytest.mark.guistate(app=FEED)
        def test_delete_judys_post(device, guistate):
            guistate.goal("Delete Judy's post", plan=[("dialog open", "Delete post by Judy?"),
                                                      ("Judy's post gone", gone("Judy"))])
            ask_to_delete(device, guistate, "Judy")
    ''')
    assert row["triage"] == "hidden_operation"
    evidence = _evidence(row)
    assert "step 1 \"ask to delete Judy's post\"" in evidence
    assert "ElementNotFound" in evidence and "'Delete post by Judy'" in evidence


def test_a_point_tap_one_row_too_high_is_a_grounding_error(triaged: InnerRun) -> None:
    # The point meant for the Dark mode switch is computed 100 px above its row: it toggles Wi-Fi.
    row = triaged('''
        import pytest
        from sim_helpers import SETTINGS, sign_in, switch_is_on

        @pytest.mark.guistate(app=SETTINGS)
        def test_dark_mode(device, guistate):
            guistate.goal("Turn dark mode on", plan=[("signed in", "Signed in as"), "dark mode on"])
            sign_in(device, guistate)
            label = device.box_of(device.find(text="Dark mode"))
            x, y = label.right + 200, label.top - 100
            guistate.perform("switch dark mode on", lambda: device.tap(x=x, y=y),
                             expect=switch_is_on("Dark mode"), idempotent=False)
            guistate.milestone("dark mode on")
    ''')
    assert row["triage"] == "grounding_error"
    evidence = _evidence(row)
    assert "step 4 'switch dark mode on' changed the screen only at" in evidence
    assert "not at the element its expectation is about (switch 'Dark mode' on" in evidence
    assert "landed beside its target" in evidence


def test_tapping_a_toggle_that_was_already_on_is_visual_state_misunderstanding(triaged: InnerRun) -> None:
    # Wi-Fi is on by default; the test believes it is off, taps it, and switches it off.
    row = triaged('''
        import pytest
        from sim_helpers import SETTINGS, sign_in, switch_is_on

        @pytest.mark.guistate(app=SETTINGS)
        def test_wifi_on(device, guistate):
            guistate.goal("Make sure Wi-Fi is on", plan=[("signed in", "Signed in as"), "Wi-Fi on"])
            sign_in(device, guistate)
            guistate.perform("switch Wi-Fi on", lambda: device.tap(text="Wi-Fi"),
                             expect=switch_is_on("Wi-Fi"), idempotent=False)
            guistate.milestone("Wi-Fi on")
    ''')
    assert row["triage"] == "visual_state_misunderstanding"
    evidence = _evidence(row)
    assert "step 4 'switch Wi-Fi on'" in evidence
    assert "already showed the expected state before the action (switch 'Wi-Fi' is on)" in evidence
    assert "now switch 'Wi-Fi' is off" in evidence


def test_wandering_into_an_unrelated_app_is_goal_drift(triaged: InnerRun) -> None:
    # Half-way through "dark mode", the test opens the Gallery and looks for the switch there.
    row = triaged('''
        import pytest
        from sim_helpers import SETTINGS, sign_in, switch_is_on

        @pytest.mark.guistate(app=SETTINGS)
        def test_dark_mode(device, guistate):
            guistate.goal("Turn dark mode on", plan=[("signed in", "Signed in as"), "dark mode on"])
            sign_in(device, guistate)
            guistate.perform("open the gallery", lambda: device.activate_app("com.guistate.gallery"))
            guistate.perform("open albums", lambda: device.tap(text="Albums"))
            guistate.perform("switch dark mode on", lambda: device.tap(text="Dark mode"),
                             expect=switch_is_on("Dark mode"), idempotent=False)
    ''')
    assert row["triage"] == "goal_drift"
    evidence = _evidence(row)
    assert "app com.guistate.settings -> com.guistate.gallery" in evidence
    assert "the failure came there (step 6 'switch dark mode on')" in evidence
    assert "still to do: 'dark mode on'" in evidence


def test_a_device_lost_mid_test_is_environment(triaged: InnerRun) -> None:
    # The Appium session disappears between two steps (as when a device reboots or a grid
    # reclaims it): the next step's driver call fails.
    row = triaged('''
        import urllib.request

        import pytest
        from pytest_guistate import gone
        from sim_helpers import FEED, ask_to_delete

        @pytest.mark.guistate(app=FEED)
        def test_delete_carols_post(device, guistate):
            guistate.goal("Delete Carol's post", plan=[("dialog open", "Delete post by Carol?"),
                                                       ("Carol's post gone", gone("Carol"))])
            ask_to_delete(device, guistate, "Carol")
            gone_session = f"{device.url}/session/{device.driver.session_id}"
            urllib.request.urlopen(urllib.request.Request(gone_session, method="DELETE"), timeout=5).read()
            guistate.perform("confirm the delete", lambda: device.tap(id="android:id/button1"),
                             expect=gone("Carol"), idempotent=False)
    ''')
    assert row["triage"] == "environment"
    evidence = _evidence(row)
    assert "step 2 'confirm the delete' error names the device: 'DeviceError'" in evidence
    assert "no active session" in evidence


def test_pressing_the_wrong_button_is_expected_effect_missing_not_stale(triaged: InnerRun) -> None:
    # Issue 15: Cancel instead of Delete. The dialog closes (the screen changes), the list is pulled
    # to refresh and Carol's post is still there; nothing was repeated and the screen was not stale.
    row = triaged('''
        import pytest
        from pytest_guistate import gone
        from sim_helpers import FEED, ask_to_delete

        @pytest.mark.guistate(app=FEED)
        def test_delete_carols_post(device, guistate):
            guistate.goal("Delete Carol's post", plan=[("Carol's post gone", gone("Carol"))])
            ask_to_delete(device, guistate, "Carol")
            with guistate.step("confirm the delete", expect=gone("Carol"), idempotent=False):
                device.tap(id="android:id/button2")  # Cancel
            guistate.milestone("Carol's post gone")
    ''')
    assert row["triage"] == "expected_effect_missing", row["triage_evidence"]
    evidence = _evidence(row)
    assert "step 2 'confirm the delete' ran once and changed the screen" in evidence
    assert "pull-to-refresh" in evidence and "still visible" in evidence and "nothing was repeated" in evidence
    assert row["retries"] == 0
