"""Procedural memory (MAGNET §2.1): successful flows, abstracted, retrieved as hints.

A flow is the instruction and its steps (function + parameters) with app names and the values
the instruction mentions replaced by placeholders ("Buy {item} in {app1}"), so "buy earbuds in
ShopA" helps "buy a cable in ShopB". Retrieval: token-overlap relevance of the abstracted
instruction (no embedding model is shipped), the top N re-ranked by recency and frequency
(`rank.py`). Hints go into an actor's prompt as hints, never as commands: the screen decides.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_guistate.memory.rank import rank
from pytest_guistate.memory.store import MemoryStore

__all__ = ["Flow", "FlowStep", "abstract_flow", "add_flow", "flow_hints", "remember_flow", "similar_flows"]

_TOKEN = re.compile(r"\{[a-z0-9_]+\}|[a-z0-9]+")


@dataclass(frozen=True)
class FlowStep:
    function: str
    params: dict[str, str]


@dataclass(frozen=True)
class Flow:
    id: int
    instruction: str
    template: str
    steps: list[FlowStep]
    apps: dict[str, str]  # placeholder -> the app it stood for when learned
    created: float
    last_access: float
    access_count: int


def abstract_flow(instruction: str, steps: Sequence[FlowStep], apps: Sequence[str],
                  values: Mapping[str, str] | None = None) -> tuple[str, list[FlowStep], dict[str, str]]:
    """Replace app names ({app1}, ...) and named values ({item}, ...) in the instruction and steps."""
    placeholders = {app: f"{{app{i + 1}}}" for i, app in enumerate(dict.fromkeys(apps))}
    placeholders.update({value: f"{{{name}}}" for name, value in (values or {}).items()})
    ordered = sorted(placeholders, key=len, reverse=True)  # "ShopAB" before "ShopA"

    def sub(text: str) -> str:
        for literal in ordered:
            text = re.sub(re.escape(literal), placeholders[literal], text, flags=re.IGNORECASE)
        return text

    abstract_steps = [FlowStep(step.function, {k: sub(v) for k, v in step.params.items()}) for step in steps]
    return sub(instruction), abstract_steps, {v: k for k, v in placeholders.items()}


def add_flow(store: MemoryStore, instruction: str, steps: Sequence[FlowStep], apps: Sequence[str],
             values: Mapping[str, str] | None = None, test: str = "") -> int:
    template, abstract_steps, mapping = abstract_flow(instruction, steps, apps, values)
    now = store.clock()
    return store.execute_write(
        "INSERT INTO flows (instruction, template, steps, apps, test, created, last_access, access_count)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, 1)",
        (instruction, template, json.dumps([[s.function, s.params] for s in abstract_steps]), json.dumps(mapping),
         test, now, now))


_FILLER = {"a", "an", "the", "in", "on", "of", "to", "and", "it", "s", "my", "for", "with"}


def _vector(text: str) -> Counter[str]:
    return Counter(t for t in _TOKEN.findall(text.lower()) if t not in _FILLER)


def _cosine(a: Counter[str], b: Counter[str]) -> float:
    dot = sum(a[t] * b[t] for t in a)
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


def _flow(row: Sequence[Any]) -> Flow:
    steps = [FlowStep(function, dict(params)) for function, params in json.loads(row[3])]
    return Flow(int(row[0]), row[1], row[2], steps, json.loads(row[4]), float(row[5]), float(row[6]), int(row[7]))


def similar_flows(store: MemoryStore, instruction: str, k: int = 3, apps: Sequence[str] = (),
                  min_relevance: float = 0.3) -> list[Flow]:
    """The k most useful flows for `instruction`; retrieved flows count an access."""
    query = _vector(abstract_flow(instruction, [], apps)[0])
    flows = [_flow(r) for r in store.query("SELECT id, instruction, template, steps, apps, created, last_access, "
                                           "access_count FROM flows")]

    def relevance(flow: Flow) -> float:
        score = _cosine(query, _vector(flow.template))
        return score if score >= min_relevance else 0.0

    chosen = rank(flows, relevance, store.clock(), store.policy, top_k=k)
    if chosen:
        now = store.clock()
        for flow in chosen:
            store.execute_write("UPDATE flows SET last_access = ?, access_count = access_count + 1 WHERE id = ?",
                                (now, flow.id))
    return chosen


def flow_hints(store: MemoryStore, instruction: str, apps: Sequence[str], k: int = 3) -> list[str]:
    """One line per similar earlier flow, for the actor's prompt (hints, never commands)."""
    lines = []
    for flow in similar_flows(store, instruction, k, apps):
        steps = " -> ".join(f"{step.function}({', '.join(f'{key}={value}' for key, value in step.params.items())})"
                            for step in flow.steps)
        lines.append(f"- {flow.template}: {steps}")
    return list(dict.fromkeys(lines))  # the same flow learned twice is one hint


def remember_flow(store: MemoryStore, instruction: str, turns: Sequence[Any], apps: Sequence[str],
                  test: str = "") -> int:
    """Store a successful actor run as a flow: its tool calls with their visible parameters."""
    steps = [FlowStep(str(turn.tool), {key: str(value) for key, value in turn.input.items()
                                       if not key.startswith("_") and key not in ("element_id", "x", "y")}
                      | ({"on": str(turn.input["_in"])} if turn.input.get("_in") else {}))
             for turn in turns if turn.tool and turn.tool != "done"]
    return add_flow(store, instruction, steps, apps, test=test)
