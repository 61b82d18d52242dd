"""Issue 27: one gate over the summaries of several CI shards (real inner runs on the sim)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pytest_guistate.cli import main as guistate
from pytest_guistate.report.gate.cli import gate_main
from tests.gate.conftest import InnerRun
from tests.gate.test_lost_tests import FEED, KILLED

SHARD_TESTS = FEED + '''

@FEED
def test_one(device, guistate):
    open_dialog(device, guistate)


@FEED
def test_two(device, guistate):
    open_dialog(device, guistate)


@FEED
def test_three(device, guistate):
    open_dialog(device, guistate)
'''


def _gate(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return gate_main(list(args), out=out), out.getvalue()


@pytest.fixture
def three_shards(inner: InnerRun, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Three shards of one suite on the sim: shards 1 and 2 by -k, shard 3 (named by $GUISTATE_SHARD)
    with xdist and a worker SIGKILLed mid-test."""
    pytester.makepyfile(test_feed=SHARD_TESTS, test_killed=KILLED)
    inner("test_feed.py", "-k", "one or two", "--guistate-shard=1", "--guistate=light", "--guistate-summary=shard-1.json",
          "--guistate-artifacts=out1").assert_outcomes(passed=2)
    inner("test_feed.py", "-k", "three", "--guistate-shard", "2", "--guistate=light", "--guistate-summary=shard-2.json",
          "--guistate-artifacts=out2").assert_outcomes(passed=1)
    monkeypatch.setenv("GUISTATE_SHARD", "3")
    inner("test_killed.py", "-n", "2", "--guistate=light", "--guistate-summary=shard-3.json",
          "--guistate-artifacts=out3").assert_outcomes(passed=2, failed=1)
    return [pytester.path / f"shard-{n}.json" for n in (1, 2, 3)]


def test_a_sharded_run_blocks_on_a_missing_shard_and_a_crashed_worker_naming_both(
    three_shards: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One test for the 3-shard run (4 inner runs): missing shard, crashed worker, merged markdown."""
    one, two, three = (str(p) for p in three_shards)
    assert json.loads(Path(three).read_text(encoding="utf-8"))["shard"] == "3"  # from $GUISTATE_SHARD

    code, text = _gate(one, two, "--expect-shards", "1", "2", "3")  # shard 3's summary never uploaded
    assert code == 1 and "BLOCK: missing shard(s) 3" in text
    code, text = _gate(one, two, "--expect-shards", "3", "--format", "json")
    assert code == 1 and "expected 3 shard summaries, got 2 (1, 2)" in json.loads(text)["problems"][0]

    code, text = _gate(one, two, three, "--expect-shards", "1", "2", "3", "--format", "github")
    assert code == 1
    annotations = [line for line in text.splitlines() if line.startswith("::")]
    assert annotations == [
        "::error file=test_killed.py,title=guistate gate [shard 3]%3A test_killed.py%3A%3Atest_killed::crashed: "
        "worker 'gw0' crashed while running 'test_killed.py::test_killed' (shard 3)".replace("gw0", _worker(three)),
    ]
    code, text = _gate(one, two, three, "--expect-shards", "1", "2", "3")
    assert code == 1 and text.splitlines()[-1] == "1 of 5 test(s) block the merge"  # the plain test has no row
    _the_merged_summary_lists_every_test_once_and_keeps_its_problems(three_shards, tmp_path, capsys)


def _worker(summary: str) -> str:
    rows = json.loads(Path(summary).read_text(encoding="utf-8"))["tests"]
    reason = next(t["reason"] for t in rows if t["outcome"] == "crashed")
    return reason.split("'")[1]


def _the_merged_summary_lists_every_test_once_and_keeps_its_problems(
    three_shards: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two, three = (str(p) for p in three_shards)
    merged = tmp_path / "run.json"
    assert guistate(["summary", "merge", one, two, three, "-o", str(merged), "--expect-shards", "3"]) == 0
    assert "merged 3 summaries (1, 2, 3)" in capsys.readouterr().out
    document = json.loads(merged.read_text(encoding="utf-8"))
    assert [s["name"] for s in document["shards"]] == ["1", "2", "3"] and document["problems"] == []
    assert len(document["collected"]) == 6
    code, markdown = _gate(str(merged), "--format", "markdown")
    assert code == 1 and "| test | shard | outcome |" in markdown
    assert document["finished"]["test_killed.py::test_plain"] == "passed"  # no guistate row, but accounted for
    for nodeid in set(document["collected"]) - {"test_killed.py::test_plain"}:
        cell = nodeid.replace("_", "\\_")
        assert markdown.count(f"| {cell} |") == 1, nodeid
    assert "| test\\_killed.py::test\\_killed | 3 | crashed |" in markdown

    # shard 2 uploaded twice by a re-run: both files carry the name 2 -> blocked, named
    twice = tmp_path / "shard-2-again.json"
    twice.write_text(Path(two).read_text(encoding="utf-8"), encoding="utf-8")
    code, text = _gate(one, two, str(twice), three)
    assert code == 1 and "shard 2 has 2 summaries" in text


def _summary(path: Path, shard: str, outcome: str) -> str:
    row = {"nodeid": "t.py::a", "outcome": outcome, "tier": "light"}
    path.write_text(json.dumps({"schema": "guistate.summary/2", "shard": shard, "collected": ["t.py::a"],
                                "tests": [row]}), encoding="utf-8")
    return str(path)


def test_one_test_reported_by_two_shards_with_different_outcomes_blocks(tmp_path: Path) -> None:
    a, b = _summary(tmp_path / "a.json", "a", "passed"), _summary(tmp_path / "b.json", "b", "failed")
    code, text = _gate(a, b, "--allow-failed", "--format", "json")
    [row] = json.loads(text)["tests"]
    assert code == 1 and row["reasons"] == ["reported twice with different outcomes: passed in shard a, failed in shard b"]
    same = _summary(tmp_path / "c.json", "c", "passed")
    code, text = _gate(a, same)
    assert code == 0 and text.count("t.py::a") == 1  # the same outcome twice is listed once
