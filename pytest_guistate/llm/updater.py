"""`LLMStateUpdater`: TSR's U as one tool-use call returning the three views as schema-valid JSON.

It wraps the offline updater: the deterministic update always runs first, and the model is asked
only when it is worth it (`activation="on_demand"`, the default): the oracle was uncertain or saw
no change without confirmation, a milestone boundary was crossed, or the step was an EXCEPTION
(stale-screen episode, failure, error). `activation="always"` calls it every step, as TSR did.
The model's views are merged as guidance: its facts are added, its next focus replaces the
offline one, and it may complete only planned milestones *without* a check (those with a check are
decided by the screen alone: the screen wins).
"""

from __future__ import annotations

import json
from typing import Any

from pytest_guistate.core.observation import Observation
from pytest_guistate.core.oracle_types import Transition
from pytest_guistate.core.records import StepRecord
from pytest_guistate.core.state import Fact, TaskState
from pytest_guistate.core.updater import OfflineUpdater, StateUpdater
from pytest_guistate.llm.client import LLMClient
from pytest_guistate.llm.instructions import UPDATER_SYSTEM, system_blocks
from pytest_guistate.llm.prompt import (
    downscale_png,
    element_lines,
    elements_text,
    image_block,
    section,
    shown_image,
)
from pytest_guistate.llm.screen_memory import CropMemory
from pytest_guistate.llm.tools import UPDATER_TOOL, ToolInputError, validate

__all__ = ["LLMStateUpdater", "should_activate"]


def should_activate(previous: TaskState, offline: TaskState, record: StepRecord, transition: Transition | None) -> str:
    """Why the model should be asked now, every reason that holds ("" = it need not be).

    All reasons are named, not the first: a milestone reached inside a stale-screen episode is
    both an exception and a boundary, and which step a late redraw lands on must not hide either.
    """
    verdict = transition.verdict if transition is not None else record.verdict
    reasons: list[str] = []
    if record.episode or record.outcome in ("failed", "refreshed", "retried") or record.error:
        reasons.append("exception")
    if verdict == "uncertain" or (verdict == "no_change" and not record.confirmed):
        reasons.append("oracle uncertain")
    if len(offline.completed) != len(previous.completed):
        reasons.append("milestone boundary")
    return ", ".join(reasons)


class LLMStateUpdater:
    """A `StateUpdater`. `errors` counts model answers that could not be used (kept offline state)."""

    def __init__(self, llm: LLMClient, *, activation: str = "on_demand", offline: StateUpdater | None = None,
                 whole_frames: bool = False, frame_divisor: float = 3.0) -> None:
        if activation not in ("on_demand", "always"):
            raise ValueError(f"activation must be 'on_demand' or 'always', got {activation!r}")
        self.llm = llm
        self.activation = activation
        self.offline = offline or OfflineUpdater()
        self.whole_frames = whole_frames  # TSR-faithful: before and after frames instead of crops
        self.frame_divisor = frame_divisor
        self.calls = 0
        self.errors: list[str] = []
        self.reasons: list[str] = []

    def update(self, state: TaskState, record: StepRecord, before: Observation | None, after: Observation | None,
               transition: Transition | None) -> TaskState:
        new = self.offline.update(state, record, before, after, transition)
        reason = "always" if self.activation == "always" else should_activate(state, new, record, transition)
        if not reason:
            return new
        self.reasons.append(f"step {record.index}: {reason}")
        answer = self._ask(state, record, before, after, transition)
        if answer is not None:
            self._merge(new, answer, record, after)
        return new

    def _ask(self, state: TaskState, record: StepRecord, before: Observation | None, after: Observation | None,
             transition: Transition | None) -> dict[str, Any] | None:
        info = {"action": record.name, "outcome": record.outcome, "confirmed": record.confirmed,
                "verdict": transition.verdict if transition is not None else record.verdict,
                "expect": record.expect, "regions": [r.get("container") or r.get("box") for r in record.regions]}
        content: list[dict[str, Any]] = [section("instruction", state.goal), section("task_state", state.to_json()),
                                         section("transition", json.dumps(info))]
        if after is not None and after.tree is not None:
            _, scale = shown_image(after.frame, self.frame_divisor)
            content.append(section("elements", elements_text(element_lines(after.tree, scale))))
        if self.whole_frames:
            for label, obs in (("before", before), ("after", after)):
                if obs is not None:
                    png, _ = downscale_png(obs.frame.png, 1.0)
                    content += [{"type": "text", "text": f"Screenshot {label} the action:"}, image_block(png)]
        else:
            memory = CropMemory(2, 0)
            memory.add(record.index, transition)
            content += memory.blocks()
        self.calls += 1
        message = self.llm.create("updater", system=system_blocks(UPDATER_SYSTEM, cache=True), tools=[UPDATER_TOOL],
                                  messages=[{"role": "user", "content": content}],
                                  tool_choice={"type": "tool", "name": UPDATER_TOOL["name"]}, step=record.index)
        uses = [b for b in message.content if b.type == "tool_use"]
        if not uses:
            self.errors.append(f"step {record.index}: no update_task_state call ({message.stop_reason})")
            return None
        answer = uses[0].input if isinstance(uses[0].input, dict) else {}
        try:
            validate(answer, UPDATER_TOOL["input_schema"], "update_task_state input")
        except ToolInputError as exc:
            self.errors.append(f"step {record.index}: {exc}")
            return None
        return dict(answer)

    def _merge(self, new: TaskState, answer: dict[str, Any], record: StepRecord, after: Observation | None) -> None:
        app = after.package if after is not None else ""
        for key, value in answer["summary"]["facts"].items():
            if key not in new.facts:
                new.facts[key] = Fact(key, value, f"updater step {record.index}", record.index, app)
        for name in answer["tracker"]["completed"]:
            milestone = new.milestone(name)
            # milestones with a check are decided by the screen alone; the model may only complete
            # the ones nothing else can verify
            if milestone is not None and milestone.check is None and not new.is_done(name):
                new.complete(name, "llm", record.index)
        focus = answer["focus"]
        new.focus.next_focus = str(focus["next_focus"])
        effect = focus.get("last_action_effect")
        if effect == "uncertain" and new.focus.verdict == "changed":
            new.focus.verdict = "uncertain"  # the model doubts a visible change: keep the doubt visible
