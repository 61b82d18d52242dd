"""Read what a run's journals say about each test, for the tests of the plugin and of real Appium.

Read straight from the JSON lines (not through `report.journal`), so a test of the record does
not trust the reader it would also be testing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def journal_metas(root: Path) -> Iterator[dict[str, Any]]:
    """The `meta` event (a journal's first line) of every test folder below `root`."""
    for journal in root.rglob("journal.jsonl"):
        yield json.loads(journal.read_text(encoding="utf-8").splitlines()[0])


def sessions(root: Path) -> dict[str, dict[str, Any]]:
    """Test name -> the journal's `appium_session` meta."""
    return {meta["nodeid"].split("::")[-1]: meta.get("appium_session") for meta in journal_metas(root)}
