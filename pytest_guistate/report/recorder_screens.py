"""The screens part of `ArtifactRecorder`: the password boxes of every observed screen, so bytes
put later (frames, crops) are filled wherever a secret may show.

Boxes are keyed by the PNG's digest; a step's crop takes the boxes of the screens that step
observed after its action (issue 23: a login screen's password box blacked out the next screens'
crops), other bytes that are no frame we saw those of the latest screens. At light
(`defer_redaction`, issue 12) a screen's tree is read only when something is put, or at once when
the screen before it had a secure field (it may still show one); a screen that moved on unread is
remembered as unknown and filled whole if ever put, its crops too.
"""

from __future__ import annotations

from typing import Any

from pytest_guistate.core.artifact_names import crop_step
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import TreeExpired
from pytest_guistate.report.images import image_size
from pytest_guistate.report.placement import digest
from pytest_guistate.report.recorder_protocols import CanRecord

__all__ = ["ScreensMixin"]


class ScreensMixin(CanRecord):
    """Observed screens and their password boxes (set up by `ArtifactRecorder.__init__`)."""

    screen_size: tuple[int, int] | None
    defer_redaction: bool
    _screen_boxes: dict[str, list[Box]]  # frame digest -> password boxes (insertion = time)
    _last_observed: tuple[bytes, list[Box]] | None
    _deferred: list[Any]
    _unknown: dict[str, None]
    _last_tree: Any

    def on_observation(self, observation: Any) -> None:
        """Remember the password boxes of an observed screen, keyed by its PNG bytes.

        The session does not call this itself: wrap its screen in `RecordingScreen` so every
        `observe()` passes through here before any frame of that screen can be put. At light
        (`defer_redaction`) a screen whose tree is not read yet and can still be read later waits:
        its boxes are taken when something is put (the tree is fetched then, while current), or
        once its tree was read; a screen that moved on unread is remembered as unknown, and its
        bytes, if ever put, are filled whole (never an unredacted frame)."""
        frame = getattr(observation, "frame", None)
        if frame is None:
            return
        self._settle_deferred(resolve=False)
        last = self._last_observed
        if not getattr(observation, "tree_fetched", True) and last is not None and last[0] == frame.png:
            boxes = list(last[1])  # the same pixels as the screen before: its password boxes (no page source)
            tree = None  # the viewer keeps the previous screen's tree: the same pixels
        elif (self.defer_redaction and not getattr(observation, "tree_fetched", True)
              and getattr(observation, "tree_available", None) is not None
              and not (last is not None and last[1])):  # after a secure field: read now, never guess
            self._deferred.append(observation)
            if self.screen_size is None:
                self.screen_size = image_size(frame.png)
            return
        else:
            # password fields + the redact hook's (DESIGN §8); reads the tree, fetched now if on demand:
            # never write unredacted
            boxes = self.redactor.screen_boxes(observation)
            tree = getattr(observation, "tree", None)  # already fetched above
        self._note_observed(frame, boxes, tree)

    def _note_observed(self, frame: Any, boxes: list[Box], tree: Any) -> None:
        self._last_observed = (frame.png, boxes)
        if self.screen_size is None:
            self.screen_size = image_size(frame.png)
        self._submit("on_observation", self._observed, frame, boxes, tree)

    def _settle_deferred(self, *, resolve: bool) -> None:
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
            if tree is None and not observation.tree_fetched:
                self._unknown[digest(observation.frame.png)] = None
                while len(self._unknown) > 64:
                    self._unknown.pop(next(iter(self._unknown)))
                # remembered as all secret: its frame and the crops cut from it are filled whole
                self._submit("on_observation", self._observed, observation.frame,
                             [Box(0, 0, *image_size(observation.frame.png))], None)
                continue
            self._note_observed(observation.frame, self.redactor.screen_boxes(observation), tree)

    def _observed(self, frame: Any, boxes: list[Box], tree: Any = None) -> None:
        if tree is not None:
            self._last_tree = tree  # the latest screen's tree: the after-screen when its step is recorded
        key = self.frames.remember(frame, boxes)
        if tree is not None and key in self._unknown:  # the same pixels, read now: no longer unknown
            self._unknown.pop(key)
            self.frames.resolve(key, boxes)
        self._screen_boxes.pop(key, None)
        self._screen_boxes[key] = boxes
        while len(self._screen_boxes) > 64:
            self._screen_boxes.pop(next(iter(self._screen_boxes)))

    def _boxes_for(self, data: bytes, key: str, name: str = "", cut_from: Any = None) -> list[Box]:
        """The boxes to fill on put bytes whose digest is `key` (`FrameStore.find`), named `name`,
        cut from the observed frame `cut_from` when the caller knows it."""
        boxes = self._screen_boxes.get(key)
        if boxes is None and key in self._unknown:  # a screen whose tree nobody can read any more
            boxes = [Box(0, 0, *image_size(data))]
        if boxes is None and cut_from is not None:  # a crop of a known screen: that screen's boxes
            boxes = self.frames.boxes_of(cut_from)
        step = crop_step(name)
        if boxes is None and step is not None:  # a step's crop: the screens it was cut from, no other's
            boxes = self.frames.after_boxes(step)
        if boxes is None:  # not a frame we saw: a crop of the latest screens (after-frame, probe)
            boxes = [b for recent in list(self._screen_boxes.values())[-3:] for b in recent]
        return boxes
