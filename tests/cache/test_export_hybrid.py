"""`guistate export-test` of an LLM run in a hybrid app (issue 45): the web view contexts switch as the run did.

The sim's Hybrid app (a native toolbar around a web view whose page runs in a real headless Chromium) is
driven by the reference server: tap Help on the native toolbar, then sign in inside the page. The recorded
cache says, per target, the context its locator is found in; the exported file switches to `NATIVE_APP`
for the toolbar's button and to the web view for the page's fields, and passes alone with no model, no
cassette and no cache, on both personas (iOS with `-m slow`: each persona costs a recording, ~16 s). Needs Chromium and chromedriver (failing, never skipping, without).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_guistate.llm.cache.cachefile import load_cache
from pytest_guistate.llm.export import export_test
from pytest_guistate.llm.reference.server import ReferenceServer
from tests.cache.conftest import CONFTEST
from tests.cache.test_export import ruff_format_check
from tests.helpers.chromium import require_chromium
from tests.helpers.inner_run import run_inprocess

SUITE = """
import pytest



@pytest.mark.guistate(app="com.guistate.hybrid")
def test_help_then_sign_in(device, guistate):
    device.switch_context(next(c for c in device.contexts if c.startswith("WEBVIEW_")))
    guistate.run("tap Help in the toolbar, then sign in with qa@example.com and password correct-horse",
                 max_steps=12)
"""
TEST = "test_help_then_sign_in"


def _effects(root: Path) -> list[str]:
    log = json.loads((root / "logs" / f"{TEST}.json").read_text())
    return [e["action"] for e in log if e["action"] not in ("tap", "swipe")]


@pytest.mark.parametrize("platform", ["android", pytest.param("ios", marks=pytest.mark.slow)])
def test_a_hybrid_run_exports_its_context_switches_and_passes_alone(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, platform: str
) -> None:
    require_chromium()
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_hybrid=SUITE)
    pytester.makeini("[pytest]\nguistate_llm_updater = off\n")
    persona = f"--guistate-platform={platform}"
    with ReferenceServer() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-export-0000")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        recorded = run_inprocess(
            pytester, "-p", "no:cacheprovider", "--guistate-memory=off", "--guistate-llm=anthropic", persona
        )
        recorded.assert_outcomes(passed=1)
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert _effects(pytester.path) == ["open_app", "help", "login"]
    actions = (
        pytester.path / "cassettes" / "test_hybrid" / ("ios" if platform == "ios" else "") / f"{TEST}.actions.json"
    )
    steps = [s for run in load_cache(actions).runs for s in run.steps]
    where = [(s.summary().split(" (in ")[0], (s.target or {}).get("context")) for s in steps if s.target]
    # the toolbar's Help is native, the page's fields and button are the web view's
    assert where[0][0] == "tap 'Help'" and where[0][1] == "NATIVE_APP", where
    assert where[1:] and all(str(c).startswith("WEBVIEW_") for _, c in where[1:]), where

    path, text = export_test(actions, pytester.path / "exported" / f"{TEST}_scripted.py", width=120)
    assert ruff_format_check(path, 120).returncode == 0, ruff_format_check(path, 120).stdout
    body = text.split(f"def {TEST}(")[1]
    native = body.index('device.switch_context("NATIVE_APP")')
    web = body.index("device.switch_context(", native + 1)
    assert native < body.index("device.tap(") < web < body.index("device.type(")  # each switch before its step
    assert body.count("device.switch_context(") == 3  # the test's own, then the run's two
    assert "correct-horse" not in text  # the typed password is read at run time

    shutil.rmtree(pytester.path / "cassettes")  # no cache, no cassette, no model
    shutil.rmtree(pytester.path / "logs")
    monkeypatch.setenv("GUISTATE_SECRET_1", "correct-horse")
    result = run_inprocess(
        pytester, "-p", "no:cacheprovider", "--guistate-memory=off", "--guistate-llm=off", persona, str(path)
    )
    result.assert_outcomes(passed=1)
    assert _effects(pytester.path) == ["open_app", "help", "login"]
