"""What a short scripted test costs the device outside its steps (issue 12): a light test with no
check fetches no page source at all, not even at its end (the FINISH anchor, which light does not
record, once asked the last screen's tree for its app), in a new or a reused session; at standard
the FINISH anchor still names the app. Counted by `Device.page_source_calls`, read after the
`guistate` fixture has finished the test."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

SUITE = '''
import json
import pytest
from pathlib import Path


@pytest.fixture
def count(device, request):
    yield
    # torn down after `guistate` (requested after this fixture): the test's finish is counted
    with open(Path(request.config.rootpath) / "counts.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps({{"test": request.node.name, "sources": device.page_source_calls}}) + "\\n")


@pytest.mark.guistate(app="com.guistate.feed", caps={{"guistate:clock": "frozen"}})
@pytest.mark.parametrize("n", range(2))
def test_open_and_cancel(count, device, guistate, n):
    guistate.goal("open and cancel the delete dialog", plan=[])
    guistate.perform("open", lambda: device.tap(desc="Delete post by Bob"){expect_open})
    guistate.perform("cancel", lambda: device.tap(id="android:id/button2"){expect_cancel})
'''


def _run(pytester: pytest.Pytester, inner: Callable[..., pytest.RunResult], *args: str,
         expect: bool = False) -> list[int]:
    counts = pytester.path / "counts.jsonl"
    if counts.exists():
        counts.unlink()
    pytester.makepyfile(test_requests=SUITE.format(
        expect_open=', expect="Delete post?"' if expect else "",
        expect_cancel=', expect=lambda obs: not obs.tree.find_text("Delete post?")' if expect else ""))
    result = inner("--guistate-memory=off", "--guistate-retain=on", "--guistate-artifacts=art", *args)
    result.assert_outcomes(passed=2)
    return [json.loads(line)["sources"] for line in counts.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("session", ["test", "worker"])
def test_light_without_checks_fetches_no_page_source(pytester: pytest.Pytester, inner: Callable[..., pytest.RunResult],
                                                     session: str) -> None:
    assert _run(pytester, inner, "--guistate=light", f"--guistate-session={session}") == [0, 0]


def test_light_with_checks_fetches_what_they_read(pytester: pytest.Pytester,
                                                  inner: Callable[..., pytest.RunResult]) -> None:
    counts = _run(pytester, inner, "--guistate=light", "--guistate-session=test", expect=True)
    assert all(n >= 2 for n in counts), counts  # each check reads its after-tree


def test_standard_finish_anchor_still_names_the_app(pytester: pytest.Pytester,
                                                    inner: Callable[..., pytest.RunResult]) -> None:
    counts = _run(pytester, inner, "--guistate=standard", "--guistate-session=test")
    assert all(n >= 2 for n in counts), counts
    finishes = [json.loads(line) for journal in sorted(Path(pytester.path, "art").rglob("journal.jsonl"))
                for line in journal.read_text(encoding="utf-8").splitlines()]
    finishes = [e for e in finishes if e.get("type") == "anchor" and e.get("anchor", e).get("type") == "FINISH"]
    assert finishes and all(e.get("anchor", e).get("app") == "com.guistate.feed" for e in finishes), finishes
