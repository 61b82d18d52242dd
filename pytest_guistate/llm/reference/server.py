"""A loopback server speaking Anthropic's Messages API, answered by the reference policy.

It exists so tests (and `guistate llm-server`) drive the *real* `anthropic` SDK over real HTTP:
`POST /v1/messages` with tool use, `usage` (input, output, cache creation/read), `request-id`
and rate-limit headers, errors in Anthropic's JSON shape, and `POST /v1/messages/count_tokens`.

Prompt caching is simulated honestly: the prefix up to the last `cache_control` breakpoint, in
the API's order tools -> system -> messages, is hashed; if it is at least `min_cache_tokens`
long, the first request writes it (`cache_creation_input_tokens`) and later requests with the
same prefix within the TTL read it (`cache_read_input_tokens`). `input_tokens` is the rest.

It refuses, with HTTP 400 `invalid_request_error`, what the real API refuses (`api_limits`): images
over 5 MB of base64 or 8000 px a side (2000 px when a request holds more than 20), more than 100
images, a `tool_use` without its `tool_result` in the next message, more than 4 `cache_control` blocks.
The actor's answers come from `policy` (deterministic, not a language model; its goal grammar is in
`goals`).

Faults (issue 5), in priority order: a path prefix `/_fault/<spec>/v1/messages` (every request
through that base URL), a request header `x-guistate-fault: <spec>`, then `script(...)` (one spec
per request, in order). Specs: `429`, `529`, `500` (optionally `:retry=SECONDS`), `slow:SECONDS`,
`malformed`, `max_tokens`, `refusal`, `hallucinate`, `unoffered` (the actor answers with a tool of another
platform's set that this request does not offer: `home` on Android, as a model used to iPhones might),
`disabled` (the actor taps the first element the prompt marks `disabled`). A query's `hallucinate` keeps the
evidence and answers a value the screen does not hold (`queries.wrong_value`); `partial` keeps it too and
answers a string cut short: a part of the words read, "Phone" for "Phone Case" (`queries.part_value`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Self

from pytest_guistate.llm.reference.api_limits import check_request
from pytest_guistate.llm.reference.policy import (
    actor_answer,
    check_answer,
    read_prompt,
    updater_answer,
)
from pytest_guistate.llm.reference.queries import part_value, query_answer, wrong_value
from pytest_guistate.llm.reference.tokens import request_segments, text_tokens
from pytest_guistate.support.httpserver import HttpReply, LoopbackServer, json_reply

__all__ = ["FAULTS", "ReferenceServer", "error_body", "serve"]

FAULTS = ("429", "529", "500", "slow", "malformed", "max_tokens", "refusal", "hallucinate", "unoffered",
          "disabled", "partial")
_ERRORS = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
           429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}
REFUSAL_TEXT = "I can't help with operating this app for that request."


def error_body(status: int, message: str, request_id: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": _ERRORS.get(status, "api_error"), "message": message},
            "request_id": request_id}


@dataclass
class _Cached:
    tokens: int
    expires: float


@dataclass
class ServedRequest:
    """What the server saw (auth headers removed), for tests to assert on."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    status: int
    fault: str = ""
    usage: dict[str, int] = field(default_factory=dict)


class ReferenceServer:
    """`ReferenceServer().start()`; point the SDK at `.url`. Thread-safe; one instance per test is cheap."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, min_cache_tokens: int = 1024,
                 cache_ttl_s: float = 300.0, requests_per_minute: int = 50, tokens_per_minute: int = 400_000) -> None:
        self._http = LoopbackServer(self._handle, host=host, port=port, name="reference-llm")
        self.min_cache_tokens = min_cache_tokens
        self.cache_ttl_s = cache_ttl_s
        self.rpm, self.tpm = requests_per_minute, tokens_per_minute
        self._lock = threading.Lock()
        self._script: deque[str] = deque()
        self._cache: dict[str, _Cached] = {}
        self._recent: deque[tuple[float, int]] = deque()
        self._counter = 0
        self.requests: list[ServedRequest] = []

    # -- lifecycle --------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return self._http.url

    def start(self) -> Self:
        self._http.start()
        return self

    def stop(self) -> None:
        self._http.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def script(self, *specs: str) -> None:
        """Queue faults: the next len(specs) message requests get them, in order ("" = none)."""
        for spec in specs:
            _parse_fault(spec)
        with self._lock:
            self._script.extend(specs)

    # -- HTTP -----------------------------------------------------------------------------------
    def _next_ids(self) -> tuple[str, str]:
        with self._lock:
            self._counter += 1
            digest = hashlib.sha256(f"ref:{self._counter}".encode()).hexdigest()
        return f"req_ref_{digest[:24]}", f"msg_ref_{digest[24:48]}"

    def _handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> HttpReply:
        request_id, message_id = self._next_ids()
        fault = ""
        if path.startswith("/_fault/"):
            _, _, rest = path.partition("/_fault/")
            fault, _, tail = rest.partition("/")
            path = "/" + tail
        fault = headers.get("x-guistate-fault", fault)
        base_headers = {"request-id": request_id}
        if method != "POST" or path.split("?")[0] not in ("/v1/messages", "/v1/messages/count_tokens"):
            return json_reply(404, error_body(404, f"no route {method} {path}", request_id), base_headers)
        if not (headers.get("x-api-key") or headers.get("authorization")):
            return json_reply(401, error_body(401, "x-api-key header is required", request_id), base_headers)
        if not headers.get("anthropic-version"):
            return json_reply(400, error_body(400, "anthropic-version header is required", request_id), base_headers)
        try:
            body = json.loads(raw or b"{}")
            _validate_request(body, counting=path.startswith("/v1/messages/count_tokens"))
        except (ValueError, TypeError) as exc:
            return json_reply(400, error_body(400, str(exc), request_id), base_headers)
        if path.startswith("/v1/messages/count_tokens"):
            return json_reply(200, {"input_tokens": sum(t for t, _ in request_segments(body))}, base_headers)
        if not fault:
            with self._lock:
                fault = self._script.popleft() if self._script else ""
        reply, usage = self._answer(body, fault, request_id, message_id, base_headers)
        safe = {k: v for k, v in headers.items() if k not in ("x-api-key", "authorization")}
        with self._lock:
            self.requests.append(ServedRequest(path, safe, body, reply.status, fault, usage))
        return reply

    def _rate_headers(self, tokens: int) -> dict[str, str]:
        now = time.time()
        with self._lock:
            self._recent.append((now, tokens))
            while self._recent and self._recent[0][0] < now - 60:
                self._recent.popleft()
            used_requests, used_tokens = len(self._recent), sum(t for _, t in self._recent)
        reset = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 60))
        return {"anthropic-ratelimit-requests-limit": str(self.rpm),
                "anthropic-ratelimit-requests-remaining": str(max(0, self.rpm - used_requests)),
                "anthropic-ratelimit-requests-reset": reset,
                "anthropic-ratelimit-tokens-limit": str(self.tpm),
                "anthropic-ratelimit-tokens-remaining": str(max(0, self.tpm - used_tokens)),
                "anthropic-ratelimit-tokens-reset": reset}

    def _answer(self, body: dict[str, Any], fault: str, request_id: str, message_id: str,
                headers: dict[str, str]) -> tuple[HttpReply, dict[str, int]]:
        kind, arg = _parse_fault(fault)
        if kind in ("429", "529", "500"):
            status = int(kind)
            extra = dict(headers)
            if arg is not None or status != 500:
                extra["retry-after"] = f"{arg if arg is not None else 0.05:g}"
            if status == 429:
                extra.update(self._rate_headers(0))
                extra["anthropic-ratelimit-requests-remaining"] = "0"
            text = {429: "Number of request tokens has exceeded your per-minute rate limit",
                    529: "Overloaded", 500: "Internal server error"}[status]
            return json_reply(status, error_body(status, text, request_id), extra), {}
        usage = self._usage(body)
        content, stop = self._content(body, kind)
        usage["output_tokens"] = sum(text_tokens(json.dumps(c)) for c in content)
        if kind == "max_tokens" or usage["output_tokens"] > int(body["max_tokens"]):
            content, stop = [{"type": "text", "text": "I will tap the"}], "max_tokens"
            usage["output_tokens"] = min(usage["output_tokens"], int(body["max_tokens"]))
        message = {"id": message_id, "type": "message", "role": "assistant", "model": body["model"],
                   "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage}
        total = usage["input_tokens"] + usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"]
        extra = dict(headers)
        extra.update(self._rate_headers(total + usage["output_tokens"]))
        delay = float(arg or 1.0) if kind == "slow" else 0.0
        return json_reply(200, message, extra, delay_s=delay), usage

    def _usage(self, body: dict[str, Any]) -> dict[str, int]:
        segments = request_segments(body)
        total = sum(t for t, _ in segments)
        last_mark = max((i for i, (_, mark) in enumerate(segments) if mark), default=-1)
        prefix_tokens = sum(t for t, _ in segments[: last_mark + 1])
        created = read = 0
        if last_mark >= 0 and prefix_tokens >= self.min_cache_tokens:
            key = hashlib.sha256(json.dumps(_prefix(body), sort_keys=True).encode()).hexdigest()
            now = time.time()
            with self._lock:
                hit = self._cache.get(key)
                if hit is not None and hit.expires > now:
                    read = prefix_tokens
                else:
                    created = prefix_tokens
                self._cache[key] = _Cached(prefix_tokens, now + self.cache_ttl_s)  # a hit refreshes the TTL
        return {"input_tokens": total - created - read, "cache_creation_input_tokens": created,
                "cache_read_input_tokens": read, "output_tokens": 0}

    def _content(self, body: dict[str, Any], fault: str) -> tuple[list[dict[str, Any]], str]:
        tools = {t.get("name") for t in body.get("tools") or []}
        if fault == "refusal":
            return [{"type": "text", "text": REFUSAL_TEXT}], "end_turn"
        view = read_prompt(body)
        if "update_task_state" in tools:
            name, args = updater_answer(view)
        elif "report_verdict" in tools:
            name, args = check_answer(view)
            if fault == "hallucinate":
                args["evidence"] = [{"element_id": "9/9/9/9", "quote": "Carol"}]
                args["verdict"] = "pass"
        elif "report_answer" in tools:  # guistate.query (issue 46): `hallucinate` answers a value not on screen
            name, args = query_answer(view)
            if fault == "hallucinate":
                args = wrong_value(args)
            elif fault == "partial":
                args = part_value(args)
        elif "tap" in tools:
            name, args = actor_answer(view)
            if fault == "hallucinate":
                name, args = "tap", {"element_id": "9/9/9/9", "reason": "tap the button I remember"}
            elif fault == "malformed":
                name, args = "tap", {"element_id": 42, "x": "left"}
            elif fault == "disabled":
                row = next((e for e in view.elements if e.get("disabled")), None)
                if row is not None:
                    name, args = "tap", {"element_id": row["id"], "reason": "tap it, it is right there"}
            elif fault == "unoffered":
                name = next((n for n in ("home", "back") if n not in tools), "press_key")
                args = {"reason": f"{name} is how I leave apps"}
        else:
            return [{"type": "text", "text": "The reference policy needs tools to answer."}], "end_turn"
        if fault == "malformed" and name != "tap":
            args = {"unexpected": True}
        use_id = "toolu_ref_" + hashlib.sha256(json.dumps([name, args], sort_keys=True).encode()).hexdigest()[:20]
        return [{"type": "tool_use", "id": use_id, "name": name, "input": args}], "tool_use"


def _prefix(body: dict[str, Any]) -> list[Any]:
    """The cacheable request prefix as data: tools, system, messages up to the last breakpoint."""
    items: list[Any] = [("tool", t) for t in body.get("tools") or []]
    system = body.get("system")
    items += [("system", system)] if isinstance(system, str) else [("system", b) for b in system or []]
    for message in body.get("messages") or []:
        content = message.get("content")
        blocks = [content] if isinstance(content, str) else content or []
        items += [(message.get("role"), b) for b in blocks]
    marks = [i for i, (_, item) in enumerate(items) if isinstance(item, dict) and "cache_control" in item]
    return items[: marks[-1] + 1] if marks else []


def _parse_fault(spec: str) -> tuple[str, float | None]:
    if not spec:
        return "", None
    kind, _, arg = spec.partition(":")
    if kind not in FAULTS:
        raise ValueError(f"unknown fault {spec!r}; known: {', '.join(FAULTS)}")
    if not arg:
        return kind, None
    value = arg.split("=", 1)[-1]
    try:
        return kind, float(value)
    except ValueError:
        raise ValueError(f"fault {spec!r}: {value!r} is not a number of seconds") from None


def _validate_request(body: Any, *, counting: bool) -> None:
    if not isinstance(body, dict):
        raise TypeError("request body must be a JSON object")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise ValueError("model: field required")
    if not counting and (not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1):
        raise ValueError("max_tokens: must be an integer >= 1")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages: at least one message is required")
    for i, message in enumerate(messages):
        if message.get("role") != ("user" if i % 2 == 0 else "assistant"):
            raise ValueError(f"messages.{i}.role: roles must alternate user/assistant starting with user")
    for i, tool in enumerate(body.get("tools") or []):
        if not isinstance(tool.get("name"), str) or not isinstance(tool.get("input_schema"), dict):
            raise TypeError(f"tools.{i}: name and input_schema are required")
    check_request(body)  # what the real API refuses with a 400 (issue 21 item 7): images, tool pairs, breakpoints


def serve(argv: list[str] | None = None) -> int:
    """`guistate llm-server --port P`: run the reference server until interrupted."""
    parser = argparse.ArgumentParser(prog="guistate llm-server", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--min-cache-tokens", type=int, default=1024)
    args = parser.parse_args(argv)
    server = ReferenceServer(host=args.host, port=args.port, min_cache_tokens=args.min_cache_tokens).start()
    print(f"reference Messages API on {server.url} (export ANTHROPIC_BASE_URL={server.url})", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0
    finally:
        server.stop()
