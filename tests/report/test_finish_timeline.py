"""A passing test whose folder is discarded builds no report model and no timeline unless an Allure
adapter takes the picture (`finalize(timeline=...)`, issue 38: end-of-test work on every passing test)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_guistate.report import finish
from pytest_guistate.report.finish import FinishedTest, finalize
from tests.helpers.inner_run import run_inprocess
from tests.helpers.scenario import start


def _passing(root: Path, monkeypatch: pytest.MonkeyPatch, **kwargs: object) -> tuple[FinishedTest, list[int]]:
    run = start(root, tier="standard")
    phone = run.phone
    run.session.goal("open the email field", plan=[])
    run.session.perform("tap the email field", lambda: phone.tap(*phone.find_key("settings/username").bounds.center))
    run.session.finish("passed", None)
    built: list[int] = []
    real = finish.report_model

    def counted(journal: object, **kw: object) -> dict[str, object]:
        built.append(1)
        return real(journal, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(finish, "report_model", counted)
    return finalize(run.recorder, outcome="passed", root=root, **kwargs), built  # type: ignore[arg-type]


def test_a_discarded_passing_test_builds_no_timeline_without_allure(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    done, built = _passing(tmp_path / "artifacts", monkeypatch, retain="failure", timeline=False)
    assert done.folder is None and done.report is None
    assert done.timeline_svg == "" and built == []
    assert done.summary.outcome == "passed" and done.summary.steps == 1  # the summary is whole


def test_the_timeline_is_built_when_allure_takes_it_or_the_folder_is_kept(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    taken, built = _passing(tmp_path / "a", monkeypatch, retain="failure")  # timeline=True: an adapter's case
    assert taken.folder is None and "<svg" in taken.timeline_svg and built == [1]
    kept, built = _passing(tmp_path / "b", monkeypatch, retain="on", timeline=False)
    assert kept.report is not None and kept.report.is_file() and "<svg" in kept.timeline_svg and built == [1]


PASSING = """
import pytest


@pytest.mark.guistate(app="com.guistate.feed")
def test_open_dialog(device, guistate):
    with guistate.step("open the delete dialog", expect="Delete post by Carol?"):
        device.tap(desc="Delete post by Carol")
"""


def test_allure_still_gets_the_timeline_of_a_passing_test_whose_folder_is_discarded(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_feed=PASSING)
    result = run_inprocess(pytester, "-p", "no:cacheprovider", "--guistate=full", "--guistate-artifacts=art",
                           "--alluredir=allure")  # retain: failure (the default), so the folder goes
    result.assert_outcomes(passed=1)
    assert not any((pytester.path / "art").glob("**/journal.jsonl"))
    [test] = [json.loads(p.read_text(encoding="utf-8")) for p in (pytester.path / "allure").glob("*-result.json")]
    [timeline] = [a for a in test.get("attachments", []) if a["name"] == "guistate timeline"]
    assert "<svg" in (pytester.path / "allure" / timeline["source"]).read_text(encoding="utf-8")
