"""Helpers the example tests share: locators and checks for the simulated phone's apps."""

from __future__ import annotations

from typing import Any

SHOPS = {"ShopA": "com.guistate.shopa", "ShopB": "com.guistate.shopb"}


def result_row(product: str) -> str:
    """XPath of a search result row's name: a text match alone would also hit the search field."""
    return f"//*[contains(@resource-id, ':id/name') and @text='{product}']"


def product_price(device: Any) -> float:
    """The price on a product page, e.g. '$15.99' -> 15.99."""
    return float(device.find(id="product_price").text.lstrip("$"))


def switch_is_on(title: str) -> Any:
    """A custom check: the Switch in the settings row titled `title` is checked.

    Any callable taking an `Observation` and returning bool (or a `CheckResult`) can be an `expect=`.
    """
    from pytest_guistate import CheckResult

    def check(observation: Any) -> Any:
        for row in observation.tree.nodes():
            if any(child.text == title for child in row.children):
                switches = [n for n in row.walk() if n.cls.endswith("Switch")]
                if switches:
                    state = "on" if switches[0].checked else "off"
                    return CheckResult(switches[0].checked, f"switch '{title}' is {state}", switches[0].bounds)
        return CheckResult(False, f"no settings row titled {title!r} on screen")

    check.__name__ = f"switch {title!r} on"
    return check
