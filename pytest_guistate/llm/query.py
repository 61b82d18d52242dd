"""`query(session, question, shape, llm=...)`: a typed value read off the current screen, with its
evidence verified against the UI tree (issue 46).

The model answers through `report_answer` with the value and, per part of it (its path: "" for a
scalar, "2" for a list item, "0.price" for a field of a row), the element it read it from. The value
is converted to the asked type (`core.values.Shape`; a wrong type or shape is `QueryFailed`), then
every part is checked on the screen the model was shown (`verify`):

* each cited element is on that screen, is not a password field, and shows no registered secret;
* its text (or description, or an iOS value) holds the part: a string is that text or a whole segment
  of it (`core.values.shows_words`: "Name: Carol" holds "Carol", "Phone Case" holds neither "Phone"
  nor "Case"), a number is a number of it in the screen's number format; a bool cites an element
  whose checked state or on/off text decides it; a count either shows as a number or is the number
  of distinct elements cited, and then every element on screen like a cited one (`_alike`: the same
  kind and resource id; without an id, one more row of the same shape, or the same field of another
  row) was cited too.

A value whose evidence does not hold is `QueryUnverified`, never returned as if it were read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_guistate.core.errors import QueryFailed, QueryUnverified
from pytest_guistate.core.uinode import UINode
from pytest_guistate.core.uitree import UITree
from pytest_guistate.core.values import Shape, ShapeError, decimal_mark, leaves, numbers_in, shows_words
from pytest_guistate.llm.client import LLMClient
from pytest_guistate.llm.errors import LLMRunFailed
from pytest_guistate.llm.instructions import QUERY_SYSTEM, system_blocks
from pytest_guistate.llm.prompt import element_lines, elements_text, section, shown_image
from pytest_guistate.llm.tools import QUERY_TOOL, ToolInputError, validate

__all__ = [
    "QueryResult",
    "decides",
    "holds",
    "negated",
    "node_texts",
    "query",
    "same_row",
    "screen_decimal",
    "verify",
]

_ON = frozenset({"on", "enabled", "yes", "true", "checked", "selected", "1"})
_OFF = frozenset({"off", "disabled", "no", "false", "unchecked", "unselected", "0"})


@dataclass
class QueryResult:
    """A value read and verified: the question, the asked type, the value (converted), its JSON as
    the model gave it, and per cited element its path, id, quote, label and device-pixel box."""

    question: str
    type: str
    value: Any
    raw: Any
    evidence: list[dict[str, Any]] = field(default_factory=list)
    explanation: str = ""
    source: str = "model"  # model | cache
    problems: list[str] = field(default_factory=list)
    tree: UITree | None = field(default=None, repr=False)  # the screen it was read on (the cache keeps its reads)
    package: str = ""
    observation: Any = field(default=None, repr=False)  # its frame: the cited elements' crops for the record

    def to_dict(self) -> dict[str, Any]:
        """For the journal's `llm` event and Allure: the value as JSON, never the Python object."""
        return {
            "question": self.question,
            "type": self.type,
            "value": self.raw,
            "evidence": self.evidence,
            "explanation": self.explanation,
            "source": self.source,
            "problems": self.problems,
        }


def node_texts(node: UINode) -> tuple[str, ...]:
    """What an element shows that a value may be read from; never a password field's content."""
    if node.password:
        return ()
    shown = (*node.shown_texts, *node.descriptions)
    return tuple(t for t in (*shown, node.value) if t)


def screen_decimal(tree: UITree | None) -> str:
    """The screen's decimal mark, voted by every number it shows (`core.values.decimal_mark`)."""
    return decimal_mark(t for n in (tree.nodes() if tree is not None else ()) for t in node_texts(n))


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def decides(node: UINode) -> bool | None:
    """The yes/no an element shows: a switch's or check box's state, else an on/off word of its own."""
    if node.checkable:
        return bool(node.checked)
    for text in node_texts(node):
        words = set(re.findall(r"[a-z0-9]+", text.casefold()))
        on, off = bool(words & _ON), bool(words & _OFF)
        if on != off:
            return on
    return None


_NEGATIVE = re.compile(r"\b(off|disabled|unchecked|unselected|not|isn't|aren't|inactive)\b", re.IGNORECASE)


def negated(question: str) -> bool:
    """A yes/no asked the other way ("Is Wi-Fi off?", "... not enabled"): its answer is the opposite of
    the cited element's on/checked state."""
    return bool(_NEGATIVE.search(question))


def holds(shape: Shape, value: Any, node: UINode, decimal: str, question: str = "") -> bool:
    """Does the element show this scalar? Words for a string, the number for a number, for a bool the
    element's state (the opposite for a question asked the other way, `negated`)."""
    if shape.kind == "bool":
        state = decides(node)
        return state is not None and (state is not negated(question)) is value
    texts = node_texts(node)
    if shape.kind == "str":  # the text itself or a whole segment of it: "Phone" is not read from "Phone Case"
        return any(shows_words(str(value), t) for t in texts)
    return any(abs(n - float(value)) <= 0.005 for t in texts for n in numbers_in(t, decimal))


def _counted(value: Any, nodes: list[UINode], tree: UITree, decimal: str) -> str:
    """'' when an int is the count of the cited elements and every element on screen like one of them
    was cited (`_alike`), else why not. An element that shows a number is read, not counted: "Cart,
    0 items" cited once is 0, never 1; one element cited twice counts once."""
    shown = [n for node in nodes for t in node_texts(node) for n in numbers_in(t, decimal)]
    if shown:
        return f"the cited element shows {shown[0]:g}, not {value}"
    distinct = list({n.index_path: n for n in nodes}.values())
    if value != len(distinct) or not distinct:
        twice = f" ({len(nodes)} citations of {len(distinct)} elements)" if len(distinct) < len(nodes) else ""
        return f"no cited element shows {value}, and {len(distinct)} element(s) are cited{twice}, not {value}"
    cited = {n.index_path for n in distinct}
    by_path = {n.index_path: n for n in tree.nodes()}
    left = [
        n
        for n in by_path.values()
        if n.index_path not in cited and _on_screen(n) and any(_alike(n, c, by_path) for c in distinct)
    ]
    if left:
        labels = ", ".join(repr(n.label or n.kind) for n in left[:3])
        return (
            f"{value} element(s) cited as counted, but the screen shows {len(left)} more like them, "
            f"not cited ({labels}{', ...' if len(left) > 3 else ''})"
        )
    return ""


def _on_screen(node: UINode) -> bool:
    return node.displayed and node.bounds is not None and not node.bounds.is_empty


def _parent(node: UINode, by_path: dict[str, UINode]) -> UINode | None:
    return by_path.get(node.index_path.rpartition("/")[0]) if "/" in node.index_path else None


def _alike(node: UINode, cited: UINode, by_path: dict[str, UINode]) -> bool:
    """Is `node` one more of what `cited` is, for a count? The same kind with the same resource id; or,
    without an id, the same kind at the same depth holding the same kinds of children, and either its
    sibling in another row (one more row of the list; a sibling in the same row is another column) or
    at the same place in a parent of the same shape (the same field of another row)."""
    if node.kind != cited.kind or node.resource_id != cited.resource_id:
        return False
    if node.resource_id:
        return True
    if node.depth != cited.depth or {c.kind for c in node.children} != {c.kind for c in cited.children}:
        return False
    mine, theirs = _parent(node, by_path), _parent(cited, by_path)
    if mine is None or theirs is None:
        return True
    if mine is theirs:
        return not same_row(node, cited)
    return node.index_path.rpartition("/")[2] == cited.index_path.rpartition("/")[2] and [
        c.kind for c in mine.children
    ] == [c.kind for c in theirs.children]


def same_row(a: UINode, b: UINode) -> bool:
    """Two elements a person sees on one row: their boxes overlap vertically by half the smaller height."""
    if a.bounds is None or b.bounds is None:
        return False
    overlap = min(a.bounds.bottom, b.bounds.bottom) - max(a.bounds.top, b.bounds.top)
    return overlap >= 0.5 * max(1, min(a.bounds.height, b.bounds.height))


def verify(
    shape: Shape,
    value: Any,
    evidence: Sequence[dict[str, Any]],
    tree: UITree | None,
    secrets: Sequence[str] = (),
    question: str = "",
) -> tuple[list[str], list[dict[str, Any]]]:
    """The problems that make a value unverified (none: every part holds), and the evidence with each
    cited element's label and box (device pixels) for the record and the cache: every cited element
    on the screen that is neither a password field nor shows a secret, whether its part held or not
    (an unverified query's record shows what the model cited)."""
    problems: list[str] = []
    cited: list[dict[str, Any]] = []
    if tree is None:
        return ["the screen has no UI tree to verify the evidence on"], cited
    decimal = screen_decimal(tree)
    for path, leaf, part in leaves(shape, value):
        where = f"{path!r}" if path else "the value"
        items = [e for e in evidence if str(e.get("path", "")) == path]
        if not items:
            problems.append(f"{where} ({part!r}) cites no element")
            continue
        nodes: list[UINode] = []
        for item in items:
            element_id = str(item.get("element_id", ""))
            node = tree.by_index_path(element_id)
            if node is None:
                problems.append(f"{where}: cited element {element_id!r} is not on the screen")
                continue
            if node.password:
                problems.append(
                    f"{where}: cited element {element_id!r} is a password field; values are never read from one"
                )
                continue
            texts = node_texts(node)
            if any(s and (any(s in t for t in texts) or s in str(part)) for s in secrets):
                problems.append(f"{where}: cited element {element_id!r} shows a registered secret; it is never read")
                continue
            quote = str(item.get("quote") or "")
            box = node.bounds.as_list() if node.bounds is not None else None
            cited.append({"path": path, "element_id": element_id, "quote": quote, "label": node.label, "box": box})
            if quote and not any(_norm(quote) in _norm(t) for t in texts):
                problems.append(f"{where}: element {element_id} shows {node.label!r}, not the quoted {quote!r}")
                continue
            nodes.append(node)
        if len(nodes) < len(items):
            continue
        if any(holds(leaf, part, n, decimal, question) for n in nodes):
            continue
        counted = _counted(part, nodes, tree, decimal) if leaf.kind == "int" and path == "" else None
        if counted == "":
            continue
        shows = ", ".join(repr(n.label) for n in nodes)
        problems.append(
            f"{where}: {part!r} is not what the cited element(s) show ({shows})"
            + (" (a yes/no needs a switch or an on/off text)" if leaf.kind == "bool" else "")
            + (f": {counted}" if counted else "")
        )
    if any(s and s in json.dumps(value, default=str) for s in secrets):
        problems.append("the value holds a registered secret; it is never returned")
    return problems, cited


def _ask(session: Any, question: str, shape: Shape, llm: LLMClient, frame_divisor: float) -> tuple[Any, Any]:
    """One `report_answer` call on the settled screen: (the tool input or a text, the tree shown)."""
    observation = session.observe(settled=True)
    frame_block, scale = shown_image(observation.frame, frame_divisor)
    rows = element_lines(observation.tree, scale) if observation.tree is not None else []
    content = [
        section("question", question),
        section("answer_type", shape.describe()),
        section("screen", json.dumps({"app": observation.package, "image": list(scale.shown)})),
        section("elements", elements_text(rows)),
        frame_block,
    ]
    message = llm.create(
        "query",
        system=system_blocks(QUERY_SYSTEM, cache=True),
        tools=[QUERY_TOOL],
        messages=[{"role": "user", "content": content}],
        tool_choice={"type": "tool", "name": QUERY_TOOL["name"]},
        step=len(session.steps) or None,
    )
    uses = [b for b in message.content if b.type == "tool_use"]
    if not uses or message.stop_reason == "max_tokens":
        text = " ".join(b.text for b in message.content if b.type == "text")[:200]
        return f"no answer from the model ({message.stop_reason}): {text!r}", observation
    return dict(uses[0].input) if isinstance(uses[0].input, dict) else {}, observation


def query(
    session: Any,
    question: str,
    shape: Shape,
    *,
    llm: LLMClient | None,
    frame_divisor: float = 3.0,
    secrets: Sequence[str] = (),
) -> QueryResult:
    """Ask, convert and verify; `QueryFailed` / `QueryUnverified` name the question and what the model said."""
    if llm is None:
        raise LLMRunFailed("guistate.query needs a model: use --guistate-llm=replay, record or anthropic", None)
    if not isinstance(question, str) or not question.strip():
        raise ValueError(f"query() needs a question in words, got {question!r}")
    answer, observation = _ask(session, question, shape, llm, frame_divisor)
    tree = observation.tree
    if isinstance(answer, str):
        raise QueryFailed(f"query {question!r} ({shape.name}) failed: {answer}", question, answer)
    explanation = str(answer.get("explanation", ""))
    said = explanation or json.dumps(answer.get("value"), default=str)[:200]
    try:
        validate(answer, QUERY_TOOL["input_schema"], "report_answer input")
    except ToolInputError as exc:
        raise QueryFailed(f"query {question!r} ({shape.name}) failed: {exc}", question, said) from None
    if not answer.get("answered") or "value" not in answer:
        raise QueryFailed(f"query {question!r} ({shape.name}): the model could not answer: {said}", question, said)
    try:
        value = shape.convert(answer["value"])
    except ShapeError as exc:
        raise QueryFailed(
            f"query {question!r}: the answer is not a {shape.name}: {exc} (the model said: {said})", question, said
        ) from None
    evidence = [dict(e) for e in answer.get("evidence") or [] if isinstance(e, dict)]
    problems, cited = verify(shape, value, evidence, tree, secrets, question)
    if problems:
        raise QueryUnverified(
            f"query {question!r} ({shape.name}) is unverified: the model answered "
            f"{answer['value']!r}, but " + "; ".join(problems),
            question,
            answer["value"],
            problems,
            evidence=cited,
            observation=observation,
        )
    return QueryResult(
        question,
        shape.name,
        value,
        answer["value"],
        cited,
        explanation,
        tree=tree,
        package=str(observation.package or ""),
        observation=observation,
    )
