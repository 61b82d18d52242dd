"""LLM-driven steps: a Claude actor carries out a goal in words, through the same step loop.

These run in replay mode by default (example_suite/pytest.ini: `guistate_llm = replay`): the
committed cassettes in `cassettes/` were recorded against the project's local reference server,
not the Anthropic API. Re-record against the reference server with
`python -m pytest_guistate.llm.reference.rerecord example_suite/test_llm.py`, or against Claude with
`ANTHROPIC_API_KEY=... pytest example_suite/test_llm.py --guistate-llm=record`.
"""

import pytest

from pytest_guistate import gone


@pytest.mark.guistate(app="com.guistate.shopa")
def test_actor_buys_in_the_cheaper_shop(device, guistate):
    # Android leaves a shop with back to the launcher; an iPhone has no back key, so there the
    # actor is offered `home` (SpringBoard) instead (issue 11). The same test runs on both.
    result = guistate.run(
        "Compare the price of Phone Case in ShopA and ShopB and buy it in the cheaper shop", max_steps=25
    )
    assert result.success, result.summary
    bought = [entry for entry in device.action_log() if entry["action"] == "add_to_cart"]
    assert [(entry["shop"], entry["product"]) for entry in bought] == [("ShopB", "Phone Case")]


@pytest.mark.guistate(app="com.guistate.feed")
def test_actor_deletes_one_post_and_an_ai_check_confirms_it(device, guistate):
    guistate.goal("Delete the post by Erin", plan=[("Erin's post gone", gone("Erin"))])
    result = guistate.run("Delete the post by Erin", max_steps=12)
    assert result.success, result.summary
    verdict = guistate.check("The post by Erin is no longer in the feed")
    assert verdict.verdict == "pass"
    assert [entry["author"] for entry in device.action_log() if entry["action"] == "delete_post"] == ["Erin"]
