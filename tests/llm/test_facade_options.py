"""The per-test glue (`open_llm`) and the LLM options, as the plugin will wire them."""

from __future__ import annotations

import json

import pytest

from pytest_guistate.llm.client import LLMSettings, Mode
from pytest_guistate.llm.errors import LLMConfigError
from pytest_guistate.llm.facade import open_llm

FAKE_KEY = "sk-ant-test-DO-NOT-LEAK-123"


def test_open_llm_record_then_replay_with_report(sim, server, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)  # the SDK reads it: a proxy can stand in
    test_file = tmp_path / "test_shop.py"
    for mode in (Mode.RECORD, Mode.REPLAY):
        device = sim(None)
        llm = open_llm(LLMSettings(mode=mode, budget=200_000), device.session, device.screen,
                       test_file=test_file, test_name="test_login")
        result = llm.run("Log in to Settings as qa@example.com with password correct-horse", max_steps=8)
        llm.check("The screen says 'Signed in as qa@example.com'")
        report = llm.report()
        llm.close()
        assert result.success and report["runs"][0]["outcome"] == "done"
        assert report["checks"][0]["verdict"] == "pass"
        assert report["usage"]["totals"]["calls"] >= 5 and report["usage"]["by_step"]
        json.dumps(report)  # the summary JSON must be able to hold it
    cassette = tmp_path / "cassettes" / "test_shop" / "test_login.json"
    assert cassette.exists() and FAKE_KEY not in cassette.read_text()


def test_anthropic_mode_needs_the_key_from_the_environment(sim, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    device = sim(None)
    with pytest.raises(LLMConfigError, match="set ANTHROPIC_API_KEY in the environment"):
        open_llm(LLMSettings(mode=Mode.ANTHROPIC), device.session, device.screen, test_file=__import__("pathlib").Path(
            __file__), test_name="t")


def test_off_mode_refuses_run_with_a_clear_message(sim) -> None:
    device = sim(None)
    llm = open_llm(LLMSettings(), device.session, device.screen, test_file=__import__("pathlib").Path(__file__),
                   test_name="t")
    with pytest.raises(AssertionError, match="guistate.run needs a model: use --guistate-llm=replay"):
        llm.run("anything")


def test_options_parse(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
from pytest_guistate.llm.options import add_llm_options, build_llm_settings
def pytest_addoption(parser):
    add_llm_options(parser)
def pytest_configure(config):
    s = build_llm_settings(config)
    print(f"LLM {s.mode.value} {s.model} {s.max_tokens} {s.budget} {s.updater} {s.price}")
""")
    pytester.makeini("[pytest]\nguistate_llm_model = claude-haiku-4-5\nguistate_llm_max_tokens = 512\n")
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest_inprocess("-s", "-p", "no:guistate", "--guistate-llm=replay", "--guistate-llm-budget=9000")
    result.stdout.fnmatch_lines(["*LLM replay claude-haiku-4-5 512 9000 on_demand None*"])
    bad = pytester.runpytest_inprocess("-p", "no:guistate", "--guistate-llm-budget=lots")
    bad.stderr.fnmatch_lines(["*--guistate-llm-budget: 'lots' is not an integer*"])
