"""report.html: one page per test, built from the journal alone, drawing its images from their files.

Built from `journal.jsonl` (never from live objects), so the report of a finished test and the
one `guistate report DIR` rebuilds after a SIGKILL are the same code path. Jinja2 autoescape is
on for every template: step names, app text, errors and anchor titles are data, never markup.
Every image of the page is drawn from its file in the test folder (issue 44: the page carried
179 KB of crops as data URIs beside the files): crops under `crops/` and frames under `frames/`
are each stored once by content, and the page names them (a crop is loaded when its step is
shown); anchor thumbnails on the timeline are the anchor's crop file, drawn small. A copy of the
page that must travel alone (Allure's attachment) carries its images instead (`images_carried`).
Nothing is loaded from the network; a CSP meta tag forbids it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markupsafe import Markup

from pytest_guistate.report.diskio import ArtifactWriteError, replace_file
from pytest_guistate.report.images import data_uri, image_size, thumbnail
from pytest_guistate.report.index import read_summary_tests, rows_from_summary, write_index
from pytest_guistate.report.journal import Journal, JournalError, read_journal
from pytest_guistate.report.page_images import DISPLAY_WIDTH, PageImages, display_copy
from pytest_guistate.report.pages import REPORT_NAME, environment, error_lines
from pytest_guistate.report.timeline import layout_timeline
from pytest_guistate.report.triage import triage
from pytest_guistate.report.viewer_model import step_extras, tree_defs, unplaced_exchanges

__all__ = [
    "images_carried",
    "rebuild_report",
    "render_page",
    "render_report",
    "render_timeline_svg",
    "report_main",
    "report_model",
    "write_final_json",
]

_BETWEEN_TAGS = re.compile(r">\n[ \t\n]+<")
FRAME_BUDGET = 6 * 1024 * 1024  # kept for callers: display copies made the budget moot (issue 23)


@dataclass
class _Embedder:
    """The page's images, each named by its file: crops (`PageImages`) and frames as SVG `<image>`
    defs, one per distinct frame (after N = before N+1), drawn with the regions on top."""

    images: PageImages
    frames: dict[str, dict[str, Any]] = field(default_factory=dict)  # frame file -> {id, src, full}
    crop_ids: dict[str, None] = field(default_factory=dict)  # display copies of crops, in page order

    @property
    def missing(self) -> list[str]:
        return self.images.missing

    def read(self, rel: str) -> bytes | None:
        return self.images.read(rel)

    def crop(self, rel: str) -> dict[str, Any] | None:
        image_id = self.images.add(rel, "crop")
        if image_id is None:
            return None
        self.crop_ids[image_id] = None
        image = self.images.defs[image_id]
        return {"id": image_id, "full": rel, "width": image["width"], "height": image["height"]}

    def frame(self, rel: str) -> str | None:
        """The id of a frame `<image>` defined once in the page, drawn from the stored file itself
        (issue 38: one stored copy of each image; frames are content-addressed under frames/, so
        one file is one image). None for a missing file."""
        if rel not in self.frames:
            if self.images.read(rel) is None:  # records it as missing
                return None
            self.frames[rel] = {"id": f"frame-{len(self.frames)}", "src": rel, "full": rel}
        return str(self.frames[rel]["id"])


def _json_pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=repr)


def report_model(journal: Journal, *, frame_budget: int = FRAME_BUDGET) -> dict[str, Any]:
    """Everything the template shows, as plain data (text stays unescaped here; Jinja escapes)."""
    del frame_budget  # display copies are small: every frame is inlined (issue 23)
    embed = _Embedder(PageImages(journal.folder))
    meta, finish = journal.meta, journal.finish or {}
    state = journal.last_state or {}
    tracker = state.get("tracker") or {}
    plan = journal.goal.get("plan") or tracker.get("decomposition") or []
    completed = list(tracker.get("completed") or [])
    anchors = journal.anchor_dicts()
    links = journal.link_dicts()
    records = [event.get("record") or {} for event in journal.steps]
    tri = finish.get("triage")
    outcome = str(finish.get("outcome") or "killed")
    if tri is None and outcome in ("failed", "killed", "error"):
        tri = triage(records, anchors, state, finish.get("error")).to_dict()
    link_text: dict[str, list[str]] = {}
    for link in links:
        text = f"{link.get('src')} {link.get('type')} {link.get('dst')}"
        link_text.setdefault(str(link.get("src")), []).append(text)
        link_text.setdefault(str(link.get("dst")), []).append(text)
    thumbs: dict[str, str] = {}
    names: dict[str, str] = {}
    for event in journal.steps:
        names.update((event.get("files") or {}).get("names") or {})
    anchor_files = {str(e["anchor"].get("id")): e.get("files") or [] for e in journal.anchors}
    for anchor in anchors:
        files = anchor_files.get(str(anchor.get("id"))) or [names[n] for n in anchor.get("crops") or [] if n in names]
        for rel in files[:1]:
            if embed.read(rel) is not None:  # the crop file itself, drawn small (issue 44)
                thumbs[str(anchor.get("id"))] = rel
    extras = step_extras(journal, anchors, links)
    steps = []
    for event in journal.steps:
        record = event.get("record") or {}
        files = event.get("files") or {}
        frames = []
        for role in ("before", "after", "final", *sorted(k for k in files.get("frames", {}) if k.startswith("frame"))):
            rel = (files.get("frames") or {}).get(role)
            if not rel:
                continue
            frame_id = embed.frame(rel)
            if frame_id is None:
                continue
            screen = files.get("screen") or _frame_screen(journal.folder / rel)
            frames.append((role, {"id": frame_id, "width": int(screen[0]), "height": int(screen[1]), "full": rel}))
        regions = [r.get("box") if isinstance(r, dict) else r for r in record.get("regions") or []]
        duration = record.get("duration_s")
        steps.append({
            "index": record.get("index"), "name": record.get("name", ""), "outcome": record.get("outcome", ""),
            "verdict": record.get("verdict"), "actions": record.get("actions", 0), "expect": record.get("expect"),
            "package_before": record.get("package_before", ""), "package_after": record.get("package_after", ""),
            "context": record.get("context", ""), "context_after": record.get("context_after", ""),
            "error": record.get("error"), "explanation": record.get("explanation", ""),
            "attempts": record.get("attempts") or [], "frames": frames,
            "region_boxes": [b for b in regions if isinstance(b, list) and len(b) == 4],
            "crops": _crop_pairs(embed, files),
            "state": json.dumps(record["state"], indent=1, ensure_ascii=False, default=repr) if record.get("state") else "",
            "duration": "" if duration is None else f"{duration:.2f} s",
            "commands": _commands(event.get("commands"), record.get("wall")),
            "source": event.get("source") if isinstance(event.get("source"), dict) else None,
            **extras.get(int(record.get("index") or 0), _NO_EXTRAS),
        })
    return {
        "schema": meta.get("schema"), "nodeid": meta.get("nodeid", journal.folder.name), "tier": meta.get("tier", ""),
        "outcome": outcome, "killed": not journal.finished, "error": finish.get("error"),
        "appium_session": meta.get("appium_session") or {},  # new or reused, which reset (issue 12)
        "run_meta": _run_meta(meta),
        "driver_log": journal.driver_log,
        "goal": journal.goal.get("goal") or (state.get("summary") or {}).get("goal", ""),
        "tracker": {"completed": completed, "current": tracker.get("current"),
                    "remaining": list(tracker.get("remaining") or []), "total": len(plan)},
        "triage": tri, "steps": steps, "records": records, "thumbs": thumbs, "links": links,
        "anchors": [{**a, "step": a.get("step"), "links": link_text.get(str(a.get("id")), [])} for a in anchors],
        "final_state": _json_pretty(state) if state else "", "torn_lines": journal.torn_lines,
        "missing_files": embed.missing, "frame_defs": list(embed.frames.values()),
        "crop_defs": {i: embed.images.defs[i]["src"] for i in embed.crop_ids},
        "trees": tree_defs(journal)[0], "failed_step": _failed_step(steps), "error_head": error_lines(finish.get("error")),
        "llm_total": ((journal.llm or {}).get("usage") or {}).get("totals"),
        "llm_other": unplaced_exchanges(journal.llm, {s["index"] for s in steps}),
        "queries": _queries(embed, journal.llm),
    }


def _queries(embed: _Embedder, llm: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Each `guistate.query` (issue 46): question, type, value, source, and its cited elements' crops."""
    out = []
    for query in (llm or {}).get("queries") or []:
        cited = [{**item, "image": embed.crop(str(item["crop"])) if item.get("crop") else None}
                 for item in query.get("evidence") or [] if isinstance(item, dict)]
        out.append({**query, "value_text": json.dumps(query.get("value"), ensure_ascii=False), "cited": cited})
    return out


def _failed_step(steps: list[dict[str, Any]]) -> int | None:
    """The step the viewer opens first: the last failed one (the one the test died on)."""
    failed = [s["index"] for s in steps if s["outcome"] == "failed"]
    return failed[-1] if failed else None


_NO_EXTRAS: dict[str, Any] = {"reason": "", "anchors": [], "tree": "", "highlight": [], "llm": None}


def _crop_pairs(embed: _Embedder, files: dict[str, Any]) -> list[dict[str, Any]]:
    """Per region: the after-crop's and before-crop's display copy (id, size, full file)."""
    befores = list(files.get("crops_before") or [])
    pairs = []
    for position, rel in enumerate(files.get("crops") or []):
        after = embed.crop(rel)
        if after is None:
            continue
        before_rel = befores[position] if position < len(befores) else ""
        pairs.append({"after": after, "before": embed.crop(before_rel) if before_rel else None})
    return pairs


def _commands(entries: Any, started: Any) -> list[dict[str, Any]]:
    """The step's device commands with their time from the step's start (`CommandLog` entries)."""
    if not isinstance(entries, list):
        return []
    origin = float(started) if isinstance(started, (int, float)) else None
    out = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        at = entry.get("t")
        offset = f"+{(float(at) - origin):.2f} s" if origin is not None and isinstance(at, (int, float)) else ""
        out.append({"at": offset, "command": str(entry.get("command", "")), "ms": entry.get("ms"),
                    "status": str(entry.get("status", "ok"))})
    return out


def _run_meta(meta: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) rows of the run: device, platform, start time, plugin version, worker, caps."""
    rows: list[tuple[str, str]] = []
    started = meta.get("started")
    if isinstance(started, (int, float)):
        rows.append(("started", time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(started))))
    for key, label in (("device", "device"), ("platform", "platform"), ("plugin_version", "pytest-guistate"),
                       ("worker", "xdist worker"), ("tier_reason", "tier chosen because")):
        if meta.get(key):
            rows.append((label, str(meta[key])))
    if meta.get("capabilities"):
        rows.append(("capabilities", json.dumps(meta["capabilities"], indent=1, sort_keys=True, default=repr)))
    return rows


def _frame_screen(path: Path) -> list[int]:
    """Screen size of a stored frame when the journal lacks it (frames may be stored scaled)."""
    width, height = image_size(path.read_bytes())
    return [width, height]


def render_timeline_svg(model: dict[str, Any]) -> str:
    layout = layout_timeline(model["records"], model["anchors"], model["links"], model["thumbs"])
    return environment().get_template("timeline.svg.j2").render(t=layout, title=model["nodeid"])


def render_report(journal: Journal, *, frame_budget: int = FRAME_BUDGET, model: dict[str, Any] | None = None) -> str:
    """The page. On disk it draws its frames from `frames/` beside it (one stored copy each, issue 38)."""
    return render_page(model if model is not None else report_model(journal, frame_budget=frame_budget))


def images_carried(model: dict[str, Any], folder: Path) -> dict[str, Any]:
    """The same model for a copy of the page that leaves its folder (the Allure attachment): its
    images carried as data URIs instead of drawn from their files (crops as display-sized copies)."""
    defs = []
    for frame in model["frame_defs"]:
        data = _read(folder, frame["src"])
        defs.append(frame if data is None else {**frame, "src": data_uri(data)})  # gone: drawn as missing
    crops = {}
    for image_id, rel in model["crop_defs"].items():
        data = _read(folder, rel)
        crops[image_id] = rel if data is None else data_uri(display_copy(data, DISPLAY_WIDTH["crop"]))
    return {**model, "frame_defs": defs, "crop_defs": crops, "thumbs": thumbs_carried(model["thumbs"], folder)}


def thumbs_carried(thumbs: dict[str, str], folder: Path) -> dict[str, str]:
    """Anchor thumbnails as small inlined JPEGs, for a timeline that leaves its folder."""
    carried = {}
    for anchor_id, rel in thumbs.items():
        data = _read(folder, rel)
        if data is not None:
            carried[anchor_id] = data_uri(thumbnail(data, 104))
    return carried


def _read(folder: Path, rel: str) -> bytes | None:
    try:
        return (folder / rel).read_bytes()
    except OSError:  # gone since the page was written
        return None


def render_page(model: dict[str, Any]) -> str:
    svg = Markup(render_timeline_svg(model))  # already escaped by its own autoescaping template
    page = environment().get_template("report.html.j2").render(m=model, timeline_svg=svg)
    # indentation between tags is a few % of a 100-step page; text never holds a raw "<" (escaped)
    return _BETWEEN_TAGS.sub(">\n<", page)


def write_final_json(journal: Journal) -> None:
    """state.json and anchors.json from the journal (the recorder writes the same at finish)."""
    state = journal.last_state
    if state is not None:
        replace_file(journal.folder / "state.json", _json_pretty(state))
    from pytest_guistate.core.anchors import ANCHOR_SCHEMA

    graph = {"schema": ANCHOR_SCHEMA, "anchors": journal.anchor_dicts(), "links": journal.link_dicts()}
    replace_file(journal.folder / "anchors.json", _json_pretty(graph))


def rebuild_report(folder: Path, *, frame_budget: int = FRAME_BUDGET) -> Path:
    """Rebuild `report.html` (and state.json/anchors.json when missing) from `folder/journal.jsonl`."""
    journal = read_journal(folder)
    if not (folder / "state.json").exists() or not (folder / "anchors.json").exists():
        write_final_json(journal)
    target = folder / REPORT_NAME
    replace_file(target, render_report(journal, frame_budget=frame_budget))  # never a torn report.html
    return target


def report_main(argv: Sequence[str] | None = None) -> int:
    """`guistate report DIR...` rebuilds report.html of one test folder, or of every folder under DIR;
    `guistate report --run DIR` also writes the run's index.html there."""
    parser = argparse.ArgumentParser(prog="guistate report", description="rebuild report.html from journal.jsonl")
    parser.add_argument("dirs", nargs="*", type=Path, metavar="DIR",
                        help="a test's artifacts folder, or the artifacts root (every folder with a journal)")
    parser.add_argument("--run", type=Path, metavar="DIR",
                        help="an artifacts root: rebuild every test's report.html and write DIR/index.html")
    parser.add_argument("--summary", type=Path, metavar="FILE",
                        help="with --run: a --guistate-summary JSON, so tests whose folder was not kept are listed too")
    args = parser.parse_args(argv)
    if not args.dirs and args.run is None:
        parser.error("give a DIR or --run DIR")
    if args.summary is not None and args.run is None:
        parser.error("--summary needs --run DIR")
    status = 0
    for root in [*args.dirs, *([args.run] if args.run is not None else [])]:
        folders = [root] if (root / "journal.jsonl").is_file() else sorted(p.parent for p in root.glob("*/journal.jsonl"))
        if not folders and root != args.run:
            print(f"guistate report: no journal.jsonl in {root} or its subfolders", file=sys.stderr)
            status = 1
        for folder in folders:
            started = time.perf_counter()
            try:
                path = rebuild_report(folder)
            except JournalError as exc:
                print(f"guistate report: {exc}", file=sys.stderr)
                status = 1
                continue
            except ArtifactWriteError as exc:  # e.g. "… No space left on device [ENOSPC]: the disk is full"
                print(f"guistate report: {exc}", file=sys.stderr)
                status = 1
                continue
            print(f"{path} ({(time.perf_counter() - started) * 1000:.0f} ms)")
    if args.run is not None:
        status = max(status, _run_index(args.run, args.summary))
    return status


def _run_index(root: Path, summary: Path | None) -> int:
    if not root.is_dir():
        print(f"guistate report: --run {root} is not a directory", file=sys.stderr)
        return 1
    try:
        extra = rows_from_summary(read_summary_tests(summary)) if summary is not None else []
    except ValueError as exc:
        print(f"guistate report: {exc}", file=sys.stderr)
        return 1
    try:
        print(write_index(root, extra))
    except ArtifactWriteError as exc:
        print(f"guistate report: {exc}", file=sys.stderr)
        return 1
    return 0
