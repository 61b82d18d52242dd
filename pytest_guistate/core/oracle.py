"""The visual oracle: did the last action change the screen, where, and what does it look like now?

AGMem §3.2: per-pixel difference of adjacent frames, local background subtracted, loose and
strict masks, morphological close, boxes of the changed regions (`oracle_mask`); here each box
is judged against ignore and unstable regions, snapped at full scale to the smallest enclosing
container of the UI tree (window, panel, dialog, list row; the raw box is kept if none fits) and
cropped from the AFTER frame. No change at all falls back to a crop of the whole screen.

Verdict rules (the step loop's stale-screen policy, steploop.py, depends on them):
- identical PNG bytes, or no region outside the ignore regions            -> "no_change";
- every region lies inside `unstable` boxes (a spinner, an animation seen by the stability
  probe) or is a text cursor (raw width <= `cursor_max_width`, inside a focused EditText /
  TextField of the tree)                                                    -> "no_change", the
  flickering boxes listed in `Transition.unstable`;
- only a tap ripple or an overscroll glow changed (core/oracle_transient.py: they fade, and one
  frame does not tell a ripple from a highlight the tree does not report)  -> "uncertain";
- a region overlaps unstable boxes and at most `uncertain_fraction` of its strictly changed
  pixels lie outside them, or it lies inside an unstable box too large to be trusted
  (> `max_unstable_fraction` of the screen: the screen was not settled)    -> "uncertain";
- any other region                                                          -> "changed", even when
  it covers the whole screen mid-animation: deciding to wait for settling is the step loop's job.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, fields

import cv2

from pytest_guistate.core.frame import Frame, FrameError, png_size, size_change_text
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle_bars import pixel_bars
from pytest_guistate.core.oracle_dim import DIM_FRACTION, Overlay, find_overlay, floating_window
from pytest_guistate.core.oracle_mask import (
    ChangeMasks,
    RawRegion,
    change_masks,
    find_regions,
    merge_boxes,
    status_bar_boxes,
    to_small,
)
from pytest_guistate.core.oracle_pixels import PixelWork
from pytest_guistate.core.oracle_snap import SnappedRegion, grow_unstable, snap_regions
from pytest_guistate.core.oracle_transient import FADING, TransientShapes, lone_cursor
from pytest_guistate.core.oracle_types import Crop, OracleConfig, Region, Transient, Transition, Verdict
from pytest_guistate.core.uitree import UINode, UITree
from pytest_guistate.core.uitree_platform import ANDROID, is_ime_package

__all__ = ["Crop", "OracleConfig", "Region", "Transition", "VisualOracle", "covered_area", "pixels_place", "status_bar_boxes"]

# regions judged without a tree covering more than this share of the frame: a new screen the tree
# would not narrow (benchmarks/real_transitions.py --pixels-only, docs/oracle.md)
PIXELS_PLACE_FRACTION = 0.5
_UNSTABLE_GROWTH = 4  # a probe box grows to a tree node at most this many times its size
_EDITABLE_HINTS = ("EditText", "TextField", "AutoCompleteTextView", "SearchView")


class VisualOracle:
    """Compares before/after frames of one action; stateless apart from its config."""

    def __init__(self, config: OracleConfig | None = None) -> None:
        self.config = config or OracleConfig()

    # -- public API -------------------------------------------------------------------------

    def compare(
        self,
        before: Frame,
        after: Frame,
        tree: UITree | None = None,
        *,
        ignore: Sequence[Box] = (),
        unstable: Sequence[Box] = (),
        before_tree: Callable[[], UITree | None] | None = None,
        status_bars: Sequence[Box] | None = None,
        previous: Frame | None = None,
        work: PixelWork | None = None,
    ) -> Transition:
        """Judge one transition. `tree` is the UI tree of the AFTER screen (snapping, cursors);
        `before_tree` gives the before-screen's, read for a global dim / undim (oracle_dim.py), a
        dialog-only dump's bars and a ripple's control; `status_bars` replaces the bars found in
        `tree` (light tier: `StatusBars`, no page source). `previous`: a frame taken just before `after`
        with no input in between (the step loop's last settle poll): a ripple or glow whose pixels
        did not move between the two is not fading, so it is the app's change (a highlight the
        tree does not report), not set aside. `work`: this pair's pixels, computed ahead for the
        inputs the caller predicted (`prepare`); other inputs are computed here, as without it."""
        started = time.perf_counter()
        if before.same_bytes(after):
            return self._identical(after, tree, ignore, unstable, started, status_bars)
        width, height = self._check_sizes(before, after)
        tree, before_tree = _walked(tree), _read_once(before_tree)  # every rule below walks the same two trees
        screen = Box(0, 0, width, height)
        work = work if work is not None and work.serves(before, after) else PixelWork(before, after, self.config)
        ignored = self._ignored(before, after, tree, before_tree, ignore, status_bars)
        masks = work.masks(ignored)
        raw_regions = work.regions(ignored)
        trusted, untrusted = self._split_unstable(unstable, screen)
        focused = _focused_editables(tree)
        flicker: list[Box] = []
        notes: list[str] = []
        scale = self.config.scale_divisor
        shapes = TransientShapes(tree, screen, pixels=(before.small(scale), after.small(scale), scale),
                                 before_tree=before_tree, previous=previous.small(scale) if previous else None)
        transients = [t for t in (shapes.kind_of(raw.box) for raw in raw_regions) if t is not None]
        app_regions = [raw for raw in raw_regions if not any(t.box == raw.box for t in transients)]
        if tree is None:  # no focused field to hold a cursor: its shape and pixels say it blinked
            cursor = lone_cursor([(raw.box, raw.small) for raw in app_regions], before.small(scale),
                                 after.small(scale), scale, self.config.cursor_max_width)
            app_regions = [raw for raw in app_regions if raw.box != cursor]
            flicker += [cursor] if cursor is not None else []
        kept = self._keep(app_regions, masks, trusted, untrusted, focused, flicker)
        transients += [Transient("cursor", box) for box in flicker]
        snapped = self._into_vanished_dialog(snap_regions(kept, tree, screen, self.config), before_tree, tree, screen)
        covered = Box.union_all(s.region.raw for s in snapped)
        if covered is not None and covered.area >= DIM_FRACTION * screen.area:
            under_scrim: list[Transient] = []
            undimmed = self._undim(work, tree, before_tree, ignored, (trusted, untrusted, focused), shapes,
                                   under_scrim)
            if undimmed is not None:
                snapped, note = undimmed
                notes.append(note)
                transients += under_scrim
                # the dimmed rest of the screen is visible change too (a drawer's box alone left 80% of
                # what changed out of the report): a screen-level region of its own, never cropped and
                # never read as where the step acted (report/triage.py), in the app's window or not
                snapped.append(_screen_level(covered.clamp(width, height), "scrim", "the screen behind, dimmed"))
            else:
                filled = sum(s.region.raw.area for s in snapped) >= DIM_FRACTION * screen.area
                whole = self._new_screen(covered, filled, before_tree, tree, screen, ignored, notes)
                snapped += [whole] if whole is not None else []
        if covered is not None and any(not s.uncertain for s in snapped) \
                and all(s.region.kind == "change" for s in snapped):
            snapped += _another_window(covered, before_tree, tree, screen, ignored, notes, snapped)
        snapped = _join_fragments(snapped, self.config.max_crops, screen)
        if tree is None:
            snapped = _one_new_screen(snapped, screen, notes)
        verdict: Verdict
        if any(not s.uncertain for s in snapped):
            verdict = "changed"
        elif snapped:
            verdict = "uncertain"
            notes.append("changes only at or just beyond unstable regions")
        elif any(t.kind in FADING for t in transients):
            # a ripple's last frame and a highlight the tree does not report look the same: look again
            verdict = "uncertain"
            fading = ", ".join(sorted({t.kind for t in transients if t.kind in FADING}))
            notes.append(f"only shapes that fade changed ({fading}): judge again once they have faded")
        else:
            verdict = "no_change"
            if transients:
                notes.append("only transient shapes changed: " + ", ".join(sorted({t.kind for t in transients})))
            elif raw_regions:
                notes.append("only flickering regions changed (cursor, spinner, animation)")
        regions = [s.region for s in snapped]
        crops = self._crops(after, regions, screen)
        return Transition(
            verdict=verdict,
            regions=regions,
            crops=crops,
            ignored=ignored,
            unstable=[*unstable, *flicker],
            identical_bytes=False,
            diff_ratio=masks.strict_count / float(max(1, masks.counted_pixels)),
            elapsed_ms=(time.perf_counter() - started) * 1000.0,
            notes=notes,
            transients=transients,
        )

    def prepare(self, work: PixelWork, tree: UITree | None, *, ignore: Sequence[Box] = (),
                before_tree: UITree | None = None) -> None:
        """Compute `work`'s pixels for a compare still to come, for the inputs `tree` predicts (the
        step loop passes the before-screen's while the after-screen's page source is read): the
        change masks and regions for the ignore regions it gives, and, when they cover most of
        the screen, the dim / undim for a dialog of `before_tree` that vanished, then for one found
        from the pixels, each guess only while the compare is not yet waiting (`PixelWork.want`).
        Hand `work` to `compare(work=...)`; a prediction that does not hold costs the compare
        nothing but the wait for this. Errors are left for the compare to name."""
        before, after = work.before, work.after
        try:
            if before.same_bytes(after):
                return
            width, height = self._check_sizes(before, after)
            screen = Box(0, 0, width, height)
            walked = _walked(tree)
            ignored = self._ignored(before, after, walked, lambda: walked, ignore, None)
            covered = Box.union_all(raw.box for raw in work.regions(ignored))
            if covered is None or covered.area < DIM_FRACTION * screen.area:
                return
            shape = work.masks(ignored).strict.shape
            # a dialog of the before-screen closed
            vanished = find_overlay(walked if before_tree is tree else _walked(before_tree), None, screen)
            for overlay in (vanished, None) if vanished is not None else (None,):
                if work.wanted:
                    return
                work.dimmed(ignored, *_dim_inputs(overlay, ignored, self.config.scale_divisor, shape))
        except Exception:  # noqa: BLE001 - work ahead only: the compare meets the same error and names it
            return

    def _ignored(self, before: Frame, after: Frame, tree: UITree | None,
                 before_tree: Callable[[], UITree | None] | None, ignore: Sequence[Box],
                 status_bars: Sequence[Box] | None) -> list[Box]:
        """Every box the compare sets aside: the system bars (from `status_bars`, the tree, a window
        over an app's bars, or the pixels when there is no tree) and `ignore`."""
        width, height = after.size
        ignored = self._ignores(tree, width, height, ignore, status_bars)
        if status_bars is None and self.config.ignore_status_bar:
            ignored += _bars_behind_a_window(tree, before_tree, Box(0, 0, width, height), ignored)
        if tree is None and self.config.ignore_status_bar:  # no tree says where the bars are: the pixels do
            found = pixel_bars(before.small(self.config.scale_divisor), after.small(self.config.scale_divisor),
                               self.config.scale_divisor, (width, height))
            ignored += [bar for bar in found if not any(box.contains(bar) for box in ignored)]
        return ignored

    def _keep(self, raws: Sequence[RawRegion], masks: ChangeMasks, trusted: Sequence[Box], untrusted: Sequence[Box],
              focused: Sequence[UINode], flicker: list[Box]) -> list[tuple[RawRegion, bool]]:
        """(region, uncertain) of the regions that are not noise; noise outside `trusted` goes to `flicker`."""
        kept: list[tuple[RawRegion, bool]] = []
        for raw in raws:
            kind = self._classify(raw, masks, trusted, untrusted, focused)
            if kind == "noise":
                if not any(box.contains(raw.box) for box in trusted):
                    flicker.append(raw.box)  # a cursor: report where it blinked
                continue
            kept.append((raw, kind == "uncertain"))
        return kept

    @staticmethod
    def _into_vanished_dialog(snapped: list[SnappedRegion], before_tree: Callable[[], UITree | None] | None,
                              tree: UITree | None, screen: Box) -> list[SnappedRegion]:
        """A dialog that closed leaves a change where it was; the after-tree has nothing there but
        the screen under it, so snapping made the region the whole list (issue 23). A change that
        lies inside the closed dialog's box (from the before-tree) is that box instead: the crop
        shows where the dialog was, its before-crop the dialog. Looked at only when a region grew
        well past its pixels, so a step that did not close anything reads no before-tree."""
        if before_tree is None or not any(s.region.box.area > 2 * s.region.raw.area for s in snapped):
            return snapped
        overlay = find_overlay(before_tree(), tree, screen)
        if overlay is None or overlay.change != "vanished":
            return snapped
        dialog = overlay.box.clamp(screen.right, screen.bottom)
        out: list[SnappedRegion] = []
        for item in snapped:
            region = item.region
            if region.box != dialog and region.raw.intersection(dialog).area >= 0.8 * region.raw.area:
                # a change where the dialog was is the dialog's going (its edge, its shadow), not
                # the row or list the after-tree has there
                host = next((o for o in out if o.region.box == dialog), None)
                if host is not None:
                    host.region.raw = host.region.raw.union(region.raw)
                    host.strict_pixels += item.strict_pixels
                    host.uncertain = host.uncertain and item.uncertain
                    continue
                region = Region(region.raw, dialog, overlay.label, region.changed_fraction, region.element)
                item = SnappedRegion(region, item.strict_pixels, item.uncertain)
            out.append(item)
        return out

    @staticmethod
    def _new_screen(covered: Box, filled: bool, before_tree: Callable[[], UITree | None] | None,
                    tree: UITree | None, screen: Box, ignored: Sequence[Box], notes: list[str]) -> SnappedRegion | None:
        """Changes spread over most of the screen with no dialog dimming it: a new window (the trees'
        top-level windows differ: another app, a floating window came or went) is the whole screen
        below the system bars; else, when the changed boxes themselves fill half of the screen
        (`filled`), one screen redrawn (a theme switch, a scrolled page) is the repainted area;
        else they are separate changes (a toast gone, a title changed), kept as they are."""
        old = before_tree() if before_tree is not None else None
        if _windows(old, screen) != _windows(tree, screen) and old is not None and tree is not None:
            notes.append("new window: the trees' top-level windows differ")
            return _new_window(covered, screen, ignored)
        if not filled:
            return None
        notes.append(f"repaint: {covered.area / screen.area:.0%} of the screen redrawn in one window")
        return _screen_level(covered, "repaint", "repainted area")

    def _undim(self, work: PixelWork, tree: UITree | None, before_tree: Callable[[], UITree | None] | None,
               ignored: list[Box], unstable: tuple[list[Box], list[Box], list[UINode]], shapes: TransientShapes,
               set_aside: list[Transient]) -> tuple[list[SnappedRegion], str] | None:
        """A global dim / undim: the dialog that (dis)appeared plus what changed under the scrim. A
        scrollbar fading under the scrim (the touch that opened or closed the dialog scrolled nothing,
        but the list still shows its bar) is set aside into `set_aside` like one outside it."""
        after = work.after
        screen = Box(0, 0, *after.size)
        overlay = find_overlay(before_tree() if before_tree is not None else None, tree, screen)
        scale = self.config.scale_divisor
        exclude, residual_ignored = _dim_inputs(overlay, ignored, scale, work.masks(ignored).strict.shape)
        # no dialog node (a div over a scrim, no role="dialog"; issue 34), or a dim layer with no content
        # node: nothing to read the gain around, so the dialog is found from the pixels, as the area that
        # does not follow the scrim's gain
        by_pixels = exclude is None
        dimmed = work.dimmed(ignored, exclude, residual_ignored)
        gain, residual, found = dimmed.gain, dimmed.residual, dimmed.found
        if gain is None or residual is None:
            return None
        set_aside += [t for t in (shapes.kind_of(raw.box, layers=False) for raw in found) if t is not None]
        kept = self._keep([raw for raw in found if not any(t.box == raw.box for t in set_aside)], residual, *unstable, [])
        if by_pixels:  # the dialog is the largest area that does not follow the scrim's gain
            if not kept:
                return None
            dialog = max(kept, key=lambda k: k[0].box.area)
            kept = [k for k in kept if k is not dialog]
            box = dialog[0].box.clamp(*after.size)
            if overlay is None and not _dialog_shaped(box, [k[0].box for k in kept], screen):
                return None  # a theme switch or a new page dims too: a real whole-screen change
        else:
            assert overlay is not None
            box = overlay.box.clamp(*after.size)
        label = overlay.label if overlay is not None else (
            f"dialog (from the pixels) {'appeared' if gain < 1 else 'vanished'}")
        snapped = snap_regions(kept, tree, screen, self.config)
        what = "dim" if gain < 1 else "undim"
        region = Region(box, box, label, 1.0, None)
        note = f"global {what} (gain {gain:.2f}) divided out: {label}, {len(snapped)} change(s) under the scrim"
        return [SnappedRegion(region, box.area // (scale * scale), False), *snapped], note

    def unstable_regions(
        self, a: Frame, b: Frame, tree: UITree | None = None, *, ignore: Sequence[Box] = ()
    ) -> list[Box]:
        """Regions that differ between two frames taken with NO action in between (a stability probe):
        blinking cursor, spinner, animation. The step loop passes them to compare() as `unstable`."""
        if a.same_bytes(b):
            return []
        width, height = self._check_sizes(a, b)
        masks = self._masks(a, b, self._ignores(tree, width, height, ignore))
        margin = self.config.unstable_margin
        found = [raw.box for raw in find_regions(masks, self.config)]
        grown = grow_unstable(found, tree, _UNSTABLE_GROWTH, self.config.snap_tolerance)
        boxes = [box.expand(margin).clamp(width, height) for box in grown]
        return sorted(merge_boxes(boxes, 0), key=lambda box: (box.top, box.left))

    def crop(self, frame: Frame, box: Box) -> bytes:
        """PNG of `box` of `frame` (clipped to the screen); used by reports and memory too."""
        return self._crop(frame, box).png

    # -- steps ------------------------------------------------------------------------------

    def _identical(
        self, after: Frame, tree: UITree | None, ignore: Sequence[Box], unstable: Sequence[Box], started: float,
        status_bars: Sequence[Box] | None = None,
    ) -> Transition:
        """Identical bytes: nothing is decoded; the fallback crop *is* the after PNG."""
        try:
            size: tuple[int, int] | None = png_size(after.png)
        except FrameError:
            size = None
        if size is None and tree is not None and tree.width and tree.height:
            size = (tree.width, tree.height)
        ignored = self._ignores(tree, size[0], size[1], ignore, status_bars) if size else list(ignore)
        crops: list[Crop] = []
        if self.config.full_screen_fallback_crop and size is not None:
            crops.append(Crop(Box(0, 0, size[0], size[1]), after.png, -1))
        return Transition(
            verdict="no_change",
            regions=[],
            crops=crops,
            ignored=ignored,
            unstable=list(unstable),
            identical_bytes=True,
            diff_ratio=0.0,
            elapsed_ms=(time.perf_counter() - started) * 1000.0,
            notes=["identical screenshot bytes"],
        )

    @staticmethod
    def _check_sizes(before: Frame, after: Frame) -> tuple[int, int]:
        if before.size != after.size:
            raise FrameError(size_change_text(before, after))
        return after.size

    def _ignores(self, tree: UITree | None, width: int, height: int, extra: Sequence[Box],
                 status_bars: Sequence[Box] | None = None) -> list[Box]:
        if not self.config.ignore_status_bar:  # a screen with no system bars (a desktop browser's page)
            boxes: list[Box] = []
        else:
            boxes = status_bar_boxes(tree, width, height) if status_bars is None else list(status_bars)
        return boxes + [box.clamp(width, height) for box in extra if not box.clamp(width, height).is_empty]

    def _masks(self, before: Frame, after: Frame, ignored: Sequence[Box]) -> ChangeMasks:
        scale = self.config.scale_divisor
        return change_masks(before.small(scale), after.small(scale), self.config, after.size, ignored)

    def _split_unstable(self, unstable: Sequence[Box], screen: Box) -> tuple[list[Box], list[Box]]:
        """Unstable boxes small enough to hide changes, and those too big to be trusted."""
        limit = self.config.max_unstable_fraction * screen.area
        trusted: list[Box] = []
        untrusted: list[Box] = []
        for box in unstable:
            clipped = box.clamp(screen.width, screen.height)
            if clipped.is_empty:
                continue
            (trusted if clipped.area <= limit else untrusted).append(clipped)
        return trusted, untrusted

    def _classify(
        self,
        raw: RawRegion,
        masks: ChangeMasks,
        trusted: Sequence[Box],
        untrusted: Sequence[Box],
        focused: Sequence[UINode],
    ) -> str:
        """ "noise", "uncertain" or "real" for one region (rules in the module docstring)."""
        config = self.config
        overlapping = [box for box in trusted if box.intersects(raw.box)]
        if overlapping:
            x0, y0, x1, y1 = raw.small
            outside = masks.strict[y0:y1, x0:x1].copy()
            for box in overlapping:
                bx0, by0, bx1, by1 = to_small(box, masks.scale, masks.strict.shape)
                outside[max(by0 - y0, 0) : max(by1 - y0, 0), max(bx0 - x0, 0) : max(bx1 - x0, 0)] = 0
            left_over = int(cv2.countNonZero(outside))
            if left_over == 0:
                return "noise"
            if left_over <= config.uncertain_fraction * raw.strict_pixels:
                return "uncertain"
        if raw.box.width <= config.cursor_max_width:
            tolerance = 2 * config.scale_divisor
            for node in focused:
                assert node.bounds is not None
                if node.bounds.expand(tolerance).contains(raw.box):
                    return "noise"
        if any(box.contains(raw.box) for box in untrusted):
            return "uncertain"
        return "real"

    def _crops(self, after: Frame, regions: Sequence[Region], screen: Box) -> list[Crop]:
        """Up to `max_crops` crops of distinct boxes (most changed region first), or the whole screen."""
        crops: list[Crop] = []
        taken: list[Box] = []
        for index, region in enumerate(regions):
            if len(crops) >= self.config.max_crops:
                break
            if region.kind == "scrim":
                continue  # the dimmed screen behind a dialog: the dialog's crop says what happened
            box = region.box.expand(self.config.crop_margin).clamp(screen.width, screen.height)
            if any(other.contains(box) for other in taken):
                continue
            taken.append(box)
            crops.append(Crop(box, None, index, source=after))  # cut when first used
        if not regions and self.config.full_screen_fallback_crop:
            crops.append(Crop(screen, after.png, -1))  # the after PNG is already the whole screen
        return crops

    def _crop(self, frame: Frame, box: Box) -> Crop:
        width, height = frame.size
        clipped = box.clamp(width, height)
        if clipped.is_empty:
            raise ValueError(f"crop box {box.as_list()} lies outside the {width}x{height} frame{_where(frame)}")
        return Crop(clipped, None, -1, pixels=frame.bgr[clipped.top : clipped.bottom, clipped.left : clipped.right])


def covered_area(boxes: Sequence[Box]) -> int:
    """Pixels inside at least one box (overlaps counted once), exact: regions overlap, and a
    bounding box would count the gap between a change at the top and one at the bottom."""
    xs = sorted({x for b in boxes if not b.is_empty for x in (b.left, b.right)})
    area = 0
    for left, right in itertools.pairwise(xs):
        spans = sorted((b.top, b.bottom) for b in boxes if not b.is_empty and b.left <= left and b.right >= right)
        covered, reach = 0, None
        for top, bottom in spans:
            if reach is None or top > reach:
                covered += bottom - top
                reach = bottom
            elif bottom > reach:
                covered += bottom - reach
                reach = bottom
        area += covered * (right - left)
    return area


def pixels_place(transition: Transition, width: int, height: int, fraction: float = PIXELS_PLACE_FRACTION) -> bool:
    """Whether a transition judged without a tree already says where the change is as well as the
    tree would: its regions cover more than `fraction` of the frame, a new screen or a repaint,
    whose region is the screen whatever the tree holds. A smaller change is placed by its item's
    box, which only the tree gives (pixels give the ink of a text, not its row), so it is False;
    so is a transition with no region. Not used by the step loop: a measured rule for deciding
    when a page source is needed (docs/oracle.md)."""
    if width <= 0 or height <= 0:
        raise ValueError(f"pixels_place: the frame is {width}x{height}; both sides must be positive")
    if transition.verdict != "changed" or not transition.regions:
        return False
    screen = Box(0, 0, width, height)
    return covered_area([r.box.intersection(screen) for r in transition.regions]) > fraction * screen.area


def _screen_level(box: Box, kind: str, label: str) -> SnappedRegion:
    """A screen-level region after the items (`Region.kind`): what the step did to the screen as a whole."""
    return SnappedRegion(Region(box, box, label, 1.0, None, kind), 0, False)


def _new_window(covered: Box, screen: Box, ignored: Sequence[Box]) -> SnappedRegion:
    """The whole screen between the system bars: a new window's screen-level region."""
    bars = [b for b in ignored if b.width >= screen.width * 0.9]
    top = max((b.bottom for b in bars if b.top <= screen.top), default=0)
    bottom = min((b.top for b in bars if b.top >= screen.height // 2),
                 default=screen.bottom)
    return _screen_level(Box(0, min(top, covered.top), screen.right, max(bottom, covered.bottom)), "screen", "new window")


def _another_window(covered: Box, before_tree: Callable[[], UITree | None] | None, tree: UITree | None,
                    screen: Box, ignored: Sequence[Box], notes: list[str],
                    items: Sequence[SnappedRegion] = ()) -> list[SnappedRegion]:
    """A window in front that was not, however little of the screen changed: another app's (the
    step left the app or came back to it: an app's dialog replaced by the system's permission
    dialog in the same place, the permission controller answered), or a floating window of the app
    that came or went with no scrim (a popup menu: the dump then holds the popup alone, the screen
    behind takes no touch until it closes). Issue 33 found these on real apps judged as the item's
    change only. A new screen: its screen-level region follows the item regions. The keyboard's
    window is no app: a field's keyboard coming up keeps the screen. When what changed is compact
    (the item regions cover under half of the screen: a popup, an autofill list closing), the
    screen-level region is the items' extent, not the whole screen: a region is never much larger
    than the visible change it stands for (issue 43); the note still names the new window."""
    old = before_tree() if before_tree is not None and tree is not None else None
    if old is None or tree is None:
        return []
    if _apps(old) != _apps(tree):
        notes.append(f"new window: another app in front ({', '.join(sorted(_apps(tree)))})")
        return [_compact_window(covered, screen, ignored, items)]
    android = old.platform == tree.platform == ANDROID  # an Android dump holds the focused window alone
    went = floating_window(tree, screen) is None
    if android and (floating_window(old, screen) is None) != went:
        notes.append(f"new window: a floating window {'went' if went else 'came'} (its dump holds it alone)")
        return [_compact_window(covered, screen, ignored, items)]
    return []


def _compact_window(covered: Box, screen: Box, ignored: Sequence[Box], items: Sequence[SnappedRegion]) -> SnappedRegion:
    """A new window's screen-level region: the whole screen between the bars, or, when the items that
    changed cover under half of it, their extent (the window's visible change)."""
    extent = Box.union_all(s.region.box for s in items)
    if extent is None or covered_area([s.region.box for s in items]) >= 0.5 * screen.area:
        return _new_window(covered, screen, ignored)
    return _screen_level(extent.clamp(screen.right, screen.bottom), "screen", "new window")


_MOST_REGIONS = 3  # more regions than this for one step are fragments of fewer visual changes (issue 43)
_WHOLE = ("repaint", "screen")  # screen-level regions of a new screen
_FRAGMENT = 0.02  # of the screen: a region this small with no item of its own is a word, a key, an icon
_JOIN_GROWTH = 3.0  # two fragments join only when their joint box is at most this many times the area they cover


def _join_fragments(snapped: list[SnappedRegion], crops: int, screen: Box) -> list[SnappedRegion]:
    """One region per visual change: a step that left more item regions than a report shows crops
    (`crops`, `OracleConfig.max_crops`), down to `_MOST_REGIONS` (each word of a
    repainted list, each key of a redrawn grid, each icon under a fading overlay) joins its
    fragments: regions no item of the tree holds (`container` None: ink with no row, key or node of
    its own; every region without a tree) and smaller than `_FRAGMENT` of the screen, two at a time, the pair whose joint box adds the least area first,
    until the regions are that few or what is left lies apart (a joint box more than `_JOIN_GROWTH`
    times the area its two parts cover: separate changes; a region is never much larger than what
    changed). A region the tree places on its own item (a row, a control, a dialog's box) is that
    item's change and is never joined, nor are the screen-level regions that follow the items (a
    scrim); a step that made a new screen (a repaint, a new window: that region follows the
    items) keeps its items as they are, each a changed item of the new screen. The joined region keeps both raw boxes' extent and names how
    many it holds."""
    screen_level = [s for s in snapped if s.region.kind != "change"]
    if any(s.region.kind in _WHOLE for s in screen_level):
        return snapped  # a new screen: its own region says so, the items are what a reader compares
    items = [s for s in snapped if s.region.kind == "change"]
    if len(items) <= crops:
        return snapped  # few enough to show each: separate items (two rows, a title and a tab) stay apart
    small = _FRAGMENT * screen.area
    loose = [s for s in items if s.region.container is None and s.region.box.area <= small]
    fixed = [s for s in items if not any(s is x for x in loose)]
    room = max(1, _MOST_REGIONS - len(fixed))
    while len(loose) > room:
        best: tuple[int, int, int] | None = None
        for i, j in itertools.combinations(range(len(loose)), 2):
            a, b = loose[i].region.box, loose[j].region.box
            parts = covered_area([a, b])
            added = a.union(b).area - parts
            if added <= (_JOIN_GROWTH - 1) * parts and (best is None or added < best[0]):
                best = (added, i, j)
        if best is None:
            break  # what is left lies apart: separate changes, not fragments of one
        _, i, j = best
        loose[i] = _joined(loose[i], loose[j])
        del loose[j]
    if len(fixed) + len(loose) == sum(s.region.kind == "change" for s in snapped):
        return snapped  # nothing joined or taken
    loose.sort(key=lambda s: -s.strict_pixels)
    return [*fixed, *loose, *screen_level]


def _one_new_screen(snapped: list[SnappedRegion], screen: Box, notes: list[str]) -> list[SnappedRegion]:
    """A new screen judged with no tree (the light tier's call) is one region, its `repaint` or
    `screen` region: with a tree its items are the tree's containers, what a reader compares; without
    one they are the ink of each word and picture of the new page (up to 25 slivers on real apps,
    issue 43), all inside the screen-level region, which is what a person sees change. Without a
    tree, more regions than `_MOST_REGIONS` left after joining whose extent is half of the screen
    or more are such a page too (its changed boxes fill less than half of it: rows of text on a
    plain background), given its `repaint` region. An item outside the screen-level region stays,
    and so does every item when none is certain (the screen-level region must not make a step that
    only flickered `changed`), or when a dialog's scrim is a region (the dialog's box says more)."""
    items = [s for s in snapped if s.region.kind == "change"]
    if not any(not s.uncertain for s in items):
        return snapped
    whole = [s for s in snapped if s.region.kind in _WHOLE]
    if not whole:
        extent = Box.union_all(s.region.box for s in items)
        if len(items) < len(snapped) or len(items) <= _MOST_REGIONS or extent is None \
                or extent.area < DIM_FRACTION * screen.area:
            return snapped
        notes.append(f"repaint: {len(items)} changes over {extent.area / screen.area:.0%} of the screen")
        whole = [_screen_level(extent, "repaint", "repainted area")]
        snapped = [*snapped, *whole]
    return [s for s in snapped if s.region.kind != "change"
            or not any(w.region.box.contains(s.region.box) for w in whole)]


def _joined(a: SnappedRegion, b: SnappedRegion) -> SnappedRegion:
    count = sum(int(_joined_count(r.region)) for r in (a, b))
    fraction = (a.region.changed_fraction * a.region.raw.area + b.region.changed_fraction * b.region.raw.area) / max(
        1, a.region.raw.area + b.region.raw.area)
    region = Region(a.region.raw.union(b.region.raw), a.region.box.union(b.region.box), f"{count} changes joined",
                    fraction, None)
    return SnappedRegion(region, a.strict_pixels + b.strict_pixels, a.uncertain and b.uncertain)


def _joined_count(region: Region) -> int:
    label = region.container or ""
    head, _, tail = label.partition(" ")
    return int(head) if tail == "changes joined" and head.isdigit() else 1


def _apps(tree: UITree) -> frozenset[str]:
    """The packages of a dump's top-level windows but the keyboard's."""
    packages = {c.package for c in tree.root.children if c.package and not is_ime_package(c.package)}
    return frozenset(packages or ({tree.root.package} if tree.root.package else set()))


def _bars_behind_a_window(tree: UITree | None, before_tree: Callable[[], UITree | None] | None, screen: Box,
                          ignored: Sequence[Box]) -> list[Box]:
    """A real phone's dump of a dialog holds the dialog's window alone: it names no navigation bar,
    yet the bar is still drawn, its buttons redrawn as the dialog takes focus (three crops of Back,
    Home and Recents, issue 33). The bars the before-screen names in the lower half are kept out too."""
    if tree is None or before_tree is None or floating_window(tree, screen) is None:
        return []
    if any(b.top >= screen.height // 2 and b.width >= 0.9 * screen.width for b in ignored):
        return []  # the after-tree named its own
    old = before_tree()
    if old is None or floating_window(old, screen) is not None:
        return []
    return [b for b in status_bar_boxes(old, screen.width, screen.height) if b.top >= screen.height // 2]


def _windows(tree: UITree | None, screen: Box) -> tuple[object, ...]:
    """What identifies the screen's windows in a dump: each top-level window's package and, for a
    floating one, its box (an app's page changing inside its window keeps this the same)."""
    if tree is None:
        return ()
    window = floating_window(tree, screen)
    packages = tuple(sorted({c.package for c in tree.root.children if c.package} or {tree.root.package}))
    return packages, tuple(window.bounds.as_list()) if window is not None and window.bounds is not None else None


def _focused_editables(tree: UITree | None) -> list[UINode]:
    """Focused text fields: where a blinking cursor is expected."""
    if tree is None:
        return []
    return [
        node
        for node in tree.nodes()
        if node.focused and node.bounds is not None and (node.is_editable
                                                          or any(hint in node.cls for hint in _EDITABLE_HINTS))
    ]


@dataclass
class _WalkedTree(UITree):
    """A tree whose nodes are listed once for one compare: the bars, the transient shapes, snapping,
    the dialogs and the focused fields each walk the whole tree, a Python loop over every node."""

    walked: list[UINode] = field(default_factory=list, repr=False)

    def nodes(self) -> Iterator[UINode]:
        return iter(self.walked)


def _walked(tree: UITree | None) -> UITree | None:
    """`tree` with its nodes listed once (the same nodes, the same order), for the length of one compare."""
    if tree is None or isinstance(tree, _WalkedTree):
        return tree
    walked = _WalkedTree(**{f.name: getattr(tree, f.name) for f in fields(UITree)})
    walked.walked = list(tree.nodes())
    return walked


def _dim_inputs(overlay: Overlay | None, ignored: list[Box], scale: int,
                shape: tuple[int, ...]) -> tuple[tuple[int, int, int, int] | None, list[Box]]:
    """(where the gain is not read, what the residual sets aside) for a dim around `overlay`: the
    dialog's box when the tree gives it, nothing when the dialog is to be found from the pixels
    (no dialog node, or a dim layer with no content node)."""
    if overlay is None or overlay.layer and overlay.content is None:
        return None, ignored
    return to_small(overlay.box, scale, shape), [*ignored, overlay.box]


def _read_once(source: Callable[[], UITree | None] | None) -> Callable[[], UITree | None] | None:
    """`before_tree` read at most once a compare (its first read as it was), its nodes listed once."""
    if source is None:
        return None
    read: list[UITree | None] = []

    def before_tree() -> UITree | None:
        if not read:
            read.append(_walked(source()))
        return read[0]

    return before_tree


def _where(frame: Frame) -> str:
    return f" ({frame.source})" if frame.source else ""


_PIXEL_DIALOG = (0.02, 0.7)  # share of the screen a dialog found from the pixels may cover


def _dialog_shaped(box: Box, others: Sequence[Box], screen: Box) -> bool:
    """Whether the one area that kept its brightness under a global dim reads as a dialog: a
    compact box (2-70% of the screen) holding most of what did not follow the scrim. A theme switch
    or a new page leaves many scattered areas instead."""
    low, high = _PIXEL_DIALOG
    if not low * screen.area <= box.area <= high * screen.area:
        return False
    rest = sum(other.area for other in others if not box.contains(other))
    return rest <= 0.5 * box.area
