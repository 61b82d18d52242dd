"""A device that answers wrongly, or not at all, fails the test naming what came back (issue 14)."""

from __future__ import annotations

import json

import pytest

from .conftest import two_steps
from .fault_proxy import Rule

INVALID_SESSION = json.dumps({"value": {"error": "invalid session id", "message": "A session is either "
                                        "terminated or not started", "stacktrace": ""}})

CASES = [
    ("HTTP 500", Rule("GET", r"/screenshot$", "status", armed=False),
     ("DeviceError", "screenshot failed on {url}: boom")),
    ("404 invalid session (expired by the server)",
     Rule("GET", r"/screenshot$", "status", status=404, body=INVALID_SESSION, armed=False),
     ("A session is either terminated or not started", "invalid session id: the server no longer knows")),
    ("garbage JSON", Rule("GET", r"/screenshot$", "status", status=200, body="{value: [garbage", armed=False),
     ("FrameError", "the server sent malformed JSON")),
    ("dies between steps", Rule("GET", r".", "close", armed=False),
     ("DeviceGone", "device at {url} dropped goBack: RemoteDisconnected")),
]


@pytest.mark.parametrize(("what", "rule", "names"), CASES, ids=[c[0] for c in CASES])
def test_a_bad_answer_is_named(run_inner, proxy, what: str, rule: Rule, names: tuple[str, ...]) -> None:
    proxy.add(rule)
    if what == "dies between steps":
        proxy.add(Rule("POST", r".", "close", armed=False), Rule("DELETE", r".", "close", armed=False))
    out = run_inner(two_steps())
    out.result.assert_outcomes(failed=1, errors=1 if what == "dies between steps" else 0)
    out.assert_contract(bound_s=30, names=tuple(n.format(url=proxy.url) for n in names),
                        steps=["open the delete dialog"])
    if what == "dies between steps":
        assert f"device {proxy.url} died" in out.text and "taken out of the pool" in out.text
