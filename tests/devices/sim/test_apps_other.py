"""ShopA/ShopB (compare and buy), Settings (login, toggles) and Gallery (move to album)."""

from __future__ import annotations

import numpy as np

from pytest_guistate.devices.sim.apps.settings import CREDENTIALS
from pytest_guistate.devices.sim.apps.shop import shop_prices
from tests.devices.sim.simhelpers import (
    changed_outside,
    frame,
    make_phone,
    node,
    rgb_at,
    tap_key,
    truth_boxes,
)

SHOP_A, SHOP_B = "com.guistate.shopa", "com.guistate.shopb"


def search(phone, query: str) -> None:  # type: ignore[no-untyped-def]
    phone.type_text("shop/search", query)
    tap_key(phone, "shop/search_button")


def test_prices_differ_between_shops_and_depend_on_the_seed() -> None:
    prices = shop_prices(0)
    assert len(prices) >= 5 and all(a != b for a, b in prices.values())
    assert shop_prices(0) == prices and shop_prices(1) != prices


def test_search_shows_a_spinner_then_results_with_prices() -> None:
    phone, clock = make_phone(package=SHOP_B)
    search(phone, "earbuds")
    assert node(phone, "shop/loading").cls == "android.widget.ProgressBar"
    assert phone.find_key("shop/results") is None
    assert any(b == [*node(phone, "shop/loading").bounds.as_list()] for b in phone.ground_truth()["noise"])
    clock.advance(0.65)
    assert phone.find_key("shop/loading") is None
    assert node(phone, "shop/result/sku1/name").text == "Wireless Earbuds"
    assert node(phone, "shop/result/sku1/price").text == f"${shop_prices(0)['Wireless Earbuds'][1]:.2f}"
    assert phone.find_key("shop/result/sku2") is None


def test_spinner_rotates_in_pixels() -> None:
    phone, clock = make_phone(package=SHOP_A, faults={"search_delay": 5.0})
    search(phone, "")
    box = node(phone, "shop/loading").bounds
    a = frame(phone)
    clock.advance(0.25)
    b = frame(phone)
    crop = np.s_[box.top:box.bottom, box.left:box.right]
    assert not np.array_equal(a[crop], b[crop])
    outside = a.copy()
    outside[crop] = b[crop]
    clock_box = node(phone, "system/clock").bounds
    assert changed_outside(outside, b, [clock_box]) == 0


def test_enter_key_searches_and_no_results_message() -> None:
    phone, _clock = make_phone(package=SHOP_A, faults={"search_delay": 0.0})
    phone.type_text("shop/search", "unicorn\n")
    assert node(phone, "shop/empty").text == 'No results for "unicorn"'


def test_add_to_cart_logs_shop_product_price_and_updates_badge() -> None:
    phone, _clock = make_phone(package=SHOP_A, faults={"search_delay": 0.0})
    search(phone, "watch")
    tap_key(phone, "shop/result/sku4")
    assert node(phone, "shop/product/name").text == "Smart Watch"
    tap_key(phone, "shop/add_to_cart")
    tap_key(phone, "shop/add_to_cart")
    price = shop_prices(0)["Smart Watch"][0]
    adds = [e for e in phone.action_log() if e["action"] == "add_to_cart"]
    assert adds == [{**adds[0], "shop": "ShopA", "product": "Smart Watch", "price": price}] * 2
    assert node(phone, "shop/cart_badge").text == "2"
    assert node(phone, "shop/cart").content_desc == "Cart, 2 items"
    tap_key(phone, "shop/cart")
    assert node(phone, "shop/cart_total").text == f"Total: ${2 * price:.2f}"
    tap_key(phone, "shop/checkout")
    assert next(e for e in phone.action_log() if e["action"] == "checkout")["total"] == round(2 * price, 2)
    assert phone.find_key("shop/cart_badge") is None
    phone.back()
    phone.back()
    assert phone.find_key("shop/search") is not None


def test_shops_keep_separate_carts_across_app_switches() -> None:
    phone, _ = make_phone(package=SHOP_A, faults={"search_delay": 0.0})
    search(phone, "cable")
    tap_key(phone, "shop/result/sku3")
    tap_key(phone, "shop/add_to_cart")
    phone.activate_app(SHOP_B)
    assert phone.find_key("shop/cart_badge") is None
    phone.activate_app(SHOP_A)
    assert node(phone, "shop/cart_badge").text == "1"


def test_login_rejects_wrong_credentials_then_accepts_the_right_ones() -> None:
    phone, _ = make_phone(package="com.guistate.settings")
    phone.type_text("settings/username", CREDENTIALS[0])
    phone.type_text("settings/password", "wrong")
    tap_key(phone, "settings/login")
    assert node(phone, "settings/error").text == "Invalid credentials"
    image = frame(phone)
    error = node(phone, "settings/error").bounds
    reds = image[error.top:error.bottom, error.left:error.right]
    assert ((reds[:, :, 2] > 150) & (reds[:, :, 1] < 120)).any()  # red text drawn where the node is
    phone.clear_text("settings/password")
    phone.type_text("settings/password", CREDENTIALS[1])
    tap_key(phone, "settings/login")
    assert node(phone, "settings/account").text == f"Signed in as {CREDENTIALS[0]}"
    logins = [e["success"] for e in phone.action_log() if e["action"] == "login"]
    assert logins == [False, True]


def test_switches_toggle_in_tree_and_pixels() -> None:
    phone, _ = make_phone(package="com.guistate.settings")
    phone.type_text("settings/username", CREDENTIALS[0])
    phone.type_text("settings/password", CREDENTIALS[1] + "\n")
    switch = node(phone, "settings/switch/dark_mode")
    assert switch.cls == "android.widget.Switch" and switch.checkable and not switch.checked
    before = frame(phone)
    tap_key(phone, "settings/switch/dark_mode")
    assert node(phone, "settings/switch/dark_mode").checked
    after = frame(phone)
    assert changed_outside(before, after, truth_boxes(phone.ground_truth())) == 0
    assert rgb_at(after, switch.bounds.left + 8, switch.bounds.top + switch.bounds.height // 2) == (69, 90, 100)
    tap_key(phone, "settings/row/dark_mode")  # the whole row toggles too
    assert not node(phone, "settings/switch/dark_mode").checked
    toggles = [(e["setting"], e["value"]) for e in phone.action_log() if e["action"] == "toggle"]
    assert toggles == [("dark_mode", True), ("dark_mode", False)]
    tap_key(phone, "settings/logout")
    assert phone.find_key("settings/login") is not None


def test_gallery_moves_selected_photos_to_an_album() -> None:
    phone, _ = make_phone(package="com.guistate.gallery")
    assert not node(phone, "gallery/move").enabled
    labels = [node(phone, f"gallery/photo/{pid}/label").text for pid in ("g2", "g5")]
    tap_key(phone, "gallery/photo/g2")
    tap_key(phone, "gallery/photo/g5")
    assert node(phone, "gallery/photo/g2").selected and node(phone, "gallery/photo/g2/check").checked
    assert node(phone, "com.guistate.gallery/title").text == "2 selected"
    tap_key(phone, "gallery/move")
    tap_key(phone, "gallery/picker/Pets")
    moves = [e for e in phone.action_log() if e["action"] == "move_to_album"]
    assert len(moves) == 1 and moves[0]["photo_ids"] == ["g2", "g5"] and moves[0]["labels"] == labels
    assert phone.find_key("gallery/photo/g2") is None and node(phone, "gallery/count").text == "10 photos"
    tap_key(phone, "gallery/albums_action")
    assert node(phone, "gallery/album/Pets/count").text == "2 photos"
    assert node(phone, "gallery/album/Pets/items").text == ", ".join(labels)


def test_gallery_descriptions_carry_label_date_and_category() -> None:
    phone, _ = make_phone(package="com.guistate.gallery")
    cells = [n for n in phone.root().walk() if n.resource_id == "com.guistate.gallery:id/photo"]
    assert len(cells) == 12
    _label, date, category = cells[0].content_desc.split(" ")
    assert date.startswith("2026-") and category in {"Travel", "Family", "Work", "Pets"}
