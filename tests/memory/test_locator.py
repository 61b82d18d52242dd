"""Memory keys and instance words from locators."""

from __future__ import annotations

import pytest

from pytest_guistate.memory import Locator, function_key
from pytest_guistate.memory.locator import context_tokens


def test_function_key_prefers_the_named_function() -> None:
    assert function_key(Locator("id", "add_to_cart"), "Add  to Cart") == "add to cart"
    assert function_key(Locator("id", "add_to_cart"), None) == "locator:id=add_to_cart"
    with pytest.raises(ValueError, match="function name or a locator"):
        function_key(None, None)


def test_instance_words_are_what_the_function_name_lacks() -> None:
    assert context_tokens(Locator("desc", "Delete post by Carol"), "delete post") == {"carol"}
    assert context_tokens(Locator("id", "add_to_cart"), "add to cart") == set()
    assert context_tokens(Locator("desc", "Delete post by Carol"), None) == set()
    xpath = "//*[contains(@resource-id, ':id/name') and @text='Phone Case']"
    assert context_tokens(Locator("xpath", xpath), "open product") == {"phone", "case"}


def test_bad_locators_are_named() -> None:
    with pytest.raises(ValueError, match="kind must be one of"):
        Locator("css", "#x")
    with pytest.raises(ValueError, match="kind=value"):
        Locator.parse("add_to_cart")
    assert Locator.parse("desc=a=b") == Locator("desc", "a=b")
