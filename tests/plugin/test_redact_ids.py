"""A secret in a parametrize id reaches no folder, file or report name (nor any content).

`@pytest.mark.parametrize("card", [...])` puts the card number into the test id, and the id
becomes the artifacts folder's name, the journal's and summary's `nodeid`, the JUnit testcase
name, the `-r` summary line, the failure headline and the Allure result's name. Every file name
and file under the inner run's outputs, and its terminal output, are searched for the numbers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_guistate.report.artifacts import slug_nodeid
from pytest_guistate.report.redact import id_placeholder

InnerRun = Callable[..., pytest.RunResult]

VISA, MASTER = "4111111111111111", "5500000000000004"

HOOK = r"""
from pytest_guistate import Redaction


def pytest_guistate_redact(observation, item):
    return Redaction(patterns=[r"\b(?:4111|5500)\d{12}\b"]) if observation is None else None
"""

TEST = f"""
import pytest

CARDS = ["{VISA}", "{MASTER}"]  # not on the failure's source lines: one test's secret is not the other's


@pytest.mark.guistate(app="com.guistate.settings")
@pytest.mark.parametrize("card", CARDS)
def test_pay(device, guistate, card):
    SECRET
    guistate.goal("Pay", plan=["card entered"])
    guistate.perform("type a name", lambda: device.type("qa", id="username"), idempotent=False)
    guistate.milestone("card entered")
    assert card.startswith("4"), "only visa is accepted"
"""

OUTPUTS = ("--guistate=standard", "--guistate-retain=on", "--guistate-artifacts=art",
           "--guistate-summary=art/summary.json", "--alluredir=allure", "--junitxml=junit.xml", "-rA")


def _leaks(root: Path, *secrets: str) -> list[str]:
    """Every file under `root` whose path or bytes hold a secret (the inner test file excepted)."""
    found = []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if relative == "test_pay.py":
            continue
        if any(s in relative for s in secrets) or (path.is_file() and any(s.encode() in path.read_bytes()
                                                                              for s in secrets)):
            found.append(relative)
    return found


def _summary_ids(root: Path) -> list[str]:
    summary = json.loads((root / "art" / "summary.json").read_text(encoding="utf-8"))
    return sorted(t["nodeid"] for t in summary["tests"])


def test_a_hook_pattern_keeps_the_card_out_of_every_name(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makeconftest(HOOK)
    pytester.makepyfile(test_pay=TEST.replace("SECRET", "pass"))
    result = inner(*OUTPUTS, cache=True)  # the cache too: the auto tier's step counts are keyed by test
    result.assert_outcomes(passed=1, failed=1)
    root = pytester.path
    output = "\n".join(result.outlines + result.errlines)
    visa, master = id_placeholder(VISA), id_placeholder(MASTER)
    assert VISA not in output and MASTER not in output, "a card number reached the terminal"
    # pytest's own cache of every collected id (`--nf`) is the one file no plugin writes: see docs/reports.md
    assert _leaks(root, VISA, MASTER) == [".pytest_cache/v/cache/nodeids"]

    # not vacuous: each place names the test, distinctly per card and the same in every run
    assert f"FAILED test_pay.py::test_pay[{master}]" in output and f"PASSED test_pay.py::test_pay[{visa}]" in output
    assert f"test_pay[{master}] _" in output  # the failure's headline
    folders = sorted(p.name for p in (root / "art").iterdir() if p.is_dir())
    assert folders == sorted(slug_nodeid(f"test_pay.py::test_pay[{c}]") for c in (visa, master))
    assert _summary_ids(root) == sorted([f"test_pay.py::test_pay[{visa}]", f"test_pay.py::test_pay[{master}]"])
    junit = (root / "junit.xml").read_text(encoding="utf-8")
    assert junit.count("<testcase ") == 2 and f'name="test_pay[{master}]"' in junit
    names = [json.loads(p.read_text(encoding="utf-8"))["name"] for p in (root / "allure").glob("*-result.json")]
    assert sorted(names) == sorted([f"test_pay[{visa}]", f"test_pay[{master}]"])
    steps = [p.name for p in (root / ".pytest_cache" / "v" / "guistate" / "steps").iterdir()]
    assert len(steps) == 2 and all("redacted-" in name for name in steps)

    again = inner(*OUTPUTS)  # the same names on a rerun: the gate's baseline matches tests on them
    again.assert_outcomes(passed=1, failed=1)
    assert sorted(p.name for p in (root / "art").iterdir() if p.is_dir() and "attempt" not in p.name) == folders


def test_a_secret_registered_in_the_test_renames_the_folder_at_the_finish(
    inner: InnerRun, pytester: pytest.Pytester
) -> None:
    """`guistate.secret(card)` runs after the folder was made and pytest named the test: the folder,
    journal, summary and Allure result are renamed at the finish; pytest's own names are not."""
    pytester.makepyfile(test_pay=TEST.replace("SECRET", "guistate.secret(card)"))
    result = inner(*OUTPUTS)
    result.assert_outcomes(passed=1, failed=1)
    root = pytester.path
    visa, master = id_placeholder(VISA), id_placeholder(MASTER)
    folders = sorted(p.name for p in (root / "art").iterdir() if p.is_dir())
    assert folders == sorted(slug_nodeid(f"test_pay.py::test_pay[{c}]") for c in (visa, master))
    for folder in folders:
        journal = (root / "art" / folder / "journal.jsonl").read_text(encoding="utf-8").splitlines()
        meta = json.loads(journal[0])
        assert meta["folder"] == folder and meta["nodeid"].startswith("test_pay.py::test_pay[redacted-")
        assert (root / "art" / folder / "report.html").is_file()
    assert _summary_ids(root) == sorted([f"test_pay.py::test_pay[{visa}]", f"test_pay.py::test_pay[{master}]"])
    assert _leaks(root / "art", VISA, MASTER) == [] and _leaks(root / "allure", VISA, MASTER) == []
    # the documented limit: pytest reported the id (setup, JUnit testcase) before the body ran
    assert f'name="test_pay[{MASTER}]"' in (root / "junit.xml").read_text(encoding="utf-8")


def test_the_marker_of_a_run_in_progress_holds_no_parameter_of_an_id(pytester: pytest.Pytester) -> None:
    """At collection no test has registered its secret yet, and a killed run leaves the marker as it is:
    a parametrized id's parameters stand there as digests (the finished summary names rows as usual)."""
    pytester.makepyfile(test_pay=f'''
import pytest


@pytest.mark.parametrize("card", ["{VISA}"])
def test_pay(guistate, card):
    guistate.secret(card)
''', conftest='''
import os, signal

def pytest_runtest_teardown(item):
    os.kill(os.getpid(), signal.SIGKILL)
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--guistate-summary=run.json", timeout=120)
    assert result.ret == -9  # SIGKILL: only the marker is there
    document = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert document["complete"] is False
    assert document["collected"] == [f"test_pay.py::test_pay[{id_placeholder(VISA)}]"]
    assert VISA not in (pytester.path / "run.json").read_text(encoding="utf-8")
