"""The action cache's part of the merge gate (issue 21): `--max-cache-live N` blocks a test whose
LLM steps needed the live actor more than N times (0: every step must come from the cache), and
`--min-cache-hit-rate F` a test whose cached steps hit less often than F. Tests that did not run in
a cache mode (no `llm_cache` in the summary, or no hit rate) are not judged here."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_cache_options", "cache_reasons", "cache_summary"]


def cache_summary(report: dict[str, Any] | None) -> dict[str, Any] | None:
    """The summary's compact view of a test's cache report (`CacheSession.report`)."""
    if not report:
        return None
    keys = ("mode", "hits", "misses", "live", "hit_rate", "tokens_used", "tokens_saved", "rewritten", "path")
    out = {k: report.get(k) for k in keys}
    out["first_miss"] = (report.get("miss_messages") or [None])[0]
    out["healed"] = healed_steps(report)
    return out


def healed_steps(report: dict[str, Any]) -> list[str]:
    """Replayed steps that hit only because the memory healed their target: each one a locator to
    re-record (the cache still names the old element)."""
    return [f"step {s.get('n')} '{s.get('name')}' {s.get('reason')}" for s in report.get("steps") or []
            if s.get("status") == "hit" and str(s.get("reason") or "").startswith("healed:")]


def cache_reasons(cache: dict[str, Any] | None, *, max_live: int | None = None,
                  min_hit_rate: float | None = None) -> list[str]:
    """Why the cache figures of one test block the merge ([] when they do not)."""
    if not cache or cache.get("hit_rate") is None:
        return []
    reasons = []
    live = int(cache.get("live") or 0)
    if max_live is not None and live > max_live:
        reasons.append(f"{live} LLM step(s) needed the live actor > {max_live}"
                       + (f" ({cache['first_miss']})" if cache.get("first_miss") else ""))
    rate = float(cache["hit_rate"])
    if min_hit_rate is not None and rate < min_hit_rate:
        reasons.append(f"action cache hit rate {rate:.2f} < {min_hit_rate:.2f}")
    return reasons


def add_cache_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("action cache (--guistate-llm=cache / cache-fallback runs)")
    group.add_argument("--max-cache-live", type=int, default=None, metavar="N",
                       help="fail a test whose LLM steps needed the live actor more than N times (0: none)")
    group.add_argument("--min-cache-hit-rate", type=float, default=None, metavar="F",
                       help="fail a test whose cached steps hit less often than F (0..1)")
