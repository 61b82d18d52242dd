"""The action cache (issue 21): what a passing LLM-driven test did, step by step, so CI can replay it
without the model.

One file per test beside its cassette (`cassettes/<file>/<test>.actions.json`, iOS under `ios/`),
schema `guistate.actions/1`, written with sorted keys and two-space indentation so a pull request
shows a readable diff. Per actor step: the tool call and its arguments, the target's identity
(locator candidates and an element fingerprint: text, desc, id, kind, neighbours, relative position),
the signature of the screen it acted on, the verified effect (expectation, oracle verdict and region,
next screen's signature), the milestone it completed and whether it may be repeated.

Matching is deliberately word-based and explainable (scores 0..1 with the parts named), because a
miss must say which element came closest and why (`TargetMatch.describe`).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pytest_guistate.core.uitree import UINode, UITree
from pytest_guistate.llm.cache.identity import differs, identity, identity_words, lookalikes, surroundings
from pytest_guistate.llm.cassette import cassette_path, toast_ids
from pytest_guistate.llm.prompt import ImageScale, element_lines

__all__ = ["SCHEMA", "ActionCache", "CacheError", "CachedCheck", "CachedQuery", "CachedRun", "CachedStep", "TargetMatch",
           "actions_path", "best_target", "claim_words", "fingerprint", "load_cache", "locator_matches", "named_alone",
           "screen_labels", "screen_rows",
           "screen_signature", "screen_similarity", "state_after", "write_cache"]

SCHEMA = "guistate.actions/1"
_WORD = re.compile(r"[A-Za-z0-9$.]+")
_TRANSIENT = ("Toast", "ProgressBar", "ActivityIndicator")
_LABELS_KEPT = 60  # a signature keeps this many labels: enough to compare screens, short enough to review


class CacheError(ValueError):
    """A cache file that cannot be used: wrong schema, corrupt, hand-edited badly, other platform.
    The message names the file; the run fails closed rather than calling the model silently."""


def actions_path(test_file: Path, test_name: str, platform: str = "android") -> Path:
    """`cassettes/<file stem>/[ios/]<test>.actions.json`: the cache sits beside the cassette."""
    cassette = cassette_path(test_file, test_name, platform)
    return cassette.with_name(cassette.stem + ".actions.json")


# -- screens and elements -------------------------------------------------------------------
def screen_rows(tree: UITree) -> list[dict[str, Any]]:
    """The rows the actor is shown (status bar and keyboard keys left out), in device pixels."""
    width, height = tree.width or 1, tree.height or 1
    return element_lines(tree, ImageScale((width, height), (width, height)), limit=10_000)


def _words(*texts: str) -> set[str]:
    return {w.lower() for text in texts for w in _WORD.findall(text or "")}


def screen_labels(tree: UITree) -> list[str]:
    """Every label the actor is shown (texts, descriptions, resource ids), in screen order, once."""
    labels: list[str] = []
    rows = screen_rows(tree)
    # a toast (Android's type, or iOS's shape of one: `toast_ids`) or a spinner: there on one run, gone on the next
    passing = [n.index_path for n in tree.nodes() if n.cls.endswith(_TRANSIENT)] + sorted(toast_ids(rows))
    for row in rows:
        if any(row["id"] == p or str(row["id"]).startswith(p + "/") for p in passing):
            continue
        for key in ("text", "desc", "rid"):
            value = str(row.get(key) or "").strip()
            if value and value not in labels:
                labels.append(value)
    return labels


def screen_signature(tree: UITree | None, package: str = "") -> dict[str, Any]:
    """What a screen is, for comparing it across runs: its app, a short title and the labels it shows
    (texts, descriptions, resource ids), plus a hash of them for a quick equality test."""
    if tree is None:
        return {"app": package, "title": package, "labels": [], "hash": ""}
    kept = [label for label in screen_labels(tree) if len(label) <= 80][:_LABELS_KEPT]
    texts = [str(r.get("text")) for r in screen_rows(tree) if r.get("text")]
    short = package.rpartition(".")[2] or "screen"
    title = f"{short}: {texts[0]}" if texts else short
    digest = hashlib.sha256("\n".join(sorted(kept)).encode()).hexdigest()[:16]
    return {"app": package, "title": title[:80], "labels": kept, "hash": digest}


def claim_words(claim: str, tree: UITree | None) -> dict[str, bool]:
    """For each word of an AI check's claim (3+ letters): is it shown on the screen? A cached check is
    replayed only where the answer is the same ("Erin" absent then must be absent now)."""
    shown = _words(*(f"{r.get('text', '')} {r.get('desc', '')}" for r in screen_rows(tree))) if tree is not None else set()
    return {w: w in shown for w in sorted(_words(claim)) if len(w) >= 3}


def screen_similarity(cached: dict[str, Any], current: dict[str, Any]) -> float:
    """Jaccard of the two label sets (1.0 for the same screen); another app is 0."""
    if cached.get("app") and current.get("app") and cached["app"] != current["app"]:
        return 0.0
    a, b = set(cached.get("labels") or []), set(current.get("labels") or [])
    if not a and not b:
        return 1.0
    return round(len(a & b) / len(a | b), 3)


def fingerprint(tree: UITree, node: UINode) -> dict[str, Any]:
    """The element's identity as the actor saw it: names, kind, neighbours ("in") and where it sits
    (centre as a fraction of the screen), the labels around it and its rank among its lookalikes
    (`identity.surroundings`, `identity.lookalikes`). Empty fields are left out."""
    rows = screen_rows(tree)
    row = next((r for r in rows if r["id"] == node.index_path), None) or {}
    width, height = tree.width or 1, tree.height or 1
    out: dict[str, Any] = {"kind": node.kind}
    for key in ("text", "desc", "rid", "hint", "in"):
        if row.get(key):
            out[key] = str(row[key])
    if node.bounds is not None:
        cx, cy = node.bounds.center
        out["position"] = [round(cx / width, 3), round(cy / height, 3)]
    if node.checkable:  # a switch's state when it was acted on: a replay must not undo a state already reached
        out["checked"] = bool(node.checked)
    if row:  # what surrounded it, for the live actor when the replay cannot tell it from a lookalike
        near = surroundings(rows, row)
        if any(near):
            out["near"] = list(near)
        alike = lookalikes(rows, out)
        if row in alike:
            out["alike"] = [alike.index(row) + 1, len(alike)]
    return out


def state_after(tree: UITree | None, acted: UINode, cached: dict[str, Any]) -> bool | None:
    """The checked state, on the screen after a step, of the switch or check box the step acted on
    (`acted`, as it was before; `cached` its cached fingerprint): the element at the same place in the
    tree, of the same kind, without another identity. None when the cache keeps no state for it or it
    is no longer there."""
    if tree is None or "checked" not in cached:
        return None
    node = tree.by_index_path(acted.index_path)
    if node is None or not node.checkable or node.kind != acted.kind:
        return None
    return None if differs(identity(cached), identity(fingerprint(tree, node))) else bool(node.checked)


def locator_candidates(print_: dict[str, Any]) -> list[dict[str, str]]:
    """What a scripted test would write for this element (`device.find(**candidate)`), best first."""
    out = [{"id": print_["rid"]}] if print_.get("rid") else []
    out += [{"desc": print_["desc"]}] if print_.get("desc") else []
    out += [{"text": print_["text"]}] if print_.get("text") else []
    return out


def named_alone(target: dict[str, Any]) -> tuple[str, str] | None:
    """The most stable locator that named the target alone on the recorded screen (`target.unique`): its
    id, then its accessibility label, then its visible text, never a state text such as a switch's "OFF"
    (a label without identity words). What `guistate export-test` writes for the step, and what the
    replay re-finds the target by when its fingerprint no longer trusts it (`replay._named_alone`):
    one rule, so the exported test and the cache replay act on the same element. None for a cache
    recorded before `unique`, or when no locator named the target alone."""
    unique = target.get("unique")
    if not isinstance(unique, list):
        return None
    for candidate in target.get("locators") or []:
        if not isinstance(candidate, dict) or len(candidate) != 1:
            continue
        ((kind, value),) = candidate.items()
        if kind in unique and (kind == "id" or identity_words(str(value))):
            return str(kind), str(value)
    return None


def locator_matches(tree: UITree, locator: dict[str, str]) -> int:
    """How many elements of `tree` a scripted test's `device.find(**locator)` could return (the
    Device's own rules: `id` the resource id or its part after "/", iOS `name`; `desc` the
    descriptions; `text` the shown texts). A locator that matches more than one would act on the
    first: `guistate export-test` writes only locators that matched exactly the target."""
    ((kind, value),) = locator.items()
    return len(tree.by_locator(kind, value))


def _text_score(a: str, b: str) -> float:
    """Half word overlap, half character similarity: 'Add to cart' vs 'Add to bag' ~0.63."""
    wa, wb = _words(a), _words(b)
    jaccard = len(wa & wb) / len(wa | wb) if wa | wb else 1.0
    ratio = difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()
    return (jaccard + ratio) / 2


_WEIGHTS = {"rid": 0.3, "text": 0.3, "desc": 0.25, "hint": 0.15, "in": 0.2, "kind": 0.05, "position": 0.05}


@dataclass
class TargetMatch:
    """The best element on the current screen for a cached target, and how sure that is."""

    node: UINode | None
    score: float
    runner_up: float
    label: str
    parts: dict[str, float] = field(default_factory=dict)
    row: dict[str, Any] = field(default_factory=dict)  # the element as the actor is shown it (its identity)
    rival_parts: dict[str, float] = field(default_factory=dict)  # the runner-up's parts (another element)
    via: str = ""  # how it was found when not by its fingerprint (`replay._named_alone`), for the step's status

    def told_apart_by_place_only(self) -> bool:
        """The best element and the runner-up score alike on every part but their place: two switches
        named alike in two sections, or a duplicate row. A place is no proof of which is meant."""
        if not self.rival_parts:
            return False
        keys = (set(self.parts) | set(self.rival_parts)) - {"position"}
        return all(abs(self.parts.get(k, 0.0) - self.rival_parts.get(k, 0.0)) <= 0.02 for k in keys)

    def describe(self) -> str:
        return f"{self.label!r}, {self.score:.2f}" if self.node is not None else "none"


def _score(cached: dict[str, Any], row: dict[str, Any], node: UINode, size: tuple[int, int]) -> tuple[float, dict[str, float]]:
    parts: dict[str, float] = {}
    total = weight = 0.0
    for key, w in _WEIGHTS.items():
        if key == "position":
            if "position" not in cached or node.bounds is None:
                continue
            cx, cy = node.bounds.center
            fx, fy = cached["position"]
            distance = ((cx / size[0] - fx) ** 2 + (cy / size[1] - fy) ** 2) ** 0.5
            part = max(0.0, 1.0 - 2 * distance)
        elif key == "kind":
            part = 1.0 if cached.get("kind") == node.kind else 0.0
        elif cached.get(key):
            part = _text_score(str(cached[key]), str(row.get(key) or ""))
        else:
            continue
        parts[key] = round(part, 2)
        total += w * part
        weight += w
    return (total / weight if weight else 0.0), parts


def best_target(tree: UITree, cached: dict[str, Any],
                accept: Callable[[dict[str, Any]], bool] | None = None) -> TargetMatch:
    """Score every row the actor would be shown against the cached fingerprint. The runner-up is the
    best score on another element: close to the best means the target is ambiguous (two rows' Delete).
    `accept`: only rows it approves are candidates (the identity rule, `identity.py`)."""
    size = (tree.width or 1, tree.height or 1)
    nodes = {n.index_path: n for n in tree.nodes()}
    scored: list[tuple[float, dict[str, float], UINode, dict[str, Any]]] = []
    for row in screen_rows(tree):
        node = nodes.get(str(row["id"]))
        if node is None or node.bounds is None or (accept is not None and not accept(row)):
            continue
        score, parts = _score(cached, row, node, size)
        scored.append((score, parts, node, row))
    if not scored:
        return TargetMatch(None, 0.0, 0.0, "")
    scored.sort(key=lambda item: -item[0])
    score, parts, node, row = scored[0]
    runner, rival = next(((s, p) for s, p, n, _ in scored[1:] if n is not node and not _nested(n, node)), (0.0, {}))
    label = str(row.get("text") or row.get("desc") or row.get("rid") or node.kind)
    return TargetMatch(node, round(score, 3), round(runner, 3), label, parts, row, rival)


def _nested(a: UINode, b: UINode) -> bool:
    """One element inside the other (a button and its label): not a rival for ambiguity."""
    return a.bounds is not None and b.bounds is not None and (a.bounds.contains(b.bounds) or b.bounds.contains(a.bounds))


# -- the file -------------------------------------------------------------------------------
@dataclass
class CachedStep:
    """One actor step. `tool`/`args` as the model called it (element ids are of the cached screen and
    only informative); `target` is how to find the element again; `effect` how to know it worked."""

    n: int
    tool: str
    args: dict[str, Any]
    name: str
    idempotent: bool
    screen: dict[str, Any]
    target: dict[str, Any] | None = None  # {"locators": [...], "fingerprint": {...}}
    effect: dict[str, Any] = field(default_factory=dict)  # expect, outcome, verdict, confirmed, region, next_screen
    milestone: str | None = None

    @property
    def fingerprint(self) -> dict[str, Any]:
        """The target's cached fingerprint ({} for a step without a target or without one)."""
        return (self.target or {}).get("fingerprint") or {}

    def summary(self) -> str:
        """`tap 'Delete' (in Erin · ...)` -- the step as a reviewer reads it."""
        fp = self.fingerprint
        label = fp.get("text") or fp.get("desc") or fp.get("rid") or ""
        if fp.get("text") and not identity_words(str(fp["text"])):  # a switch's "OFF": named by its row
            label = identity(fp).label or label
        where = f" (in {fp['in']})" if fp.get("in") else ""
        remembered = self.args.get("remember")
        if isinstance(remembered, dict) and remembered:
            where += " remembering " + ", ".join(f"{k}={v}" for k, v in remembered.items())
        if self.tool == "tap":
            return f"tap {label!r}{where}" if label else f"tap {self.args}"
        if self.tool == "type_text":
            return f"type {self.args.get('text', '')!r}" + (f" into {label!r}" if label else "")
        if self.tool == "swipe":
            return f"swipe {self.args.get('direction', '')}"
        if self.tool == "wait":
            return f"wait {self.args.get('seconds', '')}s"
        return self.tool + where


@dataclass
class CachedRun:
    instruction: str  # secrets stand as `[secret N]` placeholders (`cache.secrets`)
    steps: list[CachedStep]
    done: dict[str, Any]  # {"success": true, "summary": "..."}
    secrets: dict[str, Any] = field(default_factory=dict)  # {"key_id": ..., "slots": {"N": keyed digest}}
    # a browser session's page: the URL the run started on and the one it ended on ({"start": .., "end": ..});
    # empty in an app session. A scripted export opens it: the run's own steps cannot (no tool opens a URL)
    page: dict[str, str] = field(default_factory=dict)


@dataclass
class CachedCheck:
    """An AI check that passed: its claim, the screen it judged and the evidence (cited elements'
    fingerprints and quotes). Replayed by re-verifying that evidence, never by trusting the verdict."""

    claim: str
    screen: dict[str, Any]
    evidence: list[dict[str, Any]]
    explanation: str = ""
    words: dict[str, bool] = field(default_factory=dict)  # the claim's words: shown on the judged screen?


@dataclass
class CachedQuery:
    """A `guistate.query` that passed (issue 46): its question and type, the screen it read, the value
    then (for review only) and per part the element to read again (`query_cache.read_prints`)."""

    question: str
    type: str
    screen: dict[str, Any]
    value: Any
    reads: list[dict[str, Any]]


@dataclass
class ActionCache:
    test: str
    platform: str
    runs: list[CachedRun] = field(default_factory=list)
    checks: list[CachedCheck] = field(default_factory=list)
    recorded: dict[str, Any] = field(default_factory=dict)  # mode, model, app version: how it was made
    queries: list[CachedQuery] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "test": self.test, "platform": self.platform, "recorded": self.recorded,
                "runs": [{"instruction": r.instruction, "done": r.done, "steps": [asdict(s) for s in r.steps],
                          **({"secrets": r.secrets} if r.secrets else {}),
                          **({"page": r.page} if r.page else {})} for r in self.runs],
                "checks": [asdict(c) for c in self.checks],
                **({"queries": [asdict(q) for q in self.queries]} if self.queries else {})}

    @property
    def steps(self) -> int:
        return sum(len(r.steps) for r in self.runs)


def write_cache(path: Path, cache: ActionCache, scrub: Callable[[Any], Any] | None = None) -> bool:
    """Write `cache` (stable key order, so an unchanged plan leaves the file byte-identical); returns
    whether the file changed. `scrub` (the test's redactor) cleans it as it cleans a cassette. Written
    to a temporary file first: a crash never leaves half a cache."""
    data = cache.to_dict()
    text = json.dumps(scrub(data) if scrub is not None else data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)
    return True


def _need(data: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str, path: Path) -> Any:
    if key not in data or not isinstance(data[key], kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise CacheError(f"action cache {path}: {where}.{key} is missing or not a {names}")
    return data[key]


_TOOLS = ("tap", "type_text", "swipe", "back", "home", "wait", "refresh")


def load_cache(path: Path, *, platform: str | None = None) -> ActionCache:
    """Read and validate a cache; every problem raises `CacheError` naming the file and the field."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CacheError(f"action cache {path} does not exist: record it first (a passing run with "
                         "--guistate-llm=record, anthropic or replay writes it)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CacheError(f"action cache {path} is not readable JSON ({exc}); restore it from version control "
                         "or re-record it") from None
    if not isinstance(data, dict):
        raise CacheError(f"action cache {path}: the top level is not an object")
    schema = data.get("schema")
    if schema != SCHEMA:
        raise CacheError(f"action cache {path} has schema {schema!r}; this guistate reads {SCHEMA!r}: "
                         "re-record it with this version")
    recorded_on = _need(data, "platform", str, "cache", path)
    if platform is not None and recorded_on != platform:
        raise CacheError(f"action cache {path} was recorded on platform {recorded_on!r}, this run is {platform!r}: "
                         "each platform persona keeps its own cache (iOS under ios/)")
    runs: list[CachedRun] = []
    for r_index, run in enumerate(_need(data, "runs", list, "cache", path)):
        where = f"runs[{r_index}]"
        if not isinstance(run, dict):
            raise CacheError(f"action cache {path}: {where} is not an object")
        steps: list[CachedStep] = []
        for s_index, step in enumerate(_need(run, "steps", list, where, path)):
            at = f"{where}.steps[{s_index}]"
            if not isinstance(step, dict):
                raise CacheError(f"action cache {path}: {at} is not an object")
            tool = _need(step, "tool", str, at, path)
            if tool not in _TOOLS:
                raise CacheError(f"action cache {path}: {at}.tool {tool!r} is not one of {', '.join(_TOOLS)}")
            target = step.get("target")
            if tool == "tap" and not (isinstance(target, dict) and isinstance(target.get("fingerprint"), dict)):
                raise CacheError(f"action cache {path}: {at} is a tap without target.fingerprint")
            steps.append(CachedStep(n=_need(step, "n", int, at, path), tool=tool, args=_need(step, "args", dict, at, path),
                                    name=_need(step, "name", str, at, path),
                                    idempotent=_need(step, "idempotent", bool, at, path),
                                    screen=_need(step, "screen", dict, at, path), target=target,
                                    effect=_need(step, "effect", dict, at, path),
                                    milestone=step.get("milestone") if isinstance(step.get("milestone"), str) else None))
        page = run.get("page") or {}
        if not (isinstance(page, dict) and all(isinstance(v, str) for v in page.values())):
            raise CacheError(f"action cache {path}: {where}.page must map 'start' and 'end' to URLs")
        runs.append(CachedRun(_need(run, "instruction", str, where, path), steps, _need(run, "done", dict, where, path),
                              _secrets(run, where, path), {str(k): v for k, v in page.items()}))
    checks: list[CachedCheck] = []
    for c_index, item in enumerate(data.get("checks") or []):
        at = f"checks[{c_index}]"
        if not isinstance(item, dict):
            raise CacheError(f"action cache {path}: {at} is not an object")
        words = _need(item, "words", dict, at, path)
        checks.append(CachedCheck(_need(item, "claim", str, at, path), _need(item, "screen", dict, at, path),
                                  _need(item, "evidence", list, at, path), str(item.get("explanation") or ""),
                                  {str(k): bool(v) for k, v in words.items()}))
    queries: list[CachedQuery] = []
    for q_index, item in enumerate(data.get("queries") or []):
        at = f"queries[{q_index}]"
        if not isinstance(item, dict):
            raise CacheError(f"action cache {path}: {at} is not an object")
        reads = _need(item, "reads", list, at, path)
        if not all(isinstance(r, dict) and isinstance(r.get("path"), str) for r in reads):
            raise CacheError(f"action cache {path}: {at}.reads must be objects with a path")
        queries.append(CachedQuery(_need(item, "question", str, at, path), _need(item, "type", str, at, path),
                                   _need(item, "screen", dict, at, path), item.get("value"), list(reads)))
    recorded = data["recorded"] if isinstance(data.get("recorded"), dict) else {}
    return ActionCache(str(data.get("test") or path.stem), recorded_on, runs, checks, recorded, queries)


def _secrets(run: dict[str, Any], where: str, path: Path) -> dict[str, Any]:
    """A run's `secrets` (absent: none): the key's id and a keyed digest per placeholder number."""
    if "secrets" not in run:
        return {}
    data = _need(run, "secrets", dict, where, path)
    _need(data, "key_id", str, f"{where}.secrets", path)
    slots = _need(data, "slots", dict, f"{where}.secrets", path)
    if not slots or not all(str(n).isdigit() and isinstance(d, str) and len(d) == 64 for n, d in slots.items()):
        raise CacheError(f"action cache {path}: {where}.secrets.slots must map placeholder numbers to 64-hex "
                         "keyed digests; re-record the cache")
    return {"key_id": data["key_id"], "slots": dict(slots)}


def plan_lines(steps: Iterable[CachedStep]) -> list[str]:
    """The cached plan as short lines (hints for the live actor, `guistate cache show`)."""
    return [f"{s.n}. {s.summary()}" + (f" -> {s.milestone}" if s.milestone else "") for s in steps]
