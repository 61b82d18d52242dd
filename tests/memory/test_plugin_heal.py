"""Self-healing locators through the plugin: learn on app v1, heal on v2 with the v1 locator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

TEST = """
import pytest
from pytest_guistate import visible

VERSION = {version}
PRODUCT = "//*[@text='Phone Case' and not(contains(@class, 'EditText'))]"

@pytest.mark.guistate(app="com.guistate.shopa", caps={{"guistate:appVersion": VERSION}})
def test_add_phone_case_to_cart(device, guistate):
    guistate.perform("search", lambda: device.type("Phone Case\\n", xpath="//android.widget.EditText"), expect="$", idempotent=False)
    guistate.perform("open the product", lambda: device.tap(xpath=PRODUCT),
                     expect="Add to cart")
    guistate.perform("add to cart", lambda: device.tap(id="add_to_cart", function="add to cart"),
                     expect=visible({expect!r}), idempotent=False)
    added = [e for e in device.action_log() if e["action"] == "add_to_cart"]
    assert [e["product"] for e in added] == ["Phone Case"]
"""


def run(pytester: pytest.Pytester, version: int, expect: str, memory: Path, *extra: str) -> pytest.RunResult:
    pytester.makepyfile(test_shop=TEST.format(expect=expect, version=version))
    return pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--guistate=standard", f"--guistate-memory={memory}",
        "--guistate-summary=summary.json", "-o", "guistate_locator_timeout=0", *extra,  # v2 misses the v1 id
    )


def test_a_v1_locator_is_healed_on_v2_and_reported(pytester: pytest.Pytester) -> None:
    memory = pytester.path / "memory.sqlite"
    run(pytester, 1, "Cart, 1 items", memory).assert_outcomes(passed=1)  # learns the button's look

    healed = run(pytester, 2, "Shopping bag (1)", memory, "--guistate-retain=on")
    healed.assert_outcomes(passed=1)
    healed.stdout.fnmatch_lines(["*locators healed by memory*", "*locator id=add_to_cart healed by memory*"])
    summary = json.loads((pytester.path / "summary.json").read_text())
    heals = summary["tests"][0]["heals"]
    assert [(h["locator"], h["status"]) for h in heals] == [("id=add_to_cart", "healed")]
    assert summary["totals"]["healed"] == 1
    anchors = json.loads(next(pytester.path.glob("guistate-artifacts/*/anchors.json")).read_text())
    heal_anchors = [a for a in anchors["anchors"] if (a.get("data") or {}).get("kind") == "heal"]
    assert heal_anchors and heal_anchors[0]["type"] == "EXCEPTION" and heal_anchors[0]["crops"]

    from pytest_guistate.report.gate.cli import gate_main

    assert gate_main([str(pytester.path / "summary.json"), "--max-heals", "0"]) == 1
    assert gate_main([str(pytester.path / "summary.json")]) == 0


def test_without_memory_the_v1_locator_fails_naming_the_memory(pytester: pytest.Pytester) -> None:
    result = run(pytester, 2, "Shopping bag (1)", pytester.path / "empty.sqlite")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*no element with id='add_to_cart'*memory:*"])


def test_a_heal_whose_effect_does_not_appear_fails_as_prevented(pytester: pytest.Pytester) -> None:
    memory = pytester.path / "memory.sqlite"
    run(pytester, 1, "Cart, 1 items", memory).assert_outcomes(passed=1)
    wrong = run(pytester, 2, "Cart, 1 items", memory)  # v2 never shows that text: the heal cannot be accepted
    wrong.assert_outcomes(failed=1)
    summary = json.loads((pytester.path / "summary.json").read_text())
    assert [h["status"] for h in summary["tests"][0]["heals"]] == ["false_heal_prevented"]
    wrong.stdout.fnmatch_lines(["*false heal prevented: id=add_to_cart*"])
