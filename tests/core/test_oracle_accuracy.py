"""Accuracy of the visual oracle against the simulated phone's ground truth (AGMem §3.2).

A seeded monkey drives `Phone` in-process (no HTTP) through every installed app: taps on
clickable nodes (buttons, dialogs, list rows, toggles, launcher icons), typing into EditTexts,
long presses, scrolls, back, app switches via `activate_app`, dropped taps, screen transitions
caught mid-slide, and noise-only pairs with no action (clock ticks, cursor blinks, spinner frames,
using the phone's injectable clock). Every transition is judged the way the step loop will:

    probe:  frame A, clock +PROBE_S, frame B (no action)  -> unstable = oracle.unstable_regions(A, B)
    act:    action, clock +AFTER_S, frame C + tree         -> oracle.compare(B, C, tree_C, unstable=...)

Truth is the phone's semantic diff of the two trees (`truth.changed_regions`, the function behind
`Phone.ground_truth()`, which is checked to agree after every action). Scoring:
- a transition "changed" in truth is *missed* when the oracle says "no_change" ("uncertain" is
  counted apart: the step loop settles and re-verifies on it, it is not a silent miss);
- a noise-only pair (no action, no semantic change) must never be "changed";
- box matching: each truth region is matched to the best union of oracle boxes that intersect it
  (from each as a seed, the others added greedily while the IoU improves) and scored by that IoU.
  Truth boxes are node bounds, so thresholds apply to `Region.element` (the node the change is in;
  the raw box without a tree); raw pixel boxes and snapped containers are reported beside it.
"""

from __future__ import annotations

import math
import random
import re
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from xml.etree import ElementTree

import pytest

from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle import Transition, VisualOracle
from pytest_guistate.core.uitree import UITree, parse_page_source
from pytest_guistate.devices.sim.apps import INSTALLED, LAUNCHER
from pytest_guistate.devices.sim.apps.hybrid import HybridApp
from pytest_guistate.devices.sim.ios.persona import IosScreen
from pytest_guistate.devices.sim.ios.phone import IosPhone
from pytest_guistate.devices.sim.model import SimError, SimNode
from pytest_guistate.devices.sim.phone import ManualClock, Phone
from pytest_guistate.devices.sim.truth import changed_regions, snapshot

PROBE_S = 0.3
AFTER_S = 0.05
SESSIONS = [(seed, (1080, 2400)) for seed in range(3)] + [(seed, (540, 1200)) for seed in range(3, 6)]
# The same monkey on the iOS persona (issue 11): the oracle snaps to the XCUITest tree (points x scale)
IOS_SESSIONS = [(seed, IosScreen(390, 844, 3)) for seed in range(3)] + [(seed, IosScreen(375, 667, 2))
                                                                         for seed in range(3, 6)]
OPS_PER_APP = 7
CURSOR_BLINK_S = 0.53  # Android's cursor half period: one blink between before and after


@dataclass
class Case:
    kind: str
    noise_only: bool
    truth: list[Box]
    result: Transition
    size: tuple[int, int]

    @property
    def truth_changed(self) -> bool:
        return bool(self.truth)


@dataclass
class Driver:
    """Runs transitions on one phone with the step loop's probe-then-act protocol."""

    phone: Phone
    clock: ManualClock
    oracle: VisualOracle
    cases: list[Case] = field(default_factory=list)
    _frame: Frame | None = None
    ios: IosPhone | None = None  # the iOS persona over `phone`: its tree is what the oracle snaps to
    overlay: bool = False  # the tree gets an empty layer over the content (see `with_empty_overlays`)

    def shot(self, source: str) -> tuple[Frame, UITree, SimNode]:
        root = self.phone.root()
        if self.ios is not None:
            tree = parse_page_source(self.ios.page_source(), scale=self.ios.scale)
        elif self.overlay:
            tree = parse_page_source(with_empty_overlays(self.phone.page_source()))
        else:
            tree = parse_page_source(self.phone.page_source())
        return Frame(png=self.phone.screenshot_png(), source=source), tree, root

    def transition(self, kind: str, action: Callable[[], None] | None, after_s: float = AFTER_S) -> None:
        probe_a = self._frame or self.shot(f"{kind} probe")[0]
        self.clock.advance(PROBE_S)
        before, before_tree, before_root = self.shot(f"{kind} before")
        unstable = self.oracle.unstable_regions(probe_a, before, before_tree)
        if action is not None:
            action()
        self.clock.advance(after_s)
        after, after_tree, after_root = self.shot(f"{kind} after")
        truth = changed_regions(snapshot(before_root), snapshot(after_root), gap=self.phone.m.px(16))
        if action is not None:
            reported = [Box(*b) for b in self.phone.ground_truth()["regions"]]
            assert sorted(b.as_list() for b in reported) == sorted(b.as_list() for b in truth), kind
        result = self.oracle.compare(before, after, after_tree, unstable=unstable)
        self.cases.append(Case(kind, action is None and not truth, truth, result, (self.phone.width, self.phone.height)))
        for frame in (probe_a, before):
            frame.release_pixels()
        self._frame = after


def _center(node: SimNode) -> tuple[int, int]:
    return node.bounds.center


def _visible(phone: Phone, node: SimNode) -> bool:
    b = node.bounds
    return not b.is_empty and 0 <= b.center[0] < phone.width and phone.m.status_h <= b.center[1] < phone.height


def with_empty_overlays(xml: str) -> str:
    """The sim's source in the shape of issue 25's real sources: the app's content view ends with an
    empty, non-clickable FrameLayout (drawing-order 2) over everything below its app bar. Nothing is
    drawn for it, so the frames and the truth are the same as without it."""
    root = ElementTree.fromstring(xml)
    for content in root.iter():
        if content.get("resource-id") != "android:id/content" or len(content) < 2:
            continue
        left, _, right, bottom = _bounds(content)
        bar_bottom = _bounds(content[0])[3]
        content.append(ElementTree.Element("android.widget.FrameLayout", {
            "class": "android.widget.FrameLayout", "package": content.get("package", ""), "clickable": "false",
            "enabled": "true", "displayed": "true", "drawing-order": "2",
            "bounds": f"[{left},{bar_bottom}][{right},{bottom}]"}))
    return ElementTree.tostring(root, encoding="unicode")


def _bounds(element: ElementTree.Element) -> tuple[int, int, int, int]:
    left, top, right, bottom = (int(v) for v in re.findall(r"-?\d+", element.get("bounds", "")))
    return left, top, right, bottom


def monkey(seed: int, size: tuple[int, int], oracle: VisualOracle, ios: IosScreen | None = None,
           overlay: bool = False) -> list[Case]:
    """One seeded session through the launcher and every installed app (on the iOS persona if `ios`;
    with an empty layer over the content in the tree if `overlay`)."""
    clock = ManualClock()
    if ios is not None:
        phone = Phone(width=ios.width_px, height=ios.height_px, seed=seed, clock=clock, platform="ios")
    else:
        caps = {"guistate:seed": seed, "guistate:screen": {"width": size[0], "height": size[1]}}
        phone = Phone.from_capabilities(caps, clock=clock)
    rng = random.Random(seed)
    d = Driver(phone, clock, oracle, ios=IosPhone(phone, ios) if ios is not None else None, overlay=overlay)
    d.transition("noise: clock tick", None, 1.0)
    # the Hybrid app's web view is a real browser whose changes the tree-based ground truth cannot see
    for package in [*(p for p in INSTALLED if p != HybridApp.package), LAUNCHER]:
        phone.set_faults({"animation_ms": 300 if rng.random() < 0.3 else 0})
        d.transition("app switch", lambda p=package: phone.activate_app(p))
        if phone.faults.animation_ms:
            d.transition("animation settles", None, 0.5)
        phone.set_faults({"animation_ms": 0})
        for _ in range(OPS_PER_APP):
            _random_op(d, rng)
    _refresh_with_spinner(d, rng)
    phone.set_faults({"drop_tap_rate": 1.0})
    d.transition("dropped tap", lambda: phone.tap(phone.width // 2, phone.height // 2))
    phone.close()
    return d.cases


def _refresh_with_spinner(d: Driver, rng: random.Random) -> None:
    """Feed's pull-to-refresh: the spinner appears, spins (noise-only frames), then the list returns."""
    phone = d.phone
    phone.set_faults({"refresh_duration": 5.0})
    d.transition("app switch", lambda: phone.activate_app("com.guistate.feed"))
    lists = [n for n in phone.root().walk() if n.cls.endswith("RecyclerView")]
    if not lists:
        return
    b = lists[0].bounds
    d.transition("pull to refresh", lambda: phone.swipe(b.center[0], b.top + 20, b.center[0], b.top + b.height // 2, 300))
    for _ in range(rng.randint(3, 5)):
        d.transition("noise: spinner frame", None, 0.09)
    d.transition("refresh finished", None, 5.0)


def _random_op(d: Driver, rng: random.Random) -> None:
    phone = d.phone
    if d.ios is not None and phone.keyboard_field() is not None:
        # The iOS keyboard (issue 25) is put away between transitions, as a test calls hide_keyboard():
        # the corpus and its bounds stay those measured without it (the keyboard has tests of its own).
        phone.hide_keyboard()
        d._frame = None  # the next probe starts from the screen without it
    nodes = [n for n in phone.root().walk() if _visible(phone, n) and n.package != "com.android.systemui"]
    clickable = [n for n in nodes if n.clickable and n.enabled]
    edits = [n for n in nodes if n.cls == "android.widget.EditText" and n.enabled]
    scrollable = [n for n in nodes if n.scrollable]
    focused = [n for n in edits if n.focused]
    spinning = any(n.cls == "android.widget.ProgressBar" for n in nodes)
    roll = rng.random()
    if spinning and roll < 0.5:
        d.transition("noise: spinner frame", None, 0.09)
    elif focused and roll < 0.4:
        d.transition("noise: cursor blink", None, CURSOR_BLINK_S)
    elif edits and roll < 0.3:
        target = rng.choice(edits)
        text = rng.choice(["abc", "shoe", "hello world\n", "x"])
        d.transition("type text", lambda: phone.type_text(target.key, text))
    elif roll < 0.72 and clickable:
        target = rng.choice(clickable)
        d.transition(f"tap {target.cls.rsplit('.', 1)[-1]}", lambda: phone.tap(*_center(target)))
    elif roll < 0.78 and scrollable:
        b = rng.choice(scrollable).bounds
        x, y0, y1 = b.center[0], b.bottom - 10, b.top + b.height // 3
        down = rng.random() < 0.4
        d.transition("pull to refresh" if down else "scroll", lambda: phone.swipe(x, y1 if down else y0,
                                                                                 x, y0 if down else y1, 300))
    elif roll < 0.82 and clickable:
        target = rng.choice(clickable)
        d.transition("long press", lambda: phone.long_press(*_center(target), 800))
    elif roll < 0.88:
        d.transition("back", phone.back)
    elif roll < 0.92:
        x, y = rng.randrange(phone.width), rng.randrange(phone.m.status_h, phone.height)
        d.transition("tap anywhere", lambda: _tap_quiet(phone, x, y))
    else:
        d.transition("noise: clock tick", None, 1.0)


def _tap_quiet(phone: Phone, x: int, y: int) -> None:
    try:
        phone.tap(x, y)
    except SimError:
        pass  # a point outside the screen cannot happen here; SimError would name it in the log


def best_union_iou(truth: Box, boxes: list[Box]) -> float:
    """IoU of `truth` with the best union of the oracle boxes that intersect it: from each such box
    as a seed, the others are added greedily (largest overlap first) while the IoU improves."""
    candidates = sorted((b for b in boxes if b.intersects(truth)), key=lambda b: -b.intersection(truth).area)
    best = 0.0
    for seed in candidates:
        union, score = seed, truth.iou(seed)
        for box in candidates:
            trial = union.union(box)
            if truth.iou(trial) > score:
                union, score = trial, truth.iou(trial)
        best = max(best, score)
    return best


@pytest.fixture(scope="module")
def corpus() -> list[Case]:
    oracle = VisualOracle()
    return [case for seed, size in SESSIONS for case in monkey(seed, size, oracle)]


def test_oracle_accuracy_against_sim_ground_truth(corpus: list[Case]) -> None:
    report_and_check(corpus, f"{len(SESSIONS)} seeded sessions", minimum=200)


def test_oracle_accuracy_on_the_ios_persona() -> None:
    """The same corpus on the iOS persona: pixels as on Android, the tree in XCUITest's shape (issue 11)."""
    oracle = VisualOracle()
    cases = [case for seed, screen in IOS_SESSIONS
             for case in monkey(seed, (screen.width_px, screen.height_px), oracle, ios=screen)]
    # The same seeds give 186 changes there; its 2 misses (measured 2026-12-03) are both the Feed's
    # refresh spinner appearing in a frame the probe had seen spinning -- the class of Android's one
    # miss -- so the bound is the same 1% rounded up to whole transitions.
    report_and_check(cases, f"{len(IOS_SESSIONS)} seeded sessions, iOS persona", minimum=200, missed_ceil=True)


def test_oracle_accuracy_with_an_empty_overlay_over_the_content(corpus: list[Case]) -> None:
    """Issue 25's regression: large apps draw an empty, non-clickable FrameLayout over their content.
    The same seeded sessions with that layer in the tree must snap exactly as without it (it draws
    nothing, so frames and truth are unchanged): every region's container box the same."""
    oracle = VisualOracle()
    seeds = SESSIONS[:2]
    layered = [case for seed, size in seeds for case in monkey(seed, size, oracle, overlay=True)]
    plain = [case for case in corpus if case.size == seeds[0][1]][:len(layered)]
    assert [c.kind for c in layered] == [c.kind for c in plain]
    differ = [(c.kind, [r.box.as_list() for r in p.result.regions], [r.box.as_list() for r in c.result.regions])
              for p, c in zip(plain, layered, strict=True)
              if [(r.box, r.element) for r in p.result.regions] != [(r.box, r.element) for r in c.result.regions]]
    report_and_check(layered, f"{len(seeds)} seeded sessions, empty overlay over the content", minimum=100,
                     missed_ceil=True)
    assert not differ, f"{len(differ)} of {len(layered)} transitions snapped differently: {differ[:3]}"


def report_and_check(corpus: list[Case], title: str, minimum: int, missed_ceil: bool = False) -> None:
    changed = [c for c in corpus if c.truth_changed]
    noise = [c for c in corpus if c.noise_only]
    quiet_actions = [c for c in corpus if not c.truth_changed and not c.noise_only]
    missed = [c for c in changed if c.result.verdict == "no_change"]
    uncertain = [c for c in changed if c.result.verdict == "uncertain"]
    noise_changed = [c for c in noise if c.result.verdict == "changed"]
    noise_uncertain = [c for c in noise if c.result.verdict == "uncertain"]
    quiet_changed = [c for c in quiet_actions if c.result.verdict == "changed"]
    raw_ious = [best_union_iou(t, [r.raw for r in c.result.regions]) for c in changed for t in c.truth]
    element_ious = [
        best_union_iou(t, [r.element or r.raw for r in c.result.regions]) for c in changed for t in c.truth
    ]
    snap_ious = [best_union_iou(t, [r.box for r in c.result.regions]) for c in changed for t in c.truth]
    kinds = Counter(c.kind for c in corpus)
    elapsed = [c.result.elapsed_ms for c in corpus]

    print(f"\n== oracle accuracy on {len(corpus)} transitions ({title}) ==")
    print(f"{'truth':28s} {'n':>5s} {'changed':>8s} {'uncertain':>10s} {'no_change':>10s}")
    for label, group in (("changed", changed), ("noise only", noise), ("action, no semantic change", quiet_actions)):
        verdicts = Counter(c.result.verdict for c in group)
        print(f"{label:28s} {len(group):5d} {verdicts['changed']:8d} {verdicts['uncertain']:10d} "
              f"{verdicts['no_change']:10d}")
    for name, ious in (("element", element_ious), ("raw", raw_ious), ("snapped", snap_ious)):
        if ious:
            good = sum(i >= 0.8 for i in ious) / len(ious)
            print(f"IoU {name:8s} truth regions={len(ious)} mean={statistics.mean(ious):.3f} "
                  f"median={statistics.median(ious):.3f} >=0.8: {good:.1%}")
    print(f"missed changes: {len(missed)}/{len(changed)}; compare() elapsed median "
          f"{statistics.median(elapsed):.1f} ms (incl. decode)")
    print("kinds:", dict(sorted(kinds.items())))
    for c in [*missed, *noise_changed, *quiet_changed][:12]:
        print(f"  ! {c.kind} {c.size}: verdict={c.result.verdict} truth={[b.as_list() for b in c.truth]} "
              f"oracle={[r.raw.as_list() for r in c.result.regions]}")
    low = [(i, c, t) for c in changed for t in c.truth
           for i in [best_union_iou(t, [r.element or r.raw for r in c.result.regions])] if i < 0.8]
    for i, c, t in low[:12]:
        elements = [(r.element or r.raw).as_list() for r in c.result.regions]
        print(f"  ~ IoU {i:.2f} {c.kind} {c.size}: truth={t.as_list()} oracle elements={elements}")

    assert len(corpus) >= minimum
    assert len(noise) >= minimum // 10 and len(changed) >= minimum // 2  # the corpus exercises both sides
    assert not noise_changed, "noise-only transitions judged 'changed'"
    allowed = math.ceil(0.01 * len(changed)) if missed_ceil else 0.01 * len(changed)
    assert len(missed) <= allowed, f"missed {len(missed)} of {len(changed)} changes"
    # Truth boxes are node bounds, so the node-level `element` boxes are what is scored; a quarter
    # of the truth regions may fall short where one action changes many nearby nodes at once.
    assert statistics.median(element_ious) >= 0.8
    assert sum(i >= 0.8 for i in element_ious) >= 0.75 * len(element_ious)
    assert len(uncertain) + len(noise_uncertain) <= 0.05 * len(corpus)
