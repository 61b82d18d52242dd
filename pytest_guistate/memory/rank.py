"""Memory ranking (MAGNET §2.3.2, appendix E): relevance first, then recency and frequency.

Retrieval takes the `top_n` most relevant entries and orders them by relevance first (near-equal
relevance counts as equal), then by a retention score in which an entry's strength grows with how
often it was used: a frequently used entry decays slower. A new entry starts with an access count of 1 (the paper's initial value, which also keeps
the strength finite); equal scores go to the newer entry. Eviction drops the lowest retention.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

__all__ = ["RankPolicy", "Rankable", "rank", "retention"]


class Rankable(Protocol):
    @property
    def created(self) -> float: ...

    @property
    def last_access(self) -> float: ...

    @property
    def access_count(self) -> int: ...


T = TypeVar("T", bound=Rankable)


@dataclass(frozen=True)
class RankPolicy:
    """`half_life_s`: age at which an entry used once keeps half its score (30 days by default:
    CI stores see a release train, not a single run)."""

    half_life_s: float = 30 * 24 * 3600.0
    top_n: int = 8
    top_k: int = 4
    relevance_step: float = 0.05

    def __post_init__(self) -> None:
        if self.half_life_s <= 0 or self.top_n < 1 or self.top_k < 1 or self.relevance_step <= 0:
            raise ValueError(f"RankPolicy needs half_life_s > 0 and top_n, top_k >= 1, got {self}")


def retention(age_s: float, access_count: int, half_life_s: float) -> float:
    """exp-decay with a strength that grows with log(count): count 1 -> `half_life_s`."""
    strength = half_life_s * (1.0 + math.log(max(1, access_count)))
    return float(2.0 ** (-max(0.0, age_s) / strength))


def rank(
    entries: Sequence[T],
    relevance: Callable[[T], float],
    now: float,
    policy: RankPolicy | None = None,
    *,
    top_k: int | None = None,
) -> list[T]:
    """The `top_k` best entries: the `top_n` most relevant, ordered by relevance (in steps of
    `relevance_step`, so near-equal relevance counts as equal), then retention, then newer first."""
    policy = policy or RankPolicy()
    relevant = [(relevance(entry), entry) for entry in entries]
    relevant = [pair for pair in relevant if pair[0] > 0]
    relevant.sort(key=lambda pair: (pair[0], pair[1].created), reverse=True)
    shortlist = relevant[: policy.top_n]
    step = policy.relevance_step
    shortlist.sort(
        key=lambda pair: (round(pair[0] / step), round(retention(now - pair[1].last_access, pair[1].access_count,
                                                                 policy.half_life_s), 9), pair[1].created),
        reverse=True,
    )
    return [entry for _, entry in shortlist[: top_k or policy.top_k]]
