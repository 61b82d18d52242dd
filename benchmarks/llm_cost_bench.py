"""Token cost of the LLM-driven steps: TSR-faithful configuration vs the plugin's defaults.

Same seeded episodes (sim seed 1) for both, through the real `anthropic` SDK against the local
reference server (`pytest_guistate.llm.reference.server`), whose `usage` is what is reported:
  (a) TSR-faithful: the whole current frame at full resolution plus the previous whole frame every
      turn, no prompt caching, the LLM state updater every step with before/after whole frames;
  (b) defaults: the frame at 1/3 scale, the last change crops instead of old frames, prompt caching
      on system + tools, the updater on demand (oracle uncertain, milestone boundary, EXCEPTION).
Image tokens: Anthropic's documented rule (fit 1568 px long edge / 1.15 MP, then w*h/750). Text
tokens: no Claude tokenizer is available offline, so the reference server's deterministic
approximation is used (`tokens.TEXT_COUNTER`; the SDK's `messages.count_tokens` against the server
returns the same count). "billed" weighs cache writes 1.25x and cache reads 0.1x, as the API bills.

Run: python benchmarks/llm_cost_bench.py [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests.helpers
from pytest_guistate.core.checks import gone, visible
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.devices.sim.phone import Phone
from pytest_guistate.llm.actor import ActorConfig, run
from pytest_guistate.llm.client import LLMSettings, Mode, make_client
from pytest_guistate.llm.reference.server import ReferenceServer
from pytest_guistate.llm.reference.tokens import TEXT_COUNTER
from pytest_guistate.llm.updater import LLMStateUpdater
from tests.helpers.direct_screen import DirectScreen

EPISODES: list[dict[str, Any]] = [
    {"name": "feed-delete (stale list)", "package": "com.guistate.feed", "faults": {"refresh_delay": 1.0},
     "task": "Delete the post by Carol", "plan": [("post by Carol gone", gone("Carol"))],
     "ok": lambda phone: [e["author"] for e in phone.action_log() if e.get("action") == "delete_post"] == ["Carol"]},
    {"name": "login", "package": None, "faults": None,
     "task": "Log in to Settings as qa@example.com with password correct-horse",
     "plan": [("signed in", visible("Signed in as qa@example.com"))],
     "ok": lambda phone: any(e.get("action") == "login" and e.get("success") for e in phone.action_log())},
    {"name": "shop compare+buy", "package": None, "faults": None,
     "task": "Compare the price of Phone Case in ShopA and ShopB and buy it in the cheaper shop", "plan": [],
     "ok": lambda phone: sum(e.get("action") == "checkout" for e in phone.action_log()) == 1},
]
CONFIGS = {
    "a_tsr_faithful": {"actor": ActorConfig(frame_divisor=1.0, crops=0, whole_frames=1, cache=False),
                       "updater": {"activation": "always", "whole_frames": True}},
    "b_defaults": {"actor": ActorConfig(), "updater": {"activation": "on_demand", "whole_frames": False}},
}


def _episode(server_url: str, episode: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    phone = Phone(app_package=episode["package"], seed=1, faults=episode["faults"])
    screen = DirectScreen(phone)
    session = TaskSession(screen, name=episode["name"])
    env = {"ANTHROPIC_API_KEY": "sk-ant-bench-not-a-key", "ANTHROPIC_BASE_URL": server_url}
    client = make_client(LLMSettings(mode=Mode.ANTHROPIC), env=env)
    assert client is not None
    session.updater = LLMStateUpdater(client, **config["updater"])
    try:
        result = run(session, screen, episode["task"], llm=client, max_steps=25, plan=episode["plan"],
                     config=config["actor"], raise_on_failure=False)
        success = result.success and episode["ok"](phone)
    finally:
        client.finish()
        phone.close()
    totals = client.ledger.totals()
    steps = max(1, len(session.steps))
    inp = totals["input_tokens"] + totals["cache_creation_input_tokens"] + totals["cache_read_input_tokens"]
    billed = (totals["input_tokens"] + 1.25 * totals["cache_creation_input_tokens"]
              + 0.1 * totals["cache_read_input_tokens"] + totals["output_tokens"])
    return {"episode": episode["name"], "success": success, "steps": steps, "calls": totals["calls"],
            "input": inp, "output": totals["output_tokens"], "cache_read": totals["cache_read_input_tokens"],
            "per_step": (inp + totals["output_tokens"]) / steps, "billed_per_step": billed / steps,
            "cost_usd": totals["cost_usd"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the rows as JSON to this file")
    args = parser.parse_args(argv)
    rows: dict[str, list[dict[str, Any]]] = {}
    with ReferenceServer() as server:
        for name, config in CONFIGS.items():
            rows[name] = [_episode(server.url, episode, config) for episode in EPISODES]
    print(f"text tokens: {TEXT_COUNTER}; image tokens: w*h/750 after the 1568 px / 1.15 MP fit")
    print(f"{'config':<16} {'episode':<26} {'ok':<3} {'steps':>5} {'calls':>5} {'in+out/step':>12} "
          f"{'billed/step':>12} {'cost $':>8}")
    summary: dict[str, dict[str, float]] = {}
    for name, episodes in rows.items():
        for r in episodes:
            print(f"{name:<16} {r['episode']:<26} {'y' if r['success'] else 'n':<3} {r['steps']:>5} {r['calls']:>5} "
                  f"{r['per_step']:>12.0f} {r['billed_per_step']:>12.0f} {r['cost_usd'] or 0:>8.4f}")
        steps = sum(r["steps"] for r in episodes)
        summary[name] = {"success_rate": sum(r["success"] for r in episodes) / len(episodes),
                         "per_step": sum(r["input"] + r["output"] for r in episodes) / steps,
                         "billed_per_step": sum(r["billed_per_step"] * r["steps"] for r in episodes) / steps}
    a, b = summary["a_tsr_faithful"], summary["b_defaults"]
    for name, s in summary.items():
        print(f"{name:<16} success {s['success_rate']:.0%}  tokens/step {s['per_step']:.0f}  "
              f"billed-equivalent/step {s['billed_per_step']:.0f}")
    print(f"(b)/(a): tokens/step {b['per_step'] / a['per_step']:.0%}, billed-equivalent/step "
          f"{b['billed_per_step'] / a['billed_per_step']:.0%} (target <= 40%)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"rows": rows, "summary": summary, "text_counter": TEXT_COUNTER}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
