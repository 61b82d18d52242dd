"""The fault suite's contract (issue 14): every case ends within its bound, names its fault, keeps
every finished step on disk and leaks no secret.

Inner runs are pytester runs against a `FaultProxy` in front of the simulated phone (in-process
unless the case kills its process). Each inner test registers `SECRET` and arms its fault with
`arm()` between two steps, so "the steps before the fault" is exact, not a request count.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .fault_proxy import FaultProxy

SECRET = "hunter2-never-in-logs"

# The inner test most cases run: two steps on the Feed, the fault armed between them.
TWO_STEPS = '''
import os
import urllib.request

import pytest
from pytest_guistate import gone

SECRET = "hunter2-never-in-logs"


def arm():
    urllib.request.urlopen(os.environ["FAULT_PROXY"] + "/__arm", timeout=5).read()


@pytest.mark.guistate(app="com.guistate.feed"{marker})
def test_flow(device, guistate):
    device.known_screens = 0  # step 2 ends on the screen step 1 began on: read its tree, where a fault may be
    guistate.secret(SECRET)
    guistate.remember("password", SECRET)
    guistate.goal("Open and cancel Bob's delete dialog", plan=["dialog open", "dialog closed"])
    with guistate.step("open the delete dialog", expect="Delete post by Bob?"):
        device.tap(desc="Delete post by Bob")
    guistate.milestone("dialog open")
    guistate.observe()  # step 2's before-frame: taken now, before the fault
    arm()
    {second}
    guistate.milestone("dialog closed")
'''

SECOND_BACK = '''with guistate.step("cancel the dialog", expect=gone("Delete post by Bob?")):
        device.back()'''
SECOND_TAP = '''with guistate.step("tap Cancel", expect=gone("Delete post by Bob?")):
        device.tap(id="android:id/button2")'''


def two_steps(second: str = SECOND_BACK, marker: str = "") -> str:
    return TWO_STEPS.format(second=second, marker=marker)


@dataclass
class Outcome:
    result: pytest.RunResult
    elapsed_s: float
    root: Path  # the artifacts dir
    case: str = ""  # the outer test's id, for benchmarks/fault_table.py

    @property
    def text(self) -> str:
        return self.result.stdout.str() + "\n" + self.result.stderr.str()

    def folders(self) -> list[Path]:
        return sorted(p for p in self.root.iterdir() if p.is_dir()) if self.root.is_dir() else []

    def journal(self) -> list[dict[str, object]]:
        folders = self.folders()
        assert len(folders) == 1, f"expected one test folder under {self.root}, found {folders}"
        return [json.loads(line) for line in (folders[0] / "journal.jsonl").read_text("utf-8").splitlines()]

    def finished_steps(self) -> list[str]:
        return [str(e["record"]["name"]) for e in self.journal() if e["type"] == "step"]  # type: ignore[index]

    def assert_contract(self, *, bound_s: float, names: str | tuple[str, ...], steps: list[str],
                        suffix: str = "") -> None:
        """Within its bound, the fault named, the finished steps on disk, no secret anywhere."""
        assert self.elapsed_s < bound_s, f"the case took {self.elapsed_s:.1f} s, beyond its {bound_s} s bound"
        for name in (names,) if isinstance(names, str) else names:
            assert name in self.text, f"{name!r} not in the output:\n{self.text[-3000:]}"
        if steps:
            assert self.finished_steps()[:len(steps)] == steps
            folder = self.folders()[0]
            assert (folder / "report.html").is_file(), "report.html was not built from the journal"
        self.assert_no_secret()
        self.record(names, suffix=suffix)

    def call_seconds(self) -> float:
        """The inner test's call phase as pytest timed it (in-process runs only)."""
        calls = [r for r in self.result.reprec.getreports("pytest_runtest_logreport") if r.when == "call"]
        return float(calls[-1].duration)

    def record(self, names: str | tuple[str, ...], message: str = "", suffix: str = "",
               kept: int | None = None) -> None:
        """With GUISTATE_FAULT_TABLE=path (benchmarks/fault_table.py), append this case's row."""
        table = os.environ.get("GUISTATE_FAULT_TABLE")
        if not table:
            return
        wanted = (names,) if isinstance(names, str) else names
        errors = [re.sub(r"^E\s+(?:[\w.]+\.)?", "", ln.strip()) for ln in self.text.splitlines()
                  if re.match(r"^E\s+[\w.]*(Error|Timeout|Gone|Detected|Failed|NotFound|Exception)\b", ln.strip())]
        line = message or next((e for e in errors if any(w in e for w in wanted)), errors[0] if errors else "(passed)")
        line = line[:160 - len(suffix)] + suffix
        if kept is None:
            kept = len(self.finished_steps()) if self.folders() else 0
        row = {"case": self.case, "seconds": round(self.elapsed_s, 2),
               "message": line, "steps_kept": kept}
        with open(table, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")

    def assert_no_secret(self) -> None:
        assert SECRET not in self.text, "the secret reached the terminal output"
        for path in self.root.rglob("*") if self.root.is_dir() else []:
            if path.is_file():
                assert SECRET.encode() not in path.read_bytes(), f"the secret reached {path}"


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultProxy]:
    fault_proxy = FaultProxy().start()
    monkeypatch.setenv("FAULT_PROXY", fault_proxy.url)
    yield fault_proxy
    fault_proxy.stop()


@pytest.fixture
def run_inner(pytester: pytest.Pytester, proxy: FaultProxy, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """Run the inner suite against the proxy with 1 s device deadlines; `subprocess=True` for kills."""

    def run(source: str, *args: str, subprocess: bool = False, timeout: float = 60) -> Outcome:
        pytester.makepyfile(test_inner=source)
        base = ("-p", "no:cacheprovider", f"--guistate-device={proxy.url}", "--guistate=standard",
                "--guistate-artifacts=out", "--guistate-memory=off", "--guistate-command-timeout=1",
                "-o", "guistate_session_timeout=2", "-o", "guistate_settle_timeout=0.5")
        started = time.monotonic()
        if subprocess:
            result = pytester.runpytest_subprocess(*base, *args, timeout=timeout)
        else:
            result = pytester.runpytest_inprocess(*base, *args)
        return Outcome(result, time.monotonic() - started, pytester.path / "out", request.node.name)

    return run
