"""Issue 21 item 7: the reference server refuses what the Messages API refuses (HTTP 400 in the API's
error shape, through the real SDK), and the plugin's own requests never trip those limits."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import anthropic
import cv2
import numpy as np
import pytest

from pytest_guistate.core.frame import Frame, png_size
from pytest_guistate.core.settle import VirtualClock
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.devices.sim.phone import Phone
from pytest_guistate.llm.actor import ActorConfig, run
from pytest_guistate.llm.client import LLMSettings, Mode, make_client
from pytest_guistate.llm.prompt import cap_images, fit_png, image_block, shown_image
from pytest_guistate.llm.reference.api_limits import MAX_IMAGE_BASE64, RequestRefused, check_request
from pytest_guistate.llm.reference.server import ReferenceServer
from tests.helpers.direct_screen import DirectScreen

FAKE_KEY = "sk-ant-test-DO-NOT-LEAK-123"


def _png(width: int, height: int, *, noise: bool = False) -> bytes:
    pixels = (np.random.default_rng(7).integers(0, 256, (height, width, 3), dtype=np.uint8) if noise
              else np.full((height, width, 3), 200, dtype=np.uint8))
    ok, encoded = cv2.imencode(".png", pixels)
    assert ok
    return encoded.tobytes()


def _image(png: bytes) -> dict[str, Any]:
    """An image block as a caller might send it, without the plugin's fitting."""
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                        "data": base64.b64encode(png).decode("ascii")}}


@pytest.fixture
def api() -> Iterator[tuple[anthropic.Anthropic, ReferenceServer]]:
    with ReferenceServer() as server:
        yield anthropic.Anthropic(api_key=FAKE_KEY, base_url=server.url, max_retries=0), server


def _refused(client: anthropic.Anthropic, fragment: str, **request: Any) -> None:
    request.setdefault("messages", [{"role": "user", "content": "hello"}])
    with pytest.raises(anthropic.BadRequestError) as info:
        client.messages.create(model="claude-sonnet-4-5", max_tokens=64, **request)
    assert info.value.status_code == 400
    body = info.value.body
    assert isinstance(body, dict) and body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error" and fragment in body["error"]["message"], body


def _user(*blocks: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"role": "user", "content": [*blocks, {"type": "text", "text": "what is on screen?"}]}]


def test_an_image_over_5_mb_of_base64_is_refused(api) -> None:
    client, _ = api
    big = _png(1600, 1600, noise=True)
    assert len(base64.b64encode(big)) > MAX_IMAGE_BASE64
    _refused(client, "image exceeds 5 MB maximum", messages=_user(_image(big)))


def test_an_image_over_8000_px_a_side_is_refused_and_8000_is_not(api) -> None:
    client, server = api
    _refused(client, "max allowed size: 8000 pixels", messages=_user(_image(_png(8001, 8))))
    client.messages.create(model="m", max_tokens=64, messages=_user(_image(_png(8000, 8))))
    assert server.requests[-1].status == 200


def test_more_than_20_images_lowers_the_side_limit_to_2000_px(api) -> None:
    client, server = api
    _refused(client, "for many-image requests: 2000 pixels",
             messages=_user(*[_image(_png(2001, 4))] * 21))
    client.messages.create(model="m", max_tokens=64, messages=_user(*[_image(_png(2001, 4))] * 20))
    client.messages.create(model="m", max_tokens=64, messages=_user(*[_image(_png(2000, 4))] * 21))
    assert [r.status for r in server.requests] == [200, 200]  # refused requests are not answered


def test_more_than_100_images_are_refused(api) -> None:
    client, _ = api
    _refused(client, "Too many images in the request: 101 > 100", messages=_user(*[_image(_png(8, 8))] * 101))


def test_a_tool_use_needs_its_tool_result_in_the_next_message(api) -> None:
    client, server = api
    use = {"type": "tool_use", "id": "toolu_1", "name": "tap", "input": {"element_id": "1/2"}}
    tools = [{"name": "tap", "description": "tap", "input_schema": {"type": "object"}}]
    orphan = [{"role": "user", "content": "go"}, {"role": "assistant", "content": [use]},
              {"role": "user", "content": "and now?"}]
    _refused(client, "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1",
             messages=orphan, tools=tools)
    paired = [*orphan[:2], {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}, {"type": "text", "text": "and now?"}]}]
    client.messages.create(model="m", max_tokens=64, messages=paired, tools=tools)
    stray = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "ok"}]}]
    _refused(client, "unexpected `tool_use_id` found in `tool_result` blocks: toolu_9", messages=stray, tools=tools)
    assert [r.status for r in server.requests] == [200]


def test_more_than_4_cache_control_breakpoints_are_refused(api) -> None:
    client, server = api
    marked = [{"type": "text", "text": f"part {i}", "cache_control": {"type": "ephemeral"}} for i in range(5)]
    _refused(client, "A maximum of 4 blocks with cache_control may be provided. Found 5.",
             system=marked[:2], messages=[{"role": "user", "content": marked[2:]}])
    client.messages.create(model="m", max_tokens=64, system=marked[:2], messages=[{"role": "user", "content": marked[2:4]}])
    _refused(client, "Found 5", messages=[{"role": "user", "content": marked}])  # count_tokens-free path too
    with pytest.raises(anthropic.BadRequestError, match="Found 5"):
        client.messages.count_tokens(model="m", messages=[{"role": "user", "content": marked}])
    assert [r.status for r in server.requests] == [200]


def test_an_unreadable_image_is_refused_by_name() -> None:
    with pytest.raises(RequestRefused, match=r"messages\.0\.content\.0\.image\.source\.base64: .*could not be"):
        check_request({"messages": [{"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "bm90IGFuIGltYWdl"}}]}]})


def test_the_plugin_fits_its_images_inside_the_limits() -> None:
    noisy = _png(1600, 1600, noise=True)
    fitted = fit_png(noisy)
    assert len(base64.b64encode(fitted)) <= MAX_IMAGE_BASE64 and png_size(fitted)[0] < 1600
    assert fit_png(_png(300, 600)) == _png(300, 600)  # what already fits is sent byte for byte (cassettes)
    tall = Frame(_png(40, 9000))
    block, scale = shown_image(tall, 1.0)
    check_request({"messages": [{"role": "user", "content": [block]}]})
    assert max(scale.shown) <= 8000 and png_size(base64.b64decode(block["source"]["data"])) == scale.shown
    assert scale.to_device(scale.shown[0] - 1, scale.shown[1] - 1)[1] >= 8990  # taps still map to the device
    blocks = [image_block(_png(8, 8)) for _ in range(25)]
    capped = cap_images(blocks)
    assert sum(b["type"] == "image" for b in capped) == 20 and "5 older image(s) left out" in capped[0]["text"]


def test_a_long_run_with_every_image_option_up_keeps_every_request_valid() -> None:
    """Full-resolution frames, every old frame and crop kept: the requests stay inside the limits (at
    most 20 images, each under 5 MB and 8000 px) and the server answers every one."""
    clock = VirtualClock()
    phone = Phone(seed=1, clock=clock)
    screen = DirectScreen(phone)
    session = TaskSession(screen, name="long-run", clock=clock)
    config = ActorConfig(frame_divisor=1.0, crops=40, whole_frames=40)
    with ReferenceServer() as server:
        client = make_client(LLMSettings(mode=Mode.ANTHROPIC, timeout_s=30.0),
                             env={"ANTHROPIC_API_KEY": FAKE_KEY, "ANTHROPIC_BASE_URL": server.url})
        assert client is not None
        try:
            result = run(session, screen, "Buy a Power Bank in ShopB", llm=client, max_steps=20, config=config,
                         raise_on_failure=False)
        finally:
            client.finish()
            phone.close()
    assert result.success, (result.outcome, result.summary)
    assert len(server.requests) == len(result.turns) >= 8
    log = phone.action_log()
    assert [e["product"] for e in log if e["action"] == "add_to_cart"] == ["Power Bank"]
    assert [e["items"] for e in log if e["action"] == "checkout"] == [["Power Bank"]]
    assert all(r.status == 200 for r in server.requests)
    counts = [sum(b.get("type") == "image" for b in r.body["messages"][0]["content"]) for r in server.requests]
    assert max(counts) == 20  # the cap was needed, and held
    for request in server.requests:
        check_request(request.body)
        assert len(request.body["messages"]) == 1  # one user turn: no tool_use left without its tool_result
