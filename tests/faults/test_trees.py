"""Hostile and broken page sources (issue 14): refused with a clear reason, or handled without blowing up;
hostile text stays text in report.html, JUnit XML, Allure and the terminal."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from .conftest import two_steps
from .fault_proxy import Rule

XXE = ('<?xml version="1.0"?><!DOCTYPE h [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
       '<hierarchy><node text="&x;"/></hierarchy>')
LAUGHS = ('<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
          '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>'
          '<hierarchy><node text="&d;"/></hierarchy>')
HOSTILE = '<img src=x onerror=alert(1)></script>{{7*7}}'


def _inject(extra: str):  # type: ignore[no-untyped-def]
    def rewrite(xml: str) -> str:
        return xml.replace("</hierarchy>", extra + "</hierarchy>")
    return rewrite


def _wide(xml: str) -> str:
    return _inject('<node class="android.view.View" text="" bounds="[0,0][1,1]"/>' * 50_000)(xml)


def _deep(xml: str) -> str:
    return _inject('<node class="android.view.View" bounds="[0,0][1,1]">' * 1000 + "</node>" * 1000)(xml)


REFUSED = [
    ("malformed", "<hierarchy><node text='a'", ("UITreeError", "malformed page source XML")),
    ("XXE", XXE, ("UITreeError", "page source refused as unsafe XML", "EntitiesForbidden")),
    ("billion laughs", LAUGHS, ("UITreeError", "page source refused as unsafe XML")),
]


@pytest.mark.parametrize(("what", "xml", "names"), REFUSED, ids=[c[0] for c in REFUSED])
def test_a_bad_tree_is_refused_naming_why(run_inner, proxy, what: str, xml: str, names: tuple[str, ...]) -> None:
    proxy.add(Rule("GET", r"/source$", "value", value=lambda _old, xml=xml: xml, armed=False))
    out = run_inner(two_steps())
    out.result.assert_outcomes(failed=1)
    out.assert_contract(bound_s=30, names=names, steps=["open the delete dialog"])
    assert "root:" not in out.text, "an external entity was resolved"


@pytest.mark.parametrize("shape", ["50k nodes", "1000-deep nesting"])
def test_a_huge_or_deep_tree_is_handled(run_inner, proxy, shape: str) -> None:
    proxy.add(Rule("GET", r"/source$", "value", value=_wide if shape == "50k nodes" else _deep, armed=False))
    out = run_inner(two_steps())
    out.result.assert_outcomes(passed=1)
    assert "RecursionError" not in out.text
    out.assert_contract(bound_s=90, names=(), steps=[])


HOSTILE_TEST = '''
import pytest

SECRET = "hunter2-never-in-logs"


@pytest.mark.guistate(app="com.guistate.feed")
def test_hostile(device, guistate):
    guistate.secret(SECRET)
    guistate.goal("Find the hostile label", plan=["found"])
    with guistate.step("tap what is not there", expect="never"):
        device.tap(text="no such label")
'''


def test_hostile_text_stays_text_everywhere(run_inner, proxy, pytester) -> None:
    node = f'<node class="android.widget.Button" clickable="true" text="{HOSTILE.replace("<", "&lt;").replace(">", "&gt;")}" bounds="[0,300][500,400]"/>'
    proxy.add(Rule("GET", r"/source$", "value", value=_inject(node)))
    out = run_inner(HOSTILE_TEST, "--junitxml=junit.xml", "--alluredir=allure", "--guistate-retain=on")
    out.result.assert_outcomes(failed=1)
    out.assert_contract(bound_s=30, names=(HOSTILE,), steps=["tap what is not there"])  # terminal: plain text
    html = (out.folders()[0] / "report.html").read_text("utf-8")
    assert "{{7*7}}" in html, "the label was dropped rather than escaped"
    assert "<img src=x onerror" not in html and "</script>{{" not in html
    junit = ET.parse(pytester.path / "junit.xml")  # parses: the text did not break the XML
    assert HOSTILE in "".join(junit.getroot().itertext())
    results = [json.loads(p.read_text("utf-8")) for p in (pytester.path / "allure").glob("*-result.json")]
    assert results and HOSTILE in json.dumps(results, ensure_ascii=False)
    for attachment in (pytester.path / "allure").glob("*.html"):
        assert "<img src=x onerror" not in attachment.read_text("utf-8")
