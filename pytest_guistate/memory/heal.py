"""Healing: when a locator finds nothing, find the function's element by its remembered looks.

Order (issue 7): rank the function's entries (this app first, then recency/frequency), search the
*current* frame for each variant (`match.search`, only inside actionable elements), snap the best
hit to the element that contains it and tap that element's centre - a stored position is never a
coordinate. A heal is refused when the best hit is below threshold (the function is absent), when
two different elements match about equally (ambiguous), or when the locator names an instance
("Carol") and no match sits next to it (a neighbour's button). When the looks find nothing and the
element was a text field of this app, `role.py` may pick the screen's only text input if its place
and text-free frame agree (a rewritten placeholder). The caller must then accept the
heal only if the step's expected effect appears (`verify.py`); `confirm` learns the new look.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.uitree import UINode
from pytest_guistate.memory.learn import LearnResult, crop_bgr, decode_png, learn_patch
from pytest_guistate.memory.locator import Locator, context_tokens, function_key
from pytest_guistate.memory.match import DEFAULT_SCALES, Hit, Template, content_box, refine, scaled_templates, search
from pytest_guistate.memory.rank import RankPolicy, rank
from pytest_guistate.memory.regions import Target, actionable_regions, context_words, target_for
from pytest_guistate.memory.role import RolePolicy, heal_by_role
from pytest_guistate.memory.store import MemoryStore, PatchEntry

__all__ = ["HealPolicy", "HealResult", "Healer"]


@dataclass(frozen=True)
class HealPolicy:
    """`threshold`: minimum edge correlation of a variant's content (measured on the sim: restyled
    matches 0.87-0.95, other labels and glyphs 0.45-0.72). `ambiguity_margin`: a runner-up on a
    different element this close to the best makes the heal ambiguous."""

    threshold: float = 0.8
    coarse_threshold: float = 0.55  # half-resolution hits worth re-scoring at full resolution
    ambiguity_margin: float = 0.06
    divisor: int = 2
    scales: tuple[float, ...] = DEFAULT_SCALES
    rank: RankPolicy = field(default_factory=lambda: RankPolicy(top_n=8, top_k=3))
    cross_app: bool = True  # another app's variants of the same function may help (ranked lower)
    role: RolePolicy = field(default_factory=RolePolicy)  # text fields: role + place + frame (`role.py`)


@dataclass
class HealResult:
    """What a heal attempt found. Only `status == "healed"` may be acted on."""

    status: str  # healed | no_memory | no_match | ambiguous | absent_instance
    locator: str
    function: str
    app: str
    reason: str
    score: float = 0.0
    box: Box | None = None  # the element to act on, in the current frame
    node: UINode | None = None
    entry: PatchEntry | None = None  # the remembered variant that matched
    match_png: bytes = b""  # crop of the current frame at `box`
    candidates: list[tuple[float, Box]] = field(default_factory=list)
    elapsed_ms: float = 0.0
    cue: str = "looks"  # what found the element: "looks" (label/glyph) or "role" (the only text field)

    @property
    def ok(self) -> bool:
        return self.status == "healed"

    @property
    def point(self) -> tuple[int, int] | None:
        return self.box.center if self.box is not None and self.ok else None

    @property
    def variant_png(self) -> bytes:
        return self.entry.png if self.entry is not None else b""

    def title(self) -> str:
        """The line for anchors, the summary and the terminal."""
        if self.ok:
            return f"locator {self.locator} healed by memory - update it"
        return f"locator {self.locator} not healed ({self.status})"

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "locator": self.locator, "function": self.function, "app": self.app,
                "reason": self.reason, "score": round(self.score, 4), "box": self.box.as_list() if self.box else None,
                "entry": self.entry.summary() if self.entry else None, "elapsed_ms": round(self.elapsed_ms, 2), "cue": self.cue,
                "candidates": [[round(s, 4), b.as_list()] for s, b in self.candidates[:5]]}


class Healer:
    """Heals locators from one `MemoryStore`; also the single place the Device reports successes to."""

    def __init__(self, store: MemoryStore, policy: HealPolicy = HealPolicy(),
                 clock: Callable[[], float] = time.time) -> None:
        self.store, self.policy, self.clock = store, policy, clock
        self._contents: dict[int, np.ndarray] = {}
        self._scaled: dict[tuple[int, float], list[Template]] = {}

    # -- learning ------------------------------------------------------------------------------
    def learn(self, before: Observation, locator: Locator | None, element_box: Box, function: str | None = None,
              *, app: str = "", version: str = "", test: str = "", step: str = "") -> LearnResult:
        return learn_patch(self.store, before, element_box, locator=locator, function=function, app=app,
                           app_version=version, test=test, step=step)

    def confirm(self, result: HealResult, before: Observation, *, version: str = "", test: str = "",
                step: str = "") -> LearnResult:
        """The step's expected effect appeared: count the use and keep the new look as a variant."""
        if not result.ok or result.box is None:
            raise ValueError(f"only a healed result can be confirmed, got status {result.status!r}")
        if result.entry is not None:
            self.store.touch([result.entry.id])
        locator = Locator.parse(result.locator)
        named = None if result.function.startswith("locator:") else result.function
        return learn_patch(self.store, before, result.box, locator=locator, function=named, app=result.app,
                           app_version=version, test=test, step=step)

    # -- healing -------------------------------------------------------------------------------
    def heal(self, observation: Observation, locator: Locator, function: str | None = None, *,
             app: str | None = None, instance: frozenset[str] | None = None) -> HealResult:
        """`instance`: the words that pin which element is meant, when the caller knows them better
        than the locator's own words (an LLM step's target: the neighbours it was cached with)."""
        started = time.perf_counter()
        key, app = function_key(locator, function), app or observation.package
        result = self._heal(observation, locator, function, key, app, instance)
        result.elapsed_ms = (time.perf_counter() - started) * 1000
        return result

    def _heal(self, observation: Observation, locator: Locator, function: str | None, key: str,
              app: str, instance: frozenset[str] | None = None) -> HealResult:
        def refuse(status: str, reason: str, **extra: Any) -> HealResult:
            return HealResult(status, str(locator), key, app, reason, **extra)

        entries = self._ranked(key, app, observation.frame.size)
        if not entries:
            return refuse("no_memory", f"nothing remembered for {key!r} (learn it on a passing run first)")
        frame = observation.frame
        regions = actionable_regions(observation.tree, frame.size)
        if not regions:
            return refuse("no_match", "nothing actionable on screen")
        best_entry, hits = self._search(entries, frame, regions)
        top_score = max((h.score for h in hits), default=0.0)
        cue, why = "looks", ""
        if hits:
            targets = self._targets(hits, regions, observation)
        else:  # a rewritten placeholder: a text field is still its role, place and frame
            role = heal_by_role(entries, observation, app, self.policy.role)
            if role.target is None:
                return refuse(role.status if role.status == "ambiguous" else "no_match",
                              f"no variant of {key!r} matched above {self.policy.threshold} ({len(entries)} "
                              f"variant(s) tried); by role: {role.reason}", entry=best_entry, score=role.score)
            targets, best_entry, top_score, cue, why = [role.target], role.entry, role.score, "role", role.reason
        tokens = set(instance) if instance else context_tokens(locator, function)
        if tokens and observation.tree is not None:
            tokens &= context_words(observation.tree, None)  # a word shown nowhere cannot pin an instance
        if tokens and observation.tree is not None:
            near = [t for t in targets if tokens & context_words(observation.tree, t.box)]
            if not near:
                return refuse("absent_instance", f"{key!r} matched {len(targets)} element(s), none next to "
                              f"{sorted(tokens)}: not tapping a neighbour", score=top_score, entry=best_entry,
                              candidates=[(t.score, t.box) for t in targets])
            targets = near
        best = targets[0]
        candidates = [(t.score, t.box) for t in targets]
        if len(targets) > 1 and targets[1].score >= best.score - self.policy.ambiguity_margin:
            return refuse("ambiguous", f"{len(targets)} elements match {key!r} about equally "
                          f"({best.score:.2f} vs {targets[1].score:.2f})", score=best.score, entry=best_entry,
                          candidates=candidates)
        crop = crop_bgr(frame.bgr, best.box)
        match_png = cv2.imencode(".png", crop)[1].tobytes() if crop is not None else b""
        reason = why or f"variant {best_entry.id if best_entry else '?'} matched at {best.score:.2f}"
        return HealResult("healed", str(locator), key, app, reason, score=best.score, box=best.box, node=best.node,
                          entry=best_entry, match_png=match_png, candidates=candidates, cue=cue)

    def _ranked(self, key: str, app: str, size: tuple[int, int]) -> list[PatchEntry]:
        def relevance(entry: PatchEntry) -> float:
            same_app = 1.0 if entry.app == app else (0.5 if self.policy.cross_app else 0.0)
            same_screen = 0.1 if entry.screen == size else 0.0
            return same_app + same_screen if same_app else 0.0

        return rank(self.store.patches(key), relevance, self.clock(), self.policy.rank)

    def _search(self, entries: list[PatchEntry], frame: Frame, regions: list[Target]) -> tuple[PatchEntry | None, list[Hit]]:
        """Variants in rank order: a coarse pass at 1/divisor, then promising hits re-scored at full
        resolution; the first variant with a hit above the threshold wins."""
        divisor = self.policy.divisor
        small = frame.grey(divisor)
        best: tuple[float, PatchEntry | None, list[Hit]] = (-1.0, None, [])
        for entry in entries:
            grey = self._content(entry)
            base = frame.size[0] / entry.screen[0]
            key = (entry.id, round(base, 4))
            templates = self._scaled.get(key)
            if templates is None:
                templates = self._scaled[key] = scaled_templates(grey, self.policy.scales, base / divisor)
            coarse = search(small, divisor, templates, [r.box for r in regions])
            fine = [refine(frame.bgr, grey, h, base) for h in coarse if h.score >= self.policy.coarse_threshold]
            hits = [h for h in fine if h.score >= self.policy.threshold]
            top = max((h.score for h in fine), default=-1.0)
            if top > best[0]:
                best = (top, entry, hits)
            if hits:
                break
        return best[1], best[2]

    def _content(self, entry: PatchEntry) -> np.ndarray:
        """The variant's label/glyph in grey (cached: entries never change once stored)."""
        cached = self._contents.get(entry.id)
        if cached is None:
            patch = decode_png(entry.png)
            x0, y0, x1, y1 = content_box(patch)
            cached = self._contents[entry.id] = cv2.cvtColor(patch[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY)
        return cached

    def _targets(self, hits: list[Hit], regions: list[Target], observation: Observation) -> list[Target]:
        """Each hit snapped to the smallest actionable element under its centre; best per element."""
        by_box: dict[Box, Target] = {}
        for hit in hits:
            target = target_for(hit, regions[hit.region], observation.tree)
            kept = by_box.get(target.box)
            if kept is None or target.score > kept.score:
                by_box[target.box] = target
        return sorted(by_box.values(), key=lambda t: -t.score)
