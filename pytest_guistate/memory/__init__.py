"""Cross-run memory of UI functions (MAGNET, issue 7): self-healing locators and flow hints."""

from pytest_guistate.memory.flows import Flow, FlowStep, add_flow, similar_flows
from pytest_guistate.memory.heal import Healer, HealPolicy, HealResult
from pytest_guistate.memory.learn import LearnResult, learn_patch
from pytest_guistate.memory.locator import Locator, function_key
from pytest_guistate.memory.rank import RankPolicy, rank, retention
from pytest_guistate.memory.store import SCHEMA_VERSION, MemorySchemaError, MemoryStore, NewPatch, PatchEntry
from pytest_guistate.memory.verify import HealOutcome, heal_and_act

__all__ = [
    "SCHEMA_VERSION", "Flow", "FlowStep", "HealOutcome", "HealPolicy", "HealResult", "Healer", "LearnResult",
    "Locator", "MemorySchemaError", "MemoryStore", "NewPatch", "PatchEntry", "RankPolicy", "add_flow",
    "function_key", "heal_and_act", "learn_patch", "rank", "retention", "similar_flows",
]
