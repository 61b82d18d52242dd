"""`-ios predicate string` and `-ios class chain`: the subset tests really write, on `IosNode`s.

Predicates (NSPredicate syntax as WDA evaluates it on element attributes): comparisons
`==  !=  <>  =  CONTAINS  BEGINSWITH  ENDSWITH  LIKE  MATCHES  IN` with the `[c]`/`[d]`/`[cd]`
modifiers, joined by `AND`/`OR`/`NOT` (also `&&`, `||`, `!`) and parentheses; values are quoted
strings, numbers, `true`/`false`/`YES`/`NO`; `TRUEPREDICATE`/`FALSEPREDICATE`. Attributes are
WDA's (`type name label value enabled visible accessible selected focused hittable index`) with
the `wd` prefixed aliases. Class chains: `/`-separated segments of a type (or `*`), `**/` for any
depth, an index `[n]` (1-based, negative from the end) and predicates in backticks
(`**/XCUIElementTypeCell[`label == "Carol"`]`). Anything else is an "invalid selector" naming
where it stopped, never a silent mismatch.
"""

from __future__ import annotations

import fnmatch
import re
import unicodedata
from collections.abc import Callable

from pytest_guistate.devices.sim.ios.translate import IosNode, kids, nodes_of
from pytest_guistate.devices.sim.model import SimError

__all__ = ["class_chain", "compile_predicate"]

Predicate = Callable[[IosNode], bool]
_TOKEN = re.compile(r"""\s*(?:
    (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<num>-?\d+(?:\.\d+)?)
  | (?P<op>==|!=|<>|>=|<=|=|>|<|&&|\|\||!|\(|\)|\{|\}|,)
  | (?P<mod>\[[cdn]+\])
  | (?P<word>[A-Za-z_][\w.]*)
)""", re.VERBOSE)
_ATTRS = ("type", "name", "label", "value", "enabled", "visible", "accessible", "selected", "focused", "hittable",
          "index", "rect", "placeholderValue", "elementType")
_BOOL_ATTRS = ("enabled", "visible", "accessible", "selected", "focused", "hittable")
_WORD_OPS = ("CONTAINS", "BEGINSWITH", "ENDSWITH", "LIKE", "MATCHES", "IN")


def _invalid(expression: str, why: str) -> SimError:
    return SimError("invalid selector", f"Invalid predicate {expression!r}: {why}")


def _tokens(expression: str) -> list[tuple[str, str]]:
    out, position = [], 0
    while position < len(expression):
        if not expression[position:].strip():
            break
        found = _TOKEN.match(expression, position)
        if found is None or found.end() == position:
            raise _invalid(expression, f"cannot read near {expression[position:][:30]!r}")
        kind = found.lastgroup or ""
        out.append((kind, found.group(kind)))
        position = found.end()
    return out


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])


class _Parser:
    def __init__(self, expression: str) -> None:
        self.expression = expression
        self.tokens = _tokens(expression)
        self.at = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise _invalid(self.expression, "it ends too early")
        self.at += 1
        return token

    def keyword(self, *words: str) -> bool:
        token = self.peek()
        if token is not None and token[1].upper() in words and token[0] in ("word", "op"):
            self.at += 1
            return True
        return False

    def parse(self) -> Predicate:
        predicate = self.disjunction()
        left = self.peek()
        if left is not None:
            raise _invalid(self.expression, f"unexpected {left[1]!r}")
        return predicate

    def disjunction(self) -> Predicate:
        parts = [self.conjunction()]
        while self.keyword("OR", "||"):
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else (lambda n: any(p(n) for p in parts))

    def conjunction(self) -> Predicate:
        parts = [self.negation()]
        while self.keyword("AND", "&&"):
            parts.append(self.negation())
        return parts[0] if len(parts) == 1 else (lambda n: all(p(n) for p in parts))

    def negation(self) -> Predicate:
        if self.keyword("NOT", "!"):
            inner = self.negation()
            return lambda n: not inner(n)
        if self.keyword("("):
            inner = self.disjunction()
            if not self.keyword(")"):
                raise _invalid(self.expression, "a '(' is not closed")
            return inner
        if self.keyword("TRUEPREDICATE"):
            return lambda n: True
        if self.keyword("FALSEPREDICATE"):
            return lambda n: False
        return self.comparison()

    def value(self) -> object:
        kind, text = self.take()
        if kind == "str":
            return _unquote(text)
        if kind == "num":
            return text
        if kind == "word" and text.upper() in ("TRUE", "YES"):
            return "true"
        if kind == "word" and text.upper() in ("FALSE", "NO"):
            return "false"
        if kind == "op" and text == "{":
            items = [self.value()]
            while self.keyword(","):
                items.append(self.value())
            if not self.keyword("}"):
                raise _invalid(self.expression, "a '{' list is not closed")
            return items
        raise _invalid(self.expression, f"expected a value, got {text!r}")

    def comparison(self) -> Predicate:
        kind, attr = self.take()
        plain = attr[2].lower() + attr[3:] if attr.startswith("wd") and len(attr) > 2 else attr
        if kind != "word" or plain not in _ATTRS:
            raise _invalid(self.expression, f"unknown attribute {attr!r}; known: {', '.join(_ATTRS)}")
        kind, op = self.take()
        op = op.upper()
        if kind not in ("op", "word") or (kind == "word" and op not in _WORD_OPS):
            raise _invalid(self.expression, f"expected an operator after {attr!r}, got {op!r}")
        ahead = self.peek()
        modifier = self.take()[1] if ahead is not None and ahead[0] == "mod" else ""
        expected = self.value()
        return _compare(plain, op, modifier, expected, self.expression)


def _fold(text: str, modifier: str) -> str:
    if "c" in modifier:
        text = text.lower()
    if "d" in modifier:
        text = "".join(ch for ch in unicodedata.normalize("NFD", text) if not unicodedata.combining(ch))
    return text


def _actual(node: IosNode, attr: str) -> str | None:
    value = node.attribute(attr)
    if attr in _BOOL_ATTRS:
        return "true" if value == "true" else "false"
    return value


def _compare(attr: str, op: str, modifier: str, expected: object, expression: str) -> Predicate:
    if attr in _BOOL_ATTRS and isinstance(expected, str) and expected in ("0", "1"):
        expected = "true" if expected == "1" else "false"
    if op == "IN":
        if not isinstance(expected, list):
            raise _invalid(expression, "IN needs a {list}")
        choices = [_fold(str(item), modifier) for item in expected]
        return lambda n: _fold(_actual(n, attr) or "", modifier) in choices
    if isinstance(expected, list):
        raise _invalid(expression, f"{op} does not take a list")
    want = _fold(str(expected), modifier)
    if op == "MATCHES":
        try:
            pattern = re.compile(want)
        except re.error as exc:
            raise _invalid(expression, f"bad MATCHES pattern: {exc}") from exc
        return lambda n: pattern.fullmatch(_fold(_actual(n, attr) or "", modifier)) is not None
    tests: dict[str, Callable[[str, str], bool]] = {
        "==": str.__eq__, "=": str.__eq__, "!=": str.__ne__, "<>": str.__ne__,
        "CONTAINS": lambda a, b: b in a, "BEGINSWITH": str.startswith, "ENDSWITH": str.endswith,
        "LIKE": lambda a, b: fnmatch.fnmatchcase(a, b),
    }
    if op not in tests:
        raise _invalid(expression, f"operator {op!r} is not supported by the simulated phone")
    test = tests[op]

    def check(node: IosNode) -> bool:
        actual = _actual(node, attr)
        if actual is None:
            return op in ("!=", "<>")
        return test(_fold(actual, modifier), want)

    return check


def compile_predicate(expression: str) -> Predicate:
    """A predicate string as a function of a node (`SimError` "invalid selector" if it cannot be read)."""
    if not isinstance(expression, str) or not expression.strip():
        raise _invalid(str(expression), "it is empty")
    return _Parser(expression).parse()


_SEGMENT = re.compile(r"(?P<type>XCUIElementType\w+|\*)(?P<filters>(?:\[(?:-?\d+|`(?:[^`]|``)*`|\$(?:[^$])*\$)\])*)")
_FILTER = re.compile(r"\[(-?\d+|`(?:[^`]|``)*`|\$[^$]*\$)\]")


def class_chain(root: IosNode, chain: str) -> list[IosNode]:
    """Evaluate a class chain from `root` (the application, or a found element), document order."""
    if not isinstance(chain, str) or not chain.strip():
        raise SimError("invalid selector", "Invalid class chain: it is empty")
    current = [root]
    rest = chain.strip()
    while rest:
        deep = rest.startswith("**/")
        if deep:
            rest = rest[3:]
        segment = _SEGMENT.match(rest)
        if segment is None:
            raise SimError("invalid selector", f"Invalid class chain {chain!r}: cannot read near {rest[:30]!r}")
        rest = rest[segment.end():]
        if rest and not rest.startswith("/"):
            raise SimError("invalid selector", f"Invalid class chain {chain!r}: expected '/' near {rest[:30]!r}")
        rest = rest[1:]
        wanted = segment.group("type")
        found: list[IosNode] = []
        for parent in current:
            pool = [n for n in nodes_of(parent) if n is not parent] if deep else kids(parent)
            matches = [n for n in pool if wanted == "*" or n.cls == wanted]
            found.extend(_filtered(matches, segment.group("filters"), chain))
        current = list({n.key: n for n in found}.values())
    return current


def _filtered(nodes: list[IosNode], filters: str, chain: str) -> list[IosNode]:
    for item in _FILTER.findall(filters):
        if item.startswith("`"):
            predicate = compile_predicate(item[1:-1].replace("``", "`"))
            nodes = [n for n in nodes if predicate(n)]
        elif item.startswith("$"):
            predicate = compile_predicate(item[1:-1])
            nodes = [n for n in nodes if any(predicate(d) for d in nodes_of(n) if d is not n)]
        else:
            index = int(item)
            if index == 0:
                raise SimError("invalid selector", f"Invalid class chain {chain!r}: indexes start at 1 (or -1)")
            position = index - 1 if index > 0 else len(nodes) + index
            nodes = [nodes[position]] if 0 <= position < len(nodes) else []
    return nodes
