"""`guistate export-test` (issue 45): a verified LLM run, read from its `.actions.json`, written as a
scripted pytest test a person can review, edit and run with no model, cassette or action cache.

Why a file of plain `device.tap(...)` / `guistate.step(...)` calls and not a replay: a pull request shows
what the test does, a person can change one step by hand, and the test runs anywhere the plugin runs.
What the run proved is kept as the test's expectations, so the script is not weaker than the replay:

* each actor step becomes `with guistate.step(name, expect=..., idempotent=...)` around the verb the
  run used, on the most stable locator its target offered that found the target *alone* when it was
  recorded (id, then accessibility label, then visible text: `target.unique` of the cache); an XPath
  only when none did, with a comment saying so (a locator that matches two elements would act on the
  first: a wrong action);
* the expectation is the run's verified effect: the model's own `expect`, else what appeared on the
  next screen (else what was gone); a value the run read off a screen (a price) must be shown there;
* the run's milestones become `guistate.milestone(...)`, its end `guistate.assert_complete()`;
* an AI check whose evidence is text on screen becomes a plain expectation; otherwise it stays a
  `guistate.check(...)` (which needs a model) and the file says so;
* a secret (`[secret N]`, `guistate.secret("...")`) is never written: it is read from an environment
  variable named in the file's header.

When the test file the cache belongs to is found (`cassettes/<file>/[ios/]<test>.actions.json` sits
beside `<file>.py`), its marker, fixtures, the code around `guistate.run(...)` (a sign-in typed by the
test, a `guistate.goal(...)` with its plan's checks, assertions on the result) are kept, and only the
`run(...)` / `check(...)` calls are replaced; else the marker is built from the first screen's app. A browser
session has no app: its exported test asserts `device.browser` and opens the page each run started on (`page`
of the cache's runs), and its XPath fallback is written for the page's DOM, where a browser evaluates it.

The output is formatted as `ruff format` formats it (line length 120, double quotes, calls split the
way ruff splits them): the tests run `ruff format --check` on exported files; ruff is not needed here.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pytest_guistate.llm.cache.cachefile import (
    _LABELS_KEPT,
    ActionCache,
    CachedCheck,
    CachedStep,
    load_cache,
    named_alone,
)
from pytest_guistate.llm.cache.identity import identity, identity_words

__all__ = [
    "ExportedStep",
    "ExportedTest",
    "Locator",
    "build_export",
    "choose_locator",
    "export_main",
    "export_test",
    "render",
    "step_expectation",
]

LINE = 88  # ruff format's and black's default; `--line-length` for a project that sets another
_SECRET = re.compile(r"\[secret (\d+)\]")
_ID_LIKE = re.compile(r"^[a-z][A-Za-z0-9_]*$")  # a resource id among the labels ("button1", "alertTitle")
_NAME_CHARS = 70


# -- the model of the exported test ------------------------------------------------------------
@dataclass(frozen=True)
class Locator:
    """How the script finds a step's target: `kind` id | desc | text | xpath; `note`: why not a plainer one."""

    kind: str
    value: str
    note: str = ""
    path: str = ""  # an XPath's expression before its `[count(...) = 1]` guard (written once, in a variable)

    def args(self) -> list[str]:
        """The call's locator arguments: a plain one must still name one element (`unique=True`: two are
        `ElementAmbiguous`, never a tap on the first); an XPath says so itself (its `count() = 1`)."""
        located = [f"{self.kind}={py_str(self.value)}"]
        return located if self.kind == "xpath" else [*located, "unique=True"]


@dataclass
class ExportedStep:
    """One actor step of the run as a scripted step: its verb call, expectation and comments."""

    n: int
    name: str
    calls: list[str]  # the statements inside the `with guistate.step(...)` block
    expect: list[str] = field(default_factory=list)  # check expressions (all must hold)
    idempotent: bool = True
    comments: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)  # statements after the block (milestone, remember)
    before: list[str] = field(default_factory=list)  # statements before the block (a switch's state first)
    locator: Locator | None = None


@dataclass
class ExportedTest:
    """The whole exported file: what it is from, its imports, the test function's parts."""

    source: str  # the .actions.json it was exported from (as given)
    test: str
    platform: str
    recorded: dict[str, Any]
    decorators: list[str]
    params: list[str]
    body: list[str]  # indented statements, in order
    secrets: dict[str, str] = field(default_factory=dict)  # env variable -> what it stands for
    checks_imported: set[str] = field(default_factory=set)  # names from pytest_guistate
    extra_imports: list[str] = field(default_factory=list)  # the original module's imports still used
    needs_model: list[str] = field(default_factory=list)  # AI checks kept as guistate.check
    milestone_checks: dict[str, str] = field(default_factory=dict)  # the plan's checks, as the test wrote them
    steps: list[ExportedStep] = field(default_factory=list)
    width: int = LINE  # the line length the file is formatted for
    context: str = ""  # the context the script is in at this point of the body ("" unknown: the test's own code)
    browser: str = ""  # a browser session's browserName ("browser" when the run did not say), "" an app session


# -- formatting, as ruff format writes it ------------------------------------------------------
def py_str(text: str) -> str:
    """A string literal as ruff format prefers it: double quotes unless only single quotes avoid escapes."""
    if '"' in text and "'" not in text:
        return "'" + text.replace("\\", "\\\\").replace("\n", "\\n") + "'"
    return json.dumps(text, ensure_ascii=False)


def call_lines(head: str, args: Sequence[str], indent: int, tail: str = "", width: int = LINE) -> list[str]:
    """`head(args)tail` on one line if it fits, else the arguments on one indented line, else one per
    line with a trailing comma (ruff's three forms)."""
    pad, inner = " " * indent, " " * (indent + 4)
    one = f"{pad}{head}({', '.join(args)}){tail}"
    if len(one) <= width:
        return [one]
    hugged = inner + ", ".join(args)
    if len(hugged) <= width:
        return [f"{pad}{head}(", hugged, f"{pad}){tail}"]
    lines = [f"{pad}{head}("]
    for arg in args:
        split = _call_parts(arg) if len(f"{inner}{arg},") > width else None
        lines += [f"{inner}{arg},"] if split is None else call_lines(split[0], split[1], indent + 4, ",", width)
    return [*lines, f"{pad}){tail}"]


def assign_lines(name: str, expr: str, indent: int, width: int = LINE) -> list[str]:
    """`name = expr`, its right side in parentheses when only that makes it fit (as ruff writes it)."""
    pad = " " * indent
    if len(f"{pad}{name} = {expr}") <= width or len(f"{pad}    {expr}") > width:
        return [f"{pad}{name} = {expr}"]
    return [f"{pad}{name} = (", f"{pad}    {expr}", f"{pad})"]


def _call_parts(expr: str) -> tuple[str, list[str]] | None:
    """`key=name(a, b=c)` -> ('key=name', ['a', 'b=c']) in their own spelling; None if no call."""
    key, _, rest = expr.partition("=") if re.match(r"^[a-z_]+=[a-z_]", expr) else ("", "", expr)
    try:
        node = ast.parse(rest, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call):
        return None
    parts = [ast.get_source_segment(rest, a) or "" for a in node.args]
    parts += [f"{k.arg}={ast.get_source_segment(rest, k.value)}" for k in node.keywords]
    head = ast.get_source_segment(rest, node.func) or ""
    return (f"{key}={head}" if key else head), parts


def comment_lines(text: str, indent: int, width: int = LINE) -> list[str]:
    """`# text`, wrapped at the line length."""
    return wrap(text, " " * indent + "# ", width)


def wrap(text: str, pad: str, width: int = LINE) -> list[str]:
    """`text` in lines of at most `width` characters, each starting with `pad`."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        if line and len(pad) + len(line) + 1 + len(word) > width:
            lines.append(pad + line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, pad + line] if line else lines


# -- locators ----------------------------------------------------------------------------------
def _xpath_literal(value: str) -> str:
    """A string literal in XPath 1.0, which has no escapes: `concat(...)` when it holds both quotes."""
    if "'" not in value:
        return f"'{value}'"
    if '"' not in value:
        return f'"{value}"'
    return "concat(" + ', "\'", '.join(f"'{part}'" for part in value.split("'")) + ")"


def _xpath(fp: dict[str, Any], platform: str) -> str:
    """An XPath over the fingerprint's names, pinned to the label its row binds it to when it has one."""
    ios = platform == "ios"
    conds: list[str] = []
    if fp.get("rid"):
        rid = str(fp["rid"])
        conds.append(
            f"@name={_xpath_literal(rid)}" if ios else f"contains(@resource-id, {_xpath_literal(':id/' + rid)})"
        )
    if fp.get("text") and identity_words(str(fp["text"])):  # a switch's "OFF" is its state, not its name
        text = _xpath_literal(str(fp["text"]))
        if "checked" in fp:  # an iOS switch carries its row's label: in any case or punctuation, as its row's
            conds.append(_loose("@label" if ios else "@text", str(fp["text"])))
        else:
            conds.append(f"(@label={text} or @value={text} or @placeholderValue={text})" if ios else f"@text={text}")
    if fp.get("desc"):
        conds.append(
            f"@label={_xpath_literal(str(fp['desc']))}" if ios else f"@content-desc={_xpath_literal(str(fp['desc']))}"
        )
    kind = str(fp.get("kind") or "")
    if "checked" in fp and not ios:  # a switch or a check box: the kind of control may change, not that
        conds.insert(0, "@checkable='true'")
    elif kind and not ios:
        conds.insert(0, f"contains(@class, {_xpath_literal('.' + kind)})")
    element = f"XCUIElementType{kind}" if ios and kind else "*"
    own = f"{element}[{' and '.join(conds)}]" if conds else element
    bound = identity(fp)
    path = f"//{own}"
    if "checked" in fp and bound.how == "bound label" and bound.label:  # a switch: by the label of its row
        attr = "@label" if ios else "@text"
        path = f"//*[{_loose(attr, bound.label)}]/../{own}"
    return path


def _only_one(path: str) -> str:
    """It names an element only when it names exactly one: two matches are a miss, never a tap on the first."""
    return f"{path}[count({path}{_ONLY_ONE}"


_ONLY_ONE = ") = 1]"


def _ascii_lower(text: str) -> str:
    """Lower case as XPath 1.0's `translate` over A-Z makes it (other letters are left as they are)."""
    return "".join(c.lower() if "A" <= c <= "Z" else c for c in text)


def _shown(text: str) -> tuple[str, str]:
    """The DOM's text of the context node, whitespace normalised, and `text` as it is compared with it: a label
    the tree read in capitals may be written otherwise and upper-cased by CSS, so it is compared in lower case."""
    text = " ".join(text.split())
    if text.upper() != text or text.lower() == text:
        return "normalize-space(.)", _xpath_literal(text)
    lowered = "translate(normalize-space(.), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
    return lowered, _xpath_literal(_ascii_lower(text))


def _web_xpath(fp: dict[str, Any]) -> str | None:
    """An XPath for a browser session, where `xpath=` is evaluated on the page's DOM (not on the tree the
    recording read): the element's names as the DOM holds them (its id as `data-testid`, `id` or `name`; its
    label as `aria-label`, `alt` or `title`; its shown text in any case), the innermost element so named,
    pinned to the smallest container that holds its row's texts ("in" of the fingerprint) and no other
    element so named. None when the fingerprint names nothing the DOM has."""
    conds: list[str] = []
    if fp.get("rid"):
        rid = _xpath_literal(str(fp["rid"]))
        conds.append(f"(@data-testid={rid} or @id={rid} or @name={rid})")
    if fp.get("desc"):
        desc = _xpath_literal(str(fp["desc"]))
        conds.append(f"(@aria-label={desc} or @alt={desc} or @title={desc})")
    text = str(fp.get("text") or "")
    if fp.get("kind") == "EditText":  # a field's text is its value, which is no text of the DOM
        if fp.get("hint"):
            conds.append(f"@placeholder={_xpath_literal(str(fp['hint']))}")
    elif text and identity_words(text) and "checked" not in fp:  # a switch's "OFF" is its state, not its name
        conds.append("=".join(_shown(text)))
    if not conds:
        return None
    own = " and ".join(conds)
    element = f"*[{own}][not(.//*[{own}])]"  # the innermost: a button's label <span> is not a second match
    names = {str(fp.get(k) or "") for k in ("text", "desc", "rid")}
    row: list[str] = []
    for part in str(fp.get("in") or "").split(" · "):
        part = part.strip().rstrip("…").strip()
        if part and part not in names and identity_words(part) and len(row) < 3:
            said = _xpath_literal(part)
            shown, literal = _shown(part)
            row.append(f"(contains({shown}, {literal}) or .//*[@aria-label={said} or @alt={said} or @title={said}])")
    if not row:
        return f"//{element}"
    return f"//{element}[ancestor::*[{' and '.join(row)}][count(.//{element}) = 1]]"


_UPPER, _LOWER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ-_", "abcdefghijklmnopqrstuvwxyz  "


def _loose(attr: str, label: str) -> str:
    """The label in any case, with "-" or "_" for a space, among other characters ("  Dark-mode:  ")."""
    words = " ".join(re.findall(r"[A-Za-z0-9]+", label.lower()))
    return f"contains(translate({attr}, '{_UPPER}', '{_LOWER}'), {_xpath_literal(words)})"


def choose_locator(step: CachedStep, platform: str, *, web: bool = False) -> Locator | None:
    """The most stable locator that found the step's target alone when recorded: id, then accessibility
    label, then visible text; else an XPath over its names and its row's label (said in a comment)."""
    target = step.target or {}
    fp = step.fingerprint
    if isinstance(target.get("unique"), list):
        alone = named_alone(target)  # never by a state ("OFF"); the cache replay re-finds a target by it too
        if alone is not None:
            return Locator(*alone)
        if not fp:
            return None
        return _xpath_locator(
            fp,
            platform,
            web,
            "no id, label or text named this element alone on the recorded screen: an XPath over {names} and its row",
        )
    # a cache recorded before `unique`: which single locator named the target alone is unknown, and one
    # that named several would act on the first (a wrong action); all its names at once name it
    if not fp:
        return None
    return _xpath_locator(
        fp,
        platform,
        web,
        "the cache did not record which locators named this element alone (re-record it for a plainer one): an "
        "XPath over all {names}",
    )


def _xpath_locator(fp: dict[str, Any], platform: str, web: bool, note: str) -> Locator | None:
    """The XPath fallback, in the tree's form on a phone, in the page DOM's in a browser session (`web`: a
    browser evaluates `xpath=` on the document, `_web_xpath`), guarded to name one element; None when it names
    nothing the DOM has."""
    path = _web_xpath(fp) if web else _xpath(fp, platform)
    if path is None:
        return None
    names = "its names in the page's DOM" if web else "its names"
    return Locator("xpath", _only_one(path), note.format(names=names), path)


# -- expectations ------------------------------------------------------------------------------
def _readable(label: str) -> bool:
    masked = set(label.strip()) <= set("•*●")  # a password field's dots: the secret's length, never a name
    return (
        bool(label.strip())
        and not masked
        and not _ID_LIKE.match(label)
        and len(label) <= 60
        and not _SECRET.search(label)
    )


def step_expectation(step: CachedStep) -> tuple[list[str], str]:
    """The step's verified effect as check expressions, and where it came from (for the comment)."""
    expect = step.effect.get("expect")
    if isinstance(expect, dict) and expect.get("gone"):
        return [f"gone({py_str(str(expect['gone']))})"], "the run's own expectation"
    if isinstance(expect, dict) and expect.get("visible"):
        return [f"visible({py_str(str(expect['visible']))})"], "the run's own expectation"
    before = [str(x) for x in step.screen.get("labels") or []]
    after = [str(x) for x in (step.effect.get("next_screen") or {}).get("labels") or []]
    # a signature keeps the first labels only: a label "new" beside a cut list may have been cut before
    if after and len(before) < _LABELS_KEPT:
        appeared = [label for label in after if label not in before and _readable(label)]
        if appeared:
            return [f"visible({py_str(appeared[0])}, exact=True)"], "what appeared on the next screen"
    if before and len(after) < _LABELS_KEPT:
        vanished = [label for label in before if label not in after and _readable(label)]
        if vanished:
            return [f"gone({py_str(vanished[0])}, exact=True)"], "what was gone from the next screen"
    return [], ""


# -- steps -------------------------------------------------------------------------------------
def _text_expr(text: str, secrets: dict[str, str]) -> str:
    """A typed text: a literal, or the variable holding the secret its placeholder stands for."""
    match = _SECRET.fullmatch(text.strip())
    if match:
        name = f"GUISTATE_SECRET_{match.group(1)}"
        secrets.setdefault(name, f"the value the run typed as [secret {match.group(1)}]")
        return f"secret_{match.group(1)}"
    if _SECRET.search(text):
        parts = _SECRET.split(text)
        pieces = []
        for index, part in enumerate(parts):
            if index % 2:
                secrets.setdefault(f"GUISTATE_SECRET_{part}", f"the value the run typed as [secret {part}]")
                pieces.append("{secret_" + part + "}")
            else:
                pieces.append(part.replace("{", "{{").replace("}", "}}"))
        return "f" + py_str("".join(pieces))
    return py_str(text)


def _step_name(step: CachedStep) -> str:
    name = step.summary().split(" (in ")[0]
    return name if len(name) <= _NAME_CHARS else name[: _NAME_CHARS - 1] + "…"


def _swipe_points(step: CachedStep) -> tuple[int, int, int, int] | None:
    """A swipe's start and end over the region the run saw change: 30 % of its size each way from its
    centre, as the actor swipes its list (the cache keeps the direction, not the points)."""
    region = step.effect.get("region")
    if not (isinstance(region, list) and len(region) == 4):
        return None
    left, top, right, bottom = (int(v) for v in region)
    cx, cy, dx, dy = (left + right) // 2, (top + bottom) // 2, (right - left) * 3 // 10, (bottom - top) * 3 // 10
    return {
        "up": (cx, cy + dy, cx, cy - dy),
        "down": (cx, cy - dy, cx, cy + dy),
        "left": (cx + dx, cy, cx - dx, cy),
        "right": (cx - dx, cy, cx + dx, cy),
    }.get(str(step.args.get("direction", "up")))


def export_step(
    step: CachedStep, platform: str, secrets: dict[str, str], width: int = LINE, *, web: bool = False
) -> ExportedStep:
    """One cached actor step as a scripted step (no expectation yet: `build_export` adds it)."""
    out = ExportedStep(step.n, _step_name(step), [], idempotent=step.idempotent)
    if step.tool in ("tap", "type_text"):
        out.locator = choose_locator(step, platform, web=web)
        if out.locator is not None and out.locator.note:
            out.comments.append(out.locator.note)
    located = out.locator.args() if out.locator is not None else []
    if out.locator is not None and out.locator.kind == "xpath" and out.locator.path:
        # the path once, in a variable: the count() that makes two matches a miss repeats it
        name = f"only_{step.n}"
        out.before = assign_lines(name, py_str(out.locator.path), 4, width)
        located = ['xpath=f"{' + name + "}[count({" + name + '}) = 1]"']
    if step.tool == "tap":
        if out.locator is None:
            raise ValueError(f"step {step.n} taps an element the cache names no way to find")
        out.calls = call_lines("device.tap", located, 8, width=width)
    elif step.tool == "type_text":
        text = _text_expr(str(step.args.get("text", "")), secrets)
        out.calls = call_lines("device.type", [text, *located], 8, width=width)
        if not located:
            out.comments.append("typed into the focused field, as the run did")
    elif step.tool in ("back", "home"):
        out.calls = [f"        device.{step.tool}()"]
    elif step.tool == "refresh":
        out.calls = ["        device.pull_to_refresh()"]
    elif step.tool == "swipe":
        points = _swipe_points(step)
        if points is None:
            raise ValueError(f"step {step.n} swipes over no recorded region")
        out.calls = call_lines("device.swipe", [str(p) for p in points], 8, width=width)
        out.comments.append(f"the run swiped {step.args.get('direction', 'up')} over the list it saw change")
    elif step.tool == "wait":
        out.calls = []  # a scripted step settles by itself: the wait is only said
    else:
        raise ValueError(f"step {step.n}: tool {step.tool!r} has no scripted form")
    return out


def _remembered(step: CachedStep) -> dict[str, str]:
    """Values the step read off the screen it acted on (a price): they must be shown there."""
    remembered = step.args.get("remember")
    if not isinstance(remembered, dict):
        return {}
    labels = [str(label) for label in step.screen.get("labels") or []]
    return {str(k): str(v) for k, v in remembered.items() if str(v).strip() and any(str(v) in lab for lab in labels)}


_WEB_VIEW = 'next(c for c in device.contexts if c.startswith("WEBVIEW_"))'


def switch_context(step: CachedStep, test: ExportedTest) -> list[str]:
    """`device.switch_context(...)` before a step whose target the run found in another context than the one
    the script is in (a hybrid app: the page's field in the web view, the toolbar's button in `NATIVE_APP`):
    a locator is the context's, so a step in the wrong one would miss. Android names its web view
    `WEBVIEW_<package>` in every session; iOS numbers it per page, so the script takes the one listed."""
    want = str((step.target or {}).get("context") or "")
    if not want or want == test.context:
        return []
    test.context = want
    if want == "NATIVE_APP":
        return [
            *comment_lines("the run found this element on the native screen around the web view", 4, test.width),
            '    device.switch_context("NATIVE_APP")',
        ]
    stable = test.platform != "ios" and want.startswith("WEBVIEW_")
    said = f"the run found this element in the web view's page ({want})"
    return [
        *comment_lines(said if stable else said + ": the web view context the session lists", 4, test.width),
        *call_lines("device.switch_context", [py_str(want) if stable else _WEB_VIEW], 4, width=test.width),
    ]


def run_body(cache: ActionCache, run_index: int, test: ExportedTest, declare_goal: bool) -> list[str]:
    """The statements that do what `cache.runs[run_index]` did."""
    run = cache.runs[run_index]
    lines: list[str] = []
    if declare_goal:
        plan = [py_str(s.milestone) for s in run.steps if s.milestone]
        goal_args = [_text_expr(run.instruction, test.secrets)]
        if plan:
            goal_args.append(f"plan=[{', '.join(plan)}]")
        lines += call_lines("guistate.goal", goal_args, 4, width=test.width)
    exported = [export_step(s, cache.platform, test.secrets, test.width, web=bool(test.browser)) for s in run.steps]
    for index, (step, out) in enumerate(zip(run.steps, exported)):
        checks, why = step_expectation(step)
        state = step.effect.get("checked")
        bound = identity(step.fingerprint)
        if (
            isinstance(state, bool)
            and bound.label
            and not (isinstance(step.effect.get("expect"), dict) and any(step.effect["expect"].values()))
        ):
            # a switch: the state the run left it in, on the switch bound to its label (not "Off" gone somewhere)
            checks = [f"switched({py_str(bound.label)})" if state else f"switched({py_str(bound.label)}, on=False)"]
            why = "the state the run left the switch in"
            was = step.fingerprint.get("checked")
            if isinstance(was, bool):  # a tap from another state would undo what the run did: not tapped then
                out.comments.append(
                    f"the run found this switch {'on' if was else 'off'}: in another state the tap "
                    "would undo the goal, so the test stops before it"
                )
                found = f"switched({py_str(bound.label)})" if was else f"switched({py_str(bound.label)}, on=False)"
                out.before = [
                    f"    found = {found}(guistate.observe(settled=True))",
                    "    assert found.ok, found.evidence",
                    *out.before,
                ]
        following = run.steps[index + 1] if index + 1 < len(run.steps) else None
        kept = _remembered(following) if following is not None else {}
        for key, value in kept.items():  # the next step read it off this step's screen
            checks.append(f"visible({py_str(value)})")
            out.comments.append(f"the run read {key}={value} off the next screen: it must be shown")
        where = f" in {step.fingerprint['in']}" if step.fingerprint.get("in") else ""
        said = f"expect {why}" if why else "the run verified a change of screen, with no label to name it"
        out.comments.insert(0, f"step {step.n}: {step.summary().split(' (in ')[0]}{where}; {said}")
        if step.tool == "wait":
            out.comments.append(f"the run waited {step.args.get('seconds', 1)} s here; the next step settles itself")
        if not step.idempotent:
            out.comments.append("idempotent=False: the run never repeated it")
        if isinstance(step.effect.get("checked"), bool):
            out.comments.append(f"the run left this switch {'on' if step.effect['checked'] else 'off'}")
        out.expect = checks
        for key, value in _remembered(step).items():
            out.after.append(f"    guistate.remember({py_str(key)}, {py_str(value)})")
        if step.milestone:
            out.after.append(f"    guistate.milestone({py_str(step.milestone)})")
            reached = test.milestone_checks.get(step.milestone)
            if reached and reached not in checks:  # as the replay does: the step settles and refreshes for it
                checks.append(reached)
                out.comments.append(f"the step completed {step.milestone!r}: its check is part of the expectation")
        for name in ("visible", "gone", "switched", "all_of"):
            if any(c.startswith(name + "(") for c in checks) or (name == "all_of" and len(checks) > 1):
                test.checks_imported.add(name)
        test.steps.append(out)
        lines += switch_context(step, test)
        lines += _step_lines(out, test.width)
    lines.append("    guistate.assert_complete()")
    return lines


def _step_lines(out: ExportedStep, width: int) -> list[str]:
    lines: list[str] = []
    for comment in out.comments:
        lines += comment_lines(comment, 4, width)
    if not out.calls:
        return lines + out.after
    lines += out.before
    args = [py_str(out.name)]
    if out.expect:
        args.append("expect=" + (out.expect[0] if len(out.expect) == 1 else f"all_of({', '.join(out.expect)})"))
    if not out.idempotent:
        args.append("idempotent=False")
    lines += call_lines("with guistate.step", args, 4, ":", width)
    return lines + out.calls + out.after


def check_body(check: CachedCheck | None, claim: str, cache: ActionCache, test: ExportedTest) -> list[str]:
    """An AI check: a plain expectation when its cited evidence is text on screen, else kept."""
    if check is None:
        test.needs_model.append(claim)
        return [
            *comment_lines(
                "AI check: the run kept no record of it, so it stays an AI check (it needs a model: "
                "--guistate-llm=replay, record or anthropic)",
                4,
                test.width,
            ),
            *call_lines("assert guistate.check", [py_str(claim)], 4, '.verdict == "pass"', test.width),
        ]
    seen = [str(label) for run in cache.runs for step in run.steps for label in step.screen.get("labels") or []]
    checks = [
        f"visible({py_str(str(item['quote']))})"
        for item in check.evidence
        if isinstance(item, dict) and str(item.get("quote") or "").strip()
    ]
    for word, shown in sorted(check.words.items()):
        if shown:
            continue
        spelled = next((w for label in seen for w in re.findall(r"[A-Za-z0-9$.]+", label) if w.lower() == word), None)
        if spelled is not None and word not in {"the", "and"}:
            checks.append(f"gone({py_str(spelled)})")  # a word of the run's screens the check saw absent
    if not checks:
        test.needs_model.append(claim)
        return [
            *comment_lines(
                f"AI check {claim!r}: its evidence is no text on screen, so it stays an AI check "
                "(it needs a model: --guistate-llm=replay, record or anthropic)",
                4,
                test.width,
            ),
            *call_lines("assert guistate.check", [py_str(claim)], 4, '.verdict == "pass"', test.width),
        ]
    for name in ("visible", "gone"):
        if any(c.startswith(name + "(") for c in checks):
            test.checks_imported.add(name)
    if len(checks) > 1:
        test.checks_imported.add("all_of")
    expr = checks[0] if len(checks) == 1 else f"all_of({', '.join(checks)})"
    judged = f"    verdict = {expr}(shown)"
    if len(judged) > test.width:
        judged = "\n".join(
            [*call_lines("check = all_of", _split_args(expr), 4, width=test.width), "    verdict = check(shown)"]
        )
    return [
        *comment_lines(
            f"AI check {claim!r}: its cited evidence is text on screen, so it is a plain expectation here (no model)",
            4,
            test.width,
        ),
        "    shown = guistate.observe(settled=True)",
        *judged.split("\n"),
        "    assert verdict.ok, verdict.evidence",
    ]


def _split_args(expr: str) -> list[str]:
    """The top-level arguments of a call expression we wrote (`all_of(a, b)` -> ['a', 'b'])."""
    node = ast.parse(expr, mode="eval").body
    assert isinstance(node, ast.Call)
    return [ast.unparse(a) for a in node.args]


# -- the original test, when its file is found ------------------------------------------------
def test_file_of(actions: Path) -> Path:
    """`cassettes/<file>/[ios/]<test>.actions.json` -> `<file>.py` beside `cassettes/`."""
    folder = actions.parent.parent if actions.parent.name == "ios" else actions.parent
    return folder.parent.parent / f"{folder.name}.py"


def _is_call(node: ast.AST, attr: str) -> bool:
    return any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == attr
        and isinstance(n.func.value, ast.Name)
        and n.func.value.id == "guistate"
        for n in ast.walk(node)
    )


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _bound(statement: ast.stmt) -> str | None:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return statement.targets[0].id
    return None


def _scrub_secrets(code: str, node: ast.AST, source: str, test: ExportedTest) -> str:
    """`guistate.secret("literal")` -> `guistate.secret(os.environ["GUISTATE_TEST_SECRET_N"])`."""
    for call in ast.walk(node):
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "secret"
            and call.args
            and isinstance(call.args[0], ast.Constant)
            and isinstance(call.args[0].value, str)
        ):
            literal = ast.get_source_segment(source, call.args[0]) or ""
            name = f"GUISTATE_TEST_SECRET_{sum(1 for k in test.secrets if k.startswith('GUISTATE_TEST_')) + 1}"
            test.secrets[name] = "a secret the test registered with guistate.secret()"
            code = code.replace(literal, f'os.environ["{name}"]', 1)
    return code


def _from_source(cache: ActionCache, test_file: Path, test: ExportedTest) -> bool:
    """Fill `test` from the original test function around its run(...) and check(...) calls."""
    source = test_file.read_text(encoding="utf-8")
    module = ast.parse(source)
    name = cache.test.split("[")[0]
    function = next((n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if function is None:
        return False
    test.decorators = ["@" + (ast.get_source_segment(source, d) or "") for d in function.decorator_list]
    test.params = [a.arg for a in function.args.args]
    runs, checks = iter(range(len(cache.runs))), {c.claim: c for c in cache.checks}
    dropped: set[str] = set()  # the run's result and the check's verdict: nothing else reads them now
    used: set[str] = set()
    goal_declared = False
    body: list[str] = []
    for statement in function.body:
        segment = ast.get_source_segment(source, statement, padded=False) or ""
        if (
            isinstance(statement, ast.Expr)
            and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str)
        ):
            continue  # the docstring: the header says what this test is now
        if _is_call(statement, "run"):
            index = next(runs, None)
            if index is None:
                raise ValueError(f"{test_file}: {name} calls guistate.run more often than the cache has runs")
            bound = _bound(statement)
            if bound:
                dropped.add(bound)
            body += run_body(cache, index, test, declare_goal=not goal_declared)
            continue
        if _is_call(statement, "check"):
            call = next(
                n
                for n in ast.walk(statement)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "check"
            )
            claim = call.args[0].value if call.args and isinstance(call.args[0], ast.Constant) else ""
            bound = _bound(statement)
            if bound:
                dropped.add(bound)
            body += check_body(checks.get(str(claim)), str(claim), cache, test)
            continue
        if _names(statement) & dropped:
            continue  # `assert result.success`: the steps' expectations and assert_complete say it
        if _is_call(statement, "goal"):
            goal_declared = True
            test.milestone_checks.update(_plan_checks(statement, source))
        used |= _names(statement)
        code = _scrub_secrets(segment, statement, source, test)
        body += ["    " + line if line else "" for line in _dedent(code, statement.col_offset).splitlines()]
    if next(runs, None) is not None:
        raise ValueError(f"{test_file}: {name} has fewer guistate.run calls than the cache has runs")
    test.body = body
    for decorator in function.decorator_list:
        used |= _names(decorator)
    for node in module.body:  # the module's imports the kept code still uses
        if isinstance(node, ast.ImportFrom) and node.module and node.module != "pytest_guistate" and node.level == 0:
            names = [a for a in node.names if (a.asname or a.name) in used]
            if names:
                test.extra_imports.append(
                    f"from {node.module} import "
                    + ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in names)
                )
        elif isinstance(node, ast.ImportFrom) and node.module == "pytest_guistate":
            test.checks_imported |= {a.name for a in node.names if (a.asname or a.name) in used and not a.asname}
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if (alias.asname or alias.name).split(".")[0] in used and alias.name not in ("pytest", "os"):
                    test.extra_imports.append(f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else ""))
    return True


def _plan_checks(statement: ast.stmt, source: str) -> dict[str, str]:
    """`guistate.goal(..., plan=[("Bob's post gone", gone("Bob")), ...])` -> {name: 'gone("Bob")'}."""
    out: dict[str, str] = {}
    for call in ast.walk(statement):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "goal"):
            continue
        plan = next((k.value for k in call.keywords if k.arg == "plan"), call.args[1] if len(call.args) > 1 else None)
        for item in plan.elts if isinstance(plan, (ast.List, ast.Tuple)) else []:
            if (
                isinstance(item, ast.Tuple)
                and len(item.elts) == 2
                and isinstance(item.elts[0], ast.Constant)
                and isinstance(item.elts[0].value, str)
            ):
                segment = ast.get_source_segment(source, item.elts[1])
                if segment and "\n" not in segment:
                    out[item.elts[0].value] = segment
    return out


def _dedent(code: str, column: int) -> str:
    """A statement's source from its first line's column: the later lines lose that much indentation."""
    lines = code.splitlines()
    return "\n".join([lines[0], *(line[column:] if line[:column].strip() == "" else line for line in lines[1:])])


def _plain(cache: ActionCache, test: ExportedTest) -> None:
    """No test file: the marker from the first screen's app (a browser session has none: the page the run
    started on is opened instead), the runs in order, the checks after."""
    app = next((str(s.screen.get("app")) for r in cache.runs for s in r.steps if s.screen.get("app")), "")
    test.decorators = (
        [f"@pytest.mark.guistate(app={py_str(app)})"] if app and not test.browser else ["@pytest.mark.guistate"]
    )
    test.params = ["device", "guistate"]
    body: list[str] = []
    for index in range(len(cache.runs)):
        body += open_page(cache, index, test)
        body += run_body(cache, index, test, declare_goal=index == 0)
    for check in cache.checks:
        body += check_body(check, check.claim, cache, test)
    test.body = body


def open_page(cache: ActionCache, index: int, test: ExportedTest) -> list[str]:
    """`device.open_url(...)` before a browser session's run, on the page it started on: the first run's, and a
    later run's when it is not the page the run before ended on (the test opened another one between them).
    A run's own steps never open a URL (no tool does); a page they reached by a link, they reach again."""
    start = cache.runs[index].page.get("start", "")
    if not (test.browser and start) or (index and start == cache.runs[index - 1].page.get("end")):
        return []
    return [
        *comment_lines("the page the run started on", 4, test.width),
        *call_lines("device.open_url", [py_str(start)], 4, width=test.width),
    ]


def build_export(actions: Path, *, test_file: Path | None = None, width: int = LINE) -> ExportedTest:
    """The exported test of a cache file (its test file found beside `cassettes/`, else `test_file`)."""
    cache = load_cache(actions)
    test = ExportedTest(str(actions), cache.test, cache.platform, cache.recorded, [], [], [], width=width)
    if cache.recorded.get("session") == "browser":
        test.browser = str(cache.recorded.get("browserName") or "browser")
    source = test_file if test_file is not None else test_file_of(actions)
    if not (source.is_file() and _from_source(cache, source, test)):
        _plain(cache, test)
    for needed in ("device", "guistate"):
        if needed not in test.params:
            test.params.append(needed)
    return test


def render(test: ExportedTest) -> str:
    """The file's text, formatted as ruff format writes it."""
    uses_os = bool(test.secrets)
    recorded = test.recorded
    how = ", ".join(f"{k} {recorded[k]}" for k in ("mode", "model") if recorded.get(k))
    lines = [
        '"""Exported by `guistate export-test` from a verified LLM run.',
        "",
        *wrap(
            f"Test {test.test}, recorded on the {test.platform} persona{', ' + how if how else ''}; from "
            f"{Path(test.source).name}. Each step is the action the run took, on the most stable locator its "
            "target offered (`unique=True`: the locator named that element alone, and must still), with the "
            "effect the run verified as its expectation. It needs no model, cassette or action cache: review "
            "it, edit it, commit it.",
            "",
            test.width,
        ),
        '"""',
        "",
    ]
    for name, why in test.secrets.items():
        lines += comment_lines(f"Secrets are not written here: set {name} in the environment ({why}).", 0, test.width)
    if test.needs_model:
        lines += comment_lines(
            "This test keeps AI checks that need a model (--guistate-llm=replay, record or "
            "anthropic): " + "; ".join(repr(c) for c in test.needs_model),
            0,
            test.width,
        )
    if test.secrets or test.needs_model:
        lines.append("")
    if uses_os:
        lines += ["import os", ""]
    lines.append("import pytest")
    lines.append("")
    names = sorted(test.checks_imported)
    if names:
        lines.append("from pytest_guistate import " + ", ".join(names))
    lines += test.extra_imports
    lines += ["", ""]
    lines += test.decorators
    lines.append(f"def {test.test.split('[')[0]}({', '.join(test.params)}):")
    if test.browser:  # a browser session: no persona, and no app to launch
        why = py_str(f"recorded in a browser session (browserName {test.browser}): run it with its capabilities")
        head = "    assert device.browser, "
        lines += [head + why] if len(head + why) <= test.width else [head + "(", f"        {why}", "    )"]
    elif test.platform in ("android", "ios"):
        why = py_str(f"recorded on the {test.platform} persona (--guistate-platform={test.platform})")
        head = f"    assert device.platform == {py_str(test.platform)}, "
        lines += [head + why] if len(head + why) <= test.width else [head + "(", f"        {why}", "    )"]
    secret_vars = [n for n in test.secrets if n.startswith("GUISTATE_SECRET_")]
    for name in secret_vars:
        number = name.rpartition("_")[2]
        lines.append(f'    secret_{number} = guistate.secret(os.environ["{name}"])')
    lines += test.body
    return "\n".join(lines) + "\n"


def export_test(
    actions: Path, out: Path | None = None, *, test_file: Path | None = None, width: int = LINE
) -> tuple[Path, str]:
    """Export one cache file; write it to `out` (default `test_<test>_scripted.py` beside the test
    file's folder) and return where and what."""
    test = build_export(actions, test_file=test_file, width=width)
    text = render(test)
    target = out if out is not None else Path(f"{test.test.split('[')[0]}_scripted.py")
    if target.is_dir():
        target = target / f"{test.test.split('[')[0]}{'_ios' if test.platform == 'ios' else ''}_scripted.py"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target, text


def export_main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """`guistate export-test PATH.actions.json [-o FILE]`."""
    parser = argparse.ArgumentParser(
        prog="guistate export-test",
        description=(
            "write a verified LLM run (its .actions.json) as a scripted pytest test that needs no model or cache"
        ),
    )
    parser.add_argument(
        "actions", type=Path, help="the run's .actions.json (cassettes/<file>/[ios/]<test>.actions.json)"
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        help="the file (or folder) to write; default <test>_scripted.py here; '-' prints it",
    )
    parser.add_argument(
        "--test-file",
        type=Path,
        default=None,
        help="the test file the run came from (default: found beside cassettes/)",
    )
    parser.add_argument(
        "--line-length",
        type=int,
        default=LINE,
        help=f"format for this line length, as the project's ruff or black does (default {LINE})",
    )
    args = parser.parse_args(list(argv) if argv is not None else None)
    stream = out or sys.stdout
    try:
        if args.output is not None and str(args.output) == "-":
            stream.write(render(build_export(args.actions, test_file=args.test_file, width=args.line_length)))
            return 0
        path, _ = export_test(args.actions, args.output, test_file=args.test_file, width=args.line_length)
    except (ValueError, OSError, SyntaxError) as exc:
        print(f"guistate export-test: {exc}", file=sys.stderr)
        return 1
    print(f"guistate export-test: wrote {path}", file=stream)
    return 0
