"""Re-record cassettes against the local reference server (what committed cassettes are):

    python -m pytest_guistate.llm.reference.rerecord example_suite/test_llm.py

starts the reference server on loopback, points the SDK at it (ANTHROPIC_BASE_URL, a placeholder
key that is not a secret) and runs pytest with --guistate-llm=record. To record against the real
API instead: `ANTHROPIC_API_KEY=... pytest ... --guistate-llm=record`.

pytest runs in a child process: this module has already imported the plugin, and a pytest started
in the same process could not rewrite its asserts (a `PytestAssertRewriteWarning` for every run).
"""

from __future__ import annotations

import os
import subprocess
import sys

from pytest_guistate.llm.reference.server import ReferenceServer

PLACEHOLDER_KEY = "reference-server-placeholder-key"


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    with ReferenceServer() as server:
        env = {**os.environ, "ANTHROPIC_API_KEY": PLACEHOLDER_KEY, "ANTHROPIC_BASE_URL": server.url}
        return subprocess.call([sys.executable, "-m", "pytest", *args, "--guistate-llm=record"], env=env)


if __name__ == "__main__":
    sys.exit(main())
