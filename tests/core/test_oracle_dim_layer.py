"""A dim layer that is itself the dialog node (issue 23): a web app whose `role="dialog"` element is
the full-screen scrim gave the whole frame as region and crop, opening and closing. The region is
the dialog's box: its content child in the tree, or where the pixels do not follow the scrim's gain."""

from __future__ import annotations

import json

import cv2
import numpy as np

from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle import VisualOracle
from pytest_guistate.core.uitree import parse_page_source
from tests.helpers.inner_run import run_inprocess

W, H = 540, 1200
DIALOG = Box(60, 420, 480, 760)
ROWS = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy"]
oracle = VisualOracle()


def feed() -> np.ndarray:
    img = np.full((H, W, 3), 250, np.uint8)
    for i, text in enumerate(ROWS):
        top = 100 + i * 100
        cv2.rectangle(img, (10, top + 5), (W - 11, top + 95), (235, 225, 215), -1)
        cv2.putText(img, text, (40, top + 60), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (30, 30, 30), 2)
    return img


def dimmed(img: np.ndarray) -> np.ndarray:
    out = (img.astype(np.float32) * 0.55).astype(np.uint8)  # a 45 % black scrim over everything
    cv2.rectangle(out, (DIALOG.left, DIALOG.top), (DIALOG.right - 1, DIALOG.bottom - 1), (255, 255, 255), -1)
    cv2.putText(out, "Delete post?", (90, 520), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (20, 20, 20), 2)
    return out


def tree(layer: bool, *, content: bool = True) -> str:
    """A WebView-like page; with `layer`, the full-screen scrim is the Dialog node (role="dialog")
    and, with `content`, the white box is its child."""
    rows = "".join(f'<android.view.View text="{t}" bounds="[10,{100 + i * 100}][{W - 10},{200 + i * 100}]"/>'
                   for i, t in enumerate(ROWS))
    inner = ('<android.view.View resource-id="dialog_box" bounds="[60,420][480,760]">'
             '<android.widget.TextView text="Delete post?" bounds="[90,480][400,540]"/></android.view.View>'
             if content else '<android.widget.TextView text="Delete post?" bounds="[0,0][540,1200]"/>')
    modal = f'<android.app.Dialog resource-id="scrim" bounds="[0,0][{W},{H}]">{inner}</android.app.Dialog>'
    return (f'<hierarchy width="{W}" height="{H}"><android.widget.FrameLayout bounds="[0,0][{W},{H}]">'
            f'<android.webkit.WebView bounds="[0,0][{W},{H}]">{rows}</android.webkit.WebView>'
            f'{modal if layer else ""}</android.widget.FrameLayout></hierarchy>')


def _compare(before: np.ndarray, after: np.ndarray, before_xml: str, after_xml: str):  # type: ignore[no-untyped-def]
    before_tree = parse_page_source(before_xml)
    return oracle.compare(Frame.from_array(before), Frame.from_array(after), parse_page_source(after_xml),
                          before_tree=lambda: before_tree)


def test_closing_a_full_screen_dialog_layer_gives_its_content_box() -> None:
    result = _compare(dimmed(feed()), feed(), tree(True), tree(False))
    assert result.verdict == "changed"
    first = result.regions[0]
    assert first.container is not None and "vanished" in first.container
    assert first.box == DIALOG
    assert all(c.box.area < 0.3 * W * H for c in result.crops), [c.box for c in result.crops]
    assert any("global undim" in note for note in result.notes)


def test_opening_a_full_screen_dialog_layer_gives_its_content_box() -> None:
    result = _compare(feed(), dimmed(feed()), tree(False), tree(True))
    first = result.regions[0]
    assert first.container is not None and "appeared" in first.container
    assert first.box == DIALOG
    assert all(c.box.area < 0.3 * W * H for c in result.crops)


def test_a_layer_without_a_content_node_takes_the_undimmed_area_of_the_pixels() -> None:
    result = _compare(dimmed(feed()), feed(), tree(True, content=False), tree(False))
    first = result.regions[0]
    assert first.container is not None and "vanished" in first.container
    # the dialog found from pixels: where the change does not follow the scrim's gain
    assert first.box.intersection(DIALOG).area >= 0.8 * DIALOG.area, first.box
    assert first.box.area < 0.3 * W * H, first.box


def test_the_sim_feed_dialog_opening_and_closing_gives_the_dialog_box() -> None:
    """On the simulated phone (Feed app, an AlertDialog over the list): the region of opening it is
    the dialog, not the whole frame. (Closing it snaps through core/oracle_snap's overlay rule,
    which the sim's overlay-snapping fix owns.)"""
    from pytest_guistate.core.checks import visible
    from pytest_guistate.core.settle import SettlePolicy, VirtualClock
    from pytest_guistate.core.task_session import TaskSession
    from pytest_guistate.devices.sim.phone import Phone
    from tests.helpers.direct_screen import DirectScreen

    clock = VirtualClock()
    screen = DirectScreen(Phone(app_package="com.guistate.feed", clock=clock, seed=1))
    session = TaskSession(screen, clock=clock, name="sim_dim", settle=SettlePolicy(timeout_s=3.0, interval_s=0.15))
    session.perform("open delete dialog", lambda: screen.tap_text("Delete", nth=1), expect=visible("Delete post?"))
    width, height = screen.observe().frame.size
    for record, change in zip(session.steps, ("appeared",), strict=True):
        transition = record.transition
        assert transition is not None, record
        regions = transition["regions"] if isinstance(transition, dict) else transition.regions
        first = regions[0]
        container = first["container"] if isinstance(first, dict) else first.container
        box = first["box"] if isinstance(first, dict) else first.box.as_list()
        assert container is not None and (change in container or "parentPanel" in container), regions
        assert (box[2] - box[0]) * (box[3] - box[1]) < 0.5 * width * height, box



CLOSE_THE_DIALOG = """
import pytest


@pytest.mark.guistate(app="com.guistate.feed", tier="full")
def test_feed(device, guistate):
    with guistate.step("open the delete dialog", expect="Delete post by Carol?"):
        device.tap(desc="Delete post by Carol")
    with guistate.step("cancel", expect=gone("Delete post by Carol?")):
        device.tap(text="Cancel")
"""


def test_a_closed_dialog_is_its_box_on_the_before_screen_not_the_list_under_it(pytester) -> None:
    """Issue 23: closing the sim's Feed dialog changed only the pixels where it was, but the after-tree
    has the list there, so the region (and its crop) became the whole list."""
    pytester.makepyfile(test_feed="from pytest_guistate import gone\n" + CLOSE_THE_DIALOG)
    result = run_inprocess(pytester, "-p", "no:cacheprovider", "--guistate-artifacts=art", "--guistate-retain=on")
    result.assert_outcomes(passed=1)
    [journal] = (pytester.path / "art").glob("*/journal.jsonl")
    steps = [e["record"] for e in map(json.loads, journal.read_text("utf-8").splitlines()) if e["type"] == "step"]
    opened, closed = (s["regions"] for s in steps)
    assert len(opened) == 1 and len(closed) == 1, (opened, closed)
    assert closed[0]["box"] == opened[0]["box"], "the closed dialog's region is the box the dialog had"
    assert closed[0]["container"] == "dialog 'Delete post?' vanished"
    width = closed[0]["box"][2] - closed[0]["box"][0]
    assert width < 1000 and closed[0]["box"][3] - closed[0]["box"][1] < 600, "not the whole list"


def test_a_dimmed_step_walks_each_tree_once_and_reads_the_before_tree_once(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Issue 42: the dim path's rules (bars, transient shapes, snapping twice, the dialog looked up
    twice) each walked both whole trees, a Python loop over every node; one compare lists each tree's
    nodes once and asks for the before-tree once, with the same judgement."""
    from pytest_guistate.core.uinode import UINode

    before_tree, after_tree = parse_page_source(tree(False)), parse_page_source(tree(True))
    roots = {id(before_tree.root): "before", id(after_tree.root): "after"}
    walks: list[str] = []
    reads: list[int] = []
    original = UINode.walk

    def counted(self: UINode):  # type: ignore[no-untyped-def]
        if id(self) in roots:
            walks.append(roots[id(self)])
        return original(self)

    def read_before():  # type: ignore[no-untyped-def]
        reads.append(1)
        return before_tree

    monkeypatch.setattr(UINode, "walk", counted)
    result = oracle.compare(Frame.from_array(feed()), Frame.from_array(dimmed(feed())), after_tree,
                            before_tree=read_before)
    assert any("global dim" in note for note in result.notes)
    assert [r.box for r in result.regions][:1] == [DIALOG]
    assert sorted(walks) == ["after", "before"], walks
    assert reads == [1]
