"""The plugin's hooks implemented in a user's conftest.py: refresh, ignore regions, verdict override.

Every inner conftest logs each call to a JSON-lines file, so the outer test can tell the user's
implementation ran (and the plugin's default did not take over).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

InnerRun = Callable[..., pytest.RunResult]

HOOK_LOG = """
import json


def log(kind, **data):
    with open("hook_calls.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"hook": kind, **data}) + "\\n")
"""


def read_calls(pytester: pytest.Pytester) -> list[dict[str, object]]:
    path = pytester.path / "hook_calls.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


REFRESH_CONFTEST = HOOK_LOG + """

def pytest_guistate_refresh(screen, observation, item):
    if item.name.endswith("refuses"):
        log("refresh", test=item.name, answer=False)
        return False  # "cannot refresh here": the plugin's pull-to-refresh must not run instead
    pulled = bool(screen.pull_to_refresh())
    log("refresh", test=item.name, answer=pulled, package=observation.package)
    return pulled
"""

# The Feed deletes at once but redraws only after 5 s: the confirm step sees a stale list.
STALE_FEED = """
import pytest

from pytest_guistate import StepFailed, gone

STALE = pytest.mark.guistate(app="com.guistate.feed", faults={"refresh_delay": 5}, settle_timeout=0.5)


def delete_carol(device, guistate):
    guistate.goal("Delete Carol's post", plan=["Carol's post gone"])
    with guistate.step("open the delete dialog", expect="Delete post by Carol?"):
        device.tap(desc="Delete post by Carol")
    with guistate.step("confirm the delete", expect=gone("Carol"), idempotent=False) as confirm:
        device.tap(id="android:id/button1")
    return confirm


def actions(device, name):
    return [entry for entry in device.action_log() if entry["action"] == name]


@STALE
def test_hook_refreshes(device, guistate):
    confirm = delete_carol(device, guistate)
    assert confirm.outcome == "refreshed"
    assert confirm.record.attempts[-1].refreshed_by == "refresh hook"
    assert [e["author"] for e in actions(device, "delete_post")] == ["Carol"]
    assert len(actions(device, "refresh")) == 1


@STALE
def test_hook_refuses(device, guistate):
    with pytest.raises(StepFailed, match="not refreshed") as failed:
        delete_carol(device, guistate)
    assert "the action ran 1 time(s)" in str(failed.value)
    assert [e["author"] for e in actions(device, "delete_post")] == ["Carol"]
    assert actions(device, "refresh") == [], "the plugin's own pull-to-refresh ran although the hook said False"
"""


def test_a_conftest_refresh_hook_wins_over_the_default(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makeconftest(REFRESH_CONFTEST)
    pytester.makepyfile(STALE_FEED)
    result = inner("--guistate=standard", "-v")
    result.assert_outcomes(passed=2)
    calls = read_calls(pytester)
    assert calls == [
        {"hook": "refresh", "test": "test_hook_refreshes", "answer": True, "package": "com.guistate.feed"},
        {"hook": "refresh", "test": "test_hook_refuses", "answer": False},
    ]


def test_at_tier_light_the_refresh_hook_runs_for_an_unmet_expect_only(inner: InnerRun,
                                                                     pytester: pytest.Pytester) -> None:
    """Issue 15: light skips the implicit check of a step without `expect` (no refresh for a tap that
    changed nothing), but a step whose `expect` is unmet settles and refreshes there as well."""
    pytester.makeconftest(REFRESH_CONFTEST)
    pytester.makepyfile(
        """
        import pytest

        from pytest_guistate import gone


        @pytest.mark.guistate(app="com.guistate.feed", faults={"refresh_delay": 5}, settle_timeout=0.3)
        def test_light(device, guistate):
            with guistate.step("tap the title") as title:
                device.tap(text="Feed")
            assert title.outcome == "ok" and title.transition.verdict == "no_change"
            with guistate.step("open the delete dialog", expect="Delete post by Carol?"):
                device.tap(desc="Delete post by Carol")
            with guistate.step("confirm", expect=gone("Carol"), idempotent=False) as confirm:
                device.tap(id="android:id/button1")
            assert confirm.outcome == "refreshed"
            assert [e["author"] for e in device.action_log() if e["action"] == "delete_post"] == ["Carol"]
        """
    )
    inner("--guistate=light").assert_outcomes(passed=1)
    assert read_calls(pytester) == [
        {"hook": "refresh", "test": "test_light", "answer": True, "package": "com.guistate.feed"}]


IGNORE_CONFTEST = HOOK_LOG + """
from pytest_guistate import Box

DIALOG_BAND = Box(0, 900, 1080, 1500)  # where the confirm dialog opens on the 1080x2400 phone


def pytest_guistate_ignore_regions(observation, item):
    if "ignored" not in item.name:
        return None
    log("ignore", test=item.name)
    return [DIALOG_BAND]


def pytest_guistate_transition_check(before, after, transition, expect, item):
    if "override" not in item.name:
        return None
    log("transition_check", test=item.name, oracle=transition.verdict,
        expect=None if expect is None else expect.description)
    return "no_change"
"""

ORACLE_TESTS = """
import pytest

from pytest_guistate import StepFailed

FEED = pytest.mark.guistate(app="com.guistate.feed")


def open_dialog(device, guistate):
    with guistate.step("open the delete dialog", expect="Delete post by Bob?") as opened:
        device.tap(desc="Delete post by Bob")
    return opened


@FEED
def test_dialog_seen(device, guistate):
    opened = open_dialog(device, guistate)
    assert opened.transition.verdict == "changed"
    assert [0, 900, 1080, 1500] not in [box.as_list() for box in opened.transition.ignored]


@FEED
def test_dialog_ignored(device, guistate):
    opened = open_dialog(device, guistate)
    ignored = [box.as_list() for box in guistate.last_transition.ignored]
    assert [0, 900, 1080, 1500] in ignored
    assert opened.transition is guistate.last_transition
    # the only change was inside the ignored band: the oracle sees none, the expect still passes
    assert opened.transition.verdict == "no_change"
    assert opened.outcome == "ok"


@FEED
def test_verdict_override(device, guistate):
    opened = open_dialog(device, guistate)
    assert opened.transition.verdict == "changed"  # the oracle's own judgement is kept as evidence
    assert opened.record.verdict == "no_change"  # the step's verdict is the hook's


@pytest.mark.guistate(app="com.guistate.settings", settle_timeout=0.3)
def test_override_gates_the_step(device, guistate):
    # no expect at tier standard: the step passes only on a visible change, which the hook denies
    with pytest.raises(StepFailed, match="expected a visible change"):
        with guistate.step("type the e-mail"):
            device.type("qa@example.com", id="username")
"""


def test_ignore_regions_reach_the_oracle_and_a_verdict_override_wins(
    inner: InnerRun, pytester: pytest.Pytester
) -> None:
    pytester.makeconftest(IGNORE_CONFTEST)
    pytester.makepyfile(ORACLE_TESTS)
    inner("--guistate=standard").assert_outcomes(passed=4)
    calls = read_calls(pytester)
    assert {c["test"] for c in calls if c["hook"] == "ignore"} == {"test_dialog_ignored"}
    overrides = [c for c in calls if c["hook"] == "transition_check"]
    assert {c["test"] for c in overrides} == {"test_verdict_override", "test_override_gates_the_step"}
    first = next(c for c in overrides if c["test"] == "test_verdict_override")
    assert first == {"hook": "transition_check", "test": "test_verdict_override", "oracle": "changed",
                     "expect": "text 'Delete post by Bob?' (substring) visible"}
    gated = [c for c in overrides if c["test"] == "test_override_gates_the_step"]
    assert gated[0]["oracle"] == "changed" and gated[0]["expect"] is None


def test_a_bad_override_verdict_fails_the_step_with_a_clear_error(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        def pytest_guistate_transition_check(before, after, transition, expect, item):
            return "maybe"
        """
    )
    pytester.makepyfile(
        """
        import pytest


        @pytest.mark.guistate(app="com.guistate.feed")
        def test_step(device, guistate):
            with guistate.step("open the delete dialog", expect="Delete post by Bob?"):
                device.tap(desc="Delete post by Bob")
        """
    )
    result = inner("--guistate=standard")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*transition_check hook returned 'maybe'; expected one of*"])
