"""`check(session, claim, llm=...)`: an AI assertion on the current screen, cross-checked.

The model must cite evidence (element ids with the text it relies on, and/or a region). The
verdict is then checked against the UI tree, because a model can be confidently wrong:
  * a cited element id that is not on the screen -> "unverified";
  * a cited quote that the element's text/desc does not contain -> "unverified";
  * "pass" with no citation at all -> "unverified";
  * a region outside the image -> "unverified".
Only "pass" passes; "fail" and "unverified" raise `AICheckFailed` (an AssertionError) carrying
the progress tracker, like any other failure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pytest_guistate.core.uitree import UITree
from pytest_guistate.llm.client import LLMClient
from pytest_guistate.llm.errors import LLMRunFailed
from pytest_guistate.llm.instructions import CHECK_SYSTEM, system_blocks
from pytest_guistate.llm.prompt import (
    element_lines,
    elements_text,
    section,
    shown_image,
)
from pytest_guistate.llm.tools import CHECK_TOOL, ToolInputError, validate

__all__ = ["AICheckFailed", "CheckVerdict", "check", "cross_check"]


@dataclass
class CheckVerdict:
    claim: str
    verdict: str  # pass | fail | unverified
    model_verdict: str
    explanation: str
    evidence: list[dict[str, Any]] = field(default_factory=list)
    region: list[int] | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class AICheckFailed(AssertionError):
    def __init__(self, message: str, verdict: CheckVerdict) -> None:
        super().__init__(message)
        self.verdict = verdict


def cross_check(answer: dict[str, Any], tree: UITree | None, image: tuple[int, int]) -> list[str]:
    """Problems that make a verdict unverifiable (empty list: the evidence holds up)."""
    problems: list[str] = []
    evidence = answer.get("evidence") or []
    region = answer.get("region")
    if answer.get("verdict") == "pass" and not evidence and not region:
        problems.append("a pass verdict cites no evidence")
    for item in evidence:
        element_id = str(item.get("element_id", ""))
        node = tree.by_index_path(element_id) if tree is not None else None
        if node is None:
            problems.append(f"cited element {element_id!r} is not on the screen")
            continue
        quote = str(item.get("quote") or "")
        shown = (*node.shown_texts, node.content_desc, "" if node.password else node.value)  # iOS: a value row
        if quote and not any(quote in text for text in shown):
            problems.append(f"element {element_id} shows {node.label!r}, not the quoted {quote!r}")
    if region is not None:
        width, height = image
        if len(region) != 4 or not (0 <= region[0] < region[2] <= width and 0 <= region[1] < region[3] <= height):
            problems.append(f"region {region} is not a box inside the {width}x{height} image")
    return problems


def check(session: Any, claim: str, *, llm: LLMClient | None, frame_divisor: float = 3.0,
          raise_on_failure: bool = True) -> CheckVerdict:
    if llm is None:
        raise LLMRunFailed("guistate.check needs a model: use --guistate-llm=replay, record or anthropic", None)
    if not isinstance(claim, str) or not claim.strip():
        raise ValueError(f"check() needs a claim in words, got {claim!r}")
    observation = session.observe(settled=True)
    frame_block, scale = shown_image(observation.frame, frame_divisor)
    rows = element_lines(observation.tree, scale) if observation.tree is not None else []
    content = [section("claim", claim), section("screen", json.dumps({"app": observation.package,
                                                                      "image": list(scale.shown)})),
               section("elements", elements_text(rows)), frame_block]
    message = llm.create("check", system=system_blocks(CHECK_SYSTEM, cache=True), tools=[CHECK_TOOL],
                         messages=[{"role": "user", "content": content}],
                         tool_choice={"type": "tool", "name": CHECK_TOOL["name"]}, step=len(session.steps) or None)
    uses = [b for b in message.content if b.type == "tool_use"]
    if not uses or message.stop_reason == "max_tokens":
        text = " ".join(b.text for b in message.content if b.type == "text")[:200]
        result = CheckVerdict(claim, "unverified", "", f"no verdict from the model ({message.stop_reason}): {text!r}")
    else:
        answer = dict(uses[0].input) if isinstance(uses[0].input, dict) else {}
        try:
            validate(answer, CHECK_TOOL["input_schema"], "report_verdict input")
            problems = cross_check(answer, observation.tree, scale.shown)
        except ToolInputError as exc:
            problems = [str(exc)]
        model_verdict = str(answer.get("verdict", ""))
        verdict = "unverified" if problems else model_verdict
        evidence = answer.get("evidence")
        region = answer.get("region")
        result = CheckVerdict(claim, verdict, model_verdict, str(answer.get("explanation", "")),
                              list(evidence) if isinstance(evidence, list) else [],
                              list(region) if isinstance(region, list) else None, problems)
    if raise_on_failure and not result.passed:
        why = "; ".join(result.problems) or result.explanation
        progress = session.progress
        raise AICheckFailed(f"AI check {result.verdict}: {claim!r}: {why}\nprogress: completed {progress.completed}, "
                            f"current {progress.current!r}, remaining {progress.remaining}", result)
    return result
