"""`ObservedScreens`: the password boxes of every screen a test observed, so bytes put later
(frames, crops) are filled wherever a secret may show. `ArtifactRecorder` holds one and asks it
which boxes apply to the bytes it is handed.

Boxes are keyed by the PNG's digest; a step's crop takes the boxes of the screens that step
observed after its action (issue 23: a login screen's password box blacked out the next screens'
crops), a crop whose frame the caller names takes that frame's, other bytes that are no frame we
saw those of the latest screens. At light (`defer`, issue 12) a screen's tree is read only when
something is put, or at once when the screen before it had a secure field (it may still show one);
a screen that moved on unread is remembered as unknown and filled whole if ever put, its crops too.
At standard and full (`step_trees`) every screen's tree is read at once, except a settle poll's (issue 38)
and a step's after-screen (issue 42: the step loop reads it next, once the oracle's pixels have started):
they wait the same way, for the step loop to read them (the screen a settle ends on is judged), a put, or
the step's close.

The caller's thread notes what is observed (`observe`, `settle`); what the boxes are kept for runs
on the recorder's writer, in order with the puts (`record`, `boxes_for`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_guistate.core.artifact_names import crop_step
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import TreeExpired
from pytest_guistate.report.frame_store import FrameStore
from pytest_guistate.report.images import image_size
from pytest_guistate.report.placement import digest
from pytest_guistate.report.redact import Redactor

__all__ = ["ObservedScreens"]

KEPT = 64  # screens (and unknown screens) remembered, oldest dropped first

# the recorder's `_submit`: runs a job on its writer, in event order
Submit = Callable[..., None]


class ObservedScreens:
    """The screens a test observed and their password boxes."""

    def __init__(self, redactor: Redactor, frames: FrameStore, submit: Submit, *, defer: bool,
                 step_trees: bool = False) -> None:
        self.redactor = redactor
        self.frames = frames
        self.defer = defer  # light and off: no page source per step for redaction (issue 12)
        # standard and full: every screen read at once, except a settle poll (issue 38): it waits for
        # its tree to be read (the screen a settle ends on is judged), a put, or the step's close
        self.step_trees = step_trees
        self.last_tree: Any = None  # the latest screen's tree: the after-screen when its step is recorded
        self._submit = submit
        self._boxes: dict[str, list[Box]] = {}  # frame digest -> password boxes (insertion = time)
        self._last: tuple[bytes, list[Box]] | None = None  # PNG and password boxes of the last screen
        self._deferred: list[Any] = []  # observations whose tree is not read yet (light)
        self._unknown: dict[str, None] = {}  # digests (oldest first) of screens that moved on before their tree was read

    def observe(self, observation: Any, *, poll: bool = False) -> None:
        """Remember the password boxes of an observed screen, keyed by its PNG bytes.

        At light (`defer`) a screen whose tree is not read yet and can still be read later waits:
        its boxes are taken when something is put (the tree is fetched then, while current), or
        once its tree was read; a screen that moved on unread is remembered as unknown, and its
        bytes, if ever put, are filled whole (never an unredacted frame). At standard and full a
        settle `poll` waits the same way (no step keeps a poll's bytes unless it read its tree)."""
        frame = observation.frame
        self.settle(resolve=False)
        last = self._last
        if not getattr(observation, "tree_fetched", True) and last is not None and last[0] == frame.png:
            boxes = list(last[1])  # the same pixels as the screen before: its password boxes (no page source)
            tree = None  # the viewer keeps the previous screen's tree: the same pixels
        elif ((self.defer or (self.step_trees and poll)) and not getattr(observation, "tree_fetched", True)
              and getattr(observation, "tree_available", None) is not None
              # after a secure field, light reads now (its step may never read the tree: never guess);
              # a poll at standard and full is superseded unread unless the step loop reads it
              and ((self.step_trees and poll) or not (last is not None and last[1]))):
            self._deferred.append(observation)
            return
        else:
            # password fields + the redact hook's (hookspecs.py); reads the tree, fetched now if on demand:
            # never write unredacted
            boxes = self.redactor.screen_boxes(observation)
            tree = getattr(observation, "tree", None)  # already fetched above
        self._note(frame, boxes, tree)

    def _note(self, frame: Any, boxes: list[Box], tree: Any) -> None:
        self._last = (frame.png, boxes)
        self._submit("on_observation", self.record, frame, boxes, tree)

    def step_closed(self) -> None:
        """Standard and full: before a step is recorded, the screens it left are taken (a tree read
        now if still current and unread), so the journal's tree after the step is its own screen's."""
        if self.step_trees:
            self.settle(resolve=True)

    def settle(self, *, resolve: bool) -> None:
        """Deferred screens (light): boxes from a tree already read, or (`resolve`, before a put)
        fetched now while still current; a screen that moved on unread becomes unknown."""
        waiting, self._deferred = self._deferred, []
        for observation in waiting:
            if not observation.tree_fetched and observation.tree_available and not resolve:
                self._deferred.append(observation)
                continue
            try:
                tree = observation.tree if observation.tree_fetched or observation.tree_available else None
            except TreeExpired:
                tree = None
            except Exception:  # noqa: BLE001 - a hung or gone device: the step that read it met the error already;
                tree = None  # its screen is unknown (filled whole), and the report is still built
            if tree is None and not observation.tree_fetched:
                self._unknown[digest(observation.frame.png)] = None
                while len(self._unknown) > KEPT:
                    self._unknown.pop(next(iter(self._unknown)))
                # remembered as all secret: its frame and the crops cut from it are filled whole
                self._submit("on_observation", self.record, observation.frame,
                             [Box(0, 0, *image_size(observation.frame.png))], None)
                continue
            self._note(observation.frame, self.redactor.screen_boxes(observation), tree)

    def record(self, frame: Any, boxes: list[Box], tree: Any = None) -> None:
        """On the writer: keep a screen's boxes (and its frame, in `FrameStore`) for the puts after it."""
        if tree is not None:
            self.last_tree = tree
        key = self.frames.remember(frame, boxes)
        if tree is not None and key in self._unknown:  # the same pixels, read now: no longer unknown
            self._unknown.pop(key)
            self.frames.resolve(key, boxes)
        self._boxes.pop(key, None)
        self._boxes[key] = boxes
        while len(self._boxes) > KEPT:
            self._boxes.pop(next(iter(self._boxes)))

    def boxes_for(self, data: bytes, key: str, name: str = "", cut_from: Any = None) -> list[Box]:
        """The boxes to fill on put bytes whose digest is `key` (`FrameStore.find`), named `name`,
        cut from the observed frame `cut_from` when the caller knows it."""
        boxes = self._boxes.get(key)
        if boxes is None and key in self._unknown:  # a screen whose tree nobody can read any more
            boxes = [Box(0, 0, *image_size(data))]
        if boxes is None and cut_from is not None:  # a crop of a known screen: that screen's boxes
            boxes = self.frames.boxes_of(cut_from)
        step = crop_step(name)
        if boxes is None and step is not None:  # a step's crop: the screens it was cut from, no other's
            boxes = self.frames.after_boxes(step)
        if boxes is None:  # not a frame we saw: a crop of the latest screens (after-frame, probe)
            boxes = [b for recent in list(self._boxes.values())[-3:] for b in recent]
        return boxes
