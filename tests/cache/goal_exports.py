"""The stand-in model's goal table (`tests/llm/goal_table.py`) as an inner suite: one test per goal that the
reference policy reaches, run through the plugin with the goal's persona, app, faults and app version, asserting
the phone's own action log (`effects`) and, for a scroll, a swipe. Recorded against the reference server, each
test leaves an `.actions.json`; `guistate export-test` turns it into a scripted test that must pass with no
model and do the same to the phone (its kept assertions are the goal table's ground truth).

Shared by `tests/cache/test_export.py` (a few goals of each persona) and `benchmarks/export_goal_table.py` (all)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_guistate.llm.export import export_test
from pytest_guistate.llm.reference.server import ReferenceServer
from tests.helpers.inner_run import run_inprocess
from tests.llm.goal_table import CASES, PASSWORD, GoalCase

__all__ = ["GoalExport", "export_goals", "goal_cases", "inner_suite"]


def goal_cases(platform: str, ids: tuple[str, ...] = ()) -> list[GoalCase]:
    """The goals the policy reaches on `platform` (a give-up leaves no cache to export), or those of `ids`."""
    return [c for c in CASES if c.platform == platform and c.success and (not ids or c.id in ids)]


def test_name(case: GoalCase) -> str:
    return "test_" + case.id.replace("-", "_")


def _test_source(case: GoalCase) -> str:
    caps: dict[str, object] = {"guistate:clock": "frozen"}
    if "appVersion" in case.sim:
        caps["guistate:appVersion"] = case.sim["appVersion"]
    faults = {k: v for k, v in case.sim.items() if k != "appVersion"}
    marker = (
        [f"caps={caps!r}"] + ([f"app={case.app!r}"] if case.app else []) + ([f"faults={faults!r}"] if faults else [])
    )
    secret = f"    guistate.secret({PASSWORD!r})\n" if PASSWORD in case.goal else ""
    swipes = '    assert entries(log, "swipe")\n' if case.swipes else ""
    return (
        f"\n\n@pytest.mark.guistate({', '.join(marker)})\n"
        f"def {test_name(case)}(device, guistate):\n"
        f"{secret}"
        f"    result = guistate.run({case.goal!r}, max_steps={case.max_steps})\n"
        f"    assert result.success, result.summary\n"
        f"    case = next(c for c in CASES if c.id == {case.id!r})\n"
        f"    log = device.action_log()\n"
        f"    assert effects(log) == case.expected(log)\n"
        f"{swipes}"
    )


def inner_suite(cases: list[GoalCase]) -> str:
    """The inner test file: one test per goal."""
    return "import pytest\n\nfrom tests.llm.goal_table import CASES, effects, entries\n" + "".join(
        _test_source(c) for c in cases
    )


@dataclass
class GoalExport:
    """One goal: recorded, exported, and the exported test's outcome with no model."""

    case: GoalCase
    recorded: str  # passed | failed (the live run through the plugin)
    exported: Path | None
    outcome: str  # passed | failed | not exported
    secret_written: bool = False


def export_goals(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, platform: str, cases: list[GoalCase]
) -> list[GoalExport]:
    """Record `cases` on `platform` against the reference server, export each cache, run the exports alone."""
    pytester.makepyfile(test_goals=inner_suite(cases))
    pytester.makeini("[pytest]\nguistate_llm_updater = off\n")
    common = (
        "-p",
        "no:cacheprovider",
        "--guistate-memory=off",
        f"--guistate-platform={platform}",
        "--guistate-summary=summary.json",
    )
    with ReferenceServer() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-export-goals-0000")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        run_inprocess(pytester, *common, "--guistate-llm=anthropic", "test_goals.py")
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    recorded = _outcomes(pytester)
    exported = pytester.path / "exported"
    exported.mkdir(exist_ok=True)
    results: list[GoalExport] = []
    folder = pytester.path / "cassettes" / "test_goals" / ("ios" if platform == "ios" else "")
    for case in cases:
        actions = folder / f"{test_name(case)}.actions.json"
        if recorded.get(test_name(case)) != "passed" or not actions.is_file():
            results.append(GoalExport(case, recorded.get(test_name(case), "not run"), None, "not exported"))
            continue
        path, text = export_test(actions, exported / f"{test_name(case)}_scripted.py", width=120)
        results.append(GoalExport(case, "passed", path, "", PASSWORD in text))
    for secret in ("GUISTATE_SECRET_1", "GUISTATE_TEST_SECRET_1"):
        monkeypatch.setenv(secret, PASSWORD)
    (pytester.path / "summary.json").unlink(missing_ok=True)
    paths = [str(r.exported) for r in results if r.exported is not None]
    if paths:
        run_inprocess(pytester, *common, "--guistate-llm=off", *paths)
        scripted = _outcomes(pytester)
        for result in results:
            if result.exported is not None:
                result.outcome = scripted.get(test_name(result.case), "not run")
    return results


def _outcomes(pytester: pytest.Pytester) -> dict[str, str]:
    path = pytester.path / "summary.json"
    if not path.is_file():
        return {}
    rows = json.loads(path.read_text(encoding="utf-8"))["tests"]
    return {row["nodeid"].rpartition("::")[2]: row["outcome"] for row in rows}
