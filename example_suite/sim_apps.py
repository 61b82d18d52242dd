"""Helpers the example tests share: locators and checks for the simulated phone's apps.

The suite runs on both personas of the sim (`--guistate-platform=android|ios`); the few locators
that differ between UiAutomator2 and XCUITest live here, keyed by `device.platform`.
"""

from __future__ import annotations

from typing import Any

SHOPS = {"ShopA": "com.guistate.shopa", "ShopB": "com.guistate.shopb"}


def result_row(device: Any, product: str) -> str:
    """XPath of a search result row's name: a text match alone would also hit the search field."""
    if device.platform == "ios":
        return f"//XCUIElementTypeStaticText[@name='name' and @label='{product}']"
    return f"//*[contains(@resource-id, ':id/name') and @text='{product}']"


# A dialog's buttons: Android's AlertDialog ids; on iOS an alert's buttons are named by their titles.
_DIALOG_IDS = {"Delete": "android:id/button1", "Cancel": "android:id/button2"}


def dialog_button(device: Any, label: str) -> str:
    """The `id=` of the dialog button titled `label` on this platform."""
    return label if device.platform == "ios" else _DIALOG_IDS[label]


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
                    on = switches[0].checked or switches[0].attrs.get("value") == "1"  # iOS: value "1"
                    return CheckResult(on, f"switch '{title}' is {'on' if on else 'off'}", switches[0].bounds)
        return CheckResult(False, f"no settings row titled {title!r} on screen")

    check.__name__ = f"switch {title!r} on"
    return check
