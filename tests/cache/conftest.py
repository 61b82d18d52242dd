"""Fixtures for the action cache's tests: an inner suite with the example suite's two LLM tests (the
Feed delete and the two-shop purchase), its committed caches, the reference server, app drift.

Every inner test writes the phone's ground truth (`device.action_log()`) to `logs/<test>.json`, so
the outer test can say what really happened, whatever the inner outcome."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_guistate.llm.reference.server import ReferenceServer
from tests.helpers.inner_run import run_inprocess

EXAMPLE = Path(__file__).resolve().parents[2] / "example_suite"
FEED_TEST = "test_actor_deletes_one_post_and_an_ai_check_confirms_it"
SHOP_TEST = "test_actor_buys_in_the_cheaper_shop"

CONFTEST = '''
import json
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def ground_truth(request, device):
    yield
    Path("logs").mkdir(exist_ok=True)
    Path("logs", request.node.name + ".json").write_text(json.dumps(device.action_log()))
'''


@pytest.fixture
def suite(pytester: pytest.Pytester) -> Iterator[Callable[..., pytest.RunResult]]:
    """The inner suite; `run(*args, drift=None)` runs it in-process (drift: a `guistate:appVersion`)."""
    shutil.copy(EXAMPLE / "test_llm.py", pytester.path / "test_llm.py")
    shutil.copy(EXAMPLE / "sim_apps.py", pytester.path / "sim_apps.py")
    pytester.makeconftest(CONFTEST)
    pytester.makeini("[pytest]\nguistate_llm_updater = off\n")

    def run(*args: str, drift: str | int | None = None) -> pytest.RunResult:
        extra: list[str] = ["-p", "no:cacheprovider", "--guistate-memory=off", "--guistate-summary=summary.json"]
        if drift is not None:
            caps = pytester.path / "caps.json"
            caps.write_text(json.dumps({"guistate:appVersion": drift}))
            extra.append(f"--guistate-caps={caps}")
        return run_inprocess(pytester, *extra, *args)

    yield run


def committed_caches(pytester: pytest.Pytester, platform: str = "android") -> Path:
    """Copy the example suite's committed caches (recorded on app version 1) into the inner suite."""
    source = EXAMPLE / "cassettes" / "test_llm"
    target = pytester.path / "cassettes" / "test_llm"
    for sub in ("", "ios"):
        (target / sub).mkdir(parents=True, exist_ok=True)
        for path in (source / sub).glob("*.actions.json"):
            shutil.copy(path, target / sub / path.name)
    return target / ("ios" if platform == "ios" else "")


def action_log(pytester: pytest.Pytester, test: str) -> list[dict[str, Any]]:
    path = pytester.path / "logs" / f"{test}.json"
    return json.loads(path.read_text()) if path.exists() else []


def summary_rows(pytester: pytest.Pytester) -> dict[str, dict[str, Any]]:
    data = json.loads((pytester.path / "summary.json").read_text())
    return {row["nodeid"].rpartition("::")[2]: row for row in data["tests"]}


def deletes(pytester: pytest.Pytester) -> list[str]:
    return [e["author"] for e in action_log(pytester, FEED_TEST) if e["action"] == "delete_post"]


def purchases(pytester: pytest.Pytester) -> list[tuple[str, str]]:
    return [(e["shop"], e["product"]) for e in action_log(pytester, SHOP_TEST) if e["action"] == "add_to_cart"]


@pytest.fixture
def reference_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ReferenceServer]:
    """The local Messages API stand-in, reached by the real SDK through ANTHROPIC_BASE_URL."""
    with ReferenceServer() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-cache-0000")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server
