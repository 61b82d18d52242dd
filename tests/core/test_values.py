"""`core.values` (issue 46): the shapes `guistate.query` reads and numbers in the screen's own format."""

from __future__ import annotations

import dataclasses
from typing import TypedDict

import pytest

from pytest_guistate.core.values import ShapeError, decimal_mark, leaves, numbers_in, parse_number, shape_of


class Item(TypedDict):
    name: str
    price: float


@dataclasses.dataclass
class Row:
    name: str
    count: int


@pytest.mark.parametrize(
    ("texts", "mark", "value"),
    [
        (["$1,299.00"], ".", 1299.0),
        (["1.299,00 €"], ",", 1299.0),
        (["Total: $15.49"], ".", 15.49),
        (["20,000 mAh"], ".", 20000.0),  # three digits after the only mark: a thousands group
        (["1.299", "3,50 €"], ",", 1299.0),  # the screen's other number says ',' is decimal
        (["1 299,00\u00a0€".replace(" ", "\u202f")], ",", 1299.0),
        (["Cart, 2 items"], ".", 2.0),
    ],
)
def test_numbers_read_in_the_screens_format(texts: list[str], mark: str, value: float) -> None:
    assert decimal_mark(texts) == mark
    assert numbers_in(texts[0], mark)[0] == value


def test_a_number_whose_groups_are_not_threes_is_not_one_number() -> None:
    assert parse_number("1,29,9.00", ".") is None
    assert parse_number("-3", ".") == -3.0
    assert numbers_in("2026-11-22  Pets") == [2026.0, 11.0, 22.0]


def test_shapes_of_the_types_a_test_asks_for() -> None:
    assert [shape_of(t).name for t in (str, int, float, bool, list[str])] == [
        "str",
        "int",
        "float",
        "bool",
        "list[str]",
    ]
    assert shape_of(list[Item]).name == "list[Item{name: str, price: float}]"
    assert shape_of({"name": str, "price": float}).name == "record{name: str, price: float}"
    assert shape_of(Row).convert({"name": "Beach", "count": 3}) == Row("Beach", 3)
    assert shape_of(float).convert("$1,299.00") == 1299.0  # a model that quoted the screen
    assert leaves(shape_of(list[Item]), [{"name": "A", "price": 1.0}], "") == [
        ("0.name", shape_of(str), "A"),
        ("0.price", shape_of(float), 1.0),
    ]


@pytest.mark.parametrize(
    ("tp", "raw", "message"),
    [
        (int, 2.5, r"value must be a whole number \(int\), got float 2.5"),
        (bool, "yes", "value must be true or false"),
        (str, "  ", "value must be a non-empty string"),
        (list[Item], [{"name": "A"}], r"value\.0 must have the fields \['name', 'price'\]: missing \['price'\]"),
        (Row, {"name": "A", "count": 1, "x": 2}, r"unknown \['x'\]"),
    ],
)
def test_a_value_not_of_the_asked_shape_names_where(tp: object, raw: object, message: str) -> None:
    with pytest.raises(ShapeError, match=message):
        shape_of(tp).convert(raw)


@pytest.mark.parametrize("tp", [dict, list, list[list[str]], set[str], {"name": list[str]}])
def test_a_type_query_cannot_read_is_refused_at_once(tp: object) -> None:
    with pytest.raises(ShapeError):
        shape_of(tp)
