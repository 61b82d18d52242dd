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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", "--workers", default="2", help="xdist workers (default 2)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "rows.jsonl"
        env = {**os.environ, "GUISTATE_FAULT_TABLE": str(table)}
        started = time.monotonic()
        run = subprocess.run([sys.executable, "-m", "pytest", "tests/faults", "-q", "-n", args.workers,
                              "-p", "no:randomly"], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        wall = time.monotonic() - started
        rows = [json.loads(line) for line in table.read_text("utf-8").splitlines()] if table.exists() else []
    print(f"tests/faults: {run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr[-300:]} "
          f"({wall:.0f} s wall, -n {args.workers}, load average {os.getloadavg()[0]:.1f})\n")
    print("| fault | time to fail (s) | message | steps kept |")
    print("|---|---|---|---|")
    for row in sorted(rows, key=lambda r: r["case"]):
        case = row["case"].split("::", 1)[-1]
        message = row["message"].replace("|", "\\|")
        print(f"| {case} | {row['seconds']:.1f} | {message} | {row['steps_kept']} |")
    return run.returncode


if __name__ == "__main__":
    raise SystemExit(main())
