"""`guistate export-test` (issue 45): a verified LLM run written as a scripted test that passes on its own.

* the example suite's committed caches (both personas) export to files that pass with `--guistate-llm=off`
  in a folder with no cassette, cache or model, and are formatted as `ruff format` formats them;
* a fresh recording (the drift suite's Settings sign-in, Gallery move and Feed delete, against the
  reference server) exports with the locators that named each target alone and the run's verified
  effects as expectations, checked step by step against the record; the typed secret is in no exported
  file; and the exported tests pass with no model;
* on a drift, the exported test and the strict cache replay give the same verdict, and the exported
  test never acts on the wrong thing (`replaced_row`: Battery saver is never toggled).
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from lxml import html as lxml_html

from pytest_guistate.llm.cache.cachefile import ActionCache, CachedStep, load_cache, write_cache
from pytest_guistate.llm.cache.record import CacheRecorder
from pytest_guistate.llm.export import (
    build_export,
    choose_locator,
    export_main,
    export_test,
    render,
    step_expectation,
)
from pytest_guistate.llm.reference.server import ReferenceServer
from tests.cache.conftest import EXAMPLE
from tests.cache.drift_suite import (
    DRIFT_CONFTEST,
    DRIFT_TESTS,
    FEED,
    FEED_RELEASES,
    GALLERY,
    SETTINGS,
    SETTINGS_DRIFTS,
    TESTS,
)
from tests.cache.goal_exports import export_goals, goal_cases
from tests.helpers.export_record import check_against_record
from tests.helpers.inner_run import run_inprocess
from tests.llm.goal_table import PASSWORD

CACHES = EXAMPLE / "cassettes" / "test_llm"
SECRET = "correct-horse"


def ruff_format_check(path: Path, width: int) -> subprocess.CompletedProcess[str]:
    """`ruff format --check` (ruff is a dev dependency: the exporter itself does not need it)."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "format",
            "--check",
            "--diff",
            "--line-length",
            str(width),
            "--no-cache",
            str(path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )


def docs_example() -> str:
    """The generated file docs/export.md shows in full ("An example, in full")."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "export.md").read_text(encoding="utf-8")
    return page.split("## An example, in full", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]


def _step(target: dict[str, object]) -> CachedStep:
    return CachedStep(1, "tap", {}, "tap", True, {"labels": []}, target, {})


def test_the_locator_is_one_that_named_the_target_alone() -> None:
    fp = {"kind": "Button", "rid": "delete", "desc": "Delete post by Erin", "text": "Delete", "in": "Erin · Hiking"}
    locators = [{"id": "delete"}, {"desc": "Delete post by Erin"}, {"text": "Delete"}]
    chosen = choose_locator(_step({"fingerprint": fp, "locators": locators, "unique": ["desc"]}), "android")
    assert chosen is not None and (chosen.kind, chosen.value, chosen.note) == ("desc", "Delete post by Erin", "")
    chosen = choose_locator(_step({"fingerprint": fp, "locators": locators, "unique": ["id", "desc"]}), "android")
    assert chosen is not None and (chosen.kind, chosen.value) == ("id", "delete")
    # none named it alone: an XPath over all its names, said in a comment
    chosen = choose_locator(_step({"fingerprint": fp, "locators": locators, "unique": []}), "android")
    assert chosen is not None and chosen.kind == "xpath" and "no id, label or text" in chosen.note
    names = (
        "//*[contains(@class, '.Button') and contains(@resource-id, ':id/delete') and "
        "@text='Delete' and @content-desc='Delete post by Erin']"
    )
    assert chosen.value == f"{names}[count({names}) = 1]"  # two matches are a miss, never a tap on the first
    # a cache from before `unique`: never the id alone (every row's Delete has it)
    chosen = choose_locator(_step({"fingerprint": fp, "locators": locators}), "ios")
    assert chosen is not None and chosen.kind == "xpath" and "re-record" in chosen.note
    # a switch: pinned to the label of its row
    switch = {"kind": "Switch", "rid": "switch_widget", "text": "OFF", "in": "Dark mode · Off", "checked": False}
    chosen = choose_locator(
        _step({"fingerprint": switch, "locators": [{"id": "switch_widget"}, {"text": "OFF"}], "unique": []}), "android"
    )
    assert (
        chosen is not None
        and chosen.value.startswith("//*[contains(translate(@text, ")
        and "'dark mode'" in chosen.value
    )
    assert "@checkable='true'" in chosen.value and "OFF" not in chosen.value  # a state is no name


@pytest.mark.parametrize("platform", ["android", "ios"])
def test_the_example_suite_goals_export_to_tests_that_pass_with_no_model(
    pytester: pytest.Pytester, platform: str
) -> None:
    folder = CACHES / ("ios" if platform == "ios" else "")
    written = []
    for actions in sorted(folder.glob("*.actions.json")):
        path, text = export_test(actions, pytester.path, width=120)
        written.append(path)
        ast.parse(text)
        # recorded with `target.unique`: each target on the plain locator that named it alone (no "re-record")
        check_against_record(actions, build_export(actions, width=120))
        assert ruff_format_check(path, 120).returncode == 0, ruff_format_check(path, 120).stdout
        cache = load_cache(actions)
        for run in cache.runs:  # every actor step is one scripted step, in order
            names = [s.summary().split(" (in ")[0] for s in run.steps if s.tool != "wait"]
            positions = [text.index(f"step {s.n}: ") for s in run.steps]
            assert positions == sorted(positions) and len(names) == text.count("with guistate.step(")
        assert "guistate.run(" not in text and "guistate.assert_complete()" in text
    shutil.copy(EXAMPLE / "sim_apps.py", pytester.path / "sim_apps.py")
    pytester.makeini("[pytest]\nguistate_llm = off\n")
    assert not (pytester.path / "cassettes").exists()  # nothing to replay: the scripted steps alone
    result = run_inprocess(
        pytester,
        "-p",
        "no:cacheprovider",
        f"--guistate-platform={platform}",
        "--guistate-memory=off",
        *map(str, written),
    )
    result.assert_outcomes(passed=2)
    text = (
        pytester.path / "test_actor_deletes_one_post_and_an_ai_check_confirms_it_ios_scripted.py"
        if platform == "ios"
        else pytester.path / "test_actor_deletes_one_post_and_an_ai_check_confirms_it_scripted.py"
    ).read_text()
    # the AI check became a plain expectation, and the test's own assertion on the phone stayed
    assert 'gone("Erin")(shown)' in text and "device.action_log()" in text


def test_a_cache_without_its_test_file_exports_a_test_of_its_own(tmp_path: Path) -> None:
    actions = tmp_path / "test_actor_deletes_one_post_and_an_ai_check_confirms_it.actions.json"
    shutil.copy(CACHES / actions.name, actions)
    out = tmp_path / "out.py"
    assert export_main([str(actions), "-o", str(out)]) == 0
    text = out.read_text()
    assert '@pytest.mark.guistate(app="com.guistate.feed")' in text
    assert 'guistate.milestone("Erin\'s post gone")' in text
    assert ruff_format_check(out, 88).returncode == 0, ruff_format_check(out, 88).stdout


# A browser session's cache, as the web Feed records it (tests/appium/test_export_web_real.py records one live)
FEED_PAGE = "http://127.0.0.1:8000/index.html?delay=0"
WEB_FEED_ROWS = "".join(
    f'<li data-testid="post_row"><div role="img" aria-label="Avatar of {a}">{a[0]}</div>'
    f'<div><div data-testid="author">{a}</div><div data-testid="text">{t}</div></div>'
    f'<button type="button" data-testid="delete"><span>Delete</span></button></li>'
    for a, t in (("Alice", "Morning run done."), ("Bob", "Ramen on 5th?"), ("Carol", "Shipped!"))
)


def _web_cache(tmp_path: Path) -> Path:
    fp = {"kind": "Button", "rid": "delete", "text": "Delete", "in": "A · Alice · Morning run done.", "alike": [1, 3]}
    screen = {"app": "http://127.0.0.1:8000", "labels": ["Feed", "Alice", "Delete"], "title": "Feed", "hash": ""}
    tap = {
        "n": 1,
        "tool": "tap",
        "args": {},
        "name": "tap",
        "idempotent": False,
        "screen": screen,
        "target": {"fingerprint": fp, "locators": [{"id": "delete"}, {"text": "Delete"}], "unique": []},
        "effect": {"expect": {"visible": "Delete post?"}},
        "milestone": None,
    }
    confirm = {
        **tap,
        "target": {
            "fingerprint": {"kind": "Button", "rid": "confirm_delete", "text": "Delete"},
            "locators": [{"id": "confirm_delete"}, {"text": "Delete"}],
            "unique": ["id"],
        },
    }
    done = {"success": True, "summary": "done"}
    runs = [  # the second run goes on where the first ended; the test opened another page before the third
        {
            "instruction": "Delete the post by Alice",
            "done": done,
            "steps": [tap],
            "page": {"start": FEED_PAGE, "end": FEED_PAGE},
        },
        {"instruction": "Confirm it", "done": done, "steps": [confirm], "page": {"start": FEED_PAGE, "end": FEED_PAGE}},
        {
            "instruction": "Delete the post by Alice",
            "done": done,
            "steps": [tap],
            "page": {"start": FEED_PAGE + "&x=1", "end": ""},
        },
    ]
    data = {
        "schema": "guistate.actions/1",
        "test": "test_web_feed",
        "platform": "android",
        "checks": [],
        "runs": runs,
        "recorded": {"mode": "anthropic", "session": "browser", "browserName": "chrome"},
    }
    path = tmp_path / "test_web_feed.actions.json"
    path.write_text(json.dumps(data))
    return path


def test_a_browser_session_exports_the_page_it_opened_and_no_app(tmp_path: Path) -> None:
    """No test file: the exported test asserts a browser session (no persona, no app to launch: a marker's
    `app=` is a usage error there) and opens the page each run started on, where the run before did not end
    on it (the run's own steps open no URL)."""
    text = render(build_export(_web_cache(tmp_path)))
    assert "@pytest.mark.guistate\ndef test_web_feed(device, guistate):" in text and "app=" not in text
    assert "assert device.browser, " in text and "device.platform" not in text
    opened = [line.strip() for line in text.splitlines() if "open_url" in line]
    assert opened == [f"device.open_url({json.dumps(FEED_PAGE)})", f"device.open_url({json.dumps(FEED_PAGE + '&x=1')})"]
    assert text.index(opened[0]) < text.index("guistate.goal(")  # the page, before the goal and its steps
    out = tmp_path / "out.py"
    out.write_text(text)
    assert ruff_format_check(out, 88).returncode == 0, ruff_format_check(out, 88).stdout


def test_a_typed_password_s_dots_are_never_an_expectation() -> None:
    """What appeared after typing a secret is the field's dots: they say only the secret's length, so the step
    expects the next label that names something, or nothing."""
    typed = CachedStep(2, "type_text", {"text": "[secret 1]"}, "type", False, {"labels": ["Email", "Password"]})
    typed.effect = {"next_screen": {"labels": ["Email", "••••••••", "Password"]}}
    assert step_expectation(typed) == ([], "")
    typed.effect["next_screen"]["labels"].append("Show password")
    assert step_expectation(typed) == (['visible("Show password", exact=True)'], "what appeared on the next screen")


def test_a_browser_session_s_runs_keep_the_page_they_started_and_ended_on(tmp_path: Path) -> None:
    """The recorder reads the page at a run's start (before any step: a tap may follow a link) and end; an app
    session (no `page_url`) keeps no page, so its cache is as it was."""
    urls = iter(["http://h/start", "http://h/end", "http://h/other"])
    session = SimpleNamespace(observe=lambda: None, state=SimpleNamespace(completed=[]))
    recorder = CacheRecorder(session, page_url=lambda: next(urls))
    recorder.begin_run()
    recorder.begin_run()  # a fallback's live part after the replayed one: the same run, the same start
    recorder.add_run("Delete the post by Alice", True, "done")
    assert recorder.runs[0].page == {"start": "http://h/start", "end": "http://h/end"}
    path = tmp_path / "x.actions.json"
    write_cache(path, ActionCache("test_x", "android", recorder.runs))
    assert load_cache(path).runs[0].page == {"start": "http://h/start", "end": "http://h/end"}
    app = CacheRecorder(session)
    app.begin_run()
    app.add_run("Delete the post by Alice", True, "done")
    assert app.runs[0].page == {} and "page" not in ActionCache("t", "android", app.runs).to_dict()["runs"][0]


def test_a_browser_session_xpath_is_the_dom_s_and_pinned_to_its_row(tmp_path: Path) -> None:
    """A browser evaluates `xpath=` on the page's DOM: the fallback names the element as the DOM does
    (`data-testid`, its text) and pins it to the row holding its recorded neighbours' texts. On the web Feed
    it names Alice's Delete alone; with Alice's post gone, or twice, it names nothing (never another row's)."""
    cache = load_cache(_web_cache(tmp_path))
    step = cache.runs[0].steps[0]
    chosen = choose_locator(step, "android", web=True)
    assert chosen is not None and chosen.kind == "xpath" and "in the page's DOM" in chosen.note
    assert "@resource-id" not in chosen.value and "@text" not in chosen.value

    def named(rows: str, xpath: str) -> list[str]:
        page = lxml_html.fromstring(f'<html><body><ul data-testid="posts">{rows}</ul></body></html>')
        return [str(el.xpath("string(ancestor::li//*[@data-testid='author'])")) for el in page.xpath(xpath)]

    assert named(WEB_FEED_ROWS, chosen.value) == ["Alice"]
    assert named(WEB_FEED_ROWS.replace("Alice", "Alina"), chosen.value) == []  # Alice's post is gone
    assert named(WEB_FEED_ROWS + WEB_FEED_ROWS, chosen.value) == []  # two such rows: a miss, not the first
    native = choose_locator(step, "android")  # the tree's form, which the DOM does not have
    assert native is not None and named(WEB_FEED_ROWS, native.value) == []


class Recorded:
    """The drift suite's tests recorded live against the reference server (android), once per module."""

    def __init__(self, pytester: pytest.Pytester) -> None:
        self.pytester = pytester
        pytester.makeconftest(DRIFT_CONFTEST)
        pytester.makepyfile(test_apps=TESTS)
        pytester.makeini("[pytest]\nguistate_llm_updater = off\n")

    def run(self, *args: str) -> pytest.RunResult:
        for log in (self.pytester.path / "logs").glob("*.json"):
            log.unlink()
        return run_inprocess(self.pytester, "-p", "no:cacheprovider", "--guistate-memory=off", *args)

    def log(self, test: str) -> list[dict[str, object]]:
        path = self.pytester.path / "logs" / f"{test}.json"
        return json.loads(path.read_text()) if path.exists() else []


def record(suite: Recorded, monkeypatch: pytest.MonkeyPatch, *args: str) -> pytest.RunResult:
    """Run the suite against the reference server (the stand-in model); nothing answers afterwards."""
    with ReferenceServer() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-export-0000")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        result = suite.run("--guistate-llm=anthropic", *args)
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    return result


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the module's one android recording of Settings, Gallery and Feed is kept (made by the first test
    that needs it, in any order): a recording takes an inner run against the reference server."""
    return tmp_path_factory.mktemp("recording") / "cassettes"


@pytest.fixture
def recorded(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, recording: Path) -> Recorded:
    """The drift suite with Settings, Gallery and Feed recorded live on android: the module's one recording."""
    suite = Recorded(pytester)
    if not recording.is_dir():
        record(suite, monkeypatch, "-k", f"{SETTINGS} or {GALLERY} or {FEED}").assert_outcomes(passed=3, deselected=1)
        shutil.copytree(pytester.path / "cassettes", recording)
    else:
        shutil.copytree(recording, pytester.path / "cassettes")
    return suite


def test_a_fresh_recording_exports_its_locators_and_effects_and_passes_alone(
    recorded: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester = recorded.pytester
    exported = pytester.path / "exported"
    exported.mkdir()
    for test in (SETTINGS, GALLERY, FEED):
        actions = pytester.path / "cassettes" / "test_apps" / f"{test}.actions.json"
        path, text = export_test(actions, exported / f"{test}_scripted.py", width=120)
        built = build_export(actions, width=120)
        assert render(built) == text
        check_against_record(actions, built)  # each scripted step against the run's record
        assert SECRET not in text and "GUISTATE_TEST_SECRET_1" in text if test == SETTINGS else True
        if test == SETTINGS:  # docs/export.md shows this very file in full: the page cannot drift from it
            assert text == docs_example(), "docs/export.md 'An example, in full' is no longer what export-test writes"
        assert ruff_format_check(path, 120).returncode == 0, ruff_format_check(path, 120).stdout
    shutil.rmtree(pytester.path / "cassettes")  # no cache, no cassette, no model
    monkeypatch.setenv("GUISTATE_TEST_SECRET_1", SECRET)
    result = recorded.run("--guistate-llm=off", str(exported))
    result.assert_outcomes(passed=3)
    assert [e["action"] for e in recorded.log(SETTINGS)][-1] == "toggle"
    assert [e for e in recorded.log(GALLERY) if e["action"] == "move_to_album"]
    assert _effects(recorded, FEED) == [DRIFT_GROUND[FEED]]
    for file in exported.iterdir():
        assert SECRET not in file.read_text(encoding="utf-8")


def test_on_two_drifts_the_export_and_the_cache_replay_agree(
    recorded: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`replaced_row` (Dark mode's row is Battery saver now) and `already_on` (Dark mode is on already): the
    strict replay misses and the exported test fails at the same step, and neither toggles anything.
    `icon_delete` (each row's Delete is an icon button now, its accessibility label kept): both delete Bob's post,
    the replay by the locator the exported test uses, `desc="Delete post by Bob"`, which names it alone (before,
    the replay missed: its fingerprint scored 0.46). Every drift on both personas: `-m exhaustive`."""
    rows = compare_drifts(
        recorded, monkeypatch, "android", {"replaced_row": SETTINGS, "already_on": SETTINGS, "icon_delete": FEED}
    )
    assert [(d, c, e, w, did) for d, _, c, e, w, did in rows] == [
        ("replaced_row", "failed", "failed", [], []),
        ("already_on", "failed", "failed", [], []),
        ("icon_delete", "passed", "passed", [], [DRIFT_GROUND[FEED]]),
    ]


def test_a_twin_of_an_exported_locator_fails_the_step_named_and_deletes_nothing(
    recorded: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`same_author`: Bob posts again above his old post, so the exported `desc="Delete post by Bob"` names
    two buttons. The exported test fails that step with `ElementAmbiguous` (`unique=True`) and deletes
    nothing, where a plain locator would delete the first (the wrong post)."""
    monkeypatch.setenv("GUISTATE_TEST_SECRET_1", SECRET)
    actions = recorded.pytester.path / "cassettes" / "test_apps" / f"{FEED}.actions.json"
    path, text = export_test(actions, recorded.pytester.path / "exported" / f"{FEED}_scripted.py", width=120)
    assert 'desc="Delete post by Bob", unique=True)' in text  # the plain locator the run's target had alone
    # (it passes as recorded: the fresh-recording test above runs it)
    result = recorded.run("--guistate-llm=off", "--drift=same_author", str(path))
    assert result.parseoutcomes().get("failed") == 1
    result.stdout.fnmatch_lines(["*ElementAmbiguous*desc='Delete post by Bob'* names 2 elements*"])
    assert _effects(recorded, FEED) == []  # no post deleted: neither Bob's new one nor his old one


# The stand-in model's goal table: one goal per persona (a sign-in with a secret and a switch; a dialog
# cancelled), marked slow (it runs by default), and every goal (`-m exhaustive`, deselected by default; the
# default run keeps the example suite's goals and a fresh recording above).
GOAL_SUBSET = {"android": ("signin-then-dark-mode",), "ios": ("dialog-cancel-keeps-ios",)}


def _check_goal_exports(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, platform: str, ids: tuple[str, ...]
) -> None:
    cases = goal_cases(platform, ids)
    assert cases and (not ids or len(cases) == len(ids))
    results = export_goals(pytester, monkeypatch, platform, cases)
    table = [(r.case.id, r.recorded, r.outcome) for r in results]
    assert all(r.recorded == "passed" for r in results), table
    assert all(r.outcome == "passed" for r in results), table  # the same effects on the phone, with no model
    assert not any(r.secret_written for r in results), table
    for file in (pytester.path / "exported").glob("*.py"):
        assert PASSWORD not in file.read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("platform", ["android", "ios"])
def test_goal_table_goals_export_to_tests_that_pass_with_no_model(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, platform: str
) -> None:
    _check_goal_exports(pytester, monkeypatch, platform, GOAL_SUBSET[platform])


@pytest.mark.exhaustive
@pytest.mark.parametrize("platform", ["android", "ios"])
def test_every_goal_table_goal_exports_to_a_test_that_passes(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, platform: str
) -> None:
    _check_goal_exports(pytester, monkeypatch, platform, ())


# -- the drift suite: the exported test and the strict cache replay on every drift ----------------------
DRIFT_GROUND = {
    SETTINGS: ("toggle", "dark_mode=True"),
    GALLERY: ("move_to_album", "Beach,Mountains"),
    FEED: ("delete_post", "Bob"),
}


def _effects(recorded: Recorded, test: str) -> list[tuple[str, str]]:
    """The phone's changes in the inner test's log, short: ('toggle', 'dark_mode'), ('delete_post', 'Bob')."""
    keys = {"toggle": "setting", "delete_post": "author", "add_to_cart": "shop"}
    out = []
    for entry in recorded.log(test):
        action = str(entry.get("action"))
        if action == "move_to_album":
            out.append((action, ",".join(str(x) for x in entry.get("labels") or [])))  # type: ignore[union-attr]
        elif action == "toggle":  # turning Dark mode off is not what the goal meant either
            out.append((action, f"{entry.get('setting')}={entry.get('value')}"))
        elif action in keys:
            out.append((action, str(entry.get(keys[action]))))
    return out


def compare_drifts(
    recorded: Recorded | pytest.Pytester, monkeypatch: pytest.MonkeyPatch, platform: str, drifts: dict[str, str]
) -> list[tuple[str, str, str, str, list[str], list[tuple[str, str]]]]:
    """Record the drift suite's tests on `platform` (unless `recorded` holds them already), export them, then
    run the strict cache replay and the exported test on each drift (`drifts`: drift -> test). Rows: drift,
    test, cache outcome, export outcome, wrong actions (a change the goal did not ask for, by either), what
    the exported test changed."""
    tests = sorted(set(drifts.values()))
    persona = f"--guistate-platform={platform}"
    if isinstance(recorded, pytest.Pytester):
        recorded = Recorded(recorded)
        record(recorded, monkeypatch, persona, "-k", " or ".join(tests)).assert_outcomes(
            passed=len(tests), deselected=4 - len(tests)
        )
    pytester = recorded.pytester
    monkeypatch.setenv("GUISTATE_TEST_SECRET_1", SECRET)
    folder = pytester.path / "cassettes" / "test_apps" / ("ios" if platform == "ios" else "")
    exported = {
        t: export_test(folder / f"{t}.actions.json", pytester.path / "exported" / f"{t}_scripted.py", width=120)[0]
        for t in tests
    }
    rows = []
    for drift, test in drifts.items():
        outcomes, wrong, changed = [], [], []
        for mode, target in (("--guistate-llm=cache", "test_apps.py"), ("--guistate-llm=off", str(exported[test]))):
            result = recorded.run(mode, persona, f"--drift={drift}", "-k", test, target)
            counts = result.parseoutcomes()
            # a located step whose locator named two elements failed it, and nothing was done
            refused = re.search(r"ElementAmbiguous: \w+=.* names \d+ elements", result.stdout.str()) is not None
            outcomes.append("passed" if counts.get("passed") == 1 else "refused" if refused else "failed")
            changed = _effects(recorded, test)
            wrong += [f"{mode}: {e}" for e in changed if e != DRIFT_GROUND[test]]
        rows.append((drift, test, outcomes[0], outcomes[1], wrong, changed))
    return rows


ALL_DRIFTS = {**DRIFT_TESTS, **{d: SETTINGS for d in SETTINGS_DRIFTS}, **{d: FEED for d in FEED_RELEASES}}


@pytest.mark.exhaustive
@pytest.mark.parametrize("platform", ["android", "ios"])
def test_every_drift_gives_the_same_verdict_for_the_export_and_the_cache_replay(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, platform: str
) -> None:
    rows = compare_drifts(pytester, monkeypatch, platform, ALL_DRIFTS)
    table = "\n".join(f"{d:<18} {t:<30} cache {c:<7} export {e:<7} {w}" for d, t, c, e, w, _ in rows)
    print(table)
    assert not [r for r in rows if r[4]], table  # never a wrong action
    # "refused" is a failure (ElementAmbiguous: the exported locator names two, as on same_author, where Bob
    # posts again) that changed nothing
    assert all(did == [] for _, _, _, e, _, did in rows if e == "refused"), table
    # the same verdict on every drift: where the fingerprint no longer trusts a target that the exported locator
    # still names alone (icon_delete), the replay re-finds it by that locator (`replay._named_alone`)
    assert [d for d, _, c, e, _, _ in rows if c != e.replace("refused", "failed")] == [], table


def test_the_export_option_writes_each_passed_llm_test(pytester: pytest.Pytester) -> None:
    """`--guistate-export=DIR` on a cache replay of the example suite's Feed test: its scripted test in DIR."""
    shutil.copy(EXAMPLE / "test_llm.py", pytester.path / "test_llm.py")
    shutil.copy(EXAMPLE / "sim_apps.py", pytester.path / "sim_apps.py")
    target = pytester.path / "cassettes" / "test_llm"
    target.mkdir(parents=True)
    for path in CACHES.glob("*.actions.json"):
        shutil.copy(path, target / path.name)
    pytester.makeini("[pytest]\nguistate_llm_updater = off\n")
    result = run_inprocess(
        pytester,
        "-p",
        "no:cacheprovider",
        "--guistate-memory=off",
        "--guistate-llm=cache",
        "--guistate-export=exported",
        "test_llm.py",
        "-k",
        "deletes",
    )
    result.assert_outcomes(passed=1, deselected=1)
    result.stdout.fnmatch_lines(["*LLM runs exported as scripted tests*", "*exported to exported*_scripted.py"])
    assert [p.name for p in (pytester.path / "exported").iterdir()] == [
        "test_actor_deletes_one_post_and_an_ai_check_confirms_it_scripted.py"
    ]


def test_an_ai_check_without_text_evidence_stays_an_ai_check_and_the_file_says_so(tmp_path: Path) -> None:
    data = json.loads((CACHES / "test_actor_deletes_one_post_and_an_ai_check_confirms_it.actions.json").read_text())
    data["checks"][0]["words"] = {word: True for word in data["checks"][0]["words"]}  # nothing absent, no quote
    actions = (
        tmp_path / "cassettes" / "test_llm" / "test_actor_deletes_one_post_and_an_ai_check_confirms_it.actions.json"
    )
    actions.parent.mkdir(parents=True)
    actions.write_text(json.dumps(data))
    text = render(build_export(actions, test_file=EXAMPLE / "test_llm.py"))
    assert 'assert guistate.check("The post by Erin is no longer in the feed").verdict == "pass"' in text
    assert "keeps AI checks that need a model" in text.split('"""')[2]  # said in the header
