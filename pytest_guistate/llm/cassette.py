"""Cassettes: one JSON file per test with its Messages API exchanges, for `record` and `replay`.

Matching rule (replay): exchange N of the run must match exchange N of the cassette on
  * the purpose (actor / updater / check) and the tool names offered, and the tool choice;
  * the system prompt text;
  * every *text* block of the messages, after normalising noise: clock times (`12:04:59`) and
    ISO timestamps become `<time>`, runs of whitespace collapse; in `<history>` only the actions
    are matched (not their outcome: settled/refreshed depends on timing), in `<task_state>` only
    the summary and tracker (the focus holds timing-dependent oracle verdicts), in
    `<transition>` only the action; `<recent_changes>` (the boxes of the recent crops) is image
    evidence and ignored like the images themselves; element lines of toasts (transient, real-time:
    Android's `Toast` rows and iOS's lone text in a window of its own, see `without_toasts`) are
    dropped, and so is `<flow_hints>` (it comes from the cross-run memory file).
Images are ignored (screenshots differ with the ticking clock and antialiasing); model name and
max_tokens are ignored (switching models must not need a re-record to start replaying).
Stored requests keep their text but images are replaced by a placeholder naming their size and
hash, and any header or string carrying the API key is never written.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_guistate.core.frame import png_size
from pytest_guistate.llm.errors import CassetteError
from pytest_guistate.support.httpserver import HttpReply, LoopbackServer, json_reply

__all__ = [
    "CASSETTE_SCHEMA",
    "REFERENCE_NOTE",
    "Cassette",
    "Exchange",
    "ReplayServer",
    "cassette_path",
    "match_text",
    "strip_images",
    "toast_ids",
    "without_toasts",
]

CASSETTE_SCHEMA = "guistate.cassette/1"
REFERENCE_NOTE = ("recorded against the pytest-guistate reference server, not the Anthropic API; "
                  "re-record with a key (--guistate-llm=record and ANTHROPIC_API_KEY set)")
MATCH_RULE = ("exchange N matches on purpose, tool names, tool_choice, system text and the text blocks of the "
              "messages with clock times/timestamps normalised, history without outcomes, task state without the "
              "focus; images, recent-crop boxes, toasts, flow hints, model and max_tokens are ignored")
_TIME_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?|\b\d{1,2}:\d{2}(:\d{2})?\b")
PURPOSE_HEADER = "x-guistate-purpose"  # sent only to the replay server: the purpose is part of the match
_KEEP_HEADERS = ("request-id", "content-type", "retry-after")
_SAFE_ID = re.compile(r"[^A-Za-z0-9_.-]+")


def cassette_path(test_file: Path, test_name: str, platform: str = "android") -> Path:
    """`<test dir>/cassettes/<test file stem>/<test name>.json` (parametrize ids made file-safe);
    an iOS session's prompts differ (its elements, its screen), so it keeps its own cassettes
    under `.../<test file stem>/ios/` (issue 11)."""
    name = _SAFE_ID.sub("_", test_name).strip("_")[:120] or "test"
    folder = test_file.parent / "cassettes" / test_file.stem
    return (folder / "ios" if platform == "ios" else folder) / f"{name}.json"


def _normalise(text: str) -> str:
    return re.sub(r"[ \t]+", " ", _TIME_RE.sub("<time>", text)).strip()


_OVERLAY_ROOT = re.compile(r"^0/([1-9][0-9]*)/0$")  # the first node of a window above the app's own


def toast_ids(rows: list[dict[str, Any]]) -> set[str]:
    """Element ids of toasts: Android's `Toast` rows, and iOS's shape of one (XCUITest has no toast
    type): a window above the app's that holds one lone text and nothing to tap. An alert's window
    holds its buttons too, so its texts stay matched."""
    ids = {str(r.get("id")) for r in rows if r.get("kind") == "Toast"}
    for row in rows:
        found = _OVERLAY_ROOT.match(str(row.get("id")))
        if found is None or row.get("kind") != "StaticText" or row.get("tap") or row.get("edit"):
            continue
        window = f"0/{found.group(1)}/"
        if not any(str(other.get("id")).startswith(window) for other in rows if other is not row):
            ids.add(str(row["id"]))
    return ids


def without_toasts(match: str) -> str:
    """`match` without the element lines of toasts: a toast lives ~1.5 s of real time, so whether a
    turn still sees it depends on machine speed. Applied to the live request and to the recorded
    match alike, so a cassette recorded before a toast shape was known replays without a re-record."""
    lines = match.splitlines()
    dropped: set[int] = set()
    start: int | None = None
    for i, line in enumerate(lines):
        if line.endswith(": <elements>"):
            start = i + 1
        elif line.endswith(": </elements>") and start is not None:
            rows: dict[int, dict[str, Any]] = {}
            for j in range(start, i):
                try:
                    row = json.loads(lines[j].split(": ", 1)[-1])
                except json.JSONDecodeError:
                    continue
                if isinstance(row, dict):
                    rows[j] = row
            toasts = toast_ids(list(rows.values()))
            dropped |= {j for j, row in rows.items() if str(row.get("id")) in toasts}
            start = None
    return "\n".join(line for i, line in enumerate(lines) if i not in dropped)


def _sections(text: str) -> str:
    """Drop the timing-dependent parts of tagged sections (see the module docstring)."""
    def history(m: re.Match[str]) -> str:
        lines = [re.sub(r" -> .*$", "", line) for line in m.group(1).splitlines()]
        return "<history>\n" + "\n".join(lines) + "\n</history>"

    def state(m: re.Match[str]) -> str:
        try:
            data = json.loads(m.group(1))
        except json.JSONDecodeError:
            return m.group(0)
        kept = {k: data.get(k) for k in ("summary", "tracker")}
        return "<task_state>\n" + json.dumps(kept, sort_keys=True, ensure_ascii=False) + "\n</task_state>"

    def transition(m: re.Match[str]) -> str:
        try:
            data = json.loads(m.group(1))
        except json.JSONDecodeError:
            return m.group(0)
        return "<transition>\n" + json.dumps({"action": data.get("action")}) + "\n</transition>"

    # a toast lives ~1.5 s of real time (see `without_toasts` for the iOS shape of one)
    text = "\n".join(line for line in text.splitlines() if '"kind":"Toast"' not in line)
    # recent crops are image evidence: their boxes move with redraw timing just like the pixels
    text = re.sub(r"<recent_changes>\n(.*?)\n</recent_changes>", "<recent_changes/>", text, flags=re.DOTALL)
    # flow hints come from the cross-run memory file, which differs between machines and runs
    text = re.sub(r"<flow_hints>\n(.*?)\n</flow_hints>\n?", "", text, flags=re.DOTALL)
    text = re.sub(r"<history>\n(.*?)\n</history>", history, text, flags=re.DOTALL)
    text = re.sub(r"<task_state>\n(.*?)\n</task_state>", state, text, flags=re.DOTALL)
    return re.sub(r"<transition>\n(.*?)\n</transition>", transition, text, flags=re.DOTALL)


def match_text(body: dict[str, Any], purpose: str) -> str:
    """The text a request is matched on (see the module docstring)."""
    lines = [f"purpose: {purpose}",
             "tools: " + ",".join(str(t.get("name")) for t in body.get("tools") or []),
             "tool_choice: " + json.dumps(body.get("tool_choice"), sort_keys=True)]
    system = body.get("system")
    blocks = [system] if isinstance(system, str) else [b.get("text", "") for b in system or []]
    lines += ["system: " + _normalise(b) for b in blocks]
    for message in body.get("messages") or []:
        content = message.get("content")
        items = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in items:
            if isinstance(block, dict) and block.get("type") == "text":
                text = _sections(str(block["text"]))
                lines += [f"{message.get('role')}: {_normalise(line)}" for line in text.splitlines()]
            elif isinstance(block, dict) and block.get("type") in ("tool_use", "tool_result"):
                lines.append(f"{message.get('role')}: [{block['type']}] " + _normalise(json.dumps(
                    {k: v for k, v in block.items() if k not in ("id", "tool_use_id")}, sort_keys=True)))
    return without_toasts("\n".join(lines))


def strip_images(value: Any) -> Any:
    """Replace base64 image data by a placeholder with its size and hash (cassettes stay small)."""
    if isinstance(value, list):
        return [strip_images(v) for v in value]
    if not isinstance(value, dict):
        return value
    if value.get("type") == "image" and isinstance(value.get("source"), dict) and "data" in value["source"]:
        raw = base64.b64decode(value["source"]["data"])
        try:
            width, height = png_size(raw)
            size = f"{width}x{height}"
        except ValueError:
            size = "unknown size"
        digest = hashlib.sha256(raw).hexdigest()[:16]
        source = dict(value["source"], data=f"<image omitted: {size}, {len(raw)} bytes, sha256 {digest}>")
        return dict(value, source=source)
    return {k: strip_images(v) for k, v in value.items()}


@dataclass
class Exchange:
    purpose: str
    step: int | None
    request: dict[str, Any]
    match: str
    status: int
    response: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)

    def to_dict(self, index: int) -> dict[str, Any]:
        return {"index": index, "purpose": self.purpose, "step": self.step, "match": self.match.splitlines(),
                "request": self.request, "response": {"status": self.status, "headers": self.headers,
                                                       "body": self.response}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Exchange:
        response = data["response"]
        match = data["match"]
        return cls(data["purpose"], data.get("step"), data.get("request", {}),
                   "\n".join(match) if isinstance(match, list) else str(match),
                   int(response["status"]), response["body"], dict(response.get("headers") or {}))


@dataclass
class Cassette:
    path: Path
    exchanges: list[Exchange] = field(default_factory=list)
    header: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> Cassette:
        if not path.exists():
            raise CassetteError(
                f"no LLM cassette at {path}: record it first with --guistate-llm=record "
                "(with ANTHROPIC_API_KEY set, or ANTHROPIC_BASE_URL pointing at `guistate llm-server`)")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise CassetteError(f"LLM cassette {path} is not valid JSON: {exc}") from exc
        if not isinstance(data, dict) or data.get("schema") != CASSETTE_SCHEMA:
            raise CassetteError(f"LLM cassette {path} has schema {data.get('schema') if isinstance(data, dict) else None!r}, "
                                f"expected {CASSETTE_SCHEMA!r}; re-record it")
        try:
            exchanges = [Exchange.from_dict(x) for x in data.get("exchanges", [])]
        except (KeyError, TypeError, ValueError) as exc:
            raise CassetteError(f"LLM cassette {path}: malformed exchange ({exc!r}); re-record it") from exc
        return cls(path, exchanges, {k: v for k, v in data.items() if k != "exchanges"})

    def add(self, exchange: Exchange) -> None:
        self.exchanges.append(exchange)

    def save(self, *, model: str, sdk_version: str, secrets: tuple[str, ...] = (),
             scrub: Callable[[Any], Any] | None = None) -> None:
        """Write the cassette; every occurrence of a secret (the API key) is refused, not just hidden.
        `scrub` (the test's redactor) cleans the exchanges first; replay matches on scrubbed text."""
        request_ids = [x.headers.get("request-id", "") for x in self.exchanges]
        reference = bool(request_ids) and all(r.startswith("req_ref_") for r in request_ids)
        header = {"schema": CASSETTE_SCHEMA,
                  "recorded_with": {"server": "pytest-guistate reference server" if reference else "Anthropic API",
                                    "model": model, "anthropic_sdk": sdk_version},
                  "note": REFERENCE_NOTE if reference else "recorded against the Anthropic API",
                  "match_rule": MATCH_RULE}
        exchanges = [x.to_dict(i) for i, x in enumerate(self.exchanges)]
        if scrub is not None:
            exchanges = scrub(exchanges)
        text = json.dumps({**header, "exchanges": exchanges}, indent=1, ensure_ascii=False)
        for secret in secrets:
            if secret and secret in text:
                text = text.replace(secret, "<redacted>")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(text + "\n", encoding="utf-8")
        self.header = header


@dataclass
class Divergence:
    index: int
    message: str


class ReplayServer:
    """Serves a cassette's responses in order over loopback HTTP; a request that does not match the
    next exchange gets a 400 (never retried) and a `Divergence` the client turns into the failure."""

    def __init__(self, cassette: Cassette, *, scrub: Callable[[Any], Any] | None = None) -> None:
        self.cassette = cassette
        self.scrub = scrub  # the recording was scrubbed: the live request is matched scrubbed too
        self._position = 0
        self._lock = threading.Lock()
        self.divergence: Divergence | None = None
        self._http = LoopbackServer(self._handle, name="llm-replay")

    @property
    def url(self) -> str:
        return self._http.url

    def start(self) -> ReplayServer:
        self._http.start()
        return self

    def stop(self) -> None:
        self._http.stop()

    @property
    def position(self) -> int:
        return self._position

    def _handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> HttpReply:
        stop = {"x-should-retry": "false"}
        if method != "POST" or not path.startswith("/v1/messages"):
            return json_reply(404, {"type": "error", "error": {"type": "not_found_error", "message": path}}, stop)
        body = json.loads(raw or b"{}")
        with self._lock:
            index = self._position
            purpose = headers.get(PURPOSE_HEADER, "actor")
            self._position += 1
            exchanges = self.cassette.exchanges
            if index >= len(exchanges):
                message = (f"LLM replay: the test made LLM call #{index} ({purpose}) but {self.cassette.path} holds only "
                           f"{len(exchanges)} exchanges; re-record the cassette")
                self.divergence = self.divergence or Divergence(index, message)
                return json_reply(400, {"type": "error", "error": {"type": "invalid_request_error", "message": message}},
                                  stop)
            recorded = exchanges[index]
            now = match_text(body, purpose)
            if self.scrub is not None:
                now = "\n".join(self.scrub(now.splitlines()))
            if now != without_toasts(recorded.match):
                message = _describe(index, recorded, now, self.cassette.path)
                self.divergence = self.divergence or Divergence(index, message)
                return json_reply(400, {"type": "error", "error": {"type": "invalid_request_error", "message": message}},
                                  stop)
        reply_headers = dict(recorded.headers)
        reply_headers.setdefault("request-id", f"req_replay_{index}")
        reply_headers.update(stop)
        return json_reply(recorded.status, recorded.response, reply_headers)


def _describe(index: int, recorded: Exchange, now: str, path: Path) -> str:
    old, new = without_toasts(recorded.match).splitlines(), now.splitlines()
    first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
    diff = list(difflib.unified_diff(old, new, "recorded", "now", n=1, lineterm=""))[:14]
    at = f"step {recorded.step}" if recorded.step is not None else "setup"
    return (f"LLM replay diverged at exchange #{index} ({recorded.purpose}, {at}) of {path}: first difference at "
            f"match line {first + 1}:\n  recorded: {old[first] if first < len(old) else '<end>'}\n"
            f"  now:      {new[first] if first < len(new) else '<end>'}\n" + "\n".join(diff) +
            "\nThe app or the prompt changed since recording; re-record with --guistate-llm=record")
