"""`guistate.query` through the plugin (issue 46): the docs example (docs/llm-steps.md) in an inner
pytest run on the sim, both personas, against the reference server; then strict replay from the
action cache at 0 tokens on another seed, where every price moved: the test's own assertion (the
phone's ground truth: what was bought, at what price) passes on today's values."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_guistate.devices.sim.apps.shop import shop_prices
from pytest_guistate.llm.reference.server import ReferenceServer
from tests.helpers.inner_run import run_inprocess

EXAMPLE = Path(__file__).resolve().parents[2] / "example_suite"

DOCS = EXAMPLE.parent / "docs" / "llm-steps.md"


def docs_example() -> str:
    """The example of docs/llm-steps.md ("Reading values: guistate.query"), as the page shows it."""
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("## Reading values: `guistate.query`") :]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


# The same reading with a purchase the test makes itself (no actor run: its replay depends on no price).
TESTS = (
    docs_example()
    + """
import os


@pytest.mark.guistate(app="com.guistate.shopa")
def test_reads_prices_and_buys_in_the_cheaper_shop(device, guistate):
    prices = {shop: read_price(device, guistate, shop) for shop in SHOPS}
    cheaper = min(prices, key=prices.get)
    device.activate_app(SHOPS[cheaper])
    guistate.perform("open Phone Case", lambda: device.tap(id="name"), expect="Add to cart")
    guistate.perform("add to cart", lambda: device.tap(id="add_to_cart"), expect=visible("Cart, 1 items"),
                     idempotent=False)
    assert guistate.query("how many items are in the cart", type=int) == 1
    bought = [e for e in device.action_log() if e["action"] == "add_to_cart"]
    assert [(e["shop"], e["price"]) for e in bought] == [(cheaper, min(prices.values()))]


@pytest.mark.guistate(app="com.guistate.shopb")
def test_an_unverified_read_shows_what_was_cited(device, guistate, monkeypatch):
    # The reference server's `partial` fault for this test's model: its names come back cut short.
    monkeypatch.setenv("ANTHROPIC_BASE_URL", os.environ["ANTHROPIC_BASE_URL"] + "/_fault/partial")
    guistate.perform("search", lambda: device.tap(id="search_button"), expect=visible(id="price"))
    guistate.query("the names of the products", type=list[str])
"""
)


@pytest.fixture
def reference(monkeypatch: pytest.MonkeyPatch) -> Iterator[ReferenceServer]:
    with ReferenceServer() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-query-0000")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


def _suite(pytester: pytest.Pytester) -> None:
    shutil.copy(EXAMPLE / "sim_apps.py", pytester.path / "sim_apps.py")
    pytester.makepyfile(test_prices=TESTS)
    pytester.makeini("[pytest]\nguistate_llm_updater = off\n")


def _run(pytester: pytest.Pytester, *args: str, seed: int) -> pytest.RunResult:
    caps = pytester.path / "caps.json"
    caps.write_text(json.dumps({"guistate:seed": seed}))
    return run_inprocess(
        pytester,
        "-p",
        "no:cacheprovider",
        "--guistate-memory=off",
        f"--guistate-caps={caps}",
        "--guistate-summary=summary.json",
        *args,
    )


def _rows(pytester: pytest.Pytester) -> dict[str, dict]:
    data = json.loads((pytester.path / "summary.json").read_text())
    return {row["nodeid"].rpartition("::")[2]: row for row in data["tests"]}


def test_the_docs_example_reads_both_prices_and_the_cheaper_shop_is_bought(
    pytester: pytest.Pytester, reference: ReferenceServer
) -> None:
    """On the iOS persona (the replay test below records on Android): seed 9, where ShopA is cheaper."""
    _suite(pytester)
    result = _run(pytester, "--guistate-platform=ios", "--guistate-llm=anthropic", "-k", "cheaper_shop_was", seed=9)
    result.assert_outcomes(passed=1)
    purposes = [r.body["tools"][0]["name"] for r in reference.requests]
    assert purposes.count("report_answer") == 2


def test_strict_replay_reads_todays_prices_after_a_drift_at_zero_tokens(
    pytester: pytest.Pytester, reference: ReferenceServer
) -> None:
    _suite(pytester)
    record = ("--guistate-artifacts=art", "--guistate-retain=on", "--alluredir=allure")
    recording = _run(pytester, "--guistate-llm=anthropic", "-k", "reads_prices or unverified", *record, seed=1)
    recording.assert_outcomes(passed=1, failed=1)
    truth = shop_prices(1)["Phone Case"]
    _the_record_shows_the_values_and_their_crops(pytester, truth, "model")
    _an_unverified_read_shows_what_was_cited(pytester, recording, reference)
    cache = json.loads(next((pytester.path / "cassettes").rglob("*.actions.json")).read_text())
    assert [q["question"] for q in cache["queries"]] == [
        "the price of Phone Case in ShopA",
        "the price of Phone Case in ShopB",
        "how many items are in the cart",
    ]
    served = len(reference.requests)
    shutil.rmtree(pytester.path / "art")
    shutil.rmtree(pytester.path / "allure")
    _run(pytester, "--guistate-llm=cache", "-k", "reads_prices", *record, seed=2).assert_outcomes(passed=1)  # moved
    _the_record_shows_the_values_and_their_crops(pytester, shop_prices(2)["Phone Case"], "cache")
    row = _rows(pytester)["test_reads_prices_and_buys_in_the_cheaper_shop"]
    assert row["llm_tokens"] == 0 and row["llm_cache"]["hits"] == 3 and row["llm_cache"]["misses"] == 0
    # Seed 9: ShopA is the cheaper one now. The prices read again say so, the test buys there, and the
    # cart count the cache read in ShopB's app is a named miss in ShopA's: never a value from another app.
    failed = _run(pytester, "--guistate-llm=cache", "-k", "reads_prices", seed=9)
    failed.assert_outcomes(failed=1)
    miss = "*cache miss at query 'how many items are in the cart': the screen is not the one the query read*"
    failed.stdout.fnmatch_lines([miss + "(similarity 0.00; cached on 'shopb: *')*"])
    assert len(reference.requests) == served  # the model was never asked


def _the_record_shows_the_values_and_their_crops(
    pytester: pytest.Pytester, prices: tuple[float, float], source: str
) -> None:
    """The journal's `llm` event, report.html and Allure show each query, its value and the crops of
    the elements it was read from (the crops are files of the test's folder)."""
    [journal] = [j for j in (pytester.path / "art").rglob("journal.jsonl") if "reads_prices" in str(j)]
    llm = next(json.loads(line) for line in journal.read_text("utf-8").splitlines() if '"llm"' in line[:40])
    queries = (llm.get("data") or llm)["queries"]
    assert [(q["question"], q["value"], q["source"]) for q in queries] == [
        ("the price of Phone Case in ShopA", prices[0], source),
        ("the price of Phone Case in ShopB", prices[1], source),
        ("how many items are in the cart", 1, source),
    ]
    crops = [e["crop"] for q in queries for e in q["evidence"]]
    assert len(crops) == 3 and all((journal.parent / rel).is_file() for rel in crops)
    page = (journal.parent / "report.html").read_text("utf-8")
    assert "Values read (3)" in page and "the price of Phone Case in ShopB" in page
    results = [json.loads(p.read_text("utf-8")) for p in (pytester.path / "allure").glob("*-result.json")]
    [result] = [r for r in results if "reads_prices" in r["name"]]
    steps = {step["name"]: step for step in result["steps"]}
    step = steps[f"query 'the price of Phone Case in ShopA' -> {prices[0]}"]
    assert [a["name"] for a in step["attachments"]] == [f"read the value: ${prices[0]:.2f}"]


def _an_unverified_read_shows_what_was_cited(
    pytester: pytest.Pytester, run: pytest.RunResult, reference: ReferenceServer
) -> None:
    """A read the server answers cut short ("Phone" for "Phone Case") fails its test with
    `QueryUnverified`, and its record (journal, report.html, Allure) shows the crops of the elements
    the model cited, so a person sees what the wrong value was read from."""
    run.stdout.fnmatch_lines(["*QueryUnverified: query 'the names of the products' (list?str?) is unverified*"])
    assert [r.fault for r in reference.requests if r.fault] == ["partial"]
    [journal] = [j for j in (pytester.path / "art").rglob("journal.jsonl") if "unverified" in str(j)]
    llm = next(json.loads(line) for line in journal.read_text("utf-8").splitlines() if '"llm"' in line[:40])
    [failed] = (llm.get("data") or llm)["queries"]
    assert failed["problems"] and failed["value"][1] == "Phone"
    crops = [e["crop"] for e in failed["evidence"]]
    assert len(crops) >= 5 and all((journal.parent / rel).is_file() for rel in crops)
    page = (journal.parent / "report.html").read_text("utf-8")
    assert "unverified: &#39;0&#39;" in page or "unverified: '0'" in page
    assert page.count('alt="element read for') == len(crops)
    results = [json.loads(p.read_text("utf-8")) for p in (pytester.path / "allure").glob("*-result.json")]
    [step] = [s for r in results for s in r["steps"] if s["name"].startswith("query 'the names of the products'")]
    assert step["status"] == "failed" and len(step["attachments"]) == len(crops)
