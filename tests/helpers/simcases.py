"""Healing cases on the simulated phone: learn on app version 1, heal on version 2 (issue 7).

Shared by `tests/memory` and `benchmarks/heal_bench.py`. Screens are reached through the sim's
view keys (identical in both versions), never through the locators under test, and every case
says what really has to happen (`truth`, read from the sim's action log), so a heal that taps
the wrong thing is caught even when its visible effect looks plausible.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from pytest_guistate.core.frame import Frame
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.uitree import UINode, parse_page_source
from pytest_guistate.devices.sim.apps.shop import SOLD_OUT_V2
from pytest_guistate.devices.sim.phone import ManualClock, Phone
from pytest_guistate.memory.locator import Locator

__all__ = ["Case", "SimRig", "cases", "find_by_locator", "negatives", "positives"]

SIZES: tuple[tuple[int, int], ...] = ((1080, 2400), (720, 1600), (1440, 3200))
SHOPS = {"ShopA": "com.guistate.shopa", "ShopB": "com.guistate.shopb"}
FEED = "com.guistate.feed"
Log = list[dict[str, Any]]


@dataclass(frozen=True)
class Case:
    """One heal: `locator` (a v1 locator) on `screen` of `app`; `positive` when the function is there."""

    name: str
    app: str
    screen: str  # search | product:<name> | cart_full | cart_empty | feed
    locator: Locator
    function: str | None
    expect: Callable[[Observation], bool]
    truth: Callable[[Log], bool]  # did the intended action really happen (sim ground truth)
    positive: bool
    size: tuple[int, int] = (1080, 2400)


def _has(text: str) -> Callable[[Observation], bool]:
    return lambda obs: obs.tree is not None and obs.tree.has_text(text)


def _did(action: str, **fields: Any) -> Callable[[Log], bool]:
    return lambda log: any(e["action"] == action and all(e.get(k) == v for k, v in fields.items()) for e in log)


def _searching(obs: Observation) -> bool:
    return obs.tree is not None and bool(obs.tree.find(lambda n: n.content_desc == "Loading"
                                                       or n.resource_id.endswith(":id/results")))


def _focused(obs: Observation) -> bool:
    return obs.tree is not None and any(n.focused and "EditText" in n.cls for n in obs.tree.nodes())


def positives(size: tuple[int, int]) -> Iterator[Case]:
    for shop, app in SHOPS.items():
        yield Case(f"{shop} search button", app, "search", Locator("id", "search_button"), None,
                   _searching, _did("search", shop=shop), True, size)
        yield Case(f"{shop} search field", app, "search", Locator("id", "search"), None,
                   _focused, lambda log: any(e.get("target") == "shop/search" for e in log), True, size)
        yield Case(f"{shop} cart icon", app, "search", Locator("id", "cart"), None,
                   _has("Cart"), _did("open_screen", screen="cart"), True, size)
        for product in ("Wireless Earbuds", "USB-C Cable"):
            yield Case(f"{shop} add {product}", app, f"product:{product}", Locator("id", "add_to_cart"),
                       "add to cart", _has("Added to cart"), _did("add_to_cart", product=product), True, size)
        yield Case(f"{shop} checkout", app, "cart_full", Locator("id", "checkout"), None,
                   _has("Order placed"), _did("checkout", shop=shop), True, size)
    for author in ("Bob", "Carol", "Dave", "Erin", "Frank"):
        yield Case(f"Feed delete {author}", FEED, "feed", Locator("desc", f"Delete post by {author}"), "delete post",
                   _has(f"Delete post by {author}?"), _did("open_dialog", author=author), True, size)


def negatives(size: tuple[int, int]) -> Iterator[Case]:
    never: Callable[[Log], bool] = lambda log: False
    for shop, app in SHOPS.items():
        yield Case(f"{shop} add sold-out {SOLD_OUT_V2}", app, f"product:{SOLD_OUT_V2}", Locator("id", "add_to_cart"),
                   "add to cart", _has("Added to cart"), never, False, size)
        yield Case(f"{shop} checkout on empty cart", app, "cart_empty", Locator("id", "checkout"), None,
                   _has("Order placed"), never, False, size)
    yield Case("ShopA search button on a product page", SHOPS["ShopA"], "product:Phone Case",
               Locator("id", "search_button"), None, _searching, never, False, size)
    yield Case("ShopB add to cart on the cart page", SHOPS["ShopB"], "cart_full", Locator("id", "add_to_cart"),
               "add to cart", _has("Added to cart"), never, False, size)
    yield Case("ShopB search field on the cart page", SHOPS["ShopB"], "cart_full", Locator("id", "search"), None,
               _focused, never, False, size)  # no text input there: a text field's role must not heal elsewhere
    yield Case("Feed delete Alice (pinned)", FEED, "feed", Locator("desc", "Delete post by Alice"), "delete post",
               _has("Delete post by Alice?"), never, False, size)


def cases(sizes: tuple[tuple[int, int], ...] = SIZES) -> tuple[list[Case], list[Case]]:
    return [c for s in sizes for c in positives(s)], [c for s in sizes for c in negatives(s)]


def find_by_locator(tree: Any, locator: Locator) -> UINode | None:
    """What `Device.find` would return (last displayed match), or None."""
    if locator.kind == "id":
        nodes = tree.by_resource_id(locator.value)
    elif locator.kind == "desc":
        nodes = tree.find(lambda n: locator.value in n.descriptions)
    elif locator.kind == "text":
        nodes = tree.find(lambda n: n.text == locator.value)
    else:
        raise ValueError(f"the sim cases use id/desc/text locators, not {locator}")
    shown = [n for n in nodes if n.displayed and n.bounds is not None and not n.bounds.is_empty]
    return shown[-1] if shown else None


class SimRig:
    """An in-process phone on a manual clock, driven like a test would (no HTTP)."""

    def __init__(self, app: str, version: int, size: tuple[int, int], seed: int = 0) -> None:
        self.clock = ManualClock()
        self.phone = Phone(width=size[0], height=size[1], seed=seed, app_package=app, clock=self.clock,
                           frozen=True, app_version=version)
        self.taps = 0

    def observe(self) -> Observation:
        frame = Frame(self.phone.screenshot_png())
        return Observation(frame=frame, tree=parse_page_source(self.phone.page_source()),
                           package=self.phone.current_package())

    def tap(self, x: int, y: int) -> None:
        self.taps += 1
        self.phone.tap(int(x), int(y))

    def settle(self, seconds: float = 2.0) -> None:
        self.clock.advance(seconds)

    def log(self) -> Log:
        return self.phone.action_log()

    def _key(self, key: str) -> None:
        node = self.phone.find_key(key)
        if node is None:
            raise LookupError(f"sim view {key!r} is not on screen")
        self.phone.tap(*node.bounds.center)
        self.settle()

    def go(self, screen: str) -> None:
        """Reach a screen through view keys (the same in v1 and v2), then let it settle."""
        if screen.startswith("product:") or screen == "cart_full":
            product = screen.partition(":")[2] or "Phone Case"
            self.phone.type_text("shop/search", product)
            self._key("shop/search_button")
            self.settle(5.0)
            sku = next(n.key.rsplit("/", 1)[-1] for n in self.phone.root().walk()
                       if n.key.startswith("shop/result/") and n.key.count("/") == 2)
            self._key(f"shop/result/{sku}")
            if screen == "cart_full":
                self._key("shop/add_to_cart")
                self._key("shop/cart")
        elif screen == "cart_empty":
            self._key("shop/cart")
        self.settle(3.0)
