"""Heals proposed as patches (issue 45): a scripted test whose locator the memory healed (and whose expected
effect showed) gets the edit as a unified diff from `guistate heal-diff`; applied, the test passes with no heal.
That holds for a tap and for typing into a field. A locator built at run time (a variable) is named as one that
cannot be patched in place."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pytest_guistate.memory.heal_proposal import PROPOSALS_FILE, heal_diff_main

TEST = """
import pytest
from pytest_guistate import visible

PRODUCT = "//*[@text='Phone Case' and not(contains(@class, 'EditText'))]"
ADD = "add_to_cart"

@pytest.mark.guistate(app="com.guistate.shopa", caps={{"guistate:appVersion": {version}}})
def test_add_phone_case_to_cart(device, guistate):
    guistate.perform("search", lambda: device.type("Phone Case\\n", {search}), expect="$",
                     idempotent=False)
    guistate.perform("open the product", lambda: device.tap(xpath=PRODUCT), expect="Add to cart")
    with guistate.step("add to cart", expect=visible({expect!r}), idempotent=False):
        device.tap({locator}, function="add to cart")
    added = [e for e in device.action_log() if e["action"] == "add_to_cart"]
    assert [e["product"] for e in added] == ["Phone Case"]
"""


SEARCH = 'xpath="//android.widget.EditText"'


def run(
    pytester: pytest.Pytester,
    version: int,
    expect: str,
    memory: Path,
    locator: str = 'id="add_to_cart"',
    *extra: str,
    search: str = SEARCH,
) -> pytest.RunResult:
    if not (pytester.path / "test_shop.py").exists() or version == 1 or extra[:1] == ("--write",):
        pytester.makepyfile(test_shop=TEST.format(expect=expect, version=version, locator=locator, search=search))
    return pytester.runpytest_inprocess(
        "-p",
        "no:cacheprovider",
        "--guistate=standard",
        f"--guistate-memory={memory}",
        "--guistate-summary=summary.json",
        "-o",
        "guistate_locator_timeout=0",
        *(e for e in extra if e != "--write"),
    )


def heal_diff(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return heal_diff_main(list(args), out), out.getvalue()


def test_a_healed_id_is_proposed_as_a_diff_that_applied_passes_with_no_heal(pytester: pytest.Pytester) -> None:
    memory = pytester.path / "memory.sqlite"
    run(pytester, 1, "Cart, 1 items", memory).assert_outcomes(passed=1)  # learns the button's look
    healed = run(pytester, 2, "Shopping bag (1)", memory, 'id="add_to_cart"', "--write", "--guistate-retain=on")
    healed.assert_outcomes(passed=1)
    healed.stdout.fnmatch_lines(
        [
            "*locator id=add_to_cart healed by memory*",
            "1 heal(s) proposed as patches: guistate heal-diff guistate-artifacts*",
        ]
    )
    heals = json.loads((pytester.path / "summary.json").read_text())["tests"][0]["heals"]
    proposal = heals[0]["proposal"]
    assert proposal["patchable"] and proposal["old"] == 'id="add_to_cart"' and proposal["new"].startswith("id=")
    assert proposal["file"] == str((pytester.path / "test_shop.py").resolve())

    journal = next(pytester.path.glob("guistate-artifacts/*/journal.jsonl")).read_text()
    assert '"heal":"propose test_shop.py:' in journal and "guistate heal-diff --apply" in journal  # on the step
    report = next(pytester.path.glob("guistate-artifacts/*/report.html")).read_text()
    assert proposal["new"].replace('"', "&#34;") in report or proposal["new"].replace('"', "&quot;") in report
    folder = str(pytester.path / "guistate-artifacts")
    code, diff = heal_diff(folder)
    assert code == 0
    assert '-        device.tap(id="add_to_cart", function="add to cart")' in diff
    assert f'+        device.tap({proposal["new"]}, function="add to cart")' in diff
    assert 'id="add_to_cart"' in (pytester.path / "test_shop.py").read_text()  # nothing changed without --apply
    assert heal_diff(folder, folder)[1] == diff  # the same proposal twice (workers, shards) is one edit

    assert heal_diff(folder, "--apply")[0] == 0
    assert proposal["new"] in (pytester.path / "test_shop.py").read_text()
    again = run(pytester, 2, "Shopping bag (1)", pytester.path / "empty.sqlite")  # no memory: nothing to heal with
    again.assert_outcomes(passed=1)
    assert not json.loads((pytester.path / "summary.json").read_text())["tests"][0].get("heals")


def test_a_locator_built_at_run_time_is_named_as_not_patchable(pytester: pytest.Pytester) -> None:
    memory = pytester.path / "memory.sqlite"
    run(pytester, 1, "Cart, 1 items", memory, "id=ADD").assert_outcomes(passed=1)
    run(pytester, 2, "Shopping bag (1)", memory, "id=ADD", "--write").assert_outcomes(passed=1)
    lines = (pytester.path / "guistate-artifacts" / PROPOSALS_FILE).read_text().splitlines()
    proposal = json.loads(lines[0])
    assert not proposal["patchable"] and "the variable 'ADD'" in proposal["why"]
    code, out = heal_diff(str(pytester.path / "guistate-artifacts"), "--apply")
    assert code == 0 and "cannot be patched in place" in out and "---" not in out
    assert "id=ADD" in (pytester.path / "test_shop.py").read_text()


def test_a_healed_field_of_a_typing_call_is_proposed_and_applied_passes_with_no_heal(pytester: pytest.Pytester) -> None:
    """`device.type(..., id="search")`: version 2 renames the field `query_input` and rewrites its placeholder;
    the memory heals it (the screen's only text field, in its place and frame), the search shows its results,
    and the proposal names the typing call's line. Before, `type` neither learnt nor healed: the run failed."""
    memory = pytester.path / "memory.sqlite"
    plain = 'text="Add to cart"'  # a locator version 2 keeps: only the search field's is healed
    run(pytester, 1, "Cart, 1 items", memory, plain, search='id="search"').assert_outcomes(passed=1)
    healed = run(pytester, 2, "Shopping bag (1)", memory, plain, "--write", search='id="search"')
    healed.assert_outcomes(passed=1)
    heals = json.loads((pytester.path / "summary.json").read_text())["tests"][0]["heals"]
    assert [h["status"] for h in heals] == ["healed"]
    proposal = heals[0]["proposal"]
    assert proposal["patchable"] and (proposal["old"], proposal["new"]) == ('id="search"', 'id="query_input"')
    assert "device.type(" in proposal["call"]
    code, diff = heal_diff(str(pytester.path / "guistate-artifacts"), "--apply")
    assert (
        code == 0 and '+    guistate.perform("search", lambda: device.type("Phone Case\\n", id="query_input")' in diff
    )
    again = run(pytester, 2, "Shopping bag (1)", pytester.path / "empty.sqlite", plain)
    again.assert_outcomes(passed=1)
    assert not json.loads((pytester.path / "summary.json").read_text())["tests"][0].get("heals")
