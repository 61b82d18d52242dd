"""Which tier a test gets, as a user meets it: option, marker, off, auto by plan and by the cache.

The rule (runtime.resolve_tier + core/tiers.choose_tier): `--guistate=off` switches every test
off, marker tiers included; otherwise a concrete marker tier wins over the option; a marker
`tier="auto"` puts that test back on auto. Auto uses the last run's step count from the pytest
cache, else the declared plan (milestones x 2 against `guistate_light_max_steps` (8) and
`guistate_standard_max_steps` (25)), else `standard` ("default").
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

InnerRun = Callable[..., pytest.RunResult]

# Each inner test logs its resolved tier after its body ran (goal() may re-tier under auto).
TIER_LOG = """
import json
import pytest


@pytest.fixture
def logged(request, guistate):
    yield guistate
    with open("tiers.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"test": request.node.name, "tier": guistate.tier.value,
                             "reason": guistate.tier_reason, "steps": len(guistate.steps),
                             "anchors": guistate.policy.anchors,
                             "decode_ahead": request.getfixturevalue("device").decode_ahead}) + "\\n")
"""


def read_tiers(pytester: pytest.Pytester) -> dict[str, dict[str, object]]:
    path = pytester.path / "tiers.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    path.unlink()
    return {row["test"]: row for row in rows}


def _plan(n: int) -> str:
    return repr([f"milestone {i}" for i in range(1, n + 1)])


ONE_GOAL = """
import pytest

pytestmark = pytest.mark.guistate(app="com.guistate.settings")


def test_one_goal(device, logged):
    logged.goal("Type an e-mail", plan=["typed"])
"""


@pytest.mark.parametrize("tier", ["light", "standard", "full"])
def test_the_option_tier_reaches_the_session(inner: InnerRun, pytester: pytest.Pytester, tier: str) -> None:
    pytester.makeconftest(TIER_LOG)
    pytester.makepyfile(ONE_GOAL)
    inner(f"--guistate={tier}").assert_outcomes(passed=1)
    row = read_tiers(pytester)["test_one_goal"]
    # a declared plan does not re-tier a test whose tier the command line fixed
    assert (row["tier"], row["reason"]) == (tier, "option")
    assert row["anchors"] is (tier != "light")
    assert row["decode_ahead"] is True  # screenshots decode while the page source is fetched


MARKERS = """
import pytest

pytestmark = pytest.mark.guistate(app="com.guistate.settings")


@pytest.mark.guistate(tier="light")
def test_marked_light(device, logged):
    logged.goal("Type an e-mail", plan=["typed"])


def test_unmarked(device, logged):
    logged.goal("Type an e-mail", plan=["typed"])


@pytest.mark.guistate(tier="auto")
def test_marked_auto(device, logged):
    logged.goal("Type an e-mail", plan=["typed", "shown"])
"""


def test_a_marker_tier_wins_over_the_option(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makeconftest(TIER_LOG)
    pytester.makepyfile(MARKERS)
    inner("--guistate=full").assert_outcomes(passed=3)
    rows = read_tiers(pytester)
    assert (rows["test_marked_light"]["tier"], rows["test_marked_light"]["reason"]) == ("light", "marker")
    assert (rows["test_unmarked"]["tier"], rows["test_unmarked"]["reason"]) == ("full", "option")
    # tier="auto" on the marker hands this one test back to auto: its plan of 2 picks light
    assert (rows["test_marked_auto"]["tier"], rows["test_marked_auto"]["reason"]) == ("light", "plan length 2")


def test_off_switches_every_test_off_even_marked_ones(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makeconftest(TIER_LOG)
    pytester.makepyfile(
        """
        import pytest

        pytestmark = pytest.mark.guistate(app="com.guistate.settings")


        @pytest.mark.guistate(tier="full")
        def test_marked_full(device, logged):
            logged.goal("Type an e-mail", plan=["typed"])
            with logged.step("type the e-mail", expect="qa@example.com"):
                device.type("qa@example.com", id="username")


        @pytest.mark.guistate(settle_timeout=0.3)
        def test_unmarked(device, logged):
            from pytest_guistate import StepFailed

            logged.goal("Type an e-mail", plan=["typed"])
            # off still performs the action and checks the expect (it just records nothing)
            with pytest.raises(StepFailed, match="never shown"):
                with logged.step("type", expect="never shown"):
                    device.type("qa@example.com", id="username")
        """
    )
    inner("--guistate=off").assert_outcomes(passed=2)
    rows = read_tiers(pytester)
    assert {name: (row["tier"], row["reason"]) for name, row in rows.items()} == {
        "test_marked_full": ("off", "option"),
        "test_unmarked": ("off", "option"),
    }
    assert rows["test_marked_full"]["steps"] == 1
    assert not any(row["decode_ahead"] for row in rows.values())  # no oracle: no pixels decoded ahead


PLANS = f"""
import pytest

pytestmark = pytest.mark.guistate(app="com.guistate.settings")


def test_plan_2(device, logged):
    logged.goal("short", plan={_plan(2)})


def test_plan_8(device, logged):
    logged.goal("medium", plan={_plan(8)})


def test_plan_14(device, logged):
    logged.goal("long", plan={_plan(14)})


def test_no_plan(device, logged):
    logged.goal("no plan")
"""


def test_auto_tier_from_the_declared_plan_and_the_ini_thresholds(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makeconftest(TIER_LOG)
    pytester.makepyfile(PLANS)
    inner("--guistate=auto", "-W", "ignore::pytest_guistate.GuistateWarning").assert_outcomes(passed=4)
    rows = read_tiers(pytester)
    assert {name: (row["tier"], row["reason"]) for name, row in rows.items()} == {
        "test_plan_2": ("light", "plan length 2"),  # 4 <= 8
        "test_plan_8": ("standard", "plan length 8"),  # 16 <= 25
        "test_plan_14": ("full", "plan length 14"),  # 28 > 25
        "test_no_plan": ("standard", "default"),
    }
    assert rows["test_plan_2"]["anchors"] is False and rows["test_plan_14"]["anchors"] is True

    pytester.makeini("[pytest]\nguistate_light_max_steps = 3\nguistate_standard_max_steps = 16\n")
    inner("-W", "ignore::pytest_guistate.GuistateWarning").assert_outcomes(passed=4)
    rows = read_tiers(pytester)
    assert {name: row["tier"] for name, row in rows.items()} == {
        "test_plan_2": "standard",  # 4 > 3
        "test_plan_8": "standard",  # 16 <= 16
        "test_plan_14": "full",
        "test_no_plan": "standard",
    }


CACHED = f"""
import pytest

pytestmark = pytest.mark.guistate(app="com.guistate.settings")


def test_three_steps(device, logged):
    logged.goal("type three times")
    for text in ("a", "b", "c"):
        with logged.step(f"type {{text}}", expect=text):
            device.type(text, id="username")


def test_long_plan_short_run(device, logged):
    logged.goal("declared long, ran short", plan={_plan(14)})
    with logged.step("type", expect="x"):
        device.type("x", id="username")
"""


def test_auto_tier_learns_the_step_count_from_the_cache(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makeconftest(TIER_LOG)
    pytester.makepyfile(CACHED)
    args = ("-W", "ignore::pytest_guistate.GuistateWarning")
    inner(*args, cache=True).assert_outcomes(passed=2)
    first = read_tiers(pytester)
    assert (first["test_three_steps"]["tier"], first["test_three_steps"]["reason"]) == ("standard", "default")
    assert first["test_three_steps"]["steps"] == 3
    assert (first["test_long_plan_short_run"]["tier"], first["test_long_plan_short_run"]["reason"]) == (
        "full", "plan length 14")

    inner(*args, cache=True).assert_outcomes(passed=2)
    second = read_tiers(pytester)
    assert (second["test_three_steps"]["tier"], second["test_three_steps"]["reason"]) == (
        "light", "last run took 3 steps")
    # measured beats declared: the plan of 14 no longer decides
    assert (second["test_long_plan_short_run"]["tier"], second["test_long_plan_short_run"]["reason"]) == (
        "light", "last run took 1 steps")



def test_an_invalid_marker_tier_is_a_usage_error_naming_the_test(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest


        @pytest.mark.guistate(tier="heavy")
        def test_typo(device, guistate):
            pass


        @pytest.mark.guistate(tier="heavy")
        def test_typo_without_fixture():
            pass
        """
    )
    result = inner()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, (
        "a typo in a marker must stop the run before any test starts, not error one test and pass another")
    result.stderr.fnmatch_lines(["*test_typo*tier='heavy'*is not one of off, light, standard, full, auto*"])


README_EXAMPLE = """
import pytest
from pytest_guistate import gone


@pytest.mark.guistate(app="com.guistate.feed", faults={"refresh_delay": 4.0}, settle_timeout=1.0)
def test_delete_a_post(device, guistate):
    guistate.goal("Delete Carol's post", plan=["confirm dialog open", ("post gone", gone("Carol"))])
    with guistate.step("open the delete dialog", expect="Delete post by Carol?"):
        device.tap(desc="Delete post by Carol")
    guistate.milestone("confirm dialog open")
    with guistate.step("confirm", expect=gone("Carol"), idempotent=False) as s:
        device.tap(id="android:id/button1")
    guistate.milestone("post gone")
    guistate.assert_complete()
    assert guistate.tier.value == "light", guistate.tier_reason
    assert s.outcome == "refreshed", [a.stage for a in s.record.attempts]
    assert device.exists(text="Dave")  # the next post was not deleted by a repeated confirm
"""


def test_the_readme_example_passes_at_light_when_the_redraw_outlasts_the_settle(
        inner: InnerRun, pytester: pytest.Pytester) -> None:
    """Issue 15: the late redraw (4 s) outlasts the settle timeout (1 s); an unmet expect refreshes at light."""
    pytester.makepyfile(test_readme=README_EXAMPLE)
    inner("-q").assert_outcomes(passed=1)
