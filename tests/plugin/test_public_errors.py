"""Issue 44 item 4: every error class the docs name is importable from `pytest_guistate`, listed in
README's API table, and `import pytest_guistate` alone still loads no Appium (or Selenium) client."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import pytest_guistate

ROOT = Path(__file__).resolve().parents[2]


def _classes_defined() -> dict[str, str]:
    """Every class of the package by name -> its module (first definition wins)."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "pytest_guistate").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for match in re.finditer(r"^class (\w+)\(", path.read_text(encoding="utf-8"), re.MULTILINE):
            found.setdefault(match.group(1), module)
    return found


def documented_errors() -> dict[str, type[BaseException]]:
    """The exception (and warning) classes of the package that README or a docs page names in backticks."""
    named: set[str] = set()
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        named |= set(re.findall(r"`(\w+)`", page.read_text(encoding="utf-8")))
    defined = _classes_defined()
    errors: dict[str, type[BaseException]] = {}
    for name in sorted(named & defined.keys()):
        obj = getattr(importlib.import_module(defined[name]), name)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            errors[name] = obj
    return errors


def test_the_issue_names_are_among_the_documented_errors() -> None:
    """The scan itself finds what the issue lists (a scan that found nothing would pass the next test)."""
    assert {
        "ContextUnavailable",
        "WebViewGone",
        "ElementNotReady",
        "ElementNotFound",
        "DeviceError",
        "DeviceTimeout",
    } <= documented_errors().keys()


@pytest.mark.parametrize("name", sorted(documented_errors()))
def test_a_documented_error_is_importable_from_the_package(name: str) -> None:
    cls = documented_errors()[name]
    assert name in pytest_guistate.__all__, f"{name} is not in pytest_guistate.__all__"
    assert getattr(pytest_guistate, name) is cls, f"pytest_guistate.{name} is not {cls.__module__}.{name}"


def test_readme_api_table_lists_every_documented_error() -> None:
    table = [
        line
        for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| errors to catch")
    ]
    assert len(table) == 1, "README's API table has no row of errors to catch"
    missing = sorted(n for n in documented_errors() if f"`{n}`" not in table[0])
    assert not missing, f"README's errors row misses {missing}"


def test_import_pytest_guistate_loads_no_appium_client() -> None:
    """In a fresh interpreter: the package alone imports neither Appium nor Selenium; naming a device
    error loads it then, and it is the class a device raises."""
    script = (
        "import sys\n"
        "import pytest_guistate\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('appium', 'selenium'))\n"
        "assert not loaded, loaded\n"
        "from pytest_guistate import WebViewGone, DeviceError\n"
        "from pytest_guistate.devices import errors\n"
        "assert WebViewGone is errors.WebViewGone and issubclass(WebViewGone, DeviceError)\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False, cwd=ROOT)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchThing"):
        pytest_guistate.NoSuchThing  # noqa: B018 - the lookup is the test
