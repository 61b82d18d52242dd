"""Re-record cassettes against the local reference server (what committed cassettes are):

    python -m pytest_guistate.llm.reference.rerecord example_suite/test_llm_price_compare.py

starts the reference server on loopback, points the SDK at it (ANTHROPIC_BASE_URL, a placeholder
key that is not a secret) and runs pytest with --guistate-llm=record. To record against the real
API instead: `ANTHROPIC_API_KEY=... pytest ... --guistate-llm=record`.
"""

from __future__ import annotations

import os
import sys

import pytest

from pytest_guistate.llm.reference.server import ReferenceServer

PLACEHOLDER_KEY = "reference-server-placeholder-key"


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    saved = {k: os.environ.get(k) for k in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")}
    with ReferenceServer() as server:
        os.environ["ANTHROPIC_API_KEY"] = PLACEHOLDER_KEY
        os.environ["ANTHROPIC_BASE_URL"] = server.url
        try:
            return int(pytest.main([*args, "--guistate-llm=record"]))
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


if __name__ == "__main__":
    sys.exit(main())
