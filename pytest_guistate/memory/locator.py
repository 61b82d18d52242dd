"""Locators as memory keys: which function an element stands for, and what pins its instance.

A test names a function explicitly (`function="add to cart"`) or implicitly through its locator
(`id="add_to_cart"` -> function `id=add_to_cart`), so a suite that never names functions still
heals its own locators. Words of the locator that are not part of the function name ("Carol" in
`desc="Delete post by Carol"` for function "delete post") say *which* instance is meant: a heal
must land in the part of the screen that still shows them, never on a neighbour's button.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["KINDS", "Locator", "context_tokens", "function_key"]

KINDS = ("text", "desc", "id", "xpath")
_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")
_WORD = re.compile(r"[A-Za-z0-9]+")
_STOP = {"a", "an", "the", "by", "of", "to", "in", "on", "for", "and", "or", "with", "s", "id", "android",
         "text", "contains", "resource", "content", "desc", "com", "guistate"}


@dataclass(frozen=True)
class Locator:
    """One of the Device's locators: `kind` in text|desc|id|xpath."""

    kind: str
    value: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"locator kind must be one of {KINDS}, got {self.kind!r}")
        if not isinstance(self.value, str) or not self.value:
            raise ValueError(f"locator {self.kind}= needs a non-empty string, got {self.value!r}")

    def __str__(self) -> str:
        return f"{self.kind}={self.value}"

    @classmethod
    def parse(cls, text: str) -> Locator:
        """`"id=add_to_cart"` -> Locator("id", "add_to_cart")."""
        kind, sep, value = text.partition("=")
        if not sep:
            raise ValueError(f"locator {text!r} must look like kind=value with kind in {KINDS}")
        return cls(kind.strip(), value)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text.replace("_", " "))]


def function_key(locator: Locator | None, function: str | None) -> str:
    """The memory key: the named function (normalised), else the locator itself."""
    if function is not None and function.strip():
        return " ".join(function.lower().split())
    if locator is None:
        raise ValueError("a memory key needs a function name or a locator")
    return f"locator:{locator}"


def context_tokens(locator: Locator | None, function: str | None) -> set[str]:
    """Instance words: in the locator, not in the function name, not filler (may be empty)."""
    if locator is None or function is None or not function.strip():
        return set()
    value = locator.value
    if locator.kind == "xpath":
        literals = (a or b for a, b in _QUOTED.findall(value))  # only literals name things, and ids are
        value = " ".join(text for text in literals if ":" not in text and "/" not in text)  # not words
    named = set(_words(function))
    return {w for w in _words(value) if w not in named and w not in _STOP and len(w) > 1}
