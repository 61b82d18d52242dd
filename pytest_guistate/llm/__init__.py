"""LLM-driven steps through the `anthropic` SDK: actor, AI checks, LLM state updater, cassettes.

Nothing here is imported by `pytest_guistate.core`; the plugin wires it in via `options` and `facade`.
"""

from pytest_guistate.llm.accounting import CallUsage, Price, TokenLedger
from pytest_guistate.llm.actor import (
                                        ActorConfig,
                                        RunResult,
                                        Turn,
                                        is_idempotent_tap,
                                        run,
)
from pytest_guistate.llm.actuator import Actuator, as_actuator
from pytest_guistate.llm.cassette import (
                                        Cassette,
                                        ReplayServer,
                                        cassette_path,
                                        match_text,
)
from pytest_guistate.llm.check import AICheckFailed, CheckVerdict, check
from pytest_guistate.llm.client import LLMClient, LLMSettings, Mode, make_client
from pytest_guistate.llm.errors import (
                                        CassetteDivergence,
                                        CassetteError,
                                        LLMBudgetExceeded,
                                        LLMConfigError,
                                        LLMError,
                                        LLMRunFailed,
)
from pytest_guistate.llm.facade import TestLLM, open_llm
from pytest_guistate.llm.reference_server import ReferenceServer, serve
from pytest_guistate.llm.updater import LLMStateUpdater

__all__ = [
                                        "AICheckFailed",
                                        "ActorConfig",
                                        "Actuator",
                                        "CallUsage",
                                        "Cassette",
                                        "CassetteDivergence",
                                        "CassetteError",
                                        "CheckVerdict",
                                        "LLMBudgetExceeded",
                                        "LLMClient",
                                        "LLMConfigError",
                                        "LLMError",
                                        "LLMRunFailed",
                                        "LLMSettings",
                                        "LLMStateUpdater",
                                        "Mode",
                                        "Price",
                                        "ReferenceServer",
                                        "ReplayServer",
                                        "RunResult",
                                        "TestLLM",
                                        "TokenLedger",
                                        "Turn",
                                        "as_actuator",
                                        "cassette_path",
                                        "check",
                                        "is_idempotent_tap",
                                        "make_client",
                                        "match_text",
                                        "open_llm",
                                        "run",
                                        "serve",
]
