"""`guistate cache list|show|stale`: the action caches of a suite, outside pytest (issue 21).

* `list [DIR ...]`: every `*.actions.json` under the folders (default `.`) with its test, platform,
  runs and steps, age, how it was made, and the last hit rate the last run saw.
* `show PATH`: one cache as a readable plan (the step, its target, what it must cause, `!` for
  steps never repeated) -- what a reviewer reads next to the JSON diff.
* `stale [DIR ...]`: caches whose last run missed or needed the live actor, with the first miss;
  exit 1 when there is one, so a scheduled job can re-record before CI's strict mode breaks.

"The last run" is read from `--summary` (a `--guistate-summary` JSON) and/or `--artifacts` (the
journals of retained test folders); without either, `./guistate-artifacts` is searched.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from pytest_guistate.llm.cache.cachefile import ActionCache, CacheError, load_cache

__all__ = ["cache_main"]


def _caches(folders: Sequence[Path]) -> Iterator[Path]:
    for folder in folders:
        if folder.is_file():
            yield folder
        else:
            yield from sorted(p for p in folder.rglob("*.actions.json") if ".partial" not in p.name)


def _age(path: Path) -> str:
    seconds = max(0.0, time.time() - path.stat().st_mtime)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{seconds:.0f}s"


def _last_runs(summary: Path | None, artifacts: Path | None) -> dict[str, dict[str, Any]]:
    """Resolved cache path -> the last run's cache figures (hit rate, live steps, first miss)."""
    seen: dict[str, dict[str, Any]] = {}
    if summary is not None:
        data = json.loads(summary.read_text(encoding="utf-8"))
        for row in data.get("tests", []):
            cache = row.get("llm_cache") or {}
            if cache.get("path"):
                seen[str(Path(cache["path"]).resolve())] = cache
    roots = [artifacts] if artifacts is not None else ([Path("guistate-artifacts")] if summary is None else [])
    for root in roots:
        for journal in sorted(root.rglob("journal.jsonl")) if root.is_dir() else []:
            for line in journal.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    event = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut by a crash
                cache = event.get("cache") if event.get("type") == "llm" else None
                if isinstance(cache, dict) and cache.get("path"):
                    first = (cache.get("miss_messages") or [None])[0]
                    seen.setdefault(str(Path(cache["path"]).resolve()), {**cache, "first_miss": first})
    return seen


def _rate(last: dict[str, Any] | None) -> str:
    if not last or last.get("hit_rate") is None:
        return "-"
    return f"{float(last['hit_rate']):.2f}"


def _list(args: argparse.Namespace, out: TextIO) -> int:
    last = _last_runs(args.summary, args.artifacts)
    rows = [("cache", "test", "platform", "runs", "steps", "age", "recorded", "last hit rate")]
    for path in _caches(args.folders):
        try:
            cache = load_cache(path)
        except CacheError as exc:
            rows.append((str(path), f"UNREADABLE: {exc}", "", "", "", "", "", ""))
            continue
        made = "/".join(str(cache.recorded.get(k)) for k in ("mode", "app_version") if cache.recorded.get(k))
        rows.append((str(path), cache.test, cache.platform, str(len(cache.runs)), str(cache.steps), _age(path),
                     made or "-", _rate(last.get(str(path.resolve())))))
    if len(rows) == 1:
        out.write("no action caches (*.actions.json) under " + ", ".join(map(str, args.folders)) + "\n")
        return 0
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out.writelines("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() + "\n" for row in rows)
    return 0


def _show(args: argparse.Namespace, out: TextIO) -> int:
    cache: ActionCache = load_cache(args.path)
    made = ", ".join(f"{k} {v}" for k, v in sorted(cache.recorded.items()))
    out.write(f"{cache.test} ({cache.platform}; recorded: {made or '-'})\n")
    for r_index, run in enumerate(cache.runs, 1):
        out.write(f"\nrun {r_index}: {run.instruction}\n")
        for step in run.steps:
            flag = "!" if not step.idempotent else " "
            expect = step.effect.get("expect")
            effect = (f"expect {next(iter(expect))} {next(iter(expect.values()))!r}" if isinstance(expect, dict) and expect
                      else f"then on '{(step.effect.get('next_screen') or {}).get('title', '?')}'")
            milestone = f"  -> milestone {step.milestone!r}" if step.milestone else ""
            out.write(f" {flag}{step.n:>3}. {step.summary():<70} on '{step.screen.get('title', '')}'; {effect}{milestone}\n")
        out.write(f"       done: {run.done.get('summary', '')}\n")
    out.writelines(f"\nAI check: {check.claim!r} (re-verified by {len(check.evidence)} cited element(s) and the "
                  f"claim's words {check.words})\n" for check in cache.checks)
    out.writelines(f"\nquery: {query.question!r} ({query.type}; {query.value!r} when recorded, today's read from "
                   + ", ".join(f"{r.get('kind')} {r.get('template') or r.get('field')!r}" for r in query.reads)
                   + f" on '{query.screen.get('title', '')}')\n" for query in cache.queries)
    out.write("\n! = not repeated by the step loop, replayed only after a verified previous step\n")
    return 0


def _stale(args: argparse.Namespace, out: TextIO) -> int:
    last = _last_runs(args.summary, args.artifacts)
    stale = 0
    for path in _caches(args.folders):
        figures = last.get(str(path.resolve()))
        if not figures:
            continue
        if (figures.get("misses") or figures.get("live")) and figures.get("hit_rate") is not None:
            stale += 1
            out.write(f"{path}: hit rate {_rate(figures)}, {figures.get('live') or 0} live step(s)"
                      + (f"\n    {figures['first_miss']}" if figures.get("first_miss") else "") + "\n")
    if not stale:
        out.write("no stale action caches in the last run\n")
        return 0
    out.write(f"{stale} stale action cache(s): re-record them (--guistate-llm=cache-fallback or record)\n")
    return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="guistate cache", description="inspect the LLM tests' action caches")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (("list", "caches with their age and last hit rate"),
                            ("stale", "caches the last run missed (exit 1 when any)")):
        command = sub.add_parser(name, help=help_text)
        command.add_argument("folders", nargs="*", type=Path, default=[Path(".")], metavar="DIR")
        command.add_argument("--summary", type=Path, default=None, help="the last run's --guistate-summary JSON")
        command.add_argument("--artifacts", type=Path, default=None, help="the last run's artifacts dir (journals)")
    show = sub.add_parser("show", help="one cache as a readable plan")
    show.add_argument("path", type=Path)
    return parser


def cache_main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    args = _parser().parse_args(argv)
    try:
        return {"list": _list, "show": _show, "stale": _stale}[args.command](args, out)
    except (CacheError, OSError, json.JSONDecodeError) as exc:
        print(f"guistate cache {args.command}: {exc}", file=sys.stderr)
        return 2
