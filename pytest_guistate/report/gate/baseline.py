"""`guistate gate --baseline OLD`: regressions of a run against an earlier one (the main branch's last).

A merge gate that only looks at one run lets a suite rot: a test that starts needing a locator heal
or a stale-screen recovery, or takes half again as many steps or tokens, still passes. Compared
with the baseline, per test (matched by node id; when a node id appears twice, the last row wins):

- `outcome`: passed before, failed / errored / killed now;
- `heals`: more locators healed by memory than before (a heal means a locator broke);
- `stale`: more stale-screen episodes than before;
- `steps`, `tokens`, `cost`: above the old value times a ratio (only when the old value is > 0).

Tests only in the new run or only in the baseline are listed, never failures. Skipped tests (on
either side) are not compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pytest_guistate.report.summary import TestSummary

__all__ = ["BAD_OUTCOMES", "CHECKS", "Comparison", "Thresholds", "compare", "healed", "regressions"]

CHECKS = ("outcome", "heals", "stale", "steps", "tokens", "cost")
BAD_OUTCOMES = ("failed", "error", "killed")


@dataclass(frozen=True)
class Thresholds:
    """Allowed growth factors (1.5 = +50%) and the checks switched off."""

    steps_ratio: float = 1.5
    tokens_ratio: float = 1.5
    cost_ratio: float = 1.5
    ignore: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        for name in ("steps_ratio", "tokens_ratio", "cost_ratio"):
            if getattr(self, name) < 1.0:
                raise ValueError(f"{name} must be >= 1.0 (1.5 allows +50%), got {getattr(self, name)}")
        unknown = set(self.ignore) - set(CHECKS)
        if unknown:
            raise ValueError(f"unknown baseline check(s) {sorted(unknown)}; known: {', '.join(CHECKS)}")


def healed(test: TestSummary) -> list[str]:
    """Locators healed by memory in this test."""
    return [str(h.get("locator")) for h in test.heals if h.get("status") == "healed"]


def _ratio(name: str, old: float | None, new: float | None, limit: float, unit: str = "") -> str | None:
    if old is None or new is None or old <= 0 or new <= old * limit:
        return None
    growth = (new / old - 1.0) * 100
    return f"{name} {old:g}{unit} -> {new:g}{unit} (+{growth:.0f}% > +{(limit - 1.0) * 100:.0f}%)"


def regressions(old: TestSummary, new: TestSummary, thresholds: Thresholds = Thresholds()) -> list[str]:
    """Why `new` is worse than `old` ([] when it is not)."""
    if "skipped" in (old.outcome, new.outcome):
        return []
    on = [check for check in CHECKS if check not in thresholds.ignore]
    found: list[str] = []
    if "outcome" in on and old.outcome == "passed" and new.outcome in BAD_OUTCOMES:
        found.append(f"passed before, {new.outcome} now")
    if "heals" in on and len(healed(new)) > len(healed(old)):
        found.append(f"needs a locator heal: {len(healed(old))} -> {len(healed(new))} healed "
                     f"({', '.join(healed(new))})")
    if "stale" in on and new.stale_episodes > old.stale_episodes:
        found.append(f"stale-screen episodes {old.stale_episodes} -> {new.stale_episodes}")
    checks = [("steps", "steps", old.steps, new.steps, thresholds.steps_ratio, ""),
              ("tokens", "LLM tokens", old.llm_tokens, new.llm_tokens, thresholds.tokens_ratio, ""),
              ("cost", "LLM cost", old.llm_cost_usd, new.llm_cost_usd, thresholds.cost_ratio, " USD")]
    for check, label, before, after, limit, unit in checks:
        reason = _ratio(label, before, after, limit, unit) if check in on else None
        if reason:
            found.append(reason)
    return found


@dataclass
class Comparison:
    """The new run against the baseline: old rows by node id, regressions, new and removed tests."""

    old: dict[str, TestSummary] = field(default_factory=dict)
    regressions: dict[str, list[str]] = field(default_factory=dict)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def compare(old: Sequence[TestSummary], new: Sequence[TestSummary], thresholds: Thresholds = Thresholds()) -> Comparison:
    before = {t.nodeid: t for t in old}
    after = {t.nodeid: t for t in new}
    result = Comparison(old={k: v for k, v in before.items() if k in after})
    result.added = [nodeid for nodeid in after if nodeid not in before]
    result.removed = [nodeid for nodeid in before if nodeid not in after]
    for nodeid, test in after.items():
        if nodeid in before:
            found = regressions(before[nodeid], test, thresholds)
            if found:
                result.regressions[nodeid] = found
    return result
