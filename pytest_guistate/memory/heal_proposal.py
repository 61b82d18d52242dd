"""Heals proposed as patches (issue 45): when the memory healed a locator of a scripted test and the step's
expected effect showed, the test file keeps the stale locator for ever unless someone edits it. So the heal
records where the locator is written (the test's file and line, from the stack at the device call) and what
names the healed element now, and `guistate heal-diff` prints the edit as a unified diff (`--apply` writes it).

Why the stack and `ast`, not the locator's text: the same `id="old"` may be written in several places; the
frame of the call that missed is the one that must change. A locator built at run time (an f-string, a
variable, a helper's argument) has no literal to replace at that call: the proposal says so, and where.

The new locator is one that named the healed element *alone* on the screen it was healed on (a locator that
matches two elements would make the patched test act on the first): the old kind first (`id` stays `id`),
then id, accessibility label, visible text.

A heal during an action cache replay has no locator written in a test: the file to patch is the cache
(`<test>.actions.json`). The replay hands the healed step's place in it and its new target (the element's
fingerprint and locators as the recording would have written them on the healed screen); the proposal
replaces that step's `target` and nothing else, in the cache's own format (sorted keys, two-space indent), so
the next replay finds the element by its fingerprint, with no memory and no heal.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from pytest_guistate.core.uinode import UINode
from pytest_guistate.core.uitree import UITree
from pytest_guistate.support.filelock import hold

__all__ = [
    "PROPOSALS_FILE",
    "CallSite",
    "HealProposal",
    "call_site",
    "heal_diff_main",
    "propose",
    "propose_cache_edit",
    "read_proposals",
]

PROPOSALS_FILE = "heal-proposals.jsonl"  # in the run's artifacts dir, one JSON line per healed call
_PACKAGE = Path(__file__).resolve().parents[1]
_VERBS = ("tap", "find", "exists", "type", "clear")


@dataclass(frozen=True)
class CallSite:
    """Where the test called the device: the innermost frame outside this package."""

    file: str
    line: int


def call_site(frame: FrameType | None = None) -> CallSite | None:
    """The test's frame at the device call (the first caller outside pytest_guistate and the standard
    library's context managers)."""
    current: FrameType | None = frame if frame is not None else sys._getframe(1)
    while current is not None:
        path = Path(current.f_code.co_filename)
        inside = path.is_absolute() and (path.resolve().is_relative_to(_PACKAGE) or path.name == "contextlib.py")
        if path.suffix == ".py" and path.is_file() and not inside:
            return CallSite(str(path.resolve()), current.f_lineno)
        current = current.f_back
    return None


@dataclass(frozen=True)
class HealProposal:
    """One proposed edit: `old` -> `new` at `file`:`line` (`patchable`: a literal there can be replaced;
    `span`: [line, start col, end col] of the text to replace, 1-based line, 0-based columns)."""

    file: str
    line: int
    call: str
    old: str
    new: str
    patchable: bool
    why: str = ""
    span: tuple[int, int, int] | None = None
    test: str = ""
    source_text: str = ""  # the text at `span` when proposed: --apply replaces only that
    # an action cache's edit: {"run", "step" (indexes in the file), "n", "name", "old", "new" (the step's targets)}
    edit: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["span"] = list(self.span) if self.span is not None else None
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HealProposal:
        span = data.get("span")
        return cls(
            str(data["file"]),
            int(data["line"]),
            str(data.get("call") or ""),
            str(data["old"]),
            str(data.get("new") or ""),
            bool(data.get("patchable")),
            str(data.get("why") or ""),
            (int(span[0]), int(span[1]), int(span[2])) if isinstance(span, list) and len(span) == 3 else None,
            str(data.get("test") or ""),
            str(data.get("source_text") or ""),
            data["edit"] if isinstance(data.get("edit"), dict) else None,
        )

    def line_text(self) -> str:
        """The one-line form for the terminal, report.html and Allure."""
        where = f"{Path(self.file).name}:{self.line}"
        if self.edit is not None:
            where = f"{Path(self.file).name} step {self.edit.get('n', '?')} target"
        if self.patchable:
            return f"propose {where}: {self.old} -> {self.new} (guistate heal-diff --apply)"
        return f"propose {where}: {self.old} -> {self.new or '?'}, not patchable in place: {self.why}"


def _literal(kind: str, value: str, quote: str = '"') -> str:
    text = json.dumps(value, ensure_ascii=False)
    if quote == "'" and "'" not in value:
        text = "'" + text[1:-1].replace('\\"', '"') + "'"
    return f"{kind}={text}"


def new_locator(tree: UITree | None, node: UINode | None, old_kind: str) -> tuple[str, str] | None:
    """A locator that names `node` alone on `tree`: the old locator's kind first, then id, label, text."""
    if tree is None or node is None:
        return None
    names = {"id": node.locator_id, "desc": node.descriptions[0] if node.descriptions else "", "text": node.text}
    for kind in dict.fromkeys((old_kind, "id", "desc", "text")):
        value = names.get(kind) or ""
        if (
            value
            and [n for n in tree.by_locator(kind, value) if n is node or n.index_path == node.index_path]
            and len(tree.by_locator(kind, value)) == 1
        ):
            return kind, value
    return None


def _locators(target: object) -> dict[str, str]:
    """A cached target's locator candidates, kind -> value, best first (id, accessibility label, text)."""
    found = target.get("locators") if isinstance(target, dict) else None
    return {str(k): str(v) for c in found or [] if isinstance(c, dict) and len(c) == 1 for k, v in c.items()}


def _changed_locator(old: object, new: object) -> tuple[str, str]:
    """How a proposal names a cache target's change in one locator each: the first kind whose value changed
    (`id="switch_widget"` -> `id="toggle"`), else each one's first."""
    was, now = _locators(old), _locators(new)
    kind = next((k for k in was if k in now and was[k] != now[k]), None)
    if kind is not None:
        return _literal(kind, was[kind]), _literal(kind, now[kind])
    first = [next((_literal(k, v) for k, v in d.items()), "?") for d in (was, now)]
    return first[0], first[1]


def propose_cache_edit(edit: dict[str, Any], test: str = "") -> HealProposal:
    """The proposal for a heal of a replayed cache step: its `target` in the cache file becomes the healed
    element's (`edit`: the file, the step's place, its old and new targets, from `llm/cache/replay.py`)."""
    kept: dict[str, Any] = {k: edit[k] for k in ("run", "step", "n", "name", "old", "new") if k in edit}
    old, new = _changed_locator(edit.get("old"), edit.get("new"))
    return HealProposal(
        str(edit.get("file") or ""), 0, str(edit.get("name") or ""), old, new, True, test=test, edit=kept
    )


def _patched_cache(text: str, file: str, proposals: Sequence[HealProposal]) -> tuple[str, list[str]]:
    """A cache file with each proposal's step target replaced, where that target is still the one healed."""
    data = json.loads(text)
    problems: list[str] = []
    for proposal in proposals:
        edit = proposal.edit or {}
        try:
            step = data["runs"][int(edit["run"])]["steps"][int(edit["step"])]
        except (KeyError, IndexError, TypeError, ValueError):
            problems.append(f"{file}: run {edit.get('run')} step {edit.get('step')} is not in the file: it changed")
            continue
        if step.get("target") != edit.get("old"):
            problems.append(f"{file} step {edit.get('n')}: the target is not the one healed: the file changed")
            continue
        step["target"] = edit.get("new")
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", problems  # `write_cache`'s format


def _calls_at(source: str, line: int) -> list[ast.Call]:
    tree = ast.parse(source)
    found = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in _VERBS
        and n.lineno <= line <= (n.end_lineno or n.lineno)
    ]
    return sorted(found, key=lambda n: (n.end_lineno or n.lineno) - n.lineno)  # innermost first


def propose(
    site: CallSite, kind: str, value: str, tree: UITree | None, node: UINode | None, test: str = ""
) -> HealProposal:
    """The proposal for a heal of `kind=value` called at `site`, healed onto `node` of `tree`."""
    old = _literal(kind, value)
    found = new_locator(tree, node, kind)
    new = _literal(*found) if found is not None else ""
    try:
        source = Path(site.file).read_text(encoding="utf-8")
        calls = _calls_at(source, site.line)
    except (OSError, SyntaxError, UnicodeDecodeError) as exc:
        return HealProposal(site.file, site.line, "", old, new, False, f"the file cannot be read ({exc})", test=test)
    lines = source.splitlines()
    call_text = lines[site.line - 1].strip() if 0 < site.line <= len(lines) else ""

    def by_hand(reason: str) -> HealProposal:
        """A proposal the run cannot patch in place: the reason says what to change instead."""
        return HealProposal(site.file, site.line, call_text, old, new, False, reason, test=test)

    if found is None:
        return by_hand("no id, label or text names the healed element alone: choose its locator by hand")
    for call in calls:
        argument: ast.keyword | ast.expr | None = next((k for k in call.keywords if k.arg == kind), None)
        value_node = argument.value if isinstance(argument, ast.keyword) else None
        if argument is None and kind == "text" and call.args:
            argument = value_node = call.args[0]
        if argument is None or value_node is None:
            continue
        if (
            isinstance(value_node, ast.Constant)
            and value_node.value == value
            and argument.lineno == argument.end_lineno
        ):
            segment = ast.get_source_segment(source, value_node) or '"'
            replacement = _literal(*found, quote=segment[0])  # a positional text becomes a keyword: still valid
            span = (argument.lineno, argument.col_offset, argument.end_col_offset or argument.col_offset)
            written = ast.get_source_segment(source, argument) or ""
            return HealProposal(
                site.file, argument.lineno, call_text, old, replacement, True, span=span, test=test, source_text=written
            )
        built = (
            "an f-string"
            if isinstance(value_node, ast.JoinedStr)
            else f"the variable {value_node.id!r}"
            if isinstance(value_node, ast.Name)
            else "an expression"
        )
        return by_hand(
            f"the locator is built at run time ({built}): it cannot be patched in place; "
            f"change it where it is built to {new}"
        )
    return by_hand(
        "no device call with this locator is written at this line (a helper builds it): "
        f"change it where it is built to {new}"
    )


# -- the run's proposals, and `guistate heal-diff` ----------------------------------------------------------
def append_proposals(run_dir: Path, proposals: Sequence[dict[str, Any]]) -> Path:
    """Add a test's proposals to the run's file; xdist workers append under one lock, whole lines."""
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / PROPOSALS_FILE
    with hold(path.with_name(PROPOSALS_FILE + ".lock")), path.open("a", encoding="utf-8") as stream:
        stream.writelines(json.dumps(p, sort_keys=True, ensure_ascii=False) + "\n" for p in proposals)
    return path


def read_proposals(run_dirs: Sequence[Path]) -> list[HealProposal]:
    """Every proposal of the runs (workers and shards append to the same file), deduplicated."""
    seen: dict[tuple[str, int, str, str, str], HealProposal] = {}
    for folder in run_dirs:
        path = folder / PROPOSALS_FILE if folder.is_dir() else folder
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                proposal = HealProposal.from_dict(json.loads(line))
                at = json.dumps([(proposal.edit or {}).get(k) for k in ("run", "step")])
                seen.setdefault((proposal.file, proposal.line, proposal.old, proposal.new, at), proposal)
    return list(seen.values())


def patched(proposals: Sequence[HealProposal]) -> dict[str, tuple[str, str, list[str]]]:
    """file -> (text now, text patched, problems): each patchable proposal applied where its old text still is."""
    out: dict[str, tuple[str, str, list[str]]] = {}
    for file in sorted({p.file for p in proposals if p.patchable}):
        text = Path(file).read_text(encoding="utf-8")
        edits = [p for p in proposals if p.file == file and p.patchable and p.edit is not None]
        if edits:  # an action cache: its steps' targets
            out[file] = (text, *_patched_cache(text, file, edits))
            continue
        lines = text.splitlines(keepends=True)
        problems: list[str] = []
        for proposal in sorted(
            (p for p in proposals if p.file == file and p.patchable and p.span),
            key=lambda p: (p.span or (0, 0, 0))[:2],
            reverse=True,
        ):
            assert proposal.span is not None
            line, start, end = proposal.span
            current = lines[line - 1] if 0 < line <= len(lines) else ""
            raw = current.encode("utf-8")  # ast columns are UTF-8 byte offsets
            old_text = raw[start:end].decode("utf-8", errors="replace")
            if old_text != (proposal.source_text or proposal.old):
                problems.append(f"{file}:{line}: expected {proposal.old}, found {old_text!r}: the file changed")
                continue
            lines[line - 1] = (raw[:start] + proposal.new.encode("utf-8") + raw[end:]).decode("utf-8")
        out[file] = (text, "".join(lines), problems)
    return out


def heal_diff_main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """`guistate heal-diff [RUN_DIR ...] [--apply]`: the run's heal proposals as unified diffs."""
    parser = argparse.ArgumentParser(
        prog="guistate heal-diff",
        description=(
            "print the locator edits the memory's verified heals propose, as unified diffs; --apply writes them"
        ),
    )
    parser.add_argument(
        "run_dirs",
        nargs="*",
        type=Path,
        default=[Path("guistate-artifacts")],
        help=f"artifacts dirs of the run (or its shards), or {PROPOSALS_FILE} files",
    )
    parser.add_argument("--apply", action="store_true", help="write the patchable edits into the test files")
    args = parser.parse_args(list(argv) if argv is not None else None)
    stream = out or sys.stdout
    proposals = read_proposals(args.run_dirs)
    if not proposals:
        print("guistate heal-diff: no heal proposals in " + ", ".join(map(str, args.run_dirs)), file=stream)
        return 0
    code = 0
    for file, (before, after, problems) in patched(proposals).items():
        stream.writelines(
            difflib.unified_diff(
                before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{file}", f"b/{file}"
            )
        )
        for problem in problems:
            print(f"guistate heal-diff: {problem}", file=stream)
            code = 1
        if args.apply and before != after:
            Path(file).write_text(after, encoding="utf-8")
            print(f"guistate heal-diff: patched {file}", file=stream)
    for proposal in proposals:
        if not proposal.patchable:
            print(
                f"guistate heal-diff: {proposal.file}:{proposal.line}: {proposal.call}\n  {proposal.line_text()}",
                file=stream,
            )
    return code
