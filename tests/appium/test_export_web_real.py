"""`guistate export-test` of a browser session (issue 45) on real Appium 3 + headless Chromium.

The reference server (the stand-in model) drives an LLM run on the Framework7 notes app of `.ci/webapps`: sign in
with a registered secret, then delete Bob's note. Its action cache records the session's kind and browser and the
page the run started and ended on. Exported with no test file to read (the cache alone, in a folder of its own),
the scripted test opens that page, acts on the locators that named each target alone (`unique=True`), or on an
XPath over the page's DOM where none did (the dialog's Delete: every row has one), expects what the run verified,
and passes on its own with no cassette, cache or model reachable, deleting Bob's note and nothing else.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from pytest_guistate.llm.cache.cachefile import load_cache
from pytest_guistate.llm.export import build_export, export_test
from pytest_guistate.llm.reference.server import ReferenceServer
from tests.cache.conftest import CONFTEST
from tests.helpers.export_record import check_against_record

pytestmark = pytest.mark.appium

PASSWORD = "hunter2-Secret"
GOAL = f"Sign in with qa@example.com and password {PASSWORD}, then delete the note by Bob"

INNER = """
def test_notes_web(device, guistate):
    device.open_url({page!r})
    guistate.secret({password!r})
    result = guistate.run({goal!r}, max_steps=12)
    assert result.success, result.summary
"""


def _log(pytester: pytest.Pytester) -> list[dict[str, Any]]:
    path = pytester.path / "logs" / "test_notes_web.json"
    entries = json.loads(path.read_text()) if path.exists() else []
    path.unlink(missing_ok=True)
    return entries


def test_a_browser_run_exports_to_a_test_that_opens_its_page_and_passes_alone(
    webapps: str,
    pytester: pytest.Pytester,
    inner_device: Callable[[int], tuple[str, ...]],
    guistate_capabilities: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    device_options = inner_device(150)
    page = f"{webapps}framework7.html?redraw=700&hydrate=0"
    pytester.makeconftest(CONFTEST)  # the page's own record (window.__guistateActionLog), whatever the outcome
    pytester.makepyfile(test_web=INNER.format(page=page, password=PASSWORD, goal=GOAL))
    common = ("-p", "no:cacheprovider", "--guistate-memory=off", "-o", "guistate_llm_updater=off", *device_options)
    with ReferenceServer() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-export-web-0000")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        recorded = pytester.runpytest_subprocess(*common, "--guistate-llm=anthropic", "test_web.py")
    recorded.assert_outcomes(passed=1)
    log = _log(pytester)
    assert [e["user"] for e in log if e["action"] == "sign_in"] == ["qa@example.com"]
    assert [e["author"] for e in log if e["action"] == "delete_note"] == ["Bob"]

    actions = pytester.path / "cassettes" / "test_web" / "test_notes_web.actions.json"
    cache = load_cache(actions)
    # the record carries what the export needs: a browser session, which browser, the page the run was on
    assert cache.recorded["session"] == "browser"
    assert cache.recorded["browserName"] == guistate_capabilities["browserName"]
    assert [run.page for run in cache.runs] == [{"start": page, "end": page}]

    alone = pytester.path / "alone" / actions.name  # no test file beside it: the export has the cache alone
    alone.parent.mkdir()
    shutil.copy(actions, alone)
    exported = pytester.path / "exported" / "test_notes_web_scripted.py"
    path, text = export_test(alone, exported, width=120)
    built = build_export(alone, width=120)
    check_against_record(alone, built)  # each step's locator, idempotent and expectation against the record
    assert "@pytest.mark.guistate\n" in text and "app=" not in text  # a browser has no app to launch
    assert 'assert device.browser, "recorded in a browser session' in text
    assert f"    device.open_url({json.dumps(page)})\n    guistate.goal(" in text  # the page, before the steps
    steps = [s for s in built.steps if s.locator is not None]
    located = [(s.locator.kind, s.locator.value) for s in steps if s.locator.kind != "xpath"]
    # the run's targets by their own stable names: the fields and the button by id, Bob's row's Delete by its label
    assert located == [("id", "email"), ("id", "password"), ("id", "sign-in"), ("desc", "Delete note by Bob")]
    assert text.count(", unique=True)") == 4  # each plain locator must still name one element
    [dialog] = [s for s in steps if s.locator.kind == "xpath"]  # "Delete" names every row's button too
    assert "@text" not in dialog.locator.path and "normalize-space(.)='Delete'" in dialog.locator.path
    assert "Delete note by Bob?" in dialog.locator.path  # pinned to the dialog that asks about Bob's note
    assert dialog.expect == ['gone("Delete note by Bob?")'] and not dialog.idempotent
    assert PASSWORD not in text and 'os.environ["GUISTATE_SECRET_1"]' in text
    formatted = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "--line-length", "120", "--no-cache", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr

    # alone: no cassette, no action cache, no test file, and no model reachable (the reference server is stopped)
    shutil.rmtree(pytester.path / "cassettes")
    (pytester.path / "test_web.py").unlink()
    monkeypatch.setenv("GUISTATE_SECRET_1", PASSWORD)
    result = pytester.runpytest_subprocess(*common, "--guistate-llm=off", str(path))
    result.assert_outcomes(passed=1)
    log = _log(pytester)
    assert [e["user"] for e in log if e["action"] == "sign_in"] == ["qa@example.com"]
    assert [e["author"] for e in log if e["action"] == "delete_note"] == ["Bob"]  # Bob's note, once, nothing else
    assert not (pytester.path / "cassettes").exists()  # and it recorded nothing to replay
