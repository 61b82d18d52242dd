"""Feed: the stale list after delete (TSR figure 2), double delete, pull-to-refresh, scrolling."""

from __future__ import annotations

import numpy as np

from tests.devices.sim.simhelpers import frame, make_phone, node, tap_key

FEED = "com.guistate.feed"


def deletes(phone) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [(e["post_id"], e["author"]) for e in phone.action_log() if e["action"] == "delete_post"]


def delete_via_dialog(phone, post_id: str) -> None:  # type: ignore[no-untyped-def]
    tap_key(phone, f"feed/post/{post_id}/delete")
    tap_key(phone, "feed/dialog/delete")


def test_dialog_names_the_author_and_cancel_deletes_nothing() -> None:
    phone, _ = make_phone()
    author = node(phone, "feed/post/p3/author").text
    tap_key(phone, "feed/post/p3/delete")
    assert node(phone, "feed/dialog/message").text == f"Delete post by {author}?"
    tap_key(phone, "feed/dialog/cancel")
    assert phone.find_key("feed/dialog") is None
    assert deletes(phone) == []


def test_stale_row_stays_in_tree_and_pixels_until_the_delayed_redraw() -> None:
    phone, clock = make_phone(faults={"refresh_delay": 2.0})
    row = node(phone, "feed/post/p3").bounds
    before = frame(phone)
    delete_via_dialog(phone, "p3")
    assert deletes(phone) == [("p3", "Carol")]
    assert phone.find_key("feed/post/p3") is not None  # backend deleted, list not redrawn
    stale = frame(phone)
    crop = np.s_[row.top:row.bottom, row.left:row.right]
    assert np.array_equal(before[crop], stale[crop])
    clock.advance(1.9)
    assert phone.find_key("feed/post/p3") is not None
    clock.advance(0.2)
    assert phone.find_key("feed/post/p3") is None
    assert node(phone, "feed/post/p4").bounds == row  # the next post moved up into the row
    assert node(phone, "system/toast").text == "Post deleted"
    assert not np.array_equal(before[crop], frame(phone)[crop])
    clock.advance(1.6)
    assert phone.find_key("system/toast") is None


def test_blind_retap_on_the_stale_row_deletes_the_next_post() -> None:
    phone, clock = make_phone(faults={"refresh_delay": 2.0})
    delete_via_dialog(phone, "p3")
    delete_via_dialog(phone, "p3")  # the row is still there and its button still works
    assert deletes(phone) == [("p3", "Carol"), ("p4", "Dave")]
    clock.advance(2.5)
    assert phone.find_key("feed/post/p3") is None and phone.find_key("feed/post/p4") is None
    assert node(phone, "feed/post/p5/author").text == "Erin"


def test_without_delay_the_list_redraws_at_once() -> None:
    phone, _ = make_phone()
    delete_via_dialog(phone, "p1")
    assert phone.find_key("feed/post/p1") is None
    assert node(phone, "system/toast").text == "Post deleted"


def test_pull_to_refresh_shows_a_spinner_then_the_fresh_list() -> None:
    phone, clock = make_phone(faults={"refresh_delay": 60.0, "refresh_duration": 0.4})
    delete_via_dialog(phone, "p2")
    listing = node(phone, "feed/list").bounds
    phone.swipe(540, listing.top + 50, 540, listing.top + 700, 300)
    spinner = node(phone, "feed/refreshing")
    assert spinner.cls == "android.widget.ProgressBar"
    image = frame(phone)
    ring = image[spinner.bounds.top:spinner.bounds.bottom, spinner.bounds.left:spinner.bounds.right]
    assert (np.abs(ring.astype(int) - 255).sum(axis=2) > 100).any()  # the arc is drawn
    assert phone.find_key("feed/post/p2") is not None
    clock.advance(0.45)
    assert phone.find_key("feed/refreshing") is None
    assert phone.find_key("feed/post/p2") is None
    assert [e["action"] for e in phone.action_log()].count("refresh") == 1


def test_short_drag_or_scrolled_list_does_not_refresh() -> None:
    phone, _ = make_phone()
    listing = node(phone, "feed/list").bounds
    phone.swipe(540, listing.top + 50, 540, listing.top + 80, 100)  # too short
    phone.swipe(540, 2000, 540, 1500, 300)  # scroll down first
    phone.swipe(540, 1000, 540, 1300, 300)  # then drag down: scrolls back, no refresh
    assert phone.find_key("feed/refreshing") is None
    assert "refresh" not in [e["action"] for e in phone.action_log()]


def test_scrolling_clips_rows_to_the_viewport_and_drops_hidden_ones() -> None:
    phone, _ = make_phone()
    listing = node(phone, "feed/list").bounds
    assert phone.find_key("feed/post/p10") is None
    phone.swipe(540, 2000, 540, 1500, 300)
    tree_keys = {n.key for n in phone.root().walk()}
    assert "feed/post/p10" in tree_keys
    for n in phone.root().walk():
        if n.key.startswith("feed/post/"):
            assert listing.contains(n.bounds), (n.key, n.bounds)
    first = node(phone, "feed/post/p2").bounds
    assert first.top == listing.top and first.height < 250  # partially scrolled off, clipped
    scrolls = [e for e in phone.action_log() if e["action"] == "scroll"]
    assert scrolls and scrolls[-1]["offset_to"] > 0


def test_long_press_on_a_row_opens_the_delete_dialog() -> None:
    phone, _ = make_phone()
    row = node(phone, "feed/post/p2").bounds
    phone.long_press(row.left + 30, row.top + 20, 800)
    assert node(phone, "feed/dialog/message").text == f"Delete post by {node(phone, 'feed/post/p2/author').text}?"
    phone.back()
    assert phone.find_key("feed/dialog") is None
    assert phone.current_package() == FEED


def test_content_is_deterministic_per_seed() -> None:
    texts = [[n.text for n in make_phone(seed=s)[0].root().walk() if n.key.endswith("/text")] for s in (1, 1, 2)]
    assert texts[0] == texts[1] and texts[0] != texts[2]


def test_a_toast_stays_as_long_as_the_toast_s_fault_says() -> None:
    """`toast_s`: a test whose check reads a toast's words keeps it on screen longer than 1.5 s of
    real time, which a loaded machine can spend between the screenshot and the page source."""
    phone, clock = make_phone(faults={"toast_s": 10.0})
    delete_via_dialog(phone, "p1")
    clock.advance(9.9)
    assert node(phone, "system/toast").text == "Post deleted"
    clock.advance(0.2)
    assert phone.find_key("system/toast") is None
