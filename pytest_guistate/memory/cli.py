"""`guistate memory list|show|prune|export|merge`: look into and maintain a memory file.

The lead registers it in `pytest_guistate/cli.py` COMMANDS as
`"memory": ("pytest_guistate.memory.cli", "memory_main", "inspect and prune the cross-run memory")`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_guistate.memory.store import MemorySchemaError, MemoryStore

__all__ = ["DEFAULT_MEMORY", "memory_main"]

DEFAULT_MEMORY = ".guistate/memory.sqlite"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="guistate memory", description="inspect and prune the cross-run memory")
    parser.add_argument("--store", type=Path, default=Path(DEFAULT_MEMORY), help=f"memory file ({DEFAULT_MEMORY})")
    sub = parser.add_subparsers(dest="command", required=True)
    listing = sub.add_parser("list", help="functions with their apps and number of visual variants")
    listing.add_argument("--json", action="store_true")
    show = sub.add_parser("show", help="every variant of one function (or one entry id)")
    show.add_argument("function", help="function name (e.g. 'add to cart' or 'locator:id=cart') or an entry id")
    show.add_argument("--app", help="only this app package")
    prune = sub.add_parser("prune", help="drop old or low-ranked variants")
    prune.add_argument("--max-entries", type=int, help="keep at most this many (lowest ranking score goes first)")
    prune.add_argument("--older-than-days", type=float, help="drop variants unused for this many days")
    export = sub.add_parser("export", help="write manifest.json and every patch as PNG into a folder")
    export.add_argument("dest", type=Path)
    merge = sub.add_parser("merge", help="merge the memories of several CI runners into one file (merge.py)")
    merge.add_argument("inputs", type=Path, nargs="+", metavar="MEMORY")
    merge.add_argument("-o", "--output", type=Path, required=True, metavar="OUT")
    merge.add_argument("--max-entries", type=int, default=5000,
                       help="cap of the merged store (the store's default, 5000); lowest-ranked go first")
    return parser


def memory_main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    if args.command == "merge":
        return _merge(args)
    if not args.store.exists():
        print(f"guistate memory: no memory file at {args.store}", file=sys.stderr)
        return 2
    try:
        store = MemoryStore(args.store)
    except MemorySchemaError as exc:
        print(f"guistate memory: {exc}", file=sys.stderr)
        return 2
    with store:
        return int(_COMMANDS[args.command](store, args))


def _list(store: MemoryStore, args: argparse.Namespace) -> int:
    rows = store.functions()
    if args.json:
        print(json.dumps([{"function": f, "app": a, "variants": n} for f, a, n in rows], indent=2))
        return 0
    width = max((len(f) for f, _, _ in rows), default=8)
    print(f"{'function':<{width}}  {'app':<24} variants")
    for function, app, n in rows:
        print(f"{function:<{width}}  {app:<24} {n}")
    print(f"{store.count()} variant(s) in {store.path} (schema {store.schema_version})")
    return 0


def _show(store: MemoryStore, args: argparse.Namespace) -> int:
    if args.function.isdigit():
        try:
            entries = [store.get(int(args.function))]
        except KeyError as exc:
            print(f"guistate memory: {exc.args[0]}", file=sys.stderr)
            return 1
    else:
        entries = store.patches(args.function, args.app)
    if not entries:
        print(f"guistate memory: nothing remembered for {args.function!r}", file=sys.stderr)
        return 1
    print(json.dumps([e.summary() for e in entries], indent=2))
    return 0


def _prune(store: MemoryStore, args: argparse.Namespace) -> int:
    older = args.older_than_days * 86400 if args.older_than_days is not None else None
    if args.max_entries is None and older is None:
        print("guistate memory prune: give --max-entries and/or --older-than-days", file=sys.stderr)
        return 2
    removed = store.prune(max_entries=args.max_entries, older_than_s=older)
    print(f"removed {removed} variant(s); {store.count()} left")
    return 0


def _export(store: MemoryStore, args: argparse.Namespace) -> int:
    patches_dir = args.dest / "patches"
    patches_dir.mkdir(parents=True, exist_ok=True)
    manifest = []
    for entry in store.patches():
        name = f"{entry.id:06d}.png"
        (patches_dir / name).write_bytes(entry.png)
        manifest.append({**entry.summary(), "png": f"patches/{name}"})
    flows = store.query("SELECT id, instruction, template, steps, apps, created, last_access, access_count FROM flows")
    document = {"schema": f"guistate.memory/{store.schema_version}", "patches": manifest,
                "flows": [dict(zip(("id", "instruction", "template", "steps", "apps", "created", "last_access",
                                    "access_count"), row, strict=True)) for row in flows]}
    (args.dest / "manifest.json").write_text(json.dumps(document, indent=2), encoding="utf-8")
    print(f"exported {len(manifest)} patch(es) and {len(flows)} flow(s) to {args.dest}")
    return 0


def _merge(args: argparse.Namespace) -> int:
    from pytest_guistate.memory.merge import merge_stores

    try:
        report = merge_stores(args.inputs, args.output, max_entries=args.max_entries)
    except (MemorySchemaError, ValueError) as exc:
        print(f"guistate memory merge: {exc}; nothing written", file=sys.stderr)
        return 2
    print(f"merged {len(args.inputs)} memory file(s) into {args.output}:")
    for line in report.lines():
        print(line)
    return 0


_COMMANDS = {"list": _list, "show": _show, "prune": _prune, "export": _export}
