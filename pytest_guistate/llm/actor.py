"""The actor loop: `run(session, actuator, instruction, llm=...)` (issue 5, TSR's pi with S_t).

Each turn the model sees the instruction, the current frame downscaled by `frame_divisor`
(tap x,y answers are mapped back with `ImageScale.to_device`), the last few change *crops* rather
than whole old frames (AGMem: whole-frame memory raised grounding errors), a compact history, the
serialized task state and the UI tree's elements with ids. It answers with one tool call, and every
action runs through `session.perform`, so stale screens are settled/refreshed by the plugin.

Idempotency (what may be repeated by the step loop): taps on controls whose label or resource id
reads like delete/remove/buy/pay/checkout/confirm/order/send/submit/post/log in/add to cart/ok/yes,
taps on toggles (checkable), taps on points with no known element, typing and back are
non-idempotent; other taps, swipes, waits, refreshes and home are idempotent.

The tools depend on the platform (`tools.actor_tools`): iOS has no back key, so there `back` is
the navigation bar's back button or the edge swipe and `home` leaves the app (issue 11). A call
of a tool the platform does not offer goes back to the model as an invalid answer naming it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pytest_guistate.core.checks import Check, gone, visible
from pytest_guistate.core.errors import StepFailed
from pytest_guistate.core.uitree import UINode, UITree
from pytest_guistate.llm.actuator import Actuator, as_actuator
from pytest_guistate.llm.client import LLMClient
from pytest_guistate.llm.errors import LLMError, LLMRunFailed
from pytest_guistate.llm.instructions import actor_system, system_blocks
from pytest_guistate.llm.prompt import (
    ImageScale,
    cap_images,
    element_lines,
    elements_text,
    section,
    shown_image,
)
from pytest_guistate.llm.screen_memory import CropMemory
from pytest_guistate.llm.tools import ToolInputError, actor_tools, unoffered, validate

__all__ = ["ActorConfig", "RunResult", "StepObserver", "Turn", "expect_check", "is_idempotent_tap", "run", "swipe_points"]

_NON_IDEMPOTENT = re.compile(r"\b(delete|remove|buy|purchase|pay|checkout|check out|confirm|order|send|submit|post|"
                             r"publish|transfer|log ?in|sign ?in|sign ?up|add to cart|add_to_cart|ok|yes)\b", re.IGNORECASE)


@dataclass(frozen=True)
class ActorConfig:
    frame_divisor: float = 3.0
    crops: int = 2  # recent change crops shown (AGMem); 0 = none
    whole_frames: int = 0  # previous whole frames shown (the TSR-faithful baseline uses 1)
    history: int = 8
    repairs: int = 1  # invalid answers (malformed input, unknown id) the model may correct, per run
    cache: bool = True
    max_wait_s: float = 5.0
    hints: tuple[str, ...] = ()  # flows that worked before for similar instructions (MAGNET procedural memory)
    history_seed: tuple[str, ...] = ()  # steps already done toward this goal (a cache replay handing over)
    # what a cache replay that missed tells the live actor (the miss, the rest of the cached plan): shown in
    # the first `handover_turns` requests only, since a hint on every request cost more tokens than the
    # live steps the fallback replaced (issue 21); the history and the task state carry it on from there
    handover: tuple[str, ...] = ()
    handover_turns: int = 1


@dataclass
class Turn:
    index: int
    tool: str
    input: dict[str, Any]
    step: int | None = None  # StepRecord.index of the action, when one ran
    outcome: str = ""  # the step's outcome, or what went wrong with the answer
    note: str = ""


@dataclass
class RunResult:
    """How the run ended. `outcome`: done | gave_up | premature_done | max_steps | refusal | max_tokens |
    malformed_tool_input | hallucinated_element | disabled_element | step_failed | api_error. Steps so far are in `turns`
    (and in the session's records)."""

    success: bool
    outcome: str
    summary: str
    turns: list[Turn] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"success": self.success, "outcome": self.outcome, "summary": self.summary,
                "turns": [t.__dict__ for t in self.turns], "usage": self.usage}


def is_idempotent_tap(node: UINode | None) -> bool:
    """See the module docstring: unknown targets and anything commit-like are not repeated."""
    if node is None or node.checked or node.is_checkable:
        return False
    return not _NON_IDEMPOTENT.search(" ".join((node.text, node.content_desc, node.resource_id.rpartition("/")[2])))


def _node_at(tree: UITree, x: int, y: int) -> UINode | None:
    hits = [n for n in tree.nodes() if n.is_tappable and n.bounds is not None and n.bounds.contains_point(x, y)]
    return max(hits, key=lambda n: n.depth) if hits else None


def expect_check(data: Any) -> Check | None:
    """The actor's `expect` argument ({"visible": text} or {"gone": text}) as a check."""
    if not isinstance(data, dict):
        return None
    if data.get("gone"):
        return gone(str(data["gone"]))
    if data.get("visible"):
        return visible(str(data["visible"]))
    return None


def swipe_points(tree: UITree | None, scroller: UINode | None, direction: str,
                 device: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]]:
    """Start and end of a swipe over `scroller` (else the screen's first scrollable, else the screen):
    30% of its size each way from its centre. Shared with the action cache's replay."""
    if scroller is None and tree is not None:
        scroller = next((n for n in tree.nodes() if n.is_scrollable and n.bounds), None)
    box = scroller.bounds if scroller is not None else None
    w, h = device
    left, top, right, bottom = box.as_list() if box is not None else [0, 0, w, h]
    cx, cy = (left + right) // 2, (top + bottom) // 2
    dy, dx = (bottom - top) * 3 // 10, (right - left) * 3 // 10
    return {"up": ((cx, cy + dy), (cx, cy - dy)), "down": ((cx, cy - dy), (cx, cy + dy)),
            "left": ((cx + dx, cy), (cx - dx, cy)), "right": ((cx - dx, cy), (cx + dx, cy))}[direction]


HINTS_PREAMBLE = ("Flows that worked in earlier runs for similar instructions. Hints, not commands: "
                  "the current screen decides.\n")


StepObserver = Callable[["Turn", Any, Any, "UINode | None", bool, list[str]], None]
"""Told of every step that ran: (turn, record, observation decided on, target node, idempotent,
milestones completed before). The action cache records with it (`cache/record.py`)."""


class _Run:
    def __init__(self, session: Any, actuator: Actuator, instruction: str, llm: LLMClient, config: ActorConfig,
                 observer: StepObserver | None = None) -> None:
        self.session, self.actuator, self.instruction, self.llm, self.config = session, actuator, instruction, llm, config
        self.observer = observer
        self.decided_on: Any = None  # the observation of this turn
        self.target: UINode | None = None  # the element this turn's action is aimed at
        self.turns: list[Turn] = []
        self.history: list[str] = list(config.history_seed)
        self.memory = CropMemory(config.crops, config.whole_frames)
        self.repairs = config.repairs
        self.last_error = ""
        self.platform = actuator.platform
        self.tools = actor_tools(self.platform)
        self.schemas = {str(t["name"]): t["input_schema"] for t in self.tools}

    def result(self, success: bool, outcome: str, summary: str) -> RunResult:
        return RunResult(success, outcome, summary, self.turns, self.llm.ledger.totals())

    def prompt(self, observation: Any) -> tuple[list[dict[str, Any]], ImageScale]:
        frame_block, scale = shown_image(observation.frame, self.config.frame_divisor)
        rows = element_lines(observation.tree, scale) if observation.tree is not None else []
        screen = {"app": observation.package, "image": list(scale.shown)}
        content = [section("instruction", self.instruction),
                   section("screen", json.dumps(screen)),
                   section("task_state", self.session.state.to_json()),
                   section("history", "\n".join(self.history[-self.config.history:]) or "(no actions yet)"),
                   *([section("loop_warning", warn)] if (warn := getattr(getattr(self.session, "cycles", None), "warning", "")) else []),
                   *([section("flow_hints", HINTS_PREAMBLE + "\n".join(self.config.hints))] if self.config.hints else []),
                   *([section("handover", "\n".join(self.config.handover))]
                     if self.config.handover and len(self.turns) < self.config.handover_turns else []),
                   section("elements", elements_text(rows))]
        if self.last_error:
            content.append(section("last_error", self.last_error))
        content += self.memory.blocks()
        content += [{"type": "text", "text": "Current screenshot:"}, frame_block]
        return cap_images(content), scale

    def invalid(self, turn: Turn, outcome: str, problem: str) -> RunResult | None:
        """A bad answer: let the model correct it once (`repairs`), else end the run with `outcome`."""
        turn.outcome, turn.note = outcome, problem
        if self.repairs > 0:
            self.repairs -= 1
            self.last_error = f"your previous answer was invalid: {problem}. Answer again with one valid tool call."
            return None
        return self.result(False, outcome, problem)

    def act(self, turn: Turn, tree: UITree | None, scale: ImageScale) -> RunResult | None:
        name, data = turn.tool, turn.input
        for key, value in (data.get("remember") or {}).items():
            self.session.remember(str(key), value, source=f"actor turn {turn.index}")
        if name == "done":
            return self.finish(bool(data["success"]), str(data["summary"]))
        expect = expect_check(data.get("expect"))
        self.target = None
        if name == "tap":
            node: UINode | None = None
            if "element_id" in data:
                node = tree.by_index_path(str(data["element_id"])) if tree is not None else None
                if node is None or node.bounds is None:
                    return self.invalid(turn, "hallucinated_element",
                                        f"element_id {data['element_id']!r} is not in <elements> of this screen")
                if node.is_control and not node.enabled:  # the screen wins: a disabled control ignores a tap
                    return self.invalid(turn, "disabled_element",
                                        f"element_id {data['element_id']!r} ({node.label!r}) is disabled on this "
                                        "screen and cannot react to a tap; do what enables it first")
                x, y = node.bounds.center
            elif "x" in data and "y" in data:
                try:
                    x, y = scale.to_device(data["x"], data["y"])
                except ValueError as exc:
                    return self.invalid(turn, "malformed_tool_input", str(exc))
                node = _node_at(tree, x, y) if tree is not None else None
            else:
                return self.invalid(turn, "malformed_tool_input", "tap needs element_id or both x and y")
            label = f' "{node.label}"' if node is not None else ""
            inside = str(data.pop("_in", "") or "")
            context = f" in: {inside}" if inside else ""
            name_text = f"tap {node.index_path if node is not None else f'({x},{y})'}{label}{context}"
            self.target = node
            return self.perform(turn, name_text, lambda: self.actuator.tap_point(x, y), expect, is_idempotent_tap(node))
        if name == "type_text":
            text = str(data["text"])
            target = tree.by_index_path(str(data["element_id"])) if tree is not None and "element_id" in data else None
            if "element_id" in data and (target is None or target.bounds is None):
                return self.invalid(turn, "hallucinated_element",
                                    f"element_id {data['element_id']!r} is not in <elements> of this screen")
            shown = "•" * len(text) if target is not None and target.is_password else text

            def type_into() -> None:
                if target is not None and target.bounds is not None and not target.focused:
                    self.actuator.tap_point(*target.bounds.center)
                self.actuator.type_focused(text)
            where = f" into {target.index_path} \"{target.label}\"" if target is not None else ""
            self.target = target
            return self.perform(turn, f'type_text "{shown}"{where}', type_into, expect, False)
        if name == "swipe":
            scroller = tree.by_index_path(str(data["element_id"])) if tree is not None and "element_id" in data else None
            start, end = swipe_points(tree, scroller, str(data["direction"]), scale.device)
            return self.perform(turn, f"swipe {data['direction']}", lambda: self.actuator.swipe(*start, *end), None, True)
        if name == "back":
            return self.perform(turn, "back", self.actuator.back, expect, False)
        if name == "home":
            return self.perform(turn, "home", self.actuator.home, expect, True)
        if name == "wait":
            seconds = min(float(data["seconds"]), self.config.max_wait_s)
            return self.perform(turn, f"wait {seconds:g}s", lambda: self.session.clock.sleep(seconds), None, True)
        if name == "refresh":
            return self.perform(turn, "refresh", self.actuator.pull_to_refresh, None, True)
        return self.invalid(turn, "malformed_tool_input", f"unknown tool {name!r}")

    def perform(self, turn: Turn, name: str, action: Any, expect: Check | None, idempotent: bool) -> RunResult | None:
        completed_before = list(self.session.state.completed)
        try:
            with self.session.judging_at_once():  # the record and its transition are read below
                record = self.session.perform(name, action, expect=expect, idempotent=idempotent)
        except StepFailed as exc:
            record = exc.record
            turn.step, turn.outcome = (record.index if record else None), "failed"
            self.history.append(f"{turn.step} {name} -> failed")
            return self.result(False, "step_failed", str(exc).splitlines()[0])
        turn.step, turn.outcome = record.index, record.outcome
        verdict = f", {record.verdict}" if record.verdict else ""
        self.history.append(f"{record.index} {name} -> {record.outcome}{verdict}")
        self.memory.add(record.index, self.session.last_transition)
        self.last_error = ""
        if self.observer is not None:
            self.observer(turn, record, self.decided_on, self.target, idempotent, completed_before)
        return None

    def finish(self, success: bool, summary: str) -> RunResult:
        if not success:
            return self.result(False, "gave_up", summary)
        observation = self.session.observe(settled=True)
        state = self.session.state
        unmet = [m.name for m in state.plan
                 if m.name in state.remaining and m.check is not None and not m.check(observation).ok]
        if unmet:
            return self.result(False, "premature_done",
                               f"the actor reported done, but milestones are not on screen: {unmet} ({summary})")
        return self.result(True, "done", summary)

    def turn(self, index: int) -> RunResult | None:
        observation = self.session.observe(settled=True)  # decide on a finished screen, not mid-load
        self.decided_on = observation
        self.memory.frame(observation.frame)
        content, scale = self.prompt(observation)
        system = system_blocks(actor_system(self.platform), cache=self.config.cache)
        message = self.llm.create("actor", system=system, tools=self.tools, messages=[{"role": "user", "content": content}],
                                  tool_choice={"type": "any"}, step=len(self.session.steps) + 1)
        uses = [b for b in message.content if b.type == "tool_use"]
        texts = " ".join(b.text for b in message.content if b.type == "text").strip()
        if message.stop_reason == "max_tokens":
            self.turns.append(Turn(index, "", {}, outcome="max_tokens", note=texts[:200]))
            return self.result(False, "max_tokens", f"the model hit max_tokens ({self.llm.settings.max_tokens}) "
                                                    "before finishing a tool call; raise the ini guistate_llm_max_tokens")
        if not uses:
            self.turns.append(Turn(index, "", {}, outcome="refusal", note=texts[:200]))
            return self.result(False, "refusal", f"the model answered without a tool call: {texts[:200]!r}")
        use = uses[0]
        turn = Turn(index, use.name, dict(use.input) if isinstance(use.input, dict) else {"_raw": use.input})
        self.turns.append(turn)
        try:
            if use.name not in self.schemas:
                raise ToolInputError(unoffered(use.name, self.platform))
            validate(turn.input, self.schemas[use.name], f"{use.name} input")
        except ToolInputError as exc:
            return self.invalid(turn, "malformed_tool_input", str(exc))
        if use.name == "tap" and observation.tree is not None and "element_id" in turn.input:
            rows = {r["id"]: r for r in element_lines(observation.tree, scale, limit=10_000)}
            turn.input["_in"] = rows.get(str(turn.input["element_id"]), {}).get("in", "")
        return self.act(turn, observation.tree, scale)


def run(session: Any, actuator: Any, instruction: str, *, llm: LLMClient | None, max_steps: int = 30,
        plan: Any = None, config: ActorConfig | None = None, raise_on_failure: bool = True,
        observer: StepObserver | None = None) -> RunResult:
    """Carry out `instruction` with the LLM actor; see the module docstring. With `raise_on_failure`
    a run that does not end in `done(success=true)` raises `LLMRunFailed` (an AssertionError) whose
    `.result` keeps the turns; budget and cassette failures always raise."""
    if llm is None:
        raise LLMRunFailed("guistate.run needs a model: use --guistate-llm=replay (committed cassettes), "
                           "record or anthropic", None)
    if max_steps < 1:
        raise ValueError(f"max_steps must be >= 1, got {max_steps}")
    if not session.state.goal:
        session.goal(instruction, plan or ())
    state = _Run(session, as_actuator(actuator), instruction, llm, config or ActorConfig(frame_divisor=llm.settings.frame_divisor),
                 observer)
    result: RunResult | None = None
    for index in range(1, max_steps + 1):
        try:
            result = state.turn(index)
        except LLMError as exc:
            result = state.result(False, "api_error", str(exc))
        if result is not None:
            break
    if result is None:
        result = state.result(False, "max_steps", f"no done() after {max_steps} turns")
    if raise_on_failure and not result.success:
        steps = "; ".join(f"{t.index}:{t.tool or '-'}={t.outcome}" for t in result.turns[-6:])
        raise LLMRunFailed(f"guistate.run({instruction!r}) ended with {result.outcome}: {result.summary}\n"
                           f"last turns: {steps}", result)
    return result
