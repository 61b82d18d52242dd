"""`pytest_guistate_redact` from a user's conftest: a card number on screen reaches no output at all.

The inner test types a card number into an ordinary (not a password) field, so nothing built in
would hide it: the screen shows it, the UI tree holds it, the LLM prompt lists it, the test's own
assertion message and source line repeat it. The conftest returns one text pattern; afterwards
every file under the artifacts dir, the Allure results, the JUnit XML, the LLM cassette and the
terminal output are searched for it, and the images are checked for the fill where it was shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest

from pytest_guistate.llm.reference.server import ReferenceServer
from pytest_guistate.report.journal import read_journal

InnerRun = Callable[..., pytest.RunResult]

CARD = "4111 1111 1111 1111"

CONFTEST = r"""
from pytest_guistate import Box, Redaction

CARD = r"\b\d{4}(?: \d{4}){3}\b"


def pytest_guistate_redact(observation, item):
    if observation is None:
        # known up front: scrubs from the first line written; the box is filled on every screen
        return Redaction(patterns=[CARD], boxes=[Box(880, 200, 1080, 400)])
    return Redaction(boxes=[Box(0, 200, 200, 400)])  # and a fixed region of every screen
"""

TEST = f"""
import pytest


@pytest.mark.guistate(app="com.guistate.settings")
def test_pay_with_a_card(device, guistate):
    guistate.goal("Pay with the card", plan=["card entered", "paid"])
    guistate.perform("type the card number", lambda: device.type("{CARD}", id="username"), idempotent=False)
    guistate.milestone("card entered")
    print("paying with {CARD}")  # captured output: shown under the failure, written to JUnit XML
    guistate.check('The screen shows "Log in"')  # an LLM exchange whose prompt lists the field's text
    assert device.exists(text="Payment accepted"), "card {CARD} was not accepted"
"""


@pytest.fixture
def llm_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ReferenceServer]:
    with ReferenceServer() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-redaction-0000")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


def _files(*roots: Path) -> list[Path]:
    found = []
    for root in roots:
        found += [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    return found


def _filled_pixels(path: Path) -> int:
    """Pixels of exactly the redaction fill (lossless crops keep it exact)."""
    pixels = cv2.imdecode(np.frombuffer(path.read_bytes(), np.uint8), cv2.IMREAD_COLOR)
    return int(np.all(pixels == (40, 40, 40), axis=2).sum())


def test_a_conftest_redactor_keeps_the_card_number_out_of_every_output(
    inner: InnerRun, pytester: pytest.Pytester, llm_server: ReferenceServer
) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_pay=TEST)
    common = ("--guistate=full", "--guistate-retain=on", "--guistate-artifacts=art",
              "--guistate-memory=art/memory.sqlite", "--guistate-summary=art/summary.json")
    recorded = inner(*common, "--guistate-llm=record", "--alluredir=allure", "--junitxml=junit.xml",
                     "-o", "junit_logging=all")
    recorded.assert_outcomes(failed=1)
    root = pytester.path
    cassette = root / "cassettes" / "test_pay" / "test_pay_with_a_card.json"
    files = _files(root / "art", root / "allure", root / "junit.xml", cassette)
    names = {p.name for p in files}
    assert {"journal.jsonl", "report.html", "state.json", "anchors.json", "summary.json", "junit.xml",
            cassette.name} <= names
    assert any(p.parent.name == "frames" for p in files) and any(p.parent.name == "crops" for p in files)
    assert any(p.suffix == ".json" and p.parent.name == "allure" for p in files)

    leaks = [str(p.relative_to(root)) for p in files if CARD.encode() in p.read_bytes()]
    assert leaks == [], f"the card number reached: {leaks}"
    output = "\n".join(recorded.outlines + recorded.errlines)
    assert CARD not in output, "the card number reached the terminal"
    # not vacuous: the places that held it now say so
    assert "[redacted]" in cassette.read_text(encoding="utf-8")
    assert "card [redacted] was not accepted" in output  # the test's own message, in the traceback too
    assert "paying with [redacted]" in output
    junit = (root / "junit.xml").read_text(encoding="utf-8")
    assert "card [redacted] was not accepted" in junit and "paying with [redacted]" in junit
    allure_text = "".join(p.read_text(encoding="utf-8", errors="replace") for p in _files(root / "allure")
                          if p.suffix == ".json")
    assert "card [redacted] was not accepted" in allure_text

    # the pixels: the field that showed the number is filled in the crop of the typing step, and the
    # hook's fixed box is filled in the whole frames too (JPEG: close to the fill, not exact)
    [folder] = [p for p in (root / "art").iterdir() if p.is_dir()]
    [first] = [e for e in read_journal(folder).steps if e["record"]["index"] == 1]
    crops = [folder / rel for rel in first["files"]["crops"]]
    assert crops and max(_filled_pixels(p) for p in crops) > 5000, "the typed field is not filled in its crop"
    frame = next(p for p in sorted((folder / "frames").iterdir()))
    pixels = cv2.imdecode(np.frombuffer(frame.read_bytes(), np.uint8), cv2.IMREAD_COLOR)
    for name, corner in (("per screen", pixels[110:190, 10:90]), ("up front", pixels[110:190, 450:530])):
        assert np.abs(corner.astype(int) - 40).max() < 12, f"the hook's box given {name} is not filled in the frame"

    # replaying the scrubbed cassette still matches: the live request is scrubbed the same way
    replayed = inner(*common, "--guistate-llm=replay")
    replayed.assert_outcomes(failed=1)
    output = "\n".join(replayed.outlines + replayed.errlines)
    assert "CassetteDivergence" not in output and "card [redacted] was not accepted" in output
    assert CARD not in output


def test_a_redactor_returning_the_wrong_type_stops_the_test_naming_it(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
def pytest_guistate_redact(observation, item):
    return ["4111"]
""")
    pytester.makepyfile(test_pay=TEST.replace("guistate.check", "# guistate.check"))
    result = inner("--guistate=standard")
    result.assert_outcomes(errors=1)
    assert "TypeError: pytest_guistate_redact returned ['4111']; expected a pytest_guistate.Redaction" in str(result.stdout)


def test_every_journal_event_is_scrubbed_with_the_patterns(tmp_path: Path) -> None:
    """The caller's own events (the LLM report: claims, run summaries) go through the redactor too."""
    from pytest_guistate.report.recorder import ArtifactRecorder
    from pytest_guistate.report.redact import Redaction, Redactor, id_placeholder

    redactor = Redactor(source=lambda observation: [Redaction(patterns=[r"\b\d{4}(?: \d{4}){3}\b"])])
    redactor.start()
    recorder = ArtifactRecorder(tmp_path, nodeid=f"t.py::test[{CARD}]", tier="standard", redactor=redactor)
    recorder.write_event("llm", {"checks": [{"claim": f"the field shows {CARD}", "verdict": "pass"}]})
    recorder.drain()
    recorder.journal.close()
    journal = (tmp_path / "journal.jsonl").read_text(encoding="utf-8")
    assert CARD not in journal and "the field shows [redacted]" in journal
    assert f"t.py::test[{id_placeholder(CARD)}]" in journal  # an id keeps a distinct name per secret


@pytest.mark.parametrize(("pattern", "problem"), [
    (r"\d*", "matches the empty string"),
    (r"(\d{4}", "is not a valid regular expression"),
    (42, "must be a str or re.Pattern"),
])
def test_a_pattern_that_cannot_redact_is_refused_by_name(pattern: object, problem: str) -> None:
    from pytest_guistate.report.redact import Redaction, Redactor

    redactor = Redactor(source=lambda observation: [Redaction(patterns=[pattern])])  # type: ignore[list-item]
    with pytest.raises((ValueError, TypeError), match=problem):
        redactor.ask(None)
