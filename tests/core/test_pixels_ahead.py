"""The oracle's pixels, started while the after-screen's page source is read (issue 42).

At standard and full the compare needs the after-tree, which is read after the screenshot. Its
pixel work (the change masks, a scrim's gain and the masks under it) is started on the judge
thread first, with the inputs the before-tree predicts, and the compare reuses what matches its
real inputs. These tests hold the page source until that work has ended, and check that a compare
given work made for right, wrong or partly right guesses returns what it returns without any.
"""

from __future__ import annotations

import threading
from typing import Any

import cv2
import numpy as np
import pytest

from pytest_guistate.core.checks import as_check, gone
from pytest_guistate.core.finding import FindAnswer, FoundNode, NodeQuery
from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.oracle import VisualOracle
from pytest_guistate.core.oracle_dim import _changed_sample
from pytest_guistate.core.oracle_pixels import PixelWork
from pytest_guistate.core.oracle_types import Transition
from pytest_guistate.core.settle import SettlePolicy, VirtualClock
from pytest_guistate.core.steploop import SessionHooks
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.core.tiers import TierPolicy
from pytest_guistate.core.uitree import UITree, parse_page_source
from tests.core import test_oracle_dim_layer as layer
from tests.core._synthetic import ListScreen

GATE_S = 5.0  # how long a page source waits for the work ahead at most: the old code never starts any
DIALOG = (40, 250, 320, 390)  # the synthetic screen's dialog box


class ScrimScreen(ListScreen):
    """The synthetic list, its dialog over a scrim (the whole screen dims: the oracle's dim path),
    its page source read on demand and held until the oracle's work ahead has ended."""

    def __init__(self, clock: VirtualClock, ahead_done: threading.Event) -> None:
        super().__init__(clock)
        self.ahead_done = ahead_done
        self.reads: list[bool] = []  # per page source read: had the work ahead ended before it?

    def close_dialog(self) -> None:
        if self._tap():
            self.dialog = None

    def _draw(self) -> np.ndarray:
        img = super()._draw()
        if self.dialog is None:
            return img
        left, top, right, bottom = DIALOG
        out = (img.astype(np.float32) * 0.55).astype(np.uint8)
        out[top:bottom, left:right] = img[top:bottom, left:right]
        return out

    def observe(self) -> Observation:
        self._advance()
        self.observations += 1
        frame = Frame.from_array(self._draw(), timestamp=self.clock())
        xml = self._xml()

        def fetch() -> UITree:
            # the first screen's tree has nothing before it to compare with: not held
            self.reads.append(self.ahead_done.wait(GATE_S) if self.reads else True)
            self.ahead_done.clear()
            return parse_page_source(xml)
        return Observation(frame=frame, fetch_tree=fetch, package=self.package, timestamp=self.clock(),
                           tree_current=lambda: True)


def _same(a: Transition, b: Transition) -> None:
    one, other = a.to_dict(), b.to_dict()
    one.pop("elapsed_ms"), other.pop("elapsed_ms")
    assert one == other


def test_the_pixels_are_worked_out_while_the_after_tree_is_read_and_judge_as_without() -> None:
    ahead_done = threading.Event()
    clock = VirtualClock()
    screen = ScrimScreen(clock, ahead_done)
    session = TaskSession(screen, policy=TierPolicy.for_tier("standard"), clock=clock, name="test_x",
                          settle=SettlePolicy(timeout_s=1.0, interval_s=0.1))
    prepare = session.oracle.prepare

    def prepared(*args: Any, **kwargs: Any) -> None:
        try:
            prepare(*args, **kwargs)
        finally:
            ahead_done.set()
    session.oracle.prepare = prepared  # type: ignore[method-assign]
    compares: list[tuple[Any, Transition]] = []
    compare = session.oracle.compare

    def kept(*args: Any, **kwargs: Any) -> Transition:
        result = compare(*args, **kwargs)
        compares.append(((args, kwargs), result))
        return result
    session.oracle.compare = kept  # type: ignore[method-assign]

    opened = session.perform("open the dialog", lambda: screen.show_dialog("Delete post?"), expect=as_check("Delete post?"))
    closed = session.perform("close the dialog", screen.close_dialog, expect="Count: 0")
    assert opened.outcome == closed.outcome == "ok"
    assert screen.reads[1:] and all(screen.reads[1:]), f"page sources read before the pixels ahead ended: {screen.reads}"
    notes = [note for _, result in compares for note in result.notes]
    assert any("global dim" in note for note in notes) and any("global undim" in note for note in notes)
    for (args, kwargs), result in compares:
        assert kwargs.get("work") is not None
        fresh = {**kwargs, "work": None}
        _same(result, VisualOracle(session.oracle.config).compare(*args, **fresh))


W, H = layer.W, layer.H


def _frames(before: np.ndarray, after: np.ndarray) -> tuple[Frame, Frame]:
    return Frame.from_array(before), Frame.from_array(after)


def _plain_dialog(shown: bool) -> str:
    """A native dialog node (not a full-screen layer) over the feed's rows."""
    dialog = ('<android.widget.FrameLayout resource-id="android:id/parentPanel" bounds="[60,420][480,760]">'
              '<android.widget.TextView text="Delete post?" bounds="[90,480][400,540]"/></android.widget.FrameLayout>'
              if shown else "")
    return layer.tree(False).replace("</android.widget.FrameLayout></hierarchy>",
                                     f"{dialog}</android.widget.FrameLayout></hierarchy>")


def _edited_row() -> np.ndarray:
    img = layer.feed()
    cv2.putText(img, "edited", (300, 460), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 0, 200), 2)
    return img


SCENES = {
    "a dialog node appears": (layer.feed, lambda: layer.dimmed(layer.feed()), lambda: _plain_dialog(False),
                              lambda: _plain_dialog(True)),
    "a dialog node vanishes": (lambda: layer.dimmed(layer.feed()), layer.feed, lambda: _plain_dialog(True),
                               lambda: _plain_dialog(False)),
    "a layer with content closes": (lambda: layer.dimmed(layer.feed()), layer.feed, lambda: layer.tree(True),
                                    lambda: layer.tree(False)),
    "a layer without content closes": (lambda: layer.dimmed(layer.feed()), layer.feed,
                                       lambda: layer.tree(True, content=False), lambda: layer.tree(False)),
    "a scrim no node names opens": (layer.feed, lambda: layer.dimmed(layer.feed()), lambda: layer.tree(False),
                                    lambda: layer.tree(False)),
    "a row's text changes": (layer.feed, _edited_row, lambda: layer.tree(False), lambda: layer.tree(False)),
}
GUESSES = {
    "the before-tree": lambda before, after: before,
    "the after-tree": lambda before, after: after,
    "no tree": lambda before, after: None,
}


@pytest.mark.parametrize("scene", SCENES)
@pytest.mark.parametrize("guess", GUESSES)
@pytest.mark.parametrize("ignore", [(), (Box(0, 0, W, 60),)])
def test_a_compare_given_work_ahead_returns_what_it_returns_without(scene: str, guess: str, ignore: tuple[Box, ...]) -> None:
    draw_before, draw_after, xml_before, xml_after = SCENES[scene]
    before, after = _frames(draw_before(), draw_after())
    before_tree, after_tree = parse_page_source(xml_before()), parse_page_source(xml_after())
    oracle = VisualOracle()
    expected = oracle.compare(before, after, after_tree, before_tree=lambda: before_tree)
    work = PixelWork(before, after, oracle.config)
    oracle.prepare(work, GUESSES[guess](before_tree, after_tree), ignore=ignore, before_tree=before_tree)
    _same(oracle.compare(before, after, after_tree, before_tree=lambda: before_tree, work=work), expected)
    other = PixelWork(*_frames(draw_before(), draw_after()), oracle.config)  # equal bytes, other frames: not used
    _same(oracle.compare(before, after, after_tree, before_tree=lambda: before_tree, work=other), expected)


def test_work_ahead_on_a_corrupt_frame_leaves_the_error_to_the_compare() -> None:
    before = Frame.from_array(layer.feed())
    after = Frame(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    work = PixelWork(before, after, VisualOracle().config)
    VisualOracle().prepare(work, None)  # raises nothing
    with pytest.raises(Exception, match="PNG|decode|frame|screenshot"):
        VisualOracle().compare(before, after, None, work=work)


def _sample_one_by_one(strict: np.ndarray, exclude: tuple[int, int, int, int] | None) -> np.ndarray | None:
    """The gain's sample with the excluded box's positions dropped one by one (as before issue 42)."""
    samples = 1 << 15
    count = cv2.countNonZero(strict)
    if exclude is not None:
        x0, y0, x1, y1 = exclude
        count -= cv2.countNonZero(strict[y0:y1, x0:x1]) if x1 > x0 and y1 > y0 else 0
    if count < 64:
        return None
    flat = strict.reshape(-1)
    step = max(1, flat.size // (4 * samples))
    positions = np.flatnonzero(flat[::step]).astype(np.int64) * step
    if positions.size < samples // 8:
        positions = np.flatnonzero(flat)
    if exclude is not None:
        x0, y0, x1, y1 = exclude
        ys, xs = np.divmod(positions, strict.shape[1])
        positions = positions[~((xs >= x0) & (xs < x1) & (ys >= y0) & (ys < y1))]
    return positions[:: -(-positions.size // samples)] if positions.size else None


@pytest.mark.parametrize("density", [0.0005, 0.02, 0.3, 0.95])
def test_the_gain_sample_drops_the_dialog_as_position_by_position_did(density: float) -> None:
    rng = np.random.default_rng(7)
    for _ in range(25):
        height, width = int(rng.integers(40, 1300)), int(rng.integers(40, 600))
        strict = ((rng.random((height, width)) < density) * 255).astype(np.uint8)
        x0, y0 = int(rng.integers(0, width)), int(rng.integers(0, height))
        box = (x0, y0, int(rng.integers(x0, width + 1)), int(rng.integers(y0, height + 1)))
        for exclude in (None, box):
            expected, got = _sample_one_by_one(strict, exclude), _changed_sample(strict, exclude)
            assert (expected is None) == (got is None)
            if expected is not None and got is not None:
                assert np.array_equal(expected, got)


class FindScreen(ListScreen):
    """The synthetic list whose checks are finds (light reads no tree for them); a find waits for
    the oracle's compare to have started, or `decline`s (the check then reads the tree)."""

    find_checks = True

    def __init__(self, clock: VirtualClock, compare_started: threading.Event) -> None:
        super().__init__(clock)
        self.compare_started = compare_started
        self.finds: list[bool] = []  # per find: had the compare started first?
        self.decline = False
        self.gate_s = GATE_S

    def observe(self) -> Observation:
        self._advance()
        self.observations += 1
        frame = Frame.from_array(self._draw(), timestamp=self.clock())
        xml = self._xml()
        shown = list(self.shown)

        def find(query: NodeQuery) -> FindAnswer | None:
            self.finds.append(self.compare_started.wait(self.gate_s))
            if self.decline:
                return None
            return FindAnswer([FoundNode(t) for t in shown if query.text and query.text in t], "test")
        return Observation(frame=frame, fetch_tree=lambda: parse_page_source(xml), package=self.package,
                           timestamp=self.clock(), tree_current=lambda: True, finder=find)


def _light_find_session(hooks: SessionHooks | None = None) -> tuple[TaskSession, FindScreen, list[Transition]]:
    started = threading.Event()
    clock = VirtualClock()
    screen = FindScreen(clock, started)
    session = TaskSession(screen, policy=TierPolicy.for_tier("light"), clock=clock, name="test_x", hooks=hooks,
                          settle=SettlePolicy(timeout_s=1.0, interval_s=0.1))
    compare = session.oracle.compare
    results: list[Transition] = []

    def compared(*args: Any, **kwargs: Any) -> Transition:
        started.set()
        results.append(compare(*args, **kwargs))
        return results[-1]
    session.oracle.compare = compared  # type: ignore[method-assign]
    return session, screen, results


def test_at_light_a_check_answered_by_a_find_is_asked_while_the_oracle_compares() -> None:
    session, screen, results = _light_find_session()
    record = session.perform("delete post 2", lambda: screen.delete("Post 2"), expect=gone("Post 2"),
                             idempotent=False)
    assert record.outcome == "ok" and record.verdict == "changed"
    assert screen.finds == [True], "the find was asked before the oracle's compare began"
    assert not record.reads_trees and record.attempts[0].verdict == "changed"
    assert results[-1].regions and all(r.container is None for r in results[-1].regions)  # pixels only, no tree


def test_a_find_that_cannot_decide_reads_the_tree_and_the_oracle_judges_with_it() -> None:
    session, screen, results = _light_find_session()
    screen.decline = True
    record = session.perform("delete post 2", lambda: screen.delete("Post 2"), expect=gone("Post 2"),
                             idempotent=False)
    assert record.outcome == "ok" and screen.finds == [True]
    assert any(r.container is not None for r in results[-1].regions), "the oracle did not snap with the tree read"
    assert record.verdict == results[-1].verdict == "changed"


def test_with_an_ignore_hook_the_check_is_asked_before_the_oracle_compares() -> None:
    session, screen, _ = _light_find_session(SessionHooks(extra_ignore_regions=lambda observation: []))
    screen.gate_s = 0.2  # the compare starts only after the find: it waits this long for nothing
    session.perform("delete post 2", lambda: screen.delete("Post 2"), expect=gone("Post 2"), idempotent=False)
    assert screen.finds == [False]
