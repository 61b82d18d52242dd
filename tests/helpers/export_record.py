"""An exported test checked step by step against the run's record (issue 45): each scripted step's locator is
the most stable one that named its target alone when recorded (an XPath only when none did), its
`idempotent` is the run's, its expectation the run's verified effect, its milestone the run's.

Shared by the sim's exports (`tests/cache/test_export.py`) and a browser session's on real Appium
(`tests/appium/test_export_web_real.py`)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from pytest_guistate.llm.cache.cachefile import load_cache
from pytest_guistate.llm.cache.identity import identity, identity_words
from pytest_guistate.llm.export import ExportedTest

__all__ = ["check_against_record"]


def check_against_record(actions: Path, built: ExportedTest) -> None:
    """Assert that `built` (the export of `actions`) does, step by step, what the run's record says."""
    steps = [s for run in load_cache(actions).runs for s in run.steps]
    assert len(built.steps) == len(steps)
    for step, out in zip(steps, built.steps):
        target = step.target or {}
        if step.tool in ("tap", "type_text"):
            unique = target.get("unique")
            assert isinstance(unique, list), f"step {step.n}: the record says no locator named its target alone"
            assert out.locator is not None
            named = [
                c
                for c in target["locators"]
                if next(iter(c)) in unique and (next(iter(c)) == "id" or identity_words(str(next(iter(c.values())))))
            ]
            if out.locator.kind == "xpath":
                assert not named, f"step {step.n}: an XPath where {named[0]} named the target alone"
                assert "re-record" not in out.locator.note
            else:
                assert out.locator.kind in unique and {out.locator.kind: out.locator.value} in target["locators"]
                assert named[0] == {out.locator.kind: out.locator.value}  # id, then label, then text
                assert "unique=True" in out.locator.args()
        assert out.idempotent is step.idempotent
        recorded_expect = step.effect.get("expect")
        if isinstance(step.effect.get("checked"), bool) and not (recorded_expect or {}):  # a switch: its state
            on = "" if step.effect["checked"] else ", on=False"
            assert out.expect == [f"switched({json.dumps(identity(step.fingerprint).label)}{on})"]
            assert out.before  # and the state it was found in, before the tap
        elif isinstance(recorded_expect, dict) and recorded_expect:
            ((kind, value),) = ((k, v) for k, v in recorded_expect.items() if v)
            assert out.expect[0] == f"{kind}({json.dumps(value)})"
        elif out.expect:  # what appeared / was gone: on the recorded next screen / screen
            label = ast.literal_eval(out.expect[0].split("(", 1)[1].rsplit(", exact=True)", 1)[0])
            after = (step.effect.get("next_screen") or {}).get("labels") or []
            assert (label in after) if out.expect[0].startswith("visible") else (label not in after)
        if step.milestone:
            assert f"    guistate.milestone({json.dumps(step.milestone)})" in out.after
