"""Compare a price across two shops and buy in the cheaper one (seed 003's cross-app example).

Each price is remembered with the app it came from; recalling them records DEPENDENCY anchors,
so a failure report shows which app every number came from.
"""

import pytest
from sim_apps import SHOPS, product_price, result_row

from pytest_guistate import visible

PRODUCT = "Wireless Earbuds"


def look_up_price(device, guistate, shop: str) -> float:
    device.activate_app(SHOPS[shop])
    guistate.perform(f"search {PRODUCT} in {shop}", lambda: device.type(PRODUCT + "\n", id="search"),
                     expect=visible(id="price"), idempotent=False)
    guistate.perform(f"open {PRODUCT} in {shop}", lambda: device.tap(xpath=result_row(device, PRODUCT)),
                     expect="Add to cart")
    price = product_price(device)
    guistate.remember(f"price in {shop}", price, source=f"{shop} product page")
    return price


@pytest.mark.guistate(app="com.guistate.shopa")
def test_buy_in_the_cheaper_shop(device, guistate):
    guistate.goal(
        f"Buy {PRODUCT} in whichever of ShopA and ShopB sells it cheaper",
        plan=["price in ShopA known", "price in ShopB known", "added to cart in the cheaper shop", "order placed"],
    )
    look_up_price(device, guistate, "ShopA")
    guistate.milestone("price in ShopA known")
    look_up_price(device, guistate, "ShopB")
    guistate.milestone("price in ShopB known")

    prices = {shop: guistate.recall(f"price in {shop}") for shop in SHOPS}
    cheaper = min(prices, key=prices.get)

    device.activate_app(SHOPS[cheaper])
    guistate.perform(f"add to cart in {cheaper}", lambda: device.tap(id="add_to_cart"),
                     expect=visible("Cart, 1 items"), idempotent=False)
    guistate.milestone("added to cart in the cheaper shop")
    guistate.perform("open the cart", lambda: device.tap(id="cart"), expect="Checkout")
    guistate.perform("check out", lambda: device.tap(id="checkout"), expect="Order placed", idempotent=False)
    guistate.milestone("order placed")
    guistate.assert_complete()

    bought = [entry for entry in device.action_log() if entry["action"] == "add_to_cart"]
    assert [(entry["shop"], entry["product"]) for entry in bought] == [(cheaper, PRODUCT)]
    assert bought[0]["price"] == min(prices.values())
