"""What a run collected and what finished: the summary's proof that no test was lost (issue 22).

A test that dies with its xdist worker (SIGKILL, OOM killer, a segfault in a driver) never writes
its summary row, so a summary made of rows alone passes a run that lost a test. The controller
(or the single process) therefore keeps a ledger: the node ids collected (after `-k`/`-m`
deselection, which is not a loss), the final pytest outcome of every test whose last report
(teardown) arrived, the worker crashes xdist reported, and why the run stopped early (`-x`,
`--maxfail`, Ctrl-C). Every collected test without a final report becomes a summary row whose
outcome says why:

- `crashed`: the process running it died (xdist's crash report, or no other explanation);
- `not_run`: the run stopped before it, or while it ran (`-x`/`--maxfail`, Ctrl-C, a worker that
  went down with it still queued).

Both block the gate whatever its options. No pytest import here: the pytest layer feeds it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pytest_guistate.report.redact import id_placeholder

__all__ = ["LOST_OUTCOMES", "RunLedger", "id_secrets", "masked_ids", "pytest_outcome"]

_PLACEHOLDER = re.compile(r"redacted-([0-9a-f]{8})")

LOST_OUTCOMES = ("crashed", "not_run")


def pytest_outcome(when: str, outcome: str, previous: str | None) -> str:
    """Fold one phase's report into a test's outcome (passed < skipped < failed/error; error outside the call)."""
    if outcome == "failed":
        now = "failed" if when == "call" else "error"
        return previous if previous in ("failed", "error") else now
    if outcome == "skipped" and previous in (None, "passed"):
        return "skipped"
    return previous or "passed"


@dataclass
class RunLedger:
    """The controller's account of the run; `lost()` names every collected test that never finished."""

    collected: list[str] = field(default_factory=list)
    outcomes: dict[str, str] = field(default_factory=dict)  # tests whose teardown report arrived
    crashes: dict[str, str] = field(default_factory=dict)  # nodeid -> what xdist said about the crash
    workers_down: list[str] = field(default_factory=list)  # "gw1 went down: <error>"
    stop_reason: str | None = None  # why the run stopped before its end, when it did
    _partial: dict[str, str] = field(default_factory=dict, repr=False)  # outcome so far, before teardown
    _seen: set[str] = field(default_factory=set, repr=False)

    def add_collected(self, nodeids: Iterable[str]) -> None:
        """xdist sends each worker's collection (the same list): keep the first order, no duplicates."""
        for nodeid in nodeids:
            if nodeid not in self._seen:
                self._seen.add(nodeid)
                self.collected.append(nodeid)

    def report(self, nodeid: str, when: str, outcome: str) -> None:
        """One phase's report; the teardown report is the test's final one."""
        if when not in ("setup", "call", "teardown"):
            return  # xdist's synthesized crash report (when="???") is recorded by `crash`
        self._partial[nodeid] = pytest_outcome(when, outcome, self._partial.get(nodeid))
        if when == "teardown":
            self.outcomes[nodeid] = self._partial.pop(nodeid)
            self.crashes.pop(nodeid, None)  # re-run after a crash (pytest-rerunfailures) and finished

    def crash(self, nodeid: str, reason: str) -> None:
        self.crashes[nodeid] = reason
        self._partial.pop(nodeid, None)

    def worker_down(self, worker: str, error: object) -> None:
        self.workers_down.append(f"worker {worker} went down: {str(error).strip()[:200]}")

    def namer(self, reported: Iterable[str] = ()) -> Callable[[str], str]:
        """Collected ids are pytest's raw ones; reports and rows may name a test by its redacted id (a secret in
        a parametrize id, docs/reports.md "What is never written"). The secrets those names prove (`id_secrets`) map a
        collected id to the name the rest of the run uses, so a redacted test is matched, never written raw."""
        secrets = sorted(id_secrets(self.collected, [*self.outcomes, *self.crashes, *reported]), key=len, reverse=True)

        def name(nodeid: str) -> str:
            for secret in secrets:
                nodeid = nodeid.replace(secret, id_placeholder(secret))
            return nodeid

        return name

    def lost(self, reported: Iterable[str] = ()) -> dict[str, tuple[str, str]]:
        """Collected tests with neither a final report nor a summary row: name -> (outcome, reason)."""
        reported = list(reported)
        name = self.namer(reported)
        done = {name(n) for n in [*self.outcomes, *reported]}
        crashes = {name(n): why for n, why in self.crashes.items()}
        partial = {name(n) for n in self._partial}
        lost: dict[str, tuple[str, str]] = {}
        for nodeid in (name(n) for n in self.collected):
            if nodeid in done:
                continue
            if nodeid in crashes:
                lost[nodeid] = ("crashed", crashes[nodeid])
            elif nodeid in partial and self.stop_reason:
                lost[nodeid] = ("not_run", f"stopped while running: {self.stop_reason}")
            elif nodeid in partial:
                lost[nodeid] = ("crashed", "started but never finished (no teardown report)")
            elif self.stop_reason:
                lost[nodeid] = ("not_run", f"not run: the run stopped early ({self.stop_reason})")
            elif self.workers_down:
                lost[nodeid] = ("not_run", "not run: " + "; ".join(self.workers_down))
            else:
                lost[nodeid] = ("crashed", "collected but never reported (the process running it died?)")
        return lost


def masked_ids(nodeids: Iterable[str]) -> list[str]:
    """Node ids for the in-progress marker: a parametrized id's parameters become their `id_placeholder`.
    A secret in an id is known only once its test registers it, and the marker is written at collection;
    the end of the run writes the ids again, redacted where a test proved a secret."""
    masked = []
    for nodeid in nodeids:
        base, bracket, params = nodeid.partition("[")
        masked.append(f"{base}[{id_placeholder(params[:-1])}]" if bracket and params.endswith("]") else nodeid)
    return masked


def id_secrets(raw_ids: Iterable[str], named_ids: Iterable[str]) -> set[str]:
    """The secrets behind `redacted-<digest>` names: each named id is matched against the raw ids, and a part
    counts only when its SHA-256 gives the digest the name carries (so nothing is guessed)."""
    raw = list(raw_ids)
    secrets: set[str] = set()
    for named in named_ids:
        digests = _PLACEHOLDER.findall(named)
        if not digests:
            continue
        pieces = _PLACEHOLDER.split(named)[::2]  # the text around the placeholders
        pattern = re.compile("(.+?)".join(re.escape(piece) for piece in pieces))
        for candidate in raw:
            found = pattern.fullmatch(candidate)
            if found and all(hashlib.sha256(part.encode("utf-8")).hexdigest()[:8] == digest
                             for part, digest in zip(found.groups(), digests, strict=True)):
                secrets.update(found.groups())
                break
    return secrets
