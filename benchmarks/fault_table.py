"""Issue 14: the fault table — every case of tests/faults/: fault -> time to fail -> message -> steps kept.

Runs the fault suite (plus the LLM cases kept out of the default run for its time budget) with
GUISTATE_FAULT_TABLE set, so each case appends its row, then prints a Markdown table. Times are wall
clock of the inner pytest run (deadlines there: 1 s per device call, 2 s per session, 0.5 s settle).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def enospc_row(tmp: Path) -> dict[str, object]:
    """Disk full for real: the artifacts dir on a 16 KiB tmpfs. Needs mount permission (root in a container
    that allows it); without it the row says so. The fault suite itself uses RLIMIT_FSIZE, which needs none."""
    from tests.faults.test_disk import ROUNDS

    (tmp / "test_inner.py").write_text(ROUNDS, encoding="utf-8")
    out = tmp / "out"
    out.mkdir()
    row: dict[str, object] = {"case": "disk full for real (16 KiB tmpfs, benchmark only)", "seconds": 0.0,
                              "steps_kept": 0}
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(out)], capture_output=True,
                             text=True, check=False)
    if mounted.returncode != 0:
        row["message"] = f"not measured: mount -t tmpfs refused ({mounted.stderr.strip()[:80]})"
        return row
    try:
        started = time.monotonic()
        run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
                              "--guistate-device=sim", "--guistate-memory=off", "--guistate-retain=on",
                              "--guistate=light", "--guistate-artifacts=out", "test_inner.py"],
                             cwd=tmp, capture_output=True, text=True, timeout=120, check=False)
        row["seconds"] = round(time.monotonic() - started, 2)
        errors = [ln.strip()[2:].strip() for ln in run.stdout.splitlines() if ln.startswith("E ")
                  and "ArtifactWriteError" in ln]
        outcome = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else "?"
        row["message"] = (errors[0].split("diskio.", 1)[-1][:140] if errors else "(no error)") + f" [{outcome}]"
        journals = list(out.glob("*/journal.jsonl"))
        row["steps_kept"] = sum(1 for j in journals for line in j.read_text("utf-8").splitlines()
                                if json.loads(line)["type"] == "step")
    finally:
        subprocess.run(["umount", str(out)], capture_output=True, check=False)
    return row


# Issue 22 item 3 (the "faults" rows): peak memory of a decompression-bomb screenshot, before and after the
# PNG-header size check. Each figure is the peak RSS of its own fresh process (ru_maxrss), so they compare.
_PEAK = """
import resource, sys, time
sys.path.insert(0, {root!r})
from tests.faults.test_frames import bomb_png
png = bomb_png({side})
started = time.monotonic()
outcome = "decoded"
if {how!r} == "decode":  # what a Frame did before: decode every screenshot that passed the old checks
    import cv2, numpy as np
    pixels = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    outcome = "decoded %dx%d" % (pixels.shape[1], pixels.shape[0])
else:  # what a device does now with a screenshot (devices/device.py): check_png before any decode
    from pytest_guistate.core.frame import FrameError, check_png
    try:
        check_png(png, "http://device:4723")
    except FrameError as exc:
        outcome = str(exc)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, round(time.monotonic() - started, 3), outcome)
"""


def frame_memory_rows(side: int = 20000) -> list[dict[str, object]]:
    """Peak RSS (MB) of a fresh process given a `side`x`side` single-colour PNG: decoded as before, refused now."""
    peaks: dict[str, tuple[int, float, str]] = {}
    for how in ("decode", "refuse"):
        done = subprocess.run([sys.executable, "-c", _PEAK.format(root=str(ROOT), side=side, how=how)],
                              capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0:
            peaks[how] = (0, 0.0, f"failed: {done.stderr.strip().splitlines()[-1][:100] if done.stderr else '?'}")
            continue
        mb, seconds, outcome = done.stdout.strip().split(" ", 2)
        peaks[how] = (int(mb), float(seconds), outcome)
    (before_mb, before_s, _), (after_mb, after_s, message) = peaks["decode"], peaks["refuse"]
    return [{"case": f"decompression bomb {side}x{side} PNG: peak memory (benchmark only)", "seconds": after_s,
             "message": f"peak RSS {before_mb} MB decoded ({before_s:.1f} s) -> {after_mb} MB refused: "
                        f"{message[:90]}", "steps_kept": 0}]


def gate_fault_rows(tmp: Path) -> list[dict[str, object]]:
    """Issue 22 items 1 and 9 (the gate helper's rows): an xdist worker SIGKILLed mid-test, and a baseline
    with no test in common. Each row: the run (or gate) time, the gate's exit code and its blocking line."""
    from tests.gate.test_lost_tests import KILLED

    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "test_killed.py").write_text(KILLED, encoding="utf-8")
    gate = [sys.executable, "-m", "pytest_guistate.cli", "gate"]
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-n", "2",
                    "--guistate=standard", "--guistate-memory=off", "--guistate-retain=on", "--guistate-artifacts=out",
                    "--guistate-summary=run.json", "test_killed.py"], cwd=tmp, capture_output=True, text=True,
                   timeout=300, check=False)
    verdict = subprocess.run([*gate, "run.json"], cwd=tmp, capture_output=True, text=True, timeout=60, check=False)
    seconds = round(time.monotonic() - started, 2)
    blocking = [ln.split("BLOCK: ", 1)[1] for ln in verdict.stdout.splitlines() if "BLOCK: " in ln]
    steps = sum(1 for j in (tmp / "out").glob("*/journal.jsonl") for line in j.read_text("utf-8").splitlines()
                if json.loads(line)["type"] == "step")
    rows: list[dict[str, object]] = [{
        "case": "gate: xdist worker SIGKILLed mid-test (-n 2)", "seconds": seconds, "steps_kept": steps,
        "message": f"gate exit {verdict.returncode}: {blocking[0][:140] if blocking else verdict.stdout[-140:]}"}]
    baseline = tmp / "baseline.json"
    baseline.write_text(json.dumps({"schema": "guistate.summary/1", "tests": [
        {"nodeid": "other/root/test_killed.py::test_green", "outcome": "passed", "tier": "standard"}]}), "utf-8")
    started = time.monotonic()
    verdict = subprocess.run([*gate, "run.json", "--baseline", "baseline.json", "--format", "json"], cwd=tmp,
                             capture_output=True, text=True, timeout=60, check=False)
    error = json.loads(verdict.stdout or "{}").get("error", verdict.stderr.strip())
    rows.append({"case": "gate: --baseline with no test in common (another rootdir)",
                 "seconds": round(time.monotonic() - started, 2), "steps_kept": 0,
                 "message": f"gate exit {verdict.returncode}: {str(error)[:140]}"})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", "--workers", default="2", help="xdist workers (default 2)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "rows.jsonl"
        env = {**os.environ, "GUISTATE_FAULT_TABLE": str(table)}
        started = time.monotonic()
        run = subprocess.run([sys.executable, "-m", "pytest", "tests/faults", "-q", "-n", args.workers,
                              "-p", "no:randomly", "-rfE"], cwd=ROOT, env=env, capture_output=True, text=True,
                             check=False)
        wall = time.monotonic() - started
        rows = [json.loads(line) for line in table.read_text("utf-8").splitlines()] if table.exists() else []
        disk = Path(tmp) / "enospc"
        disk.mkdir()
        rows.append(enospc_row(disk))
        rows.extend(frame_memory_rows())
        rows.extend(gate_fault_rows(Path(tmp) / "gate"))
    print(f"tests/faults: {run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr[-300:]} "
          f"({wall:.0f} s wall, -n {args.workers}, load average {os.getloadavg()[0]:.1f})")
    # a red run names its tests: "3 failed" alone sends the reader to run the suite again to learn which
    for line in run.stdout.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            print(f"  {line}")
    print()
    print("| fault | time to fail (s) | message | steps kept |")
    print("|---|---|---|---|")
    for row in sorted(rows, key=lambda r: r["case"]):
        case = row["case"].split("::", 1)[-1]
        message = row["message"].replace("|", "\\|")
        print(f"| {case} | {row['seconds']:.1f} | {message} | {row['steps_kept']} |")
    return run.returncode


if __name__ == "__main__":
    raise SystemExit(main())
