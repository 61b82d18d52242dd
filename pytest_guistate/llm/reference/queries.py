"""The reference policy's answers to `guistate.query` (issue 46): deterministic, NOT a language model.

It reads only the request: the <question>, the <answer_type> (its kind, and a record's field names),
the <screen>'s app and the <elements> list, never the sim. Rows are what a person sees as rows: two
elements whose boxes overlap vertically by half the smaller height (a product's name and its price);
on a detail page a price right below the name belongs to it. The grammar (a leading "what is",
"what's", "read" and a trailing "?" are ignored; X, Y are words as the screen writes them):

| question | answer |
|---|---|
| `the price of X [in Y]` | the price (a currency amount) in X's row, or right below X; Y must be the app on screen |
| `the total [in Y]` | the number on the element that says "total", or in its row |
| `how many X [are] [in\\|on Y]` | the number on an element that names Y (else X): `Cart, 2 items`, `12 photos`; else the count of elements whose id names X, each cited |
| `whether X is on\\|off` / `is X on\\|off` | the state of the switch bound to X (`checked`, or its ON/OFF text) |
| `the names of the X` / `the X names` | the texts of the elements whose id names X (else `name`, `label`), in screen order |
| `the F1 and F2 of each\\|every X` | one record per row: a name-like field (name, title, label, author) from the row's name element, `price` from its price, another field from the element whose id names it |

Anything else is `answered=false` with "the reference policy (pattern matching, not a language model)
cannot read the question '...'"; a question it reads but a screen without the thing asked is
`answered=false` naming what is missing. Every value cites its elements.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_guistate.core.values import decimal_mark, numbers_in
from pytest_guistate.llm.reference.policy import PromptView

__all__ = ["part_value", "query_answer", "wrong_value"]

Element = dict[str, Any]
_AMOUNT = re.compile(r"[$€£¥]\s?\d[\d.,\u00a0]*|\d[\d.,\u00a0]*\s?[$€£¥]")
_LEAD = re.compile(r"^(?:what\s+is|what's|how\s+much\s+is|read|tell\s+me)\s+", re.IGNORECASE)
_NAME_FIELDS = ("name", "title", "label", "author")
_PRICE_FIELDS = ("price", "cost", "amount")


def _refuse(why: str) -> tuple[str, dict[str, Any]]:
    return "report_answer", {"answered": False, "evidence": [], "explanation": why}


def _answer(value: Any, evidence: list[dict[str, Any]], why: str) -> tuple[str, dict[str, Any]]:
    return "report_answer", {"answered": True, "value": value, "evidence": evidence, "explanation": why}


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _mentions(text: Any, words: str) -> bool:
    """Every word of `words` is a word of `text` (plural or singular alike)."""
    have = {_singular(w) for w in _words(str(text or ""))}
    want = [_singular(w) for w in _words(words) if w not in ("the", "a", "an")]
    return bool(want) and all(w in have for w in want)


def _label(e: Element) -> str:
    return str(e.get("text") or e.get("desc") or e.get("value") or "")


def _rid_words(e: Element) -> set[str]:
    return {_singular(w) for w in re.split(r"[^a-z0-9]+", str(e.get("rid") or "").lower()) if w}


def _span(e: Element) -> tuple[int, int]:
    at = e.get("at") or [0, 0, 0, 0]
    return int(at[1]), int(at[3])


def _same_row(a: Element, b: Element) -> bool:
    (t1, b1), (t2, b2) = _span(a), _span(b)
    overlap = min(b1, b2) - max(t1, t2)
    return overlap >= 0.5 * max(1, min(b1 - t1, b2 - t2))


def _decimal(v: PromptView) -> str:
    return decimal_mark(_label(e) for e in v.elements)


def _number(v: PromptView, e: Element) -> float | None:
    found = numbers_in(_label(e), _decimal(v))
    return found[0] if found else None


def _amounts(v: PromptView) -> list[Element]:
    return [e for e in v.elements if _AMOUNT.search(_label(e)) and not e.get("edit")]


def _cite(path: str, e: Element) -> dict[str, Any]:
    return {"path": path, "element_id": str(e["id"]), "quote": _label(e)}


def _price_of(v: PromptView, name: Element) -> Element | None:
    """The amount in the name's row, else the first one right below it (a detail page)."""
    amounts = [e for e in _amounts(v) if e is not name]
    row = [e for e in amounts if _same_row(name, e)]
    if row:
        return row[0]
    top, bottom = _span(name)
    below = [e for e in amounts if bottom <= _span(e)[0] <= bottom + 2 * max(1, bottom - top)]
    return below[0] if below else None


def _kind(v: PromptView) -> tuple[str, list[str]]:
    """The asked kind (str, int, float, bool, list[...], record) and a record's field names."""
    described = v.sections.get("answer_type", "").strip()
    name = described.split(":", 1)[0].strip()
    fields = re.findall(r'"([A-Za-z_]\w*)":', described)
    return name, fields


def _scalar(kind: str, v: PromptView, e: Element, number: float | None) -> Any:
    if kind == "str":
        match = _AMOUNT.search(_label(e))
        return match.group(0).strip() if match else _label(e)
    if kind == "int" and number is not None and number.is_integer():
        return int(number)
    return number


def _in_app(v: PromptView, app: str) -> bool:
    return not app or "".join(_words(app)) in "".join(_words(v.app))


def _names(v: PromptView, what: str) -> list[Element]:
    """The name column of a list: elements whose id names `what`, else a name or label id (not the bar's title)."""
    texts = [e for e in v.elements if _label(e) and not e.get("tap") and not e.get("edit") and e.get("rid") != "title"]
    wanted = {_singular(w) for w in _words(what)} - {"the"}
    named = [e for e in texts if _rid_words(e) & wanted]
    return named or [e for e in texts if _rid_words(e) & {"name", "label"}]


def _switch_state(e: Element) -> bool | None:
    if isinstance(e.get("checked"), bool):
        return bool(e["checked"])
    text = str(e.get("text") or e.get("value") or "").upper()
    return {"ON": True, "OFF": False, "1": True, "0": False}.get(text)


def query_answer(v: PromptView) -> tuple[str, dict[str, Any]]:
    question = v.sections.get("question", "").strip()
    q = _LEAD.sub("", question.rstrip("?. ").strip())
    kind, fields = _kind(v)
    if m := re.fullmatch(r"(?:the\s+)?price\s+of\s+(?:an?\s+|the\s+)?(.+?)(?:\s+in\s+(\w[\w ]*))?", q, re.IGNORECASE):
        item, app = m.group(1), m.group(2) or ""
        if not _in_app(v, app):
            return _refuse(f"the screen is {v.app!r}, not {app!r}: the price in {app} is not shown")
        names = [
            e for e in v.elements if _mentions(_label(e), item) and not _AMOUNT.search(_label(e)) and not e.get("edit")
        ]
        for name in names:
            price = _price_of(v, name)
            if price is not None:
                value = _scalar(kind, v, price, _number(v, price))
                return _answer(value, [_cite("", price)], f"the price in {item}'s row")
        return _refuse(f"no price of {item!r} on this screen")
    if m := re.fullmatch(r"(?:the\s+)?(?:cart\s+|order\s+)?total(?:\s+in\s+(\w[\w ]*))?", q, re.IGNORECASE):
        if not _in_app(v, m.group(1) or ""):
            return _refuse(f"the screen is {v.app!r}, not {m.group(1)!r}")
        for e in v.elements:
            if "total" in _words(_label(e)) or "total" in _rid_words(e):
                holder = e if _number(v, e) is not None else _price_of(v, e)
                if holder is not None and (n := _number(v, holder)) is not None:
                    return _answer(_scalar(kind, v, holder, n), [_cite("", holder)], "the total shown")
        return _refuse("no total on this screen")
    if m := re.fullmatch(
        r"how\s+many\s+(.+?)(?:\s+(?:are|is))?(?:\s+(?:there|shown))?(?:\s+(?:in|on)\s+(?:the\s+)?(.+))?",
        q,
        re.IGNORECASE,
    ):
        what, where = m.group(1), m.group(2) or ""
        shows = [e for e in v.elements if _number(v, e) is not None and not _AMOUNT.search(_label(e))]
        for words in [f"{where} {what}", where, what] if where else [what]:
            hit = next((e for e in shows if _mentions(_label(e), words)), None)
            if hit is not None:
                return _answer(int(_number(v, hit) or 0), [_cite("", hit)], f"the number shown for {words}")
        counted = [e for e in v.elements if _rid_words(e) & {_singular(w) for w in _words(what)}]
        if counted:
            return _answer(len(counted), [_cite("", e) for e in counted], f"{len(counted)} counted on screen")
        return _refuse(f"no number or element for {what!r} on this screen")
    if m := re.fullmatch(r"(?:whether\s+(.+?)\s+is|is\s+(.+?))\s+(on|off|enabled|disabled)", q, re.IGNORECASE):
        setting, state = m.group(1) or m.group(2), m.group(3).lower()
        for e in v.elements:
            on = _switch_state(e)
            if on is not None and _mentions(f"{e.get('in', '')} {e.get('desc', '')} {e.get('rid', '')}", setting):
                value = on if state in ("on", "enabled") else not on
                return _answer(value, [_cite("", e)], f"the {setting} switch is {'on' if on else 'off'}")
        return _refuse(f"no switch for {setting!r} on this screen")
    if m := re.fullmatch(r"(?:the\s+)?(?:names\s+of\s+(?:the\s+|all\s+the\s+)?(.+)|(.+?)\s+names)", q, re.IGNORECASE):
        column = _names(v, m.group(1) or m.group(2))
        if not column:
            return _refuse(f"no names of {m.group(1) or m.group(2)!r} on this screen")
        return _answer(
            [_label(e) for e in column],
            [_cite(str(i), e) for i, e in enumerate(column)],
            f"{len(column)} names in screen order",
        )
    if m := re.fullmatch(r"(?:the\s+)?(.+?)\s+of\s+(?:each|every|the)\s+(.+)", q, re.IGNORECASE):
        return _records(v, kind, fields, m.group(2))
    return _refuse(
        f"the reference policy (pattern matching, not a language model) cannot read the question {question!r}"
    )


def _records(v: PromptView, kind: str, fields: list[str], what: str) -> tuple[str, dict[str, Any]]:
    """One record per row of the name column; a single record (not a list) is the first row's."""
    if not fields:
        return _refuse(f"a question about each {what} needs a record type (its field names)")
    column = _names(v, what)
    rows: list[dict[str, Any]] = []
    evidence: list[dict[str, Any]] = []
    for i, anchor in enumerate(column):
        record: dict[str, Any] = {}
        for name in fields:
            path = f"{i}.{name}" if kind.startswith("list[") else name
            if name in _NAME_FIELDS:
                holder: Element | None = anchor
            elif name in _PRICE_FIELDS:
                holder = _price_of(v, anchor)
            else:
                holder = next(
                    (e for e in v.elements if _same_row(anchor, e) and _singular(name) in _rid_words(e)), None
                )
            if holder is None:
                return _refuse(f"the {name} of {_label(anchor)!r} is not on this screen")
            number = _number(v, holder)
            record[name] = (
                _label(holder) if name in _NAME_FIELDS else (number if number is not None else _label(holder))
            )
            evidence.append(_cite(path, holder))
        rows.append(record)
        if not kind.startswith("list["):
            break
    if not rows:
        return _refuse(f"no {what} on this screen")
    return _answer(rows if kind.startswith("list[") else rows[0], evidence, f"{len(rows)} row(s) read")


def wrong_value(args: dict[str, Any]) -> dict[str, Any]:
    """The `hallucinate` fault: the same evidence, a value the screen does not hold (a price one more,
    a name with a word added, a yes/no flipped, a list with an item more)."""
    value = args.get("value")
    if isinstance(value, bool):
        value = not value
    elif isinstance(value, (int, float)):
        value = round(value + 1, 2)
    elif isinstance(value, str):
        value = value + " Pro"
    elif isinstance(value, list):
        value = [*value, {k: v for k, v in value[0].items()} if value and isinstance(value[0], dict) else "Imaginary"]
    elif isinstance(value, dict):
        value = {k: (v + 1 if isinstance(v, (int, float)) and not isinstance(v, bool) else v) for k, v in value.items()}
    return {**args, "answered": True, "value": value if value is not None else 42}


def part_value(args: dict[str, Any]) -> dict[str, Any]:
    """The `partial` fault: every string cut to a part of what was read -- its first word ("Phone" for
    "Phone Case"), or a one-word string's first three letters ("Car" for "Carol") -- on the same
    evidence; a count of cited elements one short, its last element left out (a model that stopped
    counting early)."""
    value, evidence = args.get("value"), list(args.get("evidence") or [])
    if isinstance(value, int) and not isinstance(value, bool) and value > 1 and len(evidence) == value:
        return {**args, "value": value - 1, "evidence": evidence[:-1]}

    def cut(value: Any) -> Any:
        if isinstance(value, str):
            words = value.split()
            return words[0] if len(words) > 1 else value[:3]
        if isinstance(value, list):
            return [cut(v) for v in value]
        if isinstance(value, dict):
            return {k: cut(v) for k, v in value.items()}
        return value

    return {**args, "value": cut(args.get("value"))}
