"""Options, ini values and the marker, as a user meets them (inner runs through pytester)."""

from __future__ import annotations

import json

import pytest

from pytest_guistate.config import CONFIG_KEY, Retain
from pytest_guistate.core.tiers import Tier


def test_tier_choices_are_offered_and_validated(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["*--guistate={off,light,standard,full,auto}*"])
    bad = pytester.runpytest("--guistate=heavy")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*invalid choice: 'heavy'*"])


def test_options_reach_the_frozen_config(pytester: pytest.Pytester) -> None:
    caps = pytester.path / "caps.json"
    caps.write_text(json.dumps({"appium:udid": "emulator-5554"}))
    config = pytester.parseconfigure(
        "--guistate=full",
        "--guistate-device=http://127.0.0.1:4723",
        f"--guistate-caps={caps}",
        "--guistate-artifacts=out",
        "--guistate-retain=on",
        "--guistate-summary=summary.json",
    )
    settings = config.stash[CONFIG_KEY]
    assert settings.tier is Tier.FULL
    assert settings.devices == ("http://127.0.0.1:4723",)
    assert not settings.uses_sim
    assert settings.capabilities == {"appium:udid": "emulator-5554"}
    assert settings.retain is Retain.ON
    assert str(settings.artifacts_dir) == "out"
    assert settings.summary_path is not None and settings.summary_path.name == "summary.json"


def test_ini_values_are_defaults_and_the_command_line_wins(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        """
        [pytest]
        guistate = light
        guistate_retain = off
        guistate_light_max_steps = 5
        """
    )
    settings = pytester.parseconfigure().stash[CONFIG_KEY]
    assert settings.tier is Tier.LIGHT
    assert settings.retain is Retain.OFF
    assert settings.thresholds.light_max_steps == 5
    assert pytester.parseconfigure("--guistate=standard").stash[CONFIG_KEY].tier is Tier.STANDARD


def test_defaults_are_auto_tier_on_the_embedded_sim(pytester: pytest.Pytester) -> None:
    settings = pytester.parseconfigure().stash[CONFIG_KEY]
    assert settings.tier is Tier.AUTO
    assert settings.uses_sim
    assert settings.retain is Retain.FAILURE


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--guistate-device=ftp://phone"], "*neither 'sim' nor an http(s)://*"),
        (["--guistate-device=sim,http://127.0.0.1:4723"], "*cannot be mixed*"),
        (["--guistate-caps=missing.json"], "*no such file 'missing.json'*"),
        (["--guistate-device=http://a:4723,http://"], "*'http://' is neither 'sim' nor*"),
        (["--guistate-device=@devices.json"], "*no such device file 'devices.json'*"),
    ],
)
def test_bad_option_values_are_usage_errors(pytester: pytest.Pytester, args: list[str], message: str) -> None:
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_caps_file_that_is_not_json_names_the_problem(pytester: pytest.Pytester) -> None:
    (pytester.path / "caps.json").write_text("{not json")
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest("--guistate-caps=caps.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*caps.json is not valid JSON*"])


def test_caps_file_that_cannot_be_read_names_the_problem(pytester: pytest.Pytester) -> None:
    (pytester.path / "caps.json").mkdir()  # a folder where the file should be: the OS refuses to read it
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest("--guistate-caps=caps.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--guistate-caps: cannot read the file caps.json: *"])


def test_marker_is_registered_for_strict_markers(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.guistate(tier="light")
        def test_marked():
            pass
        """
    )
    pytester.runpytest("--strict-markers").assert_outcomes(passed=1)


def test_disabling_the_plugin_removes_its_options(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain(): pass")
    pytester.runpytest("-p", "no:guistate").assert_outcomes(passed=1)
    result = pytester.runpytest("-p", "no:guistate", "--guistate=full")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unrecognized arguments: --guistate=full*"])
