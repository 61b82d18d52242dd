"""Stale-list deletes (issue 3): a naive "re-tap until it changes" script vs this plugin's step loop.

Run: `python benchmarks/stale_bench.py [--episodes 200] [--seed 7] [--tries 3]`.

Seeded Feed episodes (refresh_delay 0-3 s, drop_tap_rate 0-0.5, which of the first seven posts
to delete, phone seed), each "delete post X via the confirm dialog", run by two policies on
identical episodes (same phone seed, same fault seed, so the same taps get dropped in order):
  (a) naive: tap "Delete post by X", wait, tap the dialog's Delete, wait; if X is still listed,
      start again - up to `--tries` rounds with a fixed `--wait`, like a typical flaky-test script;
  (b) ours: `TaskSession.perform` - open the dialog (idempotent, expect "Delete post?"), then
      confirm with `expect=gone(X)`, `idempotent=False` (settle, refresh, never repeat).
Ground truth is `phone.action_log()`. Time runs on a `VirtualClock` shared by phone and session;
every device command also costs modelled latency on that clock (`--tap-s`, `--screenshot-s`,
`--source-s`; MEASURED.md: a real Appium screenshot ~0.2 s) so the virtual wall time counts the
plugin's extra screenshots too. CPU is `time.process_time` per episode; "plugin CPU" subtracts
what the simulated phone itself spent rendering screenshots and page sources.
Exits 1 if policy (b) ever deletes a post twice or deletes the wrong post.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests.helpers
from pytest_guistate.core.checks import gone, visible
from pytest_guistate.core.errors import StepFailed
from pytest_guistate.core.settle import SettlePolicy, VirtualClock
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.core.tiers import TierPolicy
from pytest_guistate.core.uitree import parse_page_source
from pytest_guistate.devices.sim.phone import Phone
from tests.helpers.direct_screen import DirectScreen

FEED = "com.guistate.feed"
TARGETS = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace"]  # the rows on the first screen
CONFIRM_ID = "android:id/button1"


@dataclass(frozen=True)
class Latency:
    """Virtual seconds each device command costs (the in-process phone answers instantly)."""

    tap: float
    screenshot: float
    source: float


@dataclass(frozen=True)
class Episode:
    index: int
    phone_seed: int
    fault_seed: int
    refresh_delay: float
    drop_tap_rate: float
    target: str


@dataclass
class Result:
    deletes: list[str]  # authors deleted, in order (action log)
    inputs: int  # taps + swipes sent
    screenshots: int
    sources: int
    virtual_s: float
    cpu_s: float
    device_cpu_s: float
    rounds: int  # naive: delete rounds; ours: actions run by the two steps
    failed_loudly: bool = False  # the policy reported failure (ours: StepFailed; naive: gave up)
    believed_ok: bool = False  # the policy thinks it succeeded
    notes: list[str] = field(default_factory=list)

    def recovered(self, target: str) -> bool:
        return self.deletes == [target]

    def duplicates(self, target: str) -> int:
        """Non-idempotent actions too many: deletes beyond the first plus deletes of the wrong post."""
        extra = max(0, len(self.deletes) - 1)
        wrong_first = 1 if self.deletes and self.deletes[0] != target else 0
        return extra + wrong_first


class MeteredPhone:
    """Proxy over `Phone`: every command advances the virtual clock by its modelled latency and
    the real CPU the simulator spends is tallied, so the plugin's own CPU can be told apart."""

    def __init__(self, phone: Phone, clock: VirtualClock, latency: Latency) -> None:
        self._phone, self._clock, self._latency = phone, clock, latency
        self.device_cpu = 0.0
        self.counts = {"tap": 0, "swipe": 0, "screenshot": 0, "source": 0}

    def _timed(self, kind: str, cost: float, fn: Callable[[], Any]) -> Any:
        self._clock.sleep(cost)
        self.counts[kind] += 1
        started = time.process_time()
        try:
            return fn()
        finally:
            self.device_cpu += time.process_time() - started

    def screenshot_png(self) -> bytes:
        return self._timed("screenshot", self._latency.screenshot, self._phone.screenshot_png)

    def page_source(self) -> str:
        return self._timed("source", self._latency.source, self._phone.page_source)

    def tap(self, x: int, y: int) -> None:
        self._timed("tap", self._latency.tap, lambda: self._phone.tap(x, y))

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None:
        cost = self._latency.tap + duration_ms / 1000
        self._timed("swipe", cost, lambda: self._phone.swipe(x1, y1, x2, y2, duration_ms))

    def __getattr__(self, name: str) -> Any:  # now, current_package, back, ... pass straight through
        return getattr(self._phone, name)


def make_episodes(count: int, seed: int) -> list[Episode]:
    rng = random.Random(seed)
    episodes = []
    for i in range(count):
        # a fifth of the episodes have no stale list and a quarter no lost taps: the plain cases count too
        delay = 0.0 if rng.random() < 0.2 else round(rng.uniform(0.1, 3.0), 2)
        drop = 0.0 if rng.random() < 0.25 else round(rng.uniform(0.05, 0.5), 2)
        episodes.append(Episode(i, rng.randrange(1000), rng.randrange(1_000_000), delay, drop, rng.choice(TARGETS)))
    return episodes


def _setup(ep: Episode, latency: Latency) -> tuple[Phone, MeteredPhone, DirectScreen, VirtualClock]:
    clock = VirtualClock()
    phone = Phone(app_package=FEED, clock=clock, seed=ep.phone_seed,
                  faults={"refresh_delay": ep.refresh_delay, "drop_tap_rate": ep.drop_tap_rate, "seed": ep.fault_seed})
    metered = MeteredPhone(phone, clock, latency)
    return phone, metered, DirectScreen(metered), clock


def _result(phone: Phone, metered: MeteredPhone, clock: VirtualClock, started: tuple[float, float],
            rounds: int) -> Result:
    deletes = [e["author"] for e in phone.action_log() if e.get("action") == "delete_post"]
    c = metered.counts
    return Result(deletes, c["tap"] + c["swipe"], c["screenshot"], c["source"], clock.t - started[1],
                  time.process_time() - started[0], metered.device_cpu, rounds)


def naive(ep: Episode, latency: Latency, tries: int, wait: float) -> Result:
    """(a) The flaky-test script: tap, confirm, look; if the post is still there, do it all again."""
    phone, metered, screen, clock = _setup(ep, latency)
    started = (time.process_time(), clock.t)
    believed = False
    rounds = 0
    for _ in range(tries):
        rounds += 1
        try:
            screen.tap_text(f"Delete post by {ep.target}")  # driver.find_element(desc).click()
        except LookupError:
            pass  # the row is gone already
        clock.sleep(wait)
        try:
            screen.tap_id(CONFIRM_ID)
        except LookupError:
            pass  # no dialog (the first tap was lost): the next round taps again
        clock.sleep(wait)
        if not parse_page_source(metered.page_source()).find_text(ep.target, exact=True):
            believed = True
            break
    result = _result(phone, metered, clock, started, rounds)
    result.believed_ok, result.failed_loudly = believed, not believed
    return result


def ours(ep: Episode, latency: Latency, tries: int, tier: str) -> Result:
    """(b) This plugin: the confirm is verified by settle -> refresh -> re-check, never repeated."""
    phone, metered, screen, clock = _setup(ep, latency)
    started = (time.process_time(), clock.t)
    session = TaskSession(screen, policy=TierPolicy.for_tier(tier), clock=clock, name=f"episode {ep.index}",
                          settle=SettlePolicy(timeout_s=3.0, interval_s=0.15))
    failed, note = False, ""
    try:
        session.perform("open delete dialog", lambda: screen.tap_text(f"Delete post by {ep.target}"),
                        expect=visible("Delete post?"), max_retries=tries - 1)
        session.perform("confirm delete", lambda: screen.tap_id(CONFIRM_ID), expect=gone(ep.target, exact=True),
                        idempotent=False)
    except StepFailed as exc:
        failed, note = True, str(exc).splitlines()[0]
    result = _result(phone, metered, clock, started, sum(s.actions for s in session.steps))
    result.failed_loudly, result.believed_ok = failed, not failed
    if failed:  # ground truth of why, from the phone (after the timing)
        dropped = len(phone.dropped())
        if note.startswith("step 1") and dropped >= tries:
            cause = f"all {tries} open-dialog taps lost"
        elif phone.find_key("feed/dialog") is not None and dropped and not result.deletes:
            cause = "confirm tap lost, dialog still open"
        else:
            cause = "other cause"
        result.notes.append(f"{cause}: {note}")
    return result


def _row(name: str, episodes: list[Episode], results: list[Result]) -> dict[str, Any]:
    n = len(results)
    dups = [r.duplicates(e.target) for e, r in zip(episodes, results)]
    recovered = sum(r.recovered(e.target) for e, r in zip(episodes, results))
    silent = sum(r.believed_ok and not r.recovered(e.target) for e, r in zip(episodes, results))
    return {
        "policy": name,
        "recovered": f"{recovered}/{n}",
        "dup eps": sum(d > 0 for d in dups),
        "dup acts": sum(dups),
        "loud fail": sum(r.failed_loudly for r in results),
        "silent wrong": silent,
        "extra inputs": f"{statistics.mean(r.inputs - 2 for r in results):.2f}",
        "shots": f"{statistics.mean(r.screenshots for r in results):.1f}",
        "sources": f"{statistics.mean(r.sources for r in results):.1f}",
        "virt s mean": f"{statistics.mean(r.virtual_s for r in results):.2f}",
        "virt s p90": f"{statistics.quantiles([r.virtual_s for r in results], n=10)[-1]:.2f}",
        "CPU ms med": f"{statistics.median(r.cpu_s for r in results) * 1000:.1f}",
        "plugin CPU ms": f"{statistics.median(r.cpu_s - r.device_cpu_s for r in results) * 1000:.1f}",
    }


def _print_table(rows: list[dict[str, Any]]) -> None:
    keys = list(rows[0])
    widths = {k: max(len(k), *(len(str(r[k])) for r in rows)) for k in keys}
    print("  ".join(k.rjust(widths[k]) for k in keys))
    for r in rows:
        print("  ".join(str(r[k]).rjust(widths[k]) for k in keys))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--tries", type=int, default=3, help="naive rounds; ours: runs of the idempotent open step")
    parser.add_argument("--wait", type=float, default=0.5, help="naive fixed wait after each tap (virtual s)")
    parser.add_argument("--tier", default="standard", choices=["light", "standard", "full"])
    parser.add_argument("--tap-s", type=float, default=0.1)
    parser.add_argument("--screenshot-s", type=float, default=0.2)
    parser.add_argument("--source-s", type=float, default=0.1)
    parser.add_argument("--show-failures", action="store_true", help="print why ours failed, per episode")
    args = parser.parse_args(argv)
    if args.episodes < 10 or args.tries < 1:
        parser.error("need --episodes >= 10 and --tries >= 1")
    latency = Latency(args.tap_s, args.screenshot_s, args.source_s)
    episodes = make_episodes(args.episodes, args.seed)
    ours(episodes[0], latency, args.tries, args.tier)  # warm-up: fonts, OpenCV, caches
    naive_results = [naive(ep, latency, args.tries, args.wait) for ep in episodes]
    our_results = [ours(ep, latency, args.tries, args.tier) for ep in episodes]

    print(f"{len(episodes)} Feed episodes (seed {args.seed}): refresh_delay 0-3 s, drop_tap_rate 0-0.5, "
          f"target among {len(TARGETS)} rows; naive {args.tries} rounds x wait {args.wait} s; ours tier "
          f"{args.tier}; latency tap {args.tap_s} s, screenshot {args.screenshot_s} s, source {args.source_s} s")
    rows = [_row("a naive", episodes, naive_results), _row("b ours", episodes, our_results)]
    _print_table(rows)
    stale = [i for i, ep in enumerate(episodes) if ep.refresh_delay > 0]
    for label, idx in (("refresh_delay > 0", stale),
                       ("refresh_delay = 0", [i for i in range(len(episodes)) if i not in set(stale)])):
        if len(idx) >= 10:
            sub = [_row(p, [episodes[i] for i in idx], [res[i] for i in idx])
                   for p, res in (("a", naive_results), ("b", our_results))]
            print(f"  {label}: recovered a {sub[0]['recovered']} / b {sub[1]['recovered']}, "
                  f"dup acts a {sub[0]['dup acts']} / b {sub[1]['dup acts']}, "
                  f"virt s mean a {sub[0]['virt s mean']} / b {sub[1]['virt s mean']}")
    mean = statistics.mean
    print(f"ratio ours/naive: virtual time {mean(r.virtual_s for r in our_results) / mean(r.virtual_s for r in naive_results):.2f}x, "
          f"CPU {statistics.median(r.cpu_s for r in our_results) / statistics.median(r.cpu_s for r in naive_results):.1f}x "
          f"(plugin CPU alone {statistics.median(r.cpu_s - r.device_cpu_s for r in our_results) * 1000:.1f} ms/episode)")
    reasons: dict[str, int] = {}
    for r in our_results:
        for note in r.notes:
            key = note.split(":")[0]
            reasons[key] = reasons.get(key, 0) + 1
    for reason, count in sorted(reasons.items(), key=lambda kv: -kv[1]):
        print(f"  ours failed loudly x{count}: {reason}")
    if args.show_failures:
        for ep, r in zip(episodes, our_results):
            if r.notes:
                print(f"  {ep}: {r.notes[0]}")
    bad = [ep for ep, r in zip(episodes, our_results) if r.duplicates(ep.target)]
    if bad:
        print(f"FAIL: ours duplicated or misdirected a non-idempotent action in {len(bad)} episode(s): {bad[:5]}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
