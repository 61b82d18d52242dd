"""Goals with secrets in the action cache (issue 32, item 4): matched and replayed, never stored.

A goal such as "Sign in with the e-mail U and the password P" used to be stored redacted, so it could
never replay. Now each secret in a cached run (a registered `guistate.secret`, a password typed into a
secure field, a match of the redact hook's patterns) becomes a numbered placeholder `[secret N]`, in
the instruction and in the text a step typed, and the run keeps, per placeholder, an HMAC-SHA256 of
the secret under a per-project key that is never written to the cache file.

Why both: the placeholder binds a replayed type step to the value of *this* run's instruction (or a
secret the test registered), so replay types the real secret without the file holding it; the keyed
digest proves that value is the one recorded, so a changed password is a named miss instead of a
replay that types something else. A plain hash would not do: a test password is often guessable, and
an unkeyed digest of it can be found by trying candidates; without the key it cannot.

The key: `GUISTATE_CACHE_KEY` in the environment, else the key file (default `.guistate-cache-key` in
pytest's rootdir), created with a random key by the first recording that needs one. The cache stores
only the key's id (an HMAC of a fixed label), so a run under another key is named as such.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets as random_secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pytest_guistate.llm.cache.cachefile import CachedRun, CachedStep

__all__ = ["KEY_ENV", "Binding", "CacheKey", "bind_run", "cache_key", "fill", "placeholder", "seal_run"]

KEY_ENV = "GUISTATE_CACHE_KEY"
_SLOT = re.compile(r"\[secret (\d+)\]")
_KEY_ID_LABEL = b"guistate action cache key id"

Spans = Callable[[str], list[tuple[int, int]]]  # where a text holds secrets (`Redactor.spans`)


def placeholder(n: int | str) -> str:
    return f"[secret {n}]"


@dataclass(frozen=True)
class CacheKey:
    """The per-project key the secrets' digests are made with; `source` says where it came from."""

    value: bytes
    source: str

    @property
    def id(self) -> str:
        """Names the key in the cache file without revealing it."""
        return hmac.new(self.value, _KEY_ID_LABEL, hashlib.sha256).hexdigest()[:12]

    def digest(self, secret: str) -> str:
        return hmac.new(self.value, secret.encode("utf-8"), hashlib.sha256).hexdigest()


def cache_key(key_file: Path | None, *, create: bool, env: Mapping[str, str] | None = None) -> CacheKey | None:
    """`GUISTATE_CACHE_KEY`, else the key file; `create`: write a new random key file when there is
    none (a recording), else None (a replay then names the missing key)."""
    env = os.environ if env is None else env
    if env.get(KEY_ENV, "").strip():
        return CacheKey(env[KEY_ENV].strip().encode("utf-8"), f"${KEY_ENV}")
    if key_file is None:
        return None
    if key_file.is_file():
        text = key_file.read_text(encoding="utf-8").strip()
        if not text:
            raise ValueError(f"the action cache key file {key_file} is empty: delete it (a recording makes a new "
                             f"one) or set {KEY_ENV}")
        return CacheKey(text.encode("utf-8"), str(key_file))
    if not create:
        return None
    key_file.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # never overwrite a key
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        out.write(random_secrets.token_hex(32) + "\n")
    return CacheKey(key_file.read_text(encoding="utf-8").strip().encode("utf-8"), str(key_file))


def _replace_spans(text: str, spans: Iterable[tuple[int, int]], slot_of: Callable[[str], int]) -> str:
    out, at = [], 0
    for start, end in sorted(spans):
        if start < at:
            continue  # overlapping matches: the first one wins
        out += [text[at:start], placeholder(slot_of(text[start:end]))]
        at = end
    return "".join(out) + text[at:]


def seal_run(run: CachedRun, spans: Spans, key: CacheKey | None) -> CachedRun:
    """`run` as the file may hold it: each secret of its instruction and typed texts replaced by its
    placeholder, the run's `secrets` the key's id and each placeholder's keyed digest. A run without
    secrets, or without a key to digest them, is returned as it is (the file's scrub then redacts)."""
    values: dict[str, int] = {}

    def slot_of(value: str) -> int:
        return values.setdefault(value, len(values) + 1)

    instruction = _replace_spans(run.instruction, spans(run.instruction), slot_of)
    steps: list[CachedStep] = []
    for step in run.steps:
        text = step.args.get("text")
        if step.tool == "type_text" and isinstance(text, str) and spans(text):
            step = replace(step, args={**step.args, "text": _replace_spans(text, spans(text), slot_of)})
        steps.append(step)
    if not values or key is None:
        return run
    slots = {str(n): key.digest(value) for value, n in values.items()}
    return CachedRun(instruction, steps, dict(run.done), {"key_id": key.id, "slots": slots}, dict(run.page))


@dataclass
class Binding:
    """What a cached run's placeholders stand for in this run (`values`), or why they cannot (`miss`)."""

    values: dict[str, str] = field(default_factory=dict)
    miss: str = ""
    seen: tuple[str, ...] = ()  # the texts in the placeholders' places, matched or not: secrets of this test


def _template(instruction: str) -> re.Pattern[str]:
    """The cached instruction as a pattern: literal text, each placeholder a group (the same
    placeholder twice must hold the same value twice)."""
    parts, seen, at = [], set(), 0
    for found in _SLOT.finditer(instruction):
        parts.append(re.escape(instruction[at:found.start()]))
        n = found.group(1)
        parts.append(f"(?P=s{n})" if n in seen else f"(?P<s{n}>.+?)")
        seen.add(n)
        at = found.end()
    parts.append(re.escape(instruction[at:]))
    return re.compile("".join(parts), re.DOTALL)


def bind_run(run: CachedRun, instruction: str, key: CacheKey | None, registered: Iterable[str], *,
             where: str) -> Binding | None:
    """Match this run's `instruction` to the cached `run`: None when the words differ (another goal),
    a `Binding` with the placeholders' values, or with the named miss when a secret or the key differs.
    `registered`: the test's secrets so far, for a placeholder typed but not in the instruction."""
    if not run.secrets:
        return Binding() if run.instruction == instruction else None
    found = _template(run.instruction).fullmatch(instruction)
    if found is None:
        return None
    key_id, slots = str(run.secrets.get("key_id", "")), dict(run.secrets.get("slots") or {})
    seen = tuple(dict.fromkeys(v for v in found.groupdict().values() if v))
    if key is None:
        return Binding(seen=seen, miss=f"{where} holds secrets digested under the cache key {key_id!r}, and this run has no "
                            f"cache key: set {KEY_ENV} (or restore the key file) to the key it was recorded with, "
                            "or re-record the cache")
    if key.id != key_id:
        return Binding(seen=seen, miss=f"{where}: its secrets were digested under another cache key (id {key_id!r}; this "
                            f"run's key from {key.source} has id {key.id!r}): use that key or re-record the cache")
    values: dict[str, str] = {}
    pool = list(dict.fromkeys(registered))
    for n, digest in sorted(slots.items(), key=lambda item: int(item[0]) if item[0].isdigit() else 0):
        value = found.groupdict().get(f"s{n}")
        if value is None:  # typed, not in the instruction: a secret the test registered
            value = next((s for s in pool if hmac.compare_digest(key.digest(s), str(digest))), None)
            if value is None:
                return Binding(seen=seen, miss=f"{where}: the secret typed as {placeholder(n)} is not in the instruction and "
                                    "no secret this test registered (guistate.secret) has its keyed digest")
        elif not hmac.compare_digest(key.digest(value), str(digest)):
            return Binding(seen=seen, miss=f"{where}: the secret recorded as {placeholder(n)} is not the one this test gives "
                                "(its keyed digest differs): re-record the cache if the secret changed on purpose")
        values[n] = value
    return Binding(values, seen=seen)


def fill(args: dict[str, Any], values: Mapping[str, str]) -> dict[str, Any]:
    """A cached step's arguments with each placeholder of its typed text replaced by its value."""
    text = args.get("text")
    if not values or not isinstance(text, str) or not _SLOT.search(text):
        return dict(args)
    return {**args, "text": _SLOT.sub(lambda m: values.get(m.group(1), m.group(0)), text)}
