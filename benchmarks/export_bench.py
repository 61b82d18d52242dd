"""The exported test's time against the cache replay of the same goal (issue 45).

    python benchmarks/export_bench.py [--repeat 3] [--platform android|ios]

For each example LLM goal (example_suite/test_llm.py, its committed caches): the strict cache replay
(`--guistate-llm=cache`) and the test `guistate export-test` writes from the same cache (`--guistate-llm=off`), each
run `--repeat` times in a fresh pytest process on the embedded sim; prints the median wall time of each and their
ratio. Times on a loaded machine are noisy: compare the ratio, measured in the same run.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_guistate.llm.export import export_test

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "example_suite"
GOALS = ("test_actor_deletes_one_post_and_an_ai_check_confirms_it", "test_actor_buys_in_the_cheaper_shop")


def timed(args: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--guistate-memory=off", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"pytest {' '.join(args)} failed:\n{done.stdout[-2000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--platform", default="android", choices=("android", "ios"))
    args = parser.parse_args()
    sub = "ios" if args.platform == "ios" else ""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copy(EXAMPLE / "test_llm.py", work / "test_llm.py")
        shutil.copy(EXAMPLE / "sim_apps.py", work / "sim_apps.py")
        (work / "pytest.ini").write_text("[pytest]\nguistate_llm_updater = off\n")
        caches = work / "cassettes" / "test_llm" / sub
        caches.mkdir(parents=True)
        for path in (EXAMPLE / "cassettes" / "test_llm" / sub).glob("*.actions.json"):
            shutil.copy(path, caches / path.name)
        exported = work / "exported"
        print(f"{'goal':<58} {'cache replay s':>14} {'exported s':>11} {'ratio':>6}")
        for goal in GOALS:
            path, _ = export_test(caches / f"{goal}.actions.json", exported / f"{goal}_scripted.py", width=120)
            shutil.copy(EXAMPLE / "sim_apps.py", exported / "sim_apps.py")
            persona = f"--guistate-platform={args.platform}"
            cache = [timed(["--guistate-llm=cache", persona, f"test_llm.py::{goal}"], work) for _ in range(args.repeat)]
            script = [timed(["--guistate-llm=off", persona, str(path)], work) for _ in range(args.repeat)]
            a, b = statistics.median(cache), statistics.median(script)
            print(f"{goal:<58} {a:>14.2f} {b:>11.2f} {b / a:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
