"""The journal: append-only lines, torn-line tolerance, and a rebuild after SIGKILL."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from lxml import html as lxml_html

from pytest_guistate.report.html import rebuild_report, report_main
from pytest_guistate.report.journal import (
    JOURNAL_SCHEMA,
    JournalError,
    JournalWriter,
    read_journal,
)

HERE = Path(__file__).parent


def test_every_event_is_one_flushed_line(tmp_path: Path) -> None:
    writer = JournalWriter(tmp_path / "journal.jsonl")
    writer.write("meta", {"schema": JOURNAL_SCHEMA, "nodeid": "t.py::a"})
    writer.write("step", {"record": {"index": 1, "name": "tap"}, "files": {}})
    # readable before close: flushed per line
    lines = (tmp_path / "journal.jsonl").read_text().splitlines()
    assert [json.loads(line)["type"] for line in lines] == ["meta", "step"]
    writer.close()
    with pytest.raises(JournalError, match="closed"):
        writer.write("step", {})


def test_unknown_event_types_are_refused(tmp_path: Path) -> None:
    writer = JournalWriter(tmp_path / "journal.jsonl")
    with pytest.raises(ValueError, match="unknown journal event type"):
        writer.write("stepp", {})


def test_a_torn_last_line_is_counted_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_text(json.dumps({"type": "meta", "schema": JOURNAL_SCHEMA}) + "\n"
                    + json.dumps({"type": "step", "record": {"index": 1}}) + "\n" + '{"type": "step", "rec')
    journal = read_journal(tmp_path)
    assert len(journal.steps) == 1 and journal.torn_lines == 1 and not journal.finished


def test_foreign_and_newer_journals_are_refused(tmp_path: Path) -> None:
    with pytest.raises(JournalError, match="no journal.jsonl"):
        read_journal(tmp_path)
    (tmp_path / "journal.jsonl").write_text(json.dumps({"type": "meta", "schema": "guistate.journal/9"}) + "\n")
    with pytest.raises(JournalError, match="newer"):
        read_journal(tmp_path)
    (tmp_path / "journal.jsonl").write_text(json.dumps({"hello": 1}) + "\n")
    with pytest.raises(JournalError, match="not a guistate journal event"):
        read_journal(tmp_path)


KILLED = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    sys.path.insert(0, {here!r})
    from tests.helpers.scenario import start, PASSWORD
    run = start(Path({root!r}), tier="full", nodeid="tests/test_kill.py::test_killed")
    phone, s = run.phone, run.session
    s.goal("sign in", plan=["signed in", "dark mode on"])
    for n in range({steps}):
        s.perform(f"type letter #{{n}}", lambda: phone.type_text("settings/username", "q"))
    s.perform(f"type {{PASSWORD!r}}", lambda: phone.type_text("settings/password", PASSWORD))
    print(run.recorder.folder, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
""")


def test_sigkill_leaves_a_journal_that_rebuilds_every_finished_step(tmp_path: Path) -> None:
    script = KILLED.format(here=str(HERE), root=str(tmp_path), steps=4)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    folder = Path(proc.stdout.strip())
    assert (folder / "journal.jsonl").is_file() and not (folder / "report.html").exists()
    journal = read_journal(folder)
    assert not journal.finished and len(journal.steps) == 5
    assert report_main([str(tmp_path)]) == 0  # the artifacts root: every folder with a journal
    page = lxml_html.fromstring((folder / "report.html").read_text(encoding="utf-8"))
    rows = page.xpath("//div[contains(@class, 'detail')]")
    assert [r.get("data-step") for r in rows] == ["1", "2", "3", "4", "5"]
    names = [r.xpath(".//span[@class='sname']")[0].text_content() for r in rows]
    assert names[:4] == [f"type letter #{n}" for n in range(4)]
    assert names[4] == "type '[redacted]'"
    assert page.xpath("//span[contains(@class, 'outcome-killed')]")
    assert (folder / "anchors.json").is_file() and (folder / "state.json").is_file()
    assert json.loads((folder / "state.json").read_text())["tracker"]["decomposition"] == ["signed in", "dark mode on"]


def test_report_main_says_when_there_is_no_journal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert report_main([str(tmp_path)]) == 1
    assert "no journal.jsonl" in capsys.readouterr().err


def test_rebuild_matches_the_report_written_at_finish(failed_run) -> None:  # type: ignore[no-untyped-def]
    _, done, _ = failed_run
    assert done.report is not None
    original = done.report.read_text(encoding="utf-8")
    rebuilt = rebuild_report(done.report.parent).read_text(encoding="utf-8")
    assert rebuilt == original
