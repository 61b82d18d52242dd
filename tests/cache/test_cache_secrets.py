"""Goals with secrets replay from the action cache (issue 32, item 4) without the cache storing them.

An inner suite signs in to the sim's Settings with a goal that carries the password (and, in one
test, the e-mail registered as a secret too). It is recorded live against the reference server,
then replayed strictly: 0 tokens, the phone's own action log shows the real password typed and
accepted (`login success=True`), and no file the runs wrote (the cache, every artifact, the summary)
holds a secret. A changed secret is a named miss before any action; the fallback hits at 0 tokens.

What really happened is read from the phone's action log, never from the plugin's own report."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_guistate.llm.reference.server import ReferenceServer
from tests.cache.conftest import CONFTEST, action_log, summary_rows
from tests.helpers.inner_run import run_inprocess

pytestmark = pytest.mark.slow

USER, PASSWORD = "qa@example.com", "correct-horse"
KEY = "a-project-key-for-these-tests-only"

INNER = '''
import os

import pytest


@pytest.mark.guistate(app="com.guistate.settings")
def test_password_only(device, guistate):
    password = os.environ["QA_PASSWORD"]  # registered only when typed into the password field
    result = guistate.run(f"Sign in with the e-mail qa@example.com and the password {password}", max_steps=8)
    assert result.success, result.summary


@pytest.mark.guistate(app="com.guistate.settings")
def test_user_and_password(device, guistate):
    user = guistate.secret(os.environ["QA_USER"])
    password = guistate.secret(os.environ["QA_PASSWORD"])
    result = guistate.run(f"Log in as {user} (password {password}), then turn on dark mode", max_steps=10)
    assert result.success, result.summary
'''
TESTS = ("test_password_only", "test_user_and_password")


@pytest.fixture
def signin(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., pytest.RunResult]]:
    """The inner suite; `run(*args)` runs it in-process with the artifacts under `art/`."""
    pytester.makepyfile(test_signin=INNER)
    pytester.makeconftest(CONFTEST)
    pytester.makeini("[pytest]\nguistate_llm_updater = off\n")
    monkeypatch.setenv("QA_USER", USER)
    monkeypatch.setenv("QA_PASSWORD", PASSWORD)
    monkeypatch.setenv("GUISTATE_CACHE_KEY", KEY)

    def run(*args: str) -> pytest.RunResult:
        return run_inprocess(pytester, "-p", "no:cacheprovider", "--guistate-memory=off",
                             "--guistate-summary=summary.json", "--guistate-artifacts=art", "--guistate-retain=on",
                             *args)

    yield run


def _cache(pytester: pytest.Pytester, test: str, platform: str = "android") -> Path:
    return pytester.path / "cassettes" / "test_signin" / ("ios" if platform == "ios" else "") / f"{test}.actions.json"


def _leaks(root: Path, secrets: tuple[str, ...]) -> list[str]:
    """Every file under `root` (binary ones included) that holds a secret, as `path: secret`."""
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        found += [f"{path.relative_to(root)}: {s}" for s in secrets if s.encode() in data]
    return found


def _effects(pytester: pytest.Pytester, test: str) -> list[tuple[str, ...]]:
    wanted = ("type", "login", "toggle")
    return [(e["action"], str(e.get("text", e.get("success", e.get("value"))))) for e in action_log(pytester, test)
            if e["action"] in wanted]


RECORDED = {"test_password_only": [("type", USER), ("type", "None"), ("login", "True")],
            "test_user_and_password": [("type", USER), ("type", "None"), ("login", "True"), ("toggle", "True")]}


@pytest.mark.parametrize("platform", ["android", "ios"])
def test_a_sign_in_goal_records_once_and_replays_strictly_at_0_tokens(
        signin, pytester: pytest.Pytester, reference_server: ReferenceServer, platform: str) -> None:
    persona = f"--guistate-platform={platform}"
    signin(persona, "--guistate-llm=anthropic").assert_outcomes(passed=2)
    for test in TESTS:
        assert _effects(pytester, test) == RECORDED[test]
    texts = {test: _cache(pytester, test, platform).read_text() for test in TESTS}
    cache = json.loads(texts["test_password_only"])
    [run] = cache["runs"]
    assert run["instruction"] == "Sign in with the e-mail qa@example.com and the password [secret 1]"
    assert set(run["secrets"]) == {"key_id", "slots"} and list(run["secrets"]["slots"]) == ["1"]
    typed = [s["args"]["text"] for s in run["steps"] if s["tool"] == "type_text"]
    assert typed == [USER, "[secret 1]"]
    both = json.loads(texts["test_user_and_password"])["runs"][0]
    assert both["instruction"] == "Log in as [secret 1] (password [secret 2]), then turn on dark mode"
    assert [s["args"]["text"] for s in both["steps"] if s["tool"] == "type_text"] == ["[secret 1]", "[secret 2]"]

    served = len(reference_server.requests)
    replayed = signin(persona, "--guistate-llm=cache")
    replayed.assert_outcomes(passed=2)
    assert len(reference_server.requests) == served  # the model was never asked
    rows = summary_rows(pytester)
    for test in TESTS:
        assert rows[test]["llm_tokens"] == 0 and rows[test]["llm_cache"]["misses"] == 0
        assert rows[test]["llm_cache"]["hit_rate"] == 1.0
        assert _effects(pytester, test) == RECORDED[test]  # the real password was typed: the sim accepted it
        assert _cache(pytester, test, platform).read_text() == texts[test]  # strict never rewrites

    signin(persona, "--guistate-llm=anthropic").assert_outcomes(passed=2)  # re-recording the same plan: the same file
    for test in TESTS:
        assert _cache(pytester, test, platform).read_text() == texts[test]
    # no file of the three runs holds the password: the caches, every artifact, the summary, the logs
    assert _leaks(pytester.path, (PASSWORD,)) == []
    assert (pytester.path / "art").is_dir() and _cache(pytester, TESTS[0], platform).is_file()
    caches = _cache(pytester, TESTS[0], platform).parent.glob("*.actions.json")
    assert [p.name for p in caches if USER in p.read_text()] == [f"{TESTS[0]}.actions.json"]  # a secret only in one


def test_the_fallback_mode_hits_a_sign_in_at_0_tokens(
        signin, pytester: pytest.Pytester, reference_server: ReferenceServer) -> None:
    signin("--guistate-llm=anthropic").assert_outcomes(passed=2)
    texts = {test: _cache(pytester, test).read_text() for test in TESTS}
    served = len(reference_server.requests)
    signin("--guistate-llm=cache-fallback").assert_outcomes(passed=2)
    assert len(reference_server.requests) == served
    rows = summary_rows(pytester)
    for test in TESTS:
        assert rows[test]["llm_tokens"] == 0 and rows[test]["llm_cache"]["live"] == 0
        assert not rows[test]["llm_cache"]["first_miss"] and not rows[test]["llm_cache"]["rewritten"]
        assert _effects(pytester, test) == RECORDED[test]
        assert _cache(pytester, test).read_text() == texts[test]
    assert _leaks(pytester.path, (PASSWORD,)) == []


def test_a_changed_secret_is_a_named_miss_before_any_action(
        signin, pytester: pytest.Pytester, reference_server: ReferenceServer, monkeypatch: pytest.MonkeyPatch) -> None:
    signin("--guistate-llm=anthropic").assert_outcomes(passed=2)
    monkeypatch.setenv("QA_PASSWORD", "battery-staple")
    result = signin("--guistate-llm=cache")
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert ("run 1: the secret recorded as [secret 1] is not the one this test gives (its keyed digest differs)"
            in out), out[-3000:]
    assert "run 1: the secret recorded as [secret 2] is not the one this test gives" in out
    for test in TESTS:
        assert _effects(pytester, test) == []  # refused before any action
    assert _leaks(pytester.path, ("battery-staple", PASSWORD)) == []

    # the fallback names the same miss and goes live, which types the new password (the sim refuses it)
    texts = {test: _cache(pytester, test).read_text() for test in TESTS}
    fallback = signin("--guistate-llm=cache-fallback", "-k", "password_only")
    fallback.assert_outcomes(failed=1)
    row = summary_rows(pytester)["test_password_only"]
    assert row["llm_cache"]["first_miss"].startswith(
        "cache miss at run 1: the secret recorded as [secret 1] is not the one this test gives")
    assert row["llm_tokens"] > 0 and ("login", "False") in _effects(pytester, "test_password_only")
    assert {test: _cache(pytester, test).read_text() for test in TESTS} == texts  # a failed test rewrites nothing
    assert _leaks(pytester.path, ("battery-staple", PASSWORD)) == []


def test_without_a_key_the_first_recording_makes_the_key_file_and_another_key_is_a_named_miss(
        signin, pytester: pytest.Pytester, reference_server: ReferenceServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GUISTATE_CACHE_KEY")
    signin("--guistate-llm=anthropic", "-k", "password_only").assert_outcomes(passed=1)
    key_file = pytester.path / ".guistate-cache-key"
    key = key_file.read_text().strip()
    assert len(key) == 64 and key not in _cache(pytester, "test_password_only").read_text()
    signin("--guistate-llm=cache", "-k", "password_only").assert_outcomes(passed=1)  # the file's key: a hit
    assert _effects(pytester, "test_password_only") == RECORDED["test_password_only"]

    monkeypatch.setenv("GUISTATE_CACHE_KEY", "another-key-of-another-machine")
    result = signin("--guistate-llm=cache", "-k", "password_only")
    result.assert_outcomes(failed=1)
    assert "run 1: its secrets were digested under another cache key" in result.stdout.str()
    assert _effects(pytester, "test_password_only") == []

    monkeypatch.delenv("GUISTATE_CACHE_KEY")
    key_file.unlink()
    result = signin("--guistate-llm=cache", "-k", "password_only")
    result.assert_outcomes(failed=1)
    assert "and this run has no cache key: set GUISTATE_CACHE_KEY" in result.stdout.str()
    assert _effects(pytester, "test_password_only") == [] and not key_file.exists()  # a replay never makes a key
    assert _leaks(pytester.path, (PASSWORD,)) == []
