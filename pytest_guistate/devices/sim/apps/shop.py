"""ShopA (`com.guistate.shopa`) and ShopB (`com.guistate.shopb`): the compare-prices-then-buy case.

The same products are sold in both shops at different, seed-determined prices (`shop_prices`),
so a cross-app test must carry a price from one app to the other (a DEPENDENCY anchor) and buy
in the cheaper one. Search shows a spinner for `faults.search_delay` seconds before results.

App version 2 (`guistate:appVersion` 2, issue 7) is a restyle with the same functions: new brand
colours, a pill-shaped Search button, a smaller yellow cart icon moved left and renamed "bag",
Add to cart as a half-width pill beside the price, Checkout moved right, and new resource ids and
descriptions everywhere. Two screens lack a function on purpose (healing must not tap there):
`SOLD_OUT_V2` shows "Notify me" where Add to cart was, and an empty cart has no Checkout button.
Version 1 is untouched. Drifts of version 1 (`drift.py`): `renamed` (Add to bag), `moved` (Add to cart
above the description), `new_row` (a sponsored "<item> Pro" result first), `interstitial` (a
rate-the-app dialog when the shop opens), `removed_screen` (no product page: Add to cart on each row).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.sim.apps.base import (
    RGB,
    TEXT,
    TEXT2,
    WHITE,
    App,
    AppContext,
    Style,
    View,
)
from pytest_guistate.devices.sim.apps.system import alert

__all__ = ["PRODUCTS", "SOLD_OUT_V2", "Product", "ShopApp", "shop_prices"]

PRODUCTS: list[tuple[str, float, str]] = [
    ("Wireless Earbuds", 59.0, "Noise-cancelling earbuds with a 24 h charging case."),
    ("Phone Case", 15.0, "Slim shock-absorbing case, matte finish."),
    ("USB-C Cable", 10.0, "Braided 2 m cable, 100 W fast charging."),
    ("Smart Watch", 199.0, "Heart rate, GPS and a week of battery."),
    ("Bluetooth Speaker", 40.0, "Waterproof speaker with 12 h playback."),
    ("Power Bank", 30.0, "20,000 mAh, charges two devices at once."),
    ("Laptop Stand", 35.0, "Aluminium stand, six height settings."),
]
SOLD_OUT_V2 = "Smart Watch"  # v2 only: no Add to cart on its page (a negative for healing)
_V2_PRIMARY = {"A": (0, 121, 107), "B": (21, 101, 192)}
_TILE_COLORS = [(144, 202, 249), (206, 147, 216), (165, 214, 167), (255, 204, 128), (128, 203, 196),
                (239, 154, 154), (176, 190, 197)]


@dataclass(frozen=True)
class Product:
    id: str
    name: str
    price: float
    description: str
    color: tuple[int, int, int]


def shop_prices(seed: int) -> dict[str, tuple[float, float]]:
    """name -> (price in ShopA, price in ShopB); never equal, so one shop is always cheaper."""
    out: dict[str, tuple[float, float]] = {}
    for name, base, _ in PRODUCTS:
        rng = random.Random(f"{seed}:price:{name}")
        a, b = (math.floor(base * (1 + rng.uniform(-0.12, 0.12))) + rng.choice((0.49, 0.99)) for _ in "ab")
        if a == b:
            b = round(b - 0.5, 2)
        out[name] = (round(a, 2), round(b, 2))
    return out


class ShopApp(App):
    def __init__(self, ctx: AppContext, shop: str) -> None:
        self.shop = shop
        self.package = f"com.guistate.shop{shop.lower()}"
        self.label = f"Shop{shop}"
        self.primary = (230, 81, 0) if shop == "A" else (106, 27, 154)
        self.v2 = ctx.app_version == 2
        if self.v2:
            self.primary = _V2_PRIMARY[shop]
        super().__init__(ctx)
        prices = shop_prices(ctx.seed)
        index = 0 if shop == "A" else 1
        self.products = [Product(f"sku{i + 1}", name, prices[name][index], desc, _TILE_COLORS[i])
                         for i, (name, _, desc) in enumerate(PRODUCTS)]
        self.stack: list[tuple[str, Product | None]] = [("search", None)]  # screen: search | product | cart
        self.results: list[Product] | None = None
        self.loading_until: float | None = None
        self.pending_query = ""
        self.cart: list[Product] = []
        self.rate_prompt = ctx.drift == "interstitial"  # shown until dismissed

    @property
    def screen(self) -> str:
        return self.stack[-1][0]

    @property
    def product(self) -> Product | None:
        return self.stack[-1][1]

    def screen_id(self) -> str:
        return f"product/{self.product.id}" if self.product is not None else self.screen

    # -- state transitions ---------------------------------------------------------------
    def _search(self) -> None:
        self.pending_query = self.texts.get("shop/search", "").strip()
        self.ctx.log("search", shop=self.label, query=self.pending_query)
        self.results = None
        self.loading_until = self.ctx.now() + self.ctx.faults().search_delay
        self.advance(self.ctx.now())

    def on_enter(self, key: str) -> None:
        if key == "shop/search":
            self._search()

    def advance(self, now: float) -> bool:
        if self.loading_until is None or now < self.loading_until:
            return False
        query = self.pending_query.lower()
        self.results = [p for p in self.products if query in p.name.lower()]
        self.loading_until = None
        return True

    def _go(self, screen: str, product: Product | None = None) -> None:
        self.stack.append((screen, product))
        self.ctx.log("open_screen", screen=screen, **({"product": product.name} if product else {}))

    def _add_to_cart(self, product: Product | None = None) -> None:
        product = product or self.product
        assert product is not None
        self.cart.append(product)
        self.ctx.log("add_to_cart", shop=self.label, product=product.name, price=product.price)
        self.ctx.toast("Added to cart")

    def _close_rate_prompt(self, choice: str) -> None:
        self.rate_prompt = False
        self.ctx.log("dismiss_dialog", dialog="rate_app", choice=choice)

    def dialog(self) -> View | None:
        if not self.rate_prompt:
            return None
        return alert(self.m, "shop/rate", self.package, f"Enjoying {self.label}?", "Rate us in the store.",
                     [("shop/rate/later", "android:id/button2", "Not now", partial(self._close_rate_prompt, "later")),
                      ("shop/rate/rate", "android:id/button1", "Rate now", partial(self._close_rate_prompt, "rate"))],
                     self.primary)

    def _checkout(self) -> None:
        total = round(sum(p.price for p in self.cart), 2)
        self.ctx.log("checkout", shop=self.label, items=[p.name for p in self.cart], total=total)
        self.cart = []
        self.ctx.toast("Order placed")

    def _notify_me(self) -> None:
        assert self.product is not None
        self.ctx.log("notify_me", shop=self.label, product=self.product.name)
        self.ctx.toast("We'll let you know")

    def back(self) -> bool:
        if self.rate_prompt:
            self._close_rate_prompt("back")
            return True
        if len(self.stack) == 1:
            return False
        self.stack.pop()
        return True

    def back_title(self) -> str | None:
        if len(self.stack) == 1:
            return None
        previous = self.stack[-2][0]
        return {"search": self.label, "product": self.label, "cart": "Cart"}[previous]

    # -- views ---------------------------------------------------------------------------
    def title(self) -> str:
        return {"search": self.label, "product": self.label, "cart": "Cart"}[self.screen]

    def appbar_actions(self, bar: Box) -> list[View]:
        px, count = self.m.px, len(self.cart)
        right = bar.right - px(40)
        if self.v2:
            return self._appbar_actions_v2(bar, right, count)
        cart = View("shop/cart", "android.widget.ImageView", Box(right - px(112), bar.top + px(28), right,
                                                                 bar.bottom - px(28)),
                    desc=f"Cart, {count} items", rid=f"{self.package}:id/cart", on_tap=lambda: self._go("cart"),
                    style=Style(kind="cart", fg=WHITE))
        views = [cart]
        if count:
            views.append(View("shop/cart_badge", "android.widget.TextView",
                              Box(right - px(48), bar.top + px(20), right + px(8), bar.top + px(76)), text=str(count),
                              rid=f"{self.package}:id/cart_badge",
                              style=Style(kind="button", bg=(211, 47, 47), fg=WHITE, size=px(32), align="center",
                                          radius=px(28))))
        return views

    def build_content(self, area: Box) -> list[View]:
        return {"search": self._search_screen, "product": self._product_screen, "cart": self._cart_screen}[
            self.screen](area)

    def _search_screen(self, area: Box) -> list[View]:
        px, top = self.m.px, area.top
        if self.v2:
            return self._search_screen_v2(area)
        views = [self.edit("shop/search", Box(px(48), top + px(40), px(756), top + px(168)), "Search products"),
                 self.button("shop/search_button", Box(px(784), top + px(48), px(1032), top + px(160)), "Search",
                             self._search, rid=f"{self.package}:id/search_button")]
        return views + self._results(Box(0, top + px(200), self.m.width, area.bottom))

    def _results(self, results_box: Box) -> list[View]:
        px, views = self.m.px, list[View]()
        if self.loading_until is not None:
            c = self.m.width // 2
            views.append(View("shop/loading", "android.widget.ProgressBar",
                              Box(c - px(72), results_box.top + px(120), c + px(72), results_box.top + px(264)),
                              rid=f"{self.package}:id/loading", desc="Loading", style=Style(kind="spinner",
                                                                                            fg=self.primary)))
        elif self.results is not None and not self.results:
            views.append(self.label_view("shop/empty", Box(px(48), results_box.top + px(40), px(1032),
                                                           results_box.top + px(120)),
                                         f"No results for \"{self.pending_query}\"", color=TEXT2,
                                         rid=f"{self.package}:id/empty"))
        elif self.results:
            results = self.results
            if self.ctx.drift == "new_row":  # an ad above the real results
                first = results[0]
                results = [Product("ad1", f"{first.name} Pro", round(first.price * 1.6, 2), "Sponsored",
                                   (255, 224, 130)), *results]
            views.append(self._product_list(results_box, results, "shop/results", by_index=False))
        return views

    def _product_list(self, box: Box, products: list[Product], list_key: str, by_index: bool) -> View:
        """Result rows are keyed by product; cart rows by position (the same product may repeat)."""
        px, row_h = self.m.px, self.m.px(180)
        listing = self.scroller(list_key, box, row_h * len(products), f"{self.package}:id/{list_key.split('/')[-1]}")
        offset = self.offset(list_key, row_h * len(products), box.height)
        for i, product in enumerate(products):
            top = box.top + i * row_h - offset
            if top >= box.bottom or top + row_h <= box.top:
                continue
            key = f"shop/cart_item/{i}" if by_index else f"shop/result/{product.id}"
            no_page = self.ctx.drift == "removed_screen" and not by_index
            row = View(key, "android.view.ViewGroup", Box(0, top, self.m.width, top + row_h),
                       rid=f"{self.package}:id/result_row",
                       on_tap=None if no_page else partial(self._go, "product", product),
                       style=Style(kind="row", bg=WHITE))
            row.add(View(f"{key}/image", "android.widget.ImageView", Box(px(48), top + px(30), px(168), top + px(150)),
                         desc=product.name, style=Style(kind="image", bg=product.color, fg=(96, 125, 139))),
                    self.label_view(f"{key}/name", Box(px(200), top + px(40), px(800), top + px(140)), product.name,
                                    size=44, bold=True, rid=f"{self.package}:id/name"),
                    self.label_view(f"{key}/price", Box(px(800), top + px(40), px(1032), top + px(140)),
                                    f"${product.price:.2f}", size=44, color=self.primary, align="right",
                                    rid=f"{self.package}:id/price"))
            if no_page:  # the product page was removed: buy from the row
                row.children[1].box = Box(px(200), top + px(20), px(800), top + px(90))
                row.children[2].box = Box(px(200), top + px(96), px(600), top + px(160))
                row.children[2].style = Style(kind="text", fg=self.primary, size=px(40), align="left")
                row.add(self.button(f"{key}/add", Box(px(640), top + px(40), px(1032), top + px(140)), "Add to cart",
                                    partial(self._add_to_cart, product), rid=f"{self.package}:id/add_to_cart"))
            listing.add(row)
        return listing

    def _product_screen(self, area: Box) -> list[View]:
        assert self.product is not None
        px, top, p = self.m.px, area.top, self.product
        if self.v2:
            return self._product_screen_v2(area)
        moved = self.ctx.drift == "moved"
        return [
            View("shop/product/image", "android.widget.ImageView", Box(0, top, self.m.width, top + px(640)),
                 desc=p.name, rid=f"{self.package}:id/product_image", style=Style(kind="image", bg=p.color,
                                                                                  fg=(96, 125, 139))),
            self.label_view("shop/product/name", Box(px(48), top + px(680), px(1032), top + px(760)), p.name,
                            size=56, bold=True, rid=f"{self.package}:id/product_name"),
            self.label_view("shop/product/price", Box(px(48), top + px(780), px(1032), top + px(860)),
                            f"${p.price:.2f}", size=52, color=self.primary, bold=True,
                            rid=f"{self.package}:id/product_price"),
            self.label_view("shop/product/description", Box(px(48), top + px(1050 if moved else 890), px(1032),
                                                            top + px(1170 if moved else 1010)),
                            p.description, size=40, color=TEXT2, max_lines=2, rid=f"{self.package}:id/description"),
            self.button("shop/add_to_cart", Box(px(48), top + px(890 if moved else 1060), px(1032),
                                                top + px(1026 if moved else 1196)),
                        "Add to bag" if self.ctx.drift == "renamed" else "Add to cart",
                        self._add_to_cart, rid=f"{self.package}:id/add_to_cart"),
        ]

    def _cart_screen(self, area: Box) -> list[View]:
        px, top = self.m.px, area.top
        if self.v2:
            return self._cart_screen_v2(area)
        views: list[View] = []
        if self.cart:
            views.append(self._product_list(Box(0, top, self.m.width, area.bottom - px(360)), self.cart,
                                            "shop/cart_items", by_index=True))
        else:
            views.append(self.label_view("shop/cart_empty", Box(px(48), top + px(60), px(1032), top + px(140)),
                                         "Your cart is empty", color=TEXT2, rid=f"{self.package}:id/cart_empty"))
        total = sum(p.price for p in self.cart)
        views.append(self.label_view("shop/cart_total", Box(px(48), area.bottom - px(330), px(1032),
                                                            area.bottom - px(240)),
                                     f"Total: ${total:.2f}", size=48, bold=True, rid=f"{self.package}:id/total"))
        views.append(self.button("shop/checkout", Box(px(48), area.bottom - px(200), px(1032), area.bottom - px(64)),
                                 "Checkout", self._checkout if self.cart else None, enabled=bool(self.cart),
                                 rid=f"{self.package}:id/checkout"))
        return views

    # -- version 2 (issue 7): same functions, restyled ---------------------------------------
    def _pill(self, key: str, box: Box, text: str, on_tap: Callable[[], None] | None, rid: str, fill: RGB,
              radius: int, size: int = 38) -> View:
        return View(key, "android.widget.Button", box, text=text, rid=f"{self.package}:id/{rid}", on_tap=on_tap,
                    clickable=True, focusable=True,
                    style=Style(kind="button", bg=fill, fg=WHITE, size=self.m.px(size), bold=True, align="center",
                                radius=self.m.px(radius)))

    def _appbar_actions_v2(self, bar: Box, right: int, count: int) -> list[View]:
        px = self.m.px
        bag = View("shop/cart", "android.widget.ImageView", Box(right - px(236), bar.top + px(38), right - px(140),
                                                                bar.bottom - px(38)),
                   desc=f"Shopping bag ({count})", rid=f"{self.package}:id/bag", on_tap=lambda: self._go("cart"),
                   style=Style(kind="cart", fg=(255, 235, 59)))
        views = [bag]
        if count:
            views.append(View("shop/cart_badge", "android.widget.TextView",
                              Box(right - px(180), bar.top + px(24), right - px(128), bar.top + px(76)),
                              text=str(count), rid=f"{self.package}:id/bag_count",
                              style=Style(kind="button", bg=(33, 33, 33), fg=WHITE, size=px(30), align="center",
                                          radius=px(26))))
        return views

    def _search_screen_v2(self, area: Box) -> list[View]:
        px, top = self.m.px, area.top
        field = self.edit("shop/search", Box(px(48), top + px(64), px(812), top + px(176)), "What are you looking for?")
        field.rid = f"{self.package}:id/query_input"
        go = self._pill("shop/search_button", Box(px(840), top + px(70), px(1032), top + px(170)), "Search",
                        self._search, "btn_search", self.primary, radius=50, size=36)
        return [field, go, *self._results(Box(0, top + px(220), self.m.width, area.bottom))]

    def _product_screen_v2(self, area: Box) -> list[View]:
        assert self.product is not None
        px, top, p = self.m.px, area.top, self.product
        views = [
            View("shop/product/image", "android.widget.ImageView", Box(0, top, self.m.width, top + px(560)),
                 desc=p.name, rid=f"{self.package}:id/hero", style=Style(kind="image", bg=p.color, fg=(96, 125, 139))),
            self.label_view("shop/product/name", Box(px(48), top + px(600), px(1032), top + px(680)), p.name,
                            size=52, bold=True, rid=f"{self.package}:id/title_text"),
            self.label_view("shop/product/price", Box(px(48), top + px(712), px(520), top + px(792)),
                            f"${p.price:.2f}", size=56, color=TEXT, bold=True, rid=f"{self.package}:id/price_tag"),
            self.label_view("shop/product/description", Box(px(48), top + px(860), px(1032), top + px(980)),
                            p.description, size=38, color=TEXT2, max_lines=2, rid=f"{self.package}:id/details"),
        ]
        slot = Box(px(560), top + px(700), px(1032), top + px(804))
        if p.name == SOLD_OUT_V2:
            views.append(self._pill("shop/notify", slot, "Notify me", self._notify_me, "btn_notify",
                                    (117, 117, 117), radius=52))
        else:
            views.append(self._pill("shop/add_to_cart", slot, "Add to cart", self._add_to_cart, "btn_add",
                                    self.primary, radius=52))
        return views

    def _cart_screen_v2(self, area: Box) -> list[View]:
        px, top = self.m.px, area.top
        if not self.cart:  # v2 hides Checkout on an empty bag: the function is absent here
            return [self.label_view("shop/cart_empty", Box(px(48), top + px(60), px(1032), top + px(140)),
                                    "Your bag is empty", color=TEXT2, rid=f"{self.package}:id/bag_empty")]
        total = sum(p.price for p in self.cart)
        return [
            self._product_list(Box(0, top, self.m.width, area.bottom - px(300)), self.cart, "shop/cart_items",
                               by_index=True),
            self.label_view("shop/cart_total", Box(px(48), area.bottom - px(250), px(520), area.bottom - px(150)),
                            f"${total:.2f}", size=56, bold=True, rid=f"{self.package}:id/sum"),
            self._pill("shop/checkout", Box(px(560), area.bottom - px(250), px(1032), area.bottom - px(130)),
                       "Checkout", self._checkout, "btn_checkout", (33, 33, 33), radius=12, size=42),
        ]
