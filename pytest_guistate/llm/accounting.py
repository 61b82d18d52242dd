"""Token and cost accounting per call, per step and per test, from the responses' `usage`.

Every number comes from what the API (or the reference server) reported; nothing is estimated
here. Cost uses a per-model price table (USD per million tokens); cache writes cost 1.25x the
input price and cache reads 0.1x, as Anthropic prices 5-minute prompt caching. Unknown models get
no cost (None) rather than a guess; `Price` can be given explicitly (ini `guistate_llm_price`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["CallUsage", "Price", "TokenLedger", "price_for"]


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float

    def cost(self, call: CallUsage) -> float:
        per = self.input_per_mtok / 1e6
        return (call.input_tokens * per + call.cache_creation_input_tokens * per * 1.25
                + call.cache_read_input_tokens * per * 0.1 + call.output_tokens * self.output_per_mtok / 1e6)

    @classmethod
    def parse(cls, text: str) -> Price:
        try:
            inp, out = (float(v) for v in text.split(","))
        except ValueError:
            raise ValueError(f"price {text!r}: expected 'INPUT,OUTPUT' in USD per million tokens, e.g. '3,15'") from None
        return cls(inp, out)


_PRICES = {"claude-haiku-4-5": Price(1, 5), "claude-sonnet-4": Price(3, 15), "claude-opus-4-5": Price(5, 25),
           "claude-opus-4-6": Price(5, 25)}


def price_for(model: str) -> Price | None:
    for prefix, price in sorted(_PRICES.items(), key=lambda kv: -len(kv[0])):
        if model.startswith(prefix):
            return price
    return None


@dataclass
class CallUsage:
    """One Messages API call as billed."""

    purpose: str  # actor | updater | check | query
    step: int | None
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    request_id: str = ""
    retries: int = 0
    stop_reason: str = ""
    elapsed_s: float = 0.0
    cost_usd: float | None = None
    error: str = ""

    @property
    def total_input(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    @property
    def total_tokens(self) -> int:
        return self.total_input + self.output_tokens

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["total_tokens"] = self.total_tokens
        data["elapsed_s"] = round(self.elapsed_s, 4)
        if self.cost_usd is not None:
            data["cost_usd"] = round(self.cost_usd, 6)
        return data


@dataclass
class TokenLedger:
    """All calls of one test; `budget` (tokens, input incl. cache + output) is checked by the client."""

    model: str
    budget: int | None = None
    price: Price | None = None
    calls: list[CallUsage] = field(default_factory=list)

    def add(self, call: CallUsage) -> None:
        if self.price is not None:
            call.cost_usd = self.price.cost(call)
        self.calls.append(call)

    @property
    def used(self) -> int:
        return sum(c.total_tokens for c in self.calls)

    def totals(self) -> dict[str, Any]:
        keys = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        totals: dict[str, Any] = {k: sum(getattr(c, k) for c in self.calls) for k in keys}
        totals["total_tokens"] = self.used
        totals["calls"] = len(self.calls)
        totals["retries"] = sum(c.retries for c in self.calls)
        totals["cost_usd"] = None if self.price is None else round(sum(c.cost_usd or 0.0 for c in self.calls), 6)
        return totals

    def by_step(self) -> dict[str, dict[str, int]]:
        steps: dict[str, dict[str, int]] = {}
        for call in self.calls:
            key = "setup" if call.step is None else str(call.step)
            entry = steps.setdefault(key, {"calls": 0, "input": 0, "output": 0, "cache_read": 0})
            entry["calls"] += 1
            entry["input"] += call.total_input
            entry["output"] += call.output_tokens
            entry["cache_read"] += call.cache_read_input_tokens
        return steps

    def to_dict(self) -> dict[str, Any]:
        """What the report, Allure and the summary JSON get."""
        return {"model": self.model, "budget": self.budget, "totals": self.totals(), "by_step": self.by_step(),
                "calls": [c.to_dict() for c in self.calls]}
