"""What the trace viewer adds to each step of report.html, from the journal alone.

`html.report_model` builds the page's frames, crops and timeline; this module adds, per step, the
one-line reason for its outcome, its anchors with their causal links in words, its UI tree (each
distinct tree rendered once, referenced by key) with the nodes under the changed regions, and
the LLM calls made during it (prompt, answer, thumbnails, tokens, cost).
"""

from __future__ import annotations

from typing import Any

from pytest_guistate.report.journal import Journal
from pytest_guistate.report.viewer_tree import highlight, intern_trees

__all__ = ["outcome_reason", "step_extras", "tree_defs", "unplaced_exchanges"]

_OUTCOME_WORDS = {
    "ok": "the action had the expected effect at once",
    "settled": "no visible effect at first; verified after the screen settled (nothing was repeated)",
    "refreshed": "no visible effect at first; verified after a refresh (nothing was repeated)",
    "retried": "settle and refresh proved the action did not take effect; it was safe to repeat, so it was retried",
    "failed": "the step failed",
}


_CACHE_WORDS = {"hit": "action cache hit", "miss": "action cache miss", "live": "live actor (after a cache miss)"}


def outcome_reason(record: dict[str, Any]) -> str:
    """Why the step ended as it did, in one line a person can read."""
    outcome = str(record.get("outcome") or "")
    attempts = [a for a in record.get("attempts") or [] if isinstance(a, dict)]
    last = attempts[-1] if attempts else {}
    if outcome == "failed":
        error = str(record.get("error") or "").strip()
        evidence = str(last.get("evidence") or "")
        if len(attempts) > 1:  # the stale-screen path: say which stages were tried, and that nothing was repeated
            stages = " \u2192 ".join(str(a.get("stage", "?")) for a in attempts)
            repeat = "" if record.get("idempotent", True) else "; not repeated (not safe to repeat)"
            return f"expected effect never showed ({stages}){repeat}: {evidence or error.splitlines()[0]}"
        return (error.splitlines()[0] if error else "") or evidence or _OUTCOME_WORDS["failed"]
    words = _OUTCOME_WORDS.get(outcome, outcome or "still running")
    if outcome == "refreshed" and last.get("refreshed_by"):
        words += f" (refreshed by {last['refreshed_by']})"
    if outcome == "retried":
        words += f" ({record.get('retries', 0)} retry)"
    evidence = str(last.get("evidence") or "")
    if record.get("cache"):  # issue 21: where the action came from ("hit (healed: ...)" keeps its reason)
        status, _, why = str(record["cache"]).partition(" ")
        words = f"{_CACHE_WORDS.get(status, status)}{' ' + why if why else ''}; {words}"
    return f"{words}: {evidence}" if evidence else words


def _anchor_label(anchor: dict[str, Any] | None, fallback: str) -> str:
    if not anchor:
        return fallback
    return f"{anchor.get('id')} {anchor.get('type')} \u201c{anchor.get('title', '')}\u201d"


def _step_anchors(anchors: list[dict[str, Any]], links: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    by_id = {str(a.get("id")): a for a in anchors}
    out: dict[int, list[dict[str, Any]]] = {}
    for anchor in anchors:
        step = anchor.get("step")
        if not isinstance(step, int):
            continue
        aid = str(anchor.get("id"))
        sentences = []
        for link in links:
            src, dst = str(link.get("src")), str(link.get("dst"))
            if aid not in (src, dst):
                continue
            other = by_id.get(dst if src == aid else src)
            other_step = (other or {}).get("step")
            where = f" (step {other_step})" if isinstance(other_step, int) and other_step != step else ""
            if src == aid:
                sentences.append({"text": f"{link.get('type')} {_anchor_label(other, dst)}{where}", "step": other_step})
            else:
                sentences.append({"text": f"{_anchor_label(other, src)}{where} {link.get('type')} this",
                                  "step": other_step})
        kind = (anchor.get("data") or {}).get("kind") if isinstance(anchor.get("data"), dict) else None
        out.setdefault(step, []).append({
            "id": aid, "type": anchor.get("type", ""), "title": anchor.get("title", ""),
            "detail": anchor.get("detail", ""), "app": anchor.get("app", ""), "kind": kind or "",
            "links": sentences,
        })
    return out


def tree_defs(journal: Journal) -> tuple[dict[str, Any], dict[int, str], dict[str, dict[str, Any]]]:
    """The interned trees for the page's script, the tree key of every step, the compact trees by key."""
    compact: dict[str, dict[str, Any]] = {}
    per_step: dict[int, str] = {}
    for event in journal.steps:
        key = event.get("tree_key")
        index = (event.get("record") or {}).get("index")
        if not key or not isinstance(index, int):
            continue
        if isinstance(event.get("tree"), dict):
            compact.setdefault(str(key), event["tree"])
        if str(key) in compact:
            per_step[index] = str(key)
    used = set(per_step.values())
    return intern_trees({k: t for k, t in compact.items() if k in used}), per_step, compact


def _llm_by_step(llm: dict[str, Any] | None) -> dict[int, dict[str, Any]]:
    if not llm:
        return {}
    out: dict[int, dict[str, Any]] = {}
    for call in ((llm.get("usage") or {}).get("calls") or []):
        if isinstance(call.get("step"), int):
            entry = out.setdefault(call["step"], {"tokens": 0, "cost": 0.0, "calls": 0, "exchanges": []})
            entry["tokens"] += int(call.get("total_tokens") or 0)
            entry["cost"] += float(call.get("cost_usd") or 0.0)
            entry["calls"] += 1
    for exchange in llm.get("exchanges") or []:
        if isinstance(exchange.get("step"), int):
            entry = out.setdefault(exchange["step"], {"tokens": 0, "cost": 0.0, "calls": 0, "exchanges": []})
            entry["exchanges"].append(_exchange(exchange))
    return out


def _exchange(exchange: dict[str, Any]) -> dict[str, Any]:
    usage = exchange.get("usage") or {}
    images = [src for src in exchange.get("images") or [] if isinstance(src, str) and src.startswith("data:image/")]
    return {**exchange, "images": images, "tokens": usage.get("total_tokens", 0), "cost": usage.get("cost_usd")}


def unplaced_exchanges(llm: dict[str, Any] | None, steps: set[int]) -> list[dict[str, Any]]:
    """LLM calls of no recorded step (setup, or the actor's final `done` after the last step)."""
    return [_exchange(x) for x in (llm or {}).get("exchanges") or [] if x.get("step") not in steps]


def step_extras(journal: Journal, anchors: list[dict[str, Any]], links: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Per step index: reason, anchors, tree key and highlighted node ids, LLM calls."""
    _, tree_of, compact = tree_defs(journal)
    step_anchors = _step_anchors(anchors, links)
    llm = _llm_by_step(journal.llm)
    extras: dict[int, dict[str, Any]] = {}
    for event in journal.steps:
        record = event.get("record") or {}
        index = record.get("index")
        if not isinstance(index, int):
            continue
        regions = [r.get("box") if isinstance(r, dict) else r for r in record.get("regions") or []]
        boxes = [list(b) for b in regions if isinstance(b, list) and len(b) == 4]
        key = tree_of.get(index, "")
        extras[index] = {
            "reason": outcome_reason(record), "anchors": step_anchors.get(index, []), "tree": key,
            "highlight": highlight(compact.get(key), boxes) if key else [], "llm": llm.get(index),
        }
    return extras
