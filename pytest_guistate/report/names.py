"""Test ids that become names (folders, journal, summary rows, report titles) carry no secrets.

A secret in a parametrize id (`test_pay[4111111111111111]`) would otherwise reach the artifacts
folder's name, the journal's `meta`, the run summary and all that is derived from them.
`Redactor.ident` swaps each secret for `redacted-<digest>`: ids that differ only in their secret
keep distinct names, and a rerun gets the same name (the gate's baseline matches on it).

The folder is named when the test starts, from what is known then (the redact hook's patterns).
A secret first registered during the test (`guistate.secret(card)`, a typed password) is only
known later: `relabel` then moves the folder to its redacted name and rewrites the closed journal,
before report.html, state.json and the summary row are derived from it. A journal whose earlier lines
show such a secret (a goal's text holding the password typed later) is rewritten in place.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pytest_guistate.report.artifacts import create_test_folder
from pytest_guistate.report.journal import JOURNAL_NAME
from pytest_guistate.report.recorder import ArtifactRecorder

__all__ = ["relabel"]


def relabel(recorder: ArtifactRecorder, *, root: Path | None = None, worker: str | None = None) -> Path:
    """The test's folder under the id its secrets allow now; moves it and rewrites the journal when
    a secret learnt during the test is in the id. Call after the journal and writer are closed."""
    final = recorder.redactor.ident(recorder.raw_nodeid)
    if final == recorder.nodeid:
        journal = recorder.folder / JOURNAL_NAME
        if _holds_a_secret(journal, recorder):  # e.g. a goal's password, registered when it was typed
            _rewrite_journal(journal, recorder, recorder.nodeid, recorder.folder.name)
        return recorder.folder
    old = recorder.folder
    new = create_test_folder(root or old.parent, final, worker=worker)
    for child in list(old.iterdir()):
        child.rename(new / child.name)
    old.rmdir()
    _rewrite_journal(new / JOURNAL_NAME, recorder, final, new.name)
    recorder.folder, recorder.nodeid = new, final
    recorder.frames.folder = new
    return new


def _holds_a_secret(path: Path, recorder: ArtifactRecorder) -> bool:
    """A line written before a secret was registered still shows it (issue 32: the goal's text)."""
    if not recorder.redactor.active or not path.is_file():
        return False
    text = path.read_text(encoding="utf-8", errors="replace")
    return recorder.redactor.text(text) != text


def _rewrite_journal(path: Path, recorder: ArtifactRecorder, nodeid: str, folder: str) -> None:
    """Every line scrubbed with what the redactor knows now; `meta` names the new id and folder.
    Written next to the journal and moved over it, so a kill midway leaves one whole journal."""
    lines: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:  # a torn line stays torn, but without the secret
            lines.append(recorder.redactor.text(line))
            continue
        if isinstance(event, dict) and event.get("type") == "meta":
            event["nodeid"], event["folder"] = nodeid, folder
        lines.append(json.dumps(recorder.redactor.scrub(event), ensure_ascii=False, separators=(",", ":")))
    temporary = path.with_name(path.name + ".relabel")
    temporary.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    os.replace(temporary, path)
