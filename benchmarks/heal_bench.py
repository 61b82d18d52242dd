"""Heal benchmark (issue 7): learn on sim app version 1, heal the v1 locators on version 2.

Run: `python benchmarks/heal_bench.py [--store PATH]`. Positives are (function, v1->v2) cases at
three screen sizes, negatives are v2 screens where the function is absent. Compared in the same
run with a Healenium-style baseline that picks the most similar UI-tree element by attributes
alone. One core (cv2.setNumThreads(1)); ms per heal is the healer's own time on 1080x2400, with
the screenshot already decoded (the step's visual oracle decodes it anyway; a PNG decode of one
1080x2400 frame is printed separately).

Counting: a positive succeeds when the heal was accepted (expected effect seen) AND the sim's
action log shows the intended action; a false heal is an accepted heal that did something else,
or any tap on a negative. "prevented" = tapped, effect absent, heal refused.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
from attribute_heal import attribute_heal

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests.helpers
from pytest_guistate.memory.heal import Healer
from pytest_guistate.memory.learn import learn_patch
from pytest_guistate.memory.store import MemoryStore
from pytest_guistate.memory.verify import heal_and_act
from tests.helpers.simcases import Case, SimRig, cases, find_by_locator


@dataclass
class Tally:
    ok: int = 0
    false_heals: int = 0
    prevented: int = 0
    refused: int = 0
    by_role: int = 0  # successes found by role + place + frame (a text field), not by looks
    ms: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def learn_v1(store: MemoryStore, positives: list[Case]) -> int:
    learned = 0
    for case in positives:
        rig = SimRig(case.app, 1, case.size)
        rig.go(case.screen)
        before = rig.observe()
        node = find_by_locator(before.tree, case.locator)
        if node is None or node.bounds is None:
            raise SystemExit(f"v1 locator {case.locator} finds nothing for {case.name}: the case is broken")
        result = learn_patch(store, before, node.bounds, locator=case.locator, function=case.function,
                             app_version="1", test="heal_bench", step=case.name)
        learned += result.new_variant
    return learned


def run_memory(healer: Healer, case: Case, tally: Tally) -> None:
    rig = SimRig(case.app, 2, case.size)
    rig.go(case.screen)
    if find_by_locator(rig.observe().tree, case.locator) is not None:
        raise SystemExit(f"{case.name}: the v1 locator {case.locator} still works on v2, not a heal case")
    first = rig.observe()
    _ = first.frame.bgr  # decoded outside the timing: the step's oracle decodes this frame anyway
    observations = iter([first])
    outcome = heal_and_act(healer, lambda: next(observations, None) or rig.observe(), rig.tap, case.locator, case.expect, function=case.function,
                           settle=lambda: rig.settle(0.5), version="2", test="heal_bench", step=case.name)
    if case.size == (1080, 2400):
        tally.ms.append(outcome.result.elapsed_ms)
    truth = case.truth(rig.log())
    if outcome.accepted and truth and case.positive:
        tally.ok += 1
        tally.by_role += outcome.result.cue == "role"
        return
    if (outcome.accepted and not truth) or (not case.positive and rig.taps):
        tally.false_heals += 1
        tally.failures.append(f"FALSE {case.name} {case.size}: {outcome.title()}")
        return
    tally.prevented += outcome.verdict == "false heal prevented"
    tally.refused += outcome.verdict == "not healed"
    if case.positive:
        tally.failures.append(f"miss  {case.name} {case.size}: {outcome.verdict}: {outcome.result.reason}")


def run_baseline(store: MemoryStore, case: Case, tally: Tally) -> None:
    rig = SimRig(case.app, 2, case.size)
    rig.go(case.screen)
    before = rig.observe()
    started = time.perf_counter()
    node = attribute_heal(store, before, case.locator, case.function)
    if case.size == (1080, 2400):
        tally.ms.append((time.perf_counter() - started) * 1000)
    if node is None or node.bounds is None:
        tally.refused += 1
        return
    rig.tap(*node.bounds.center)
    rig.settle(0.5)
    truth = case.truth(rig.log())
    if truth and case.positive:
        tally.ok += 1
    else:
        tally.false_heals += 1
        tally.failures.append(f"FALSE {case.name} {case.size}: tapped {node.label!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="memory file to use (default: a fresh temporary one)")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every miss and false heal")
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)
    positives, negatives = cases()
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore(args.store or Path(tmp) / "memory.sqlite")
        learned = learn_v1(store, positives)
        healer = Healer(store)
        memory, baseline = Tally(), Tally()
        neg_memory, neg_baseline = Tally(), Tally()
        for case in positives:
            run_memory(healer, case, memory)
            run_baseline(store, case, baseline)
        for case in negatives:
            run_memory(healer, case, neg_memory)
            run_baseline(store, case, neg_baseline)
        store.close()
    rig = SimRig("com.guistate.feed", 2, (1080, 2400))
    png = rig.phone.screenshot_png()
    started = time.perf_counter()
    for _ in range(5):
        cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    decode_ms = (time.perf_counter() - started) * 200
    print(f"learned {learned} v1 variants; {len(positives)} positive cases, {len(negatives)} negatives; "
          "sizes 1080x2400, 720x1600, 1440x3200")
    print(f"{'healer':<22}{'heal success':>14}{'false heals':>13}{'prevented':>11}{'neg. tapped':>13}"
          f"{'ms/heal p50':>13}{'p95':>7}")
    for name, pos, neg in (("memory (this)", memory, neg_memory), ("attributes (Healenium)", baseline, neg_baseline)):
        ms = sorted(pos.ms + neg.ms)
        p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))] if ms else 0.0
        print(f"{name:<22}{pos.ok:>5}/{len(positives)} {100 * pos.ok / len(positives):5.1f}%"
              f"{pos.false_heals + neg.false_heals:>13}{pos.prevented + neg.prevented:>11}"
              f"{neg.false_heals:>7}/{len(negatives)}{statistics.median(ms) if ms else 0:>13.1f}{p95:>7.1f}")
    print(f"memory successes by looks {memory.ok - memory.by_role}, by a text field's role/place/frame "
          f"{memory.by_role}")
    print(f"(one 1080x2400 PNG decode, shared with the oracle and not included above: {decode_ms:.1f} ms)")
    if args.verbose:
        for line in memory.failures + neg_memory.failures:
            print("memory   ", line)
        for line in baseline.failures + neg_baseline.failures:
            print("baseline ", line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
