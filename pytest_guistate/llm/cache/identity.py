"""What a cached target *is* (issue 32): the element's meaning, not only its id, kind, state text and place.

A fingerprint can score high on an element that means something else: the switch in the row where
"Dark mode" was is the same id, kind, "OFF" text and place when "Battery saver" takes that row. So a
candidate must also carry the cached target's **identity words**, chosen per kind of element:

* an element with its own label (a button's "Delete", a list entry's "Travel (0)"): that label;
* a control whose own text is only a state (a switch's "ON"/"OFF", a check box, a radio, a toggle)
  or that has no text (an icon button): its accessibility label, else the label it is bound to
  (the first label of its row: "Dark mode");
* a container (a grid tile, a list row, an iOS cell): its first label inside ("Beach"), not the
  label that joins all its parts ("Beach 2026-09-06 Travel", where "Travel" is shared by other
  tiles), else its own label or description.

Identity words are the label's words of two letters or more, without small words ("to", "by") and
state words ("on", "off", "selected"). A candidate **carries** the cached identity when it shares one
of its words: "Add to cart" and "Add to bag" are the same action renamed, "Dark mode" and "Battery
saver" are not, and a switch whose row no longer says what it is (its label moved to a heading) is
no candidate for a switch that was named.

A heal (the cross-run memory found the target by its look) must also tell **lookalikes** apart:
elements of the same kind and id (grid tiles, list rows' buttons). It is accepted only when the
cached identity and then the cached neighbours pick exactly one of them, the one the memory found
(`pick_lookalike`); otherwise a named miss.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pytest_guistate.core.uinode import UINode

__all__ = ["NEIGHBOUR_SHARE", "Identity", "LookalikePick", "carries", "differs", "identity", "identity_words", "lookalikes",
           "pick_lookalike", "row_words", "surroundings", "target_hint"]

_LETTERS = re.compile(r"[A-Za-z]{2,}")
_SMALL = frozenset({"an", "the", "to", "of", "by", "in", "for", "and", "or", "at", "with", "your", "my", "its",
                    "is", "it", "this", "that", "from", "as", "be"})
STATE_WORDS = frozenset({"on", "off", "checked", "unchecked", "selected", "unselected", "not", "enabled",
                         "disabled", "true", "false", "yes", "no", "active", "inactive"})
_CONTAINER_KINDS = frozenset({"ViewGroup", "View", "Cell", "Other", "CardView", "ScrollView", "RecyclerView",
                              "ListView", "GridView"})
NEIGHBOUR_SHARE = 0.5  # a lookalike is pinned by its neighbours when it shows at least this share of the cached ones


def identity_words(text: str) -> frozenset[str]:
    """The words that carry meaning: letters only, no small words, no state words."""
    return frozenset(w.lower() for w in _LETTERS.findall(text or "")) - _SMALL - STATE_WORDS


@dataclass(frozen=True)
class Identity:
    """An element's identity: the label and which rule chose it (for the miss message)."""

    label: str
    how: str  # "own label" | "accessibility label" | "bound label" | "first label" | "description"
    kind: str

    @property
    def words(self) -> frozenset[str]:
        return identity_words(self.label)

    def noun(self) -> str:
        """'switch', 'check box', 'button' ('element' for a container): how a miss names it."""
        kind = self.kind or "element"
        if kind in ("ViewGroup", "Cell", "Other", "View") or kind.endswith("Layout"):
            return "element"
        return re.sub(r"(?<!^)(?=[A-Z])", " ", kind).lower()


def _first_label(context: str) -> str:
    return next((part.strip() for part in context.split(" · ") if identity_words(part)), "")


def identity(print_: dict[str, Any]) -> Identity:
    """The identity of a fingerprint or an element row (both carry text, desc, kind and `in`)."""
    kind = str(print_.get("kind") or "")
    text, desc = str(print_.get("text") or ""), str(print_.get("desc") or "")
    context = str(print_.get("in") or "")
    container = kind in _CONTAINER_KINDS or kind.endswith("Layout")
    first = _first_label(context)
    if container and first:  # a tile's or a row's label joins its parts ("Beach 2026-09-06 Travel"): its title
        return Identity(first, "first label", kind)
    if identity_words(text):
        return Identity(text, "own label", kind)
    if identity_words(desc) and not container:
        return Identity(desc, "accessibility label", kind)
    if first:
        return Identity(first, "bound label", kind)
    return Identity(desc, "description", kind)


def differs(a: Identity, b: Identity) -> bool:
    """Both say what they are, and not one word of it is shared."""
    return bool(a.words) and bool(b.words) and not a.words & b.words


def carries(cached: Identity, candidate: Identity) -> bool:
    """The candidate may be the cached element: it shares a word of the cached identity, or the cached
    element had none to compare. A candidate that says nothing of what it is (a switch whose label moved
    to a heading outside its row) proves nothing, so it is no candidate for an element that had words."""
    return not cached.words or bool(cached.words & candidate.words)


@dataclass(frozen=True)
class LookalikePick:
    """The outcome of telling a healed target's lookalikes apart: `ok`, or `reason` for the miss."""

    ok: bool
    reason: str
    lookalikes: int = 0


def row_words(row: dict[str, Any]) -> frozenset[str]:
    """The identity words an element's row shows: its text, description and the row it sits in."""
    return identity_words(" ".join(str(row.get(k) or "") for k in ("text", "desc", "in")))


def pick_lookalike(rows: list[dict[str, Any]], nodes: dict[str, UINode], cached: dict[str, Any],
                   healed: UINode | None) -> LookalikePick:
    """Accept the memory's heal only if the cache itself picks the same element among its lookalikes
    (same kind and id): its identity first, then its neighbours' words (at least half of the cached
    neighbour words that not every lookalike shows)."""
    mine = next((r for r in rows if healed is not None and r["id"] == healed.index_path), None)
    if mine is None:
        return LookalikePick(True, "", 0)  # not an element the actor is shown: nothing to compare with
    alike = [r for r in rows if r.get("kind") == mine.get("kind") and r.get("rid") == mine.get("rid")
             and (mine.get("rid") or _same_size(nodes.get(str(r["id"])), healed))]
    name = str(mine.get("rid") or mine.get("kind") or "element")
    want = identity(cached)
    agree = [r for r in alike if carries(want, identity(r))]
    if mine not in agree:
        return LookalikePick(False, f"cached {want.label!r} {want.noun()}; the memory found "
                                    f"{identity(mine).label!r} ({len(alike)} lookalike(s) of {name!r})", len(alike))
    if len(agree) == 1:
        return LookalikePick(True, "", len(alike))
    shared = frozenset.intersection(*(row_words(r) for r in agree))
    cues = identity_words(str(cached.get("in") or "") + " " + str(cached.get("desc") or "")) - shared - want.words
    if cues:
        scores = [len(cues & row_words(r)) for r in agree]
        best = max(scores)
        if best >= NEIGHBOUR_SHARE * len(cues) and scores.count(best) == 1:
            chosen = agree[scores.index(best)]
            if chosen is mine:
                return LookalikePick(True, "", len(alike))
            return LookalikePick(False, f"the memory found {name!r} in {mine.get('in')!r}, the cached neighbours "
                                        f"pick the one in {chosen.get('in')!r}", len(alike))
    return LookalikePick(False, f"ambiguous: {len(agree)} lookalikes of {name!r}, nothing in the cache tells "
                                "them apart", len(alike))


def _same_size(node: UINode | None, other: UINode | None) -> bool:
    if node is None or other is None or node.bounds is None or other.bounds is None:
        return False
    (w1, h1), (w2, h2) = (node.bounds.width, node.bounds.height), (other.bounds.width, other.bounds.height)
    return abs(w1 - w2) <= 0.1 * max(w1, w2, 1) and abs(h1 - h2) <= 0.1 * max(h1, h2, 1)


def _row_label(row: dict[str, Any]) -> str:
    return str(row.get("text") or row.get("desc") or "").strip()


def surroundings(rows: list[dict[str, Any]], row: dict[str, Any]) -> tuple[str, str]:
    """The nearest labels above and below an element in the element list, outside its own row: what a
    person reads around a "Dark mode" switch ("Wi-Fi" above, "Notifications" below, or a "Keyboard"
    heading). Two lookalikes with the same row differ here, and a recorded element keeps them."""
    if row not in rows:
        return "", ""
    own = row_words(row)

    def label(other: dict[str, Any]) -> str:
        text = _row_label(other)
        words = identity_words(text)
        return text[:40] if words and not words <= own else ""

    at = rows.index(row)
    above = next((x for r in reversed(rows[:at]) if (x := label(r))), "")
    below = next((x for r in rows[at + 1:] if (x := label(r))), "")
    return above, below


def lookalikes(rows: list[dict[str, Any]], print_: dict[str, Any]) -> list[dict[str, Any]]:
    """The elements of the same kind that carry `print_`'s identity (both "Dark mode" switches)."""
    want = identity(print_)
    return [r for r in rows if r.get("kind") == print_.get("kind") and want.words and carries(want, identity(r))]


def _listed(print_: dict[str, Any], key: str) -> list[Any]:
    value = print_.get(key)
    return value if isinstance(value, list) else []


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def target_hint(print_: dict[str, Any], twins: int) -> str:
    """The recorded element in words a model can use when `twins` elements on screen now match it
    and the cache cannot tell which (its first request after the miss). Labels are JSON-quoted, so
    the reference policy reads them back exactly."""
    want = identity(print_)
    state = "" if "checked" not in print_ else f" ({'on' if print_['checked'] else 'off'})"
    parts = [f"Recorded target: {_quoted(want.label)} {want.noun()}{state}"]
    if print_.get("in"):
        parts.append(f"row {_quoted(str(print_['in']))}")
    near = _listed(print_, "near")
    for side, text in zip(("above", "below"), near):
        if text:
            parts.append(f"{side}: {_quoted(str(text))}")
    alike = _listed(print_, "alike")
    if len(alike) == 2:
        parts.append(f"{alike[0]} of {alike[1]} like it then")
    return "; ".join(parts) + (f"; {twins} on this screen match it now: act on the one with these surroundings, "
                               "and if none can be told apart, do not guess (give up: ambiguous).")
