"""Typed values read off a screen (`guistate.query`, issue 46): the answer's shape, and numbers as
the screen writes them.

A test asks for a Python type (`str`, `int`, `float`, `bool`, `list[str]`, a record: a dataclass, a
`TypedDict` or a dict of field types, and lists of them); `Shape` is that type as data, so the
prompt can describe it, the answer can be converted to it, and every leaf of the value (one price,
one name, one field of one row) can be checked against the element it was read from.

Numbers are parsed with the screen's own format: `$1,299.00` and `1.299,00 €` are both 1299.0. A
screen says which mark is its decimal one by its unambiguous numbers (`$15.49`, `1.299,00`); a
number like `1,299` alone reads as a thousands group.
"""

from __future__ import annotations

import dataclasses
import math
import re
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "SCALARS",
    "Shape",
    "ShapeError",
    "decimal_mark",
    "field_of",
    "leaves",
    "numbers_in",
    "parse_number",
    "shape_of",
    "shows_words",
]

SCALARS: dict[type, str] = {str: "str", int: "int", float: "float", bool: "bool"}
_TOKEN = re.compile(r"(?<![\d.,])[-\u2212]?\d[\d.,'\u00a0\u202f]*")
_GROUPS = "'\u00a0\u202f"
# Where a text's segments part: a label's colon, a list's comma or bullet, brackets, a sentence's end, a
# spaced dash. A comma between digits ("1,299") and a period inside a word ("Dr.", "15.99") part nothing.
_SEPARATOR = re.compile(
    r"\s*(?:[:;|\u2022\u00b7()\[\]{}!?\"\u201c\u201d\u00ab\u00bb\n\t/]|(?<!\d),|,(?!\d)|\.(?=\s|$)"
    r"|\s[-\u2013\u2014]\s|[\u2013\u2014])\s*"
)


class ShapeError(ValueError):
    """A type `query` cannot read, or a value that is not of the asked shape (the message names where)."""


@dataclass(frozen=True)
class Shape:
    """A type as data. `kind`: str | int | float | bool | list | record; `item` a list's items,
    `fields` a record's (scalar) fields, `build` how to make the record (a dataclass; None: a dict)."""

    kind: str
    item: Shape | None = None
    fields: tuple[tuple[str, Shape], ...] = ()
    build: type | None = None
    title: str = ""

    @property
    def name(self) -> str:
        """`float`, `list[str]`, `Item{name: str, price: float}`: how errors, the cache and the prompt name it."""
        if self.kind == "list":
            assert self.item is not None
            return f"list[{self.item.name}]"
        if self.kind == "record":
            inner = ", ".join(f"{k}: {s.name}" for k, s in self.fields)
            return f"{self.title or 'record'}{{{inner}}}"
        return self.kind

    def describe(self) -> str:
        """The shape for the model, with the JSON it expects and how leaves are cited."""
        json_kind = {"str": "a JSON string", "int": "a JSON integer", "float": "a JSON number", "bool": "true or false"}
        if self.kind in json_kind:
            return f'{self.name}: {json_kind[self.kind]}; cite it with path ""'
        if self.kind == "list":
            assert self.item is not None
            if self.item.kind == "record":
                keys = ", ".join(f'"{k}": {json_kind[s.kind]}' for k, s in self.item.fields)
                return (
                    f"{self.name}: a JSON array of objects {{{keys}}}, one per item on screen in screen order; "
                    'cite each field with path "<index>.<field>" ("0.price")'
                )
            return (
                f"{self.name}: a JSON array of {json_kind[self.item.kind]}s in screen order; cite each item "
                'with path "<index>" ("0", "1")'
            )
        keys = ", ".join(f'"{k}": {json_kind[s.kind]}' for k, s in self.fields)
        return f'{self.name}: a JSON object {{{keys}}}; cite each field with path "<field>" ("price")'

    def convert(self, raw: Any, path: str = "") -> Any:
        """The model's JSON as this type; `ShapeError` names the first part that is not."""
        where = f"value{'.' + path if path else ''}"
        if self.kind == "list":
            assert self.item is not None
            if not isinstance(raw, list):
                raise ShapeError(f"{where} must be a list ({self.name}), got {_short(raw)}")
            return [self.item.convert(x, _join(path, str(i))) for i, x in enumerate(raw)]
        if self.kind == "record":
            if not isinstance(raw, dict):
                raise ShapeError(f"{where} must be an object ({self.name}), got {_short(raw)}")
            names = [k for k, _ in self.fields]
            missing = [k for k in names if k not in raw]
            extra = [k for k in raw if k not in names]
            if missing or extra:
                raise ShapeError(
                    f"{where} must have the fields {names}: "
                    + "; ".join(([f"missing {missing}"] if missing else []) + ([f"unknown {extra}"] if extra else []))
                )
            values = {k: s.convert(raw[k], _join(path, k)) for k, s in self.fields}
            return self.build(**values) if self.build is not None else values
        return _scalar(self.kind, raw, where)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _short(raw: Any) -> str:
    return f"{type(raw).__name__} {raw!r:.60}"


def _scalar(kind: str, raw: Any, where: str) -> Any:
    if kind == "bool":
        if isinstance(raw, bool):
            return raw
        raise ShapeError(f"{where} must be true or false, got {_short(raw)}")
    if kind == "str":
        if isinstance(raw, str) and raw.strip():
            return raw.strip()
        raise ShapeError(f"{where} must be a non-empty string, got {_short(raw)}")
    number: float | None = None
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        number = float(raw)
    elif isinstance(raw, str):  # "$15.49" from a model that quoted the screen: one number, in its format
        found = numbers_in(raw, decimal_mark([raw]))
        number = found[0] if len(found) == 1 else None
    if number is None or not math.isfinite(number):
        raise ShapeError(f"{where} must be a number ({kind}), got {_short(raw)}")
    if kind == "int":
        if not number.is_integer():
            raise ShapeError(f"{where} must be a whole number (int), got {_short(raw)}")
        return int(number)
    return number


def shape_of(tp: Any) -> Shape:
    """The shape of a type a test passes as `type=`; `ShapeError` for one `query` cannot read."""
    if isinstance(tp, dict):  # {"name": str, "price": float}
        return _record({str(k): v for k, v in tp.items()}, None, "record")
    if tp in SCALARS:
        return Shape(SCALARS[tp])
    origin = typing.get_origin(tp)
    if origin is list:
        (item_tp,) = typing.get_args(tp) or (None,)
        if item_tp is None:
            raise ShapeError("a list type needs its item type: list[str], list[float], list[Item]")
        item = shape_of(item_tp)
        if item.kind == "list":
            raise ShapeError(f"lists of lists are not read: {tp!r}")
        return Shape("list", item=item)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        return _record({f.name: hints[f.name] for f in dataclasses.fields(tp)}, tp, tp.__name__)
    if isinstance(tp, type) and typing.is_typeddict(tp):
        return _record(typing.get_type_hints(tp), None, tp.__name__)
    raise ShapeError(
        f"query() reads str, int, float, bool, lists of them, and records (a dataclass, a TypedDict "
        f"or a dict of field types) and lists of records; not {tp!r}"
    )


def _record(hints: dict[str, Any], build: type | None, title: str) -> Shape:
    if not hints:
        raise ShapeError(f"the record {title} has no fields")
    fields = []
    for name, hint in hints.items():
        if not isinstance(hint, type) or hint not in SCALARS:
            raise ShapeError(f"the record {title}'s field {name!r} must be str, int, float or bool, not {hint!r}")
        fields.append((name, Shape(SCALARS[hint])))
    return Shape("record", fields=tuple(fields), build=build, title=title)


def leaves(shape: Shape, value: Any, path: str = "") -> list[tuple[str, Shape, Any]]:
    """Every scalar of a value with its path ("", "2", "price", "0.price"): what must be cited."""
    if shape.kind == "list":
        assert shape.item is not None
        return [leaf for i, x in enumerate(value) for leaf in leaves(shape.item, x, _join(path, str(i)))]
    if shape.kind == "record":
        return [(_join(path, k), s, field_of(value, k)) for k, s in shape.fields]
    return [(path, shape, value)]


def field_of(record: Any, key: str) -> Any:
    """A record's field, whether the record is a dict (TypedDict) or a dataclass."""
    return record[key] if isinstance(record, dict) else getattr(record, key)


def shows_words(value: str, text: str) -> bool:
    """Does `text` show the string `value` as itself: the whole text, or a whole run of its segments
    (parted by `_SEPARATOR`)? "Name: Carol" shows "Carol" and "Name: Carol"; "Phone Case" shows
    neither "Phone" nor "Case", "Carol" not "Car". Case and runs of spaces do not count."""
    want, have = _squash(value), _squash(text)
    if not want:
        return False
    starts, ends = {0}, {len(have)}
    for cut in _SEPARATOR.finditer(have):
        starts.add(cut.end())
        ends.add(cut.start())
    at = have.find(want)
    while at >= 0:
        if at in starts and at + len(want) in ends:
            return True
        at = have.find(want, at + 1)
    return False


def _squash(text: str) -> str:
    return " ".join(text.casefold().split())


def decimal_mark(texts: Iterable[str]) -> str:
    """The screen's decimal mark, voted by its unambiguous numbers: both marks in one number (the last
    is decimal), or one mark once followed by other than three digits. '.' when nothing tells."""
    votes = {".": 0, ",": 0}
    for text in texts:
        for token in _TOKEN.findall(text or ""):
            token = token.rstrip(".,'\u00a0\u202f")
            marks = [c for c in token if c in ".,"]
            if not marks:
                continue
            if len(set(marks)) == 2:
                votes[marks[-1]] += 1
            elif len(marks) == 1 and len(token) - token.index(marks[0]) - 1 != 3:
                votes[marks[0]] += 1
    return "," if votes[","] > votes["."] else "."


def parse_number(token: str, decimal: str = ".") -> float | None:
    """One number as written (`1,299.00`, `1.299,00`, `1 299`, `-3`), with `decimal` as its decimal
    mark; None when the groups are not of three digits (then it is not one number)."""
    token = token.strip().rstrip(".,'\u00a0\u202f").replace("\u2212", "-")
    group = "," if decimal == "." else "."
    whole, _, fraction = token.partition(decimal)
    if decimal in fraction:
        return None
    sign = "-" if whole.startswith("-") else ""
    whole = whole.lstrip("-")
    parts = re.split(f"[{re.escape(group + _GROUPS)}]", whole)
    if len(parts) > 1 and not (1 <= len(parts[0]) <= 3 and all(len(p) == 3 for p in parts[1:])):
        return None
    digits = "".join(parts)
    if not digits.isdigit() or (fraction and not fraction.isdigit()):
        return None
    return float(f"{sign}{digits}.{fraction or 0}")


def numbers_in(text: str, decimal: str = ".") -> list[float]:
    """Every number a text shows, in its order ("Total: $1,299.00" -> [1299.0]; "Cart, 2 items" -> [2.0])."""
    found = (parse_number(t, decimal) for t in _TOKEN.findall(text or ""))
    return [n for n in found if n is not None]
