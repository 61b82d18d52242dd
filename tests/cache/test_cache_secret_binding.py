"""The pieces behind goals with secrets in the action cache (issue 32, item 4), without a device:
sealing a run (placeholders and keyed digests), binding a new instruction to it, the key's sources,
the redactor's spans and the file's validation. End to end: tests/cache/test_cache_secrets.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_guistate.llm.cache.cachefile import ActionCache, CachedRun, CachedStep, CacheError, load_cache, write_cache
from pytest_guistate.llm.cache.secrets import KEY_ENV, CacheKey, bind_run, cache_key, fill, seal_run
from pytest_guistate.report.redact import Redactor

PASSWORD = "correct-horse"
KEY = CacheKey(b"test-key", "test")


def _run(instruction: str, *typed: str) -> CachedRun:
    steps = [CachedStep(n=i + 1, tool="type_text", args={"text": text}, name="type", idempotent=False, screen={})
             for i, text in enumerate(typed)]
    return CachedRun(instruction, steps, {"success": True, "summary": "signed in"})


def _sealed(*secrets: str) -> CachedRun:
    redactor = Redactor(secrets=set(secrets))
    run = _run(f"Log in as qa@example.com (password {PASSWORD}) then go home", "qa@example.com", PASSWORD)
    return seal_run(run, redactor.spans, KEY)


def test_a_sealed_run_holds_placeholders_and_keyed_digests_never_the_secret() -> None:
    sealed = _sealed(PASSWORD)
    assert sealed.instruction == "Log in as qa@example.com (password [secret 1]) then go home"
    assert [s.args["text"] for s in sealed.steps] == ["qa@example.com", "[secret 1]"]
    assert sealed.secrets == {"key_id": KEY.id, "slots": {"1": KEY.digest(PASSWORD)}}
    text = json.dumps(ActionCache("t", "android", [sealed]).to_dict())
    assert PASSWORD not in text and "test-key" not in text
    assert KEY.digest(PASSWORD) != CacheKey(b"another", "x").digest(PASSWORD)  # keyed: no key, no guessing


def test_the_same_value_is_one_placeholder_and_a_run_without_secrets_is_unchanged() -> None:
    redactor = Redactor(secrets={PASSWORD})
    twice = seal_run(_run(f"type {PASSWORD} and {PASSWORD} again", PASSWORD), redactor.spans, KEY)
    assert twice.instruction == "type [secret 1] and [secret 1] again" and list(twice.secrets["slots"]) == ["1"]
    plain = _run("Go home")
    assert seal_run(plain, redactor.spans, KEY) is plain and plain.secrets == {}


def test_binding_matches_the_words_and_checks_each_secret_by_its_digest() -> None:
    sealed = _sealed(PASSWORD)
    same = bind_run(sealed, f"Log in as qa@example.com (password {PASSWORD}) then go home", KEY, (), where="run 1")
    assert same is not None and same.values == {"1": PASSWORD} and not same.miss
    assert fill(sealed.steps[1].args, same.values) == {"text": PASSWORD}
    assert sealed.steps[1].args == {"text": "[secret 1]"}  # filled in a copy: the cached step keeps its placeholder
    changed = bind_run(sealed, "Log in as qa@example.com (password battery-staple) then go home", KEY, (),
                       where="run 1")
    assert changed is not None and changed.values == {} and changed.seen == ("battery-staple",)
    assert changed.miss.startswith("run 1: the secret recorded as [secret 1] is not the one this test gives")
    assert bind_run(sealed, f"Log in as qa@example.com (password {PASSWORD}) then go back", KEY, (),
                    where="run 1") is None  # other words: another goal, the old mismatch message
    other_key = bind_run(sealed, f"Log in as qa@example.com (password {PASSWORD}) then go home",
                         CacheKey(b"another", "$GUISTATE_CACHE_KEY"), (), where="run 1")
    assert other_key is not None and "digested under another cache key" in other_key.miss
    no_key = bind_run(sealed, f"Log in as qa@example.com (password {PASSWORD}) then go home", None, (), where="run 1")
    assert no_key is not None and "this run has no cache key: set GUISTATE_CACHE_KEY" in no_key.miss


def test_a_typed_secret_absent_from_the_instruction_binds_to_a_registered_one() -> None:
    redactor = Redactor(secrets={PASSWORD})
    sealed = seal_run(_run("Sign in with the saved password", PASSWORD), redactor.spans, KEY)
    assert sealed.instruction == "Sign in with the saved password" and sealed.steps[0].args["text"] == "[secret 1]"
    bound = bind_run(sealed, "Sign in with the saved password", KEY, ("other-secret", PASSWORD), where="run 1")
    assert bound is not None and bound.values == {"1": PASSWORD}
    unbound = bind_run(sealed, "Sign in with the saved password", KEY, ("other-secret",), where="run 1")
    assert unbound is not None and "is not in the instruction and no secret this test registered" in unbound.miss


def test_the_redactor_spans_secrets_and_patterns_longest_first() -> None:
    redactor = Redactor(secrets={"horse", PASSWORD})
    redactor.add_pattern(r"\d{4}")
    text = f"pw {PASSWORD} pin 1234"
    assert [text[a:b] for a, b in redactor.spans(text)] == [PASSWORD, "1234"]


def test_the_key_comes_from_the_environment_else_a_file_made_once(tmp_path: Path) -> None:
    assert cache_key(tmp_path / "k", create=False, env={KEY_ENV: " from-env "}) == CacheKey(b"from-env", f"${KEY_ENV}")
    assert cache_key(tmp_path / "k", create=False, env={}) is None
    made = cache_key(tmp_path / "k", create=True, env={})
    assert made is not None and len(made.value) == 64 and (tmp_path / "k").stat().st_mode & 0o777 == 0o600
    assert cache_key(tmp_path / "k", create=True, env={}) == made  # never overwritten
    (tmp_path / "empty").write_text("")
    with pytest.raises(ValueError, match="is empty"):
        cache_key(tmp_path / "empty", create=False, env={})


def test_the_file_round_trips_and_a_bad_secrets_field_is_named(tmp_path: Path) -> None:
    path = tmp_path / "t.actions.json"
    write_cache(path, ActionCache("t", "android", [_sealed(PASSWORD)]))
    assert load_cache(path).runs[0].secrets == _sealed(PASSWORD).secrets
    data = json.loads(path.read_text())
    data["runs"][0]["secrets"]["slots"] = {"1": PASSWORD}
    path.write_text(json.dumps(data))
    with pytest.raises(CacheError, match=r"runs\[0\]\.secrets\.slots must map placeholder numbers"):
        load_cache(path)
