"""The reference policy behind the reference server: deterministic, and it decides only from the
prompt it is sent (instruction, elements with ids, task state, history), never from the sim.

It reads the tools it is offered as a model does: where `home` is offered (an iPhone, which has
no back key) it leaves an app with `home`, else with `back` to the launcher. What it can do: delete a post by an author in a feed (scrolling to find it, refreshing instead of
re-tapping when the state says the effect is uncertain); log in with a user name and password;
compare an item's price across two shops (search, read the price next to the item, remember it,
optionally buy in the cheaper one); judge simple "X is visible / X is gone" claims citing element
ids; return the three TSR views. What it cannot do: read pixels, understand any other task (it
answers `done(success=false)` saying so), or recover from a screen it was not written for.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from pytest_guistate.llm.prompt import parse_elements, parse_sections

__all__ = ["PromptView", "actor_answer", "check_answer", "read_prompt", "updater_answer"]

Element = dict[str, Any]
PRICE_RE = re.compile(r"\$\s?(\d+(?:\.\d{1,2})?)")
SPINNER_WORDS = ("refreshing", "loading")
_NEG_RE = re.compile(r"\b(gone|not|no longer|absent|deleted|removed|disappeared|isn't|doesn't|no)\b", re.IGNORECASE)


@dataclass
class PromptView:
    instruction: str = ""
    state: dict[str, Any] = field(default_factory=dict)
    elements: list[Element] = field(default_factory=list)
    history: list[str] = field(default_factory=list)
    screen: dict[str, Any] = field(default_factory=dict)
    sections: dict[str, str] = field(default_factory=dict)
    tools: list[str] = field(default_factory=list)

    @property
    def app(self) -> str:
        return str(self.screen.get("app", ""))

    @property
    def facts(self) -> dict[str, Any]:
        facts = (self.state.get("summary") or {}).get("facts") or {}
        return {k: (v.get("value") if isinstance(v, dict) else v) for k, v in facts.items()}

    @property
    def next_focus(self) -> str:
        return str((self.state.get("focus") or {}).get("next_focus") or "")

    def label(self, e: Element) -> str:
        return str(e.get("text") or e.get("desc") or e.get("rid") or "")


def read_prompt(body: dict[str, Any]) -> PromptView:
    """Collect the tagged sections of the last user message."""
    messages = body.get("messages") or []
    content = messages[-1].get("content") if messages else []
    blocks = [content] if isinstance(content, str) else list(content or [])
    sections = parse_sections(blocks)
    view = PromptView(sections=sections, instruction=sections.get("instruction", "").strip(),
                      tools=[str(t.get("name")) for t in body.get("tools") or []])
    for key, attr in (("task_state", "state"), ("screen", "screen")):
        if sections.get(key):
            setattr(view, attr, json.loads(sections[key]))
    view.elements = parse_elements(sections.get("elements", ""))
    view.history = [line for line in sections.get("history", "").splitlines() if line.strip()]
    return view


def _call(name: str, **args: Any) -> tuple[str, dict[str, Any]]:
    return name, {k: v for k, v in args.items() if v is not None}


def _has(v: PromptView, text: str) -> list[Element]:
    low = text.lower()
    return [e for e in v.elements if low in v.label(e).lower()]


def _scrollable(v: PromptView) -> Element | None:
    return next((e for e in v.elements if e.get("scroll")), None)


def _history_count(v: PromptView, word: str) -> int:
    return sum(1 for line in v.history if word in line)


def actor_answer(v: PromptView) -> tuple[str, dict[str, Any]]:
    """One tool call for the actor's turn."""
    if any(w in v.label(e).lower() for e in v.elements for w in SPINNER_WORDS):
        return _call("wait", seconds=1.0, reason="a spinner is on screen")
    instruction = v.instruction.lower()
    if m := re.search(r"delete (?:the )?post by (\w+)", instruction):
        return _feed_delete(v, m.group(1))
    if m := re.search(r"log ?in (?:to (\w+) )?as (\S+) with (?:the )?password (\S+)", v.instruction, re.IGNORECASE):
        if m.group(1) and (move := _goto_app(v, m.group(1), "to log in")) is not None:
            return move
        return _login(v, m.group(2), m.group(3).rstrip("."))
    if m := re.search(r"price of (.+?) (?:in|between|across) (\w+) and (\w+)", v.instruction, re.IGNORECASE):
        return _compare(v, m.group(1).strip(" '\""), [m.group(2), m.group(3).rstrip(".,")], "buy" in instruction)
    return _call("done", success=False, summary="the reference policy does not know this kind of task")


def _feed_delete(v: PromptView, author: str) -> tuple[str, dict[str, Any]]:
    author = author.capitalize()
    question = f"Delete post by {author}?"
    confirmed = any(question in line and "-> failed" not in line for line in v.history
                    if line.split(" ", 2)[1:2] == ["tap"] and '"Delete"' in line)
    # a row's button shows "Delete"; on iOS its accessibility label is what the tree reports (issue 11)
    titles = ("Delete", f"Delete post by {author}")
    rows = [e for e in v.elements if e.get("tap") and v.label(e) in titles and "dialog" not in str(e.get("rid"))
            and re.search(rf"\b{re.escape(author)}\b", str(e.get("in", ""))) and question not in str(e.get("in", ""))]
    if _has(v, question):
        button = next((e for e in v.elements if e.get("tap") and v.label(e) == "Delete" and question in e.get("in", "")),
                      None)
        if button is not None:
            return _call("tap", element_id=button["id"], expect={"gone": question},
                         reason=f"confirm deleting the post by {author}")
    if confirmed:
        if not rows and not any(e.get("text") == author for e in v.elements):
            return _call("done", success=True, summary=f"the post by {author} was deleted and is gone from the feed")
        if _history_count(v, " refresh") < 2:
            return _call("refresh", reason=f"the post by {author} may be a stale row: refresh, do not delete again")
        return _call("done", success=False, summary=f"the post by {author} is still shown after two refreshes")
    if rows:
        return _call("tap", element_id=rows[0]["id"], expect={"visible": question},
                     reason=f"open the delete dialog of the post by {author}")
    scroller = _scrollable(v)
    if scroller is not None and _history_count(v, " swipe") < 6:
        return _call("swipe", direction="up", element_id=scroller["id"], reason=f"look for the post by {author}")
    return _call("done", success=False, summary=f"no post by {author} found")


def _field(v: PromptView, words: tuple[str, ...]) -> Element | None:
    for e in v.elements:
        if e.get("edit") and any(w in (str(e.get("rid", "")) + " " + v.label(e)).lower() for w in words):
            return e
    return None


def _login(v: PromptView, user: str, password: str) -> tuple[str, dict[str, Any]]:
    if any(user.lower() in v.label(e).lower() and re.search(r"welcome|signed in|logged in", v.label(e), re.IGNORECASE)
           for e in v.elements):
        return _call("done", success=True, summary=f"logged in as {user}")
    name_field = _field(v, ("user", "email", "login", "name"))
    pass_field = _field(v, ("password", "pass"))
    if name_field is not None and name_field.get("text") != user:
        return _call("type_text", element_id=name_field["id"], text=user, reason="enter the user name")
    if pass_field is not None and len(str(pass_field.get("text", ""))) != len(password):
        return _call("type_text", element_id=pass_field["id"], text=password, reason="enter the password")
    button = next((e for e in v.elements if e.get("tap") and not e.get("edit")
                   and re.fullmatch(r"(log ?in|sign ?in)", v.label(e), re.IGNORECASE)), None)
    if button is not None and _history_count(v, v.label(button)) == 0:
        return _call("tap", element_id=button["id"], reason="submit the login form")
    return _call("done", success=False, summary="no login form and no sign of being logged in")


def _price_near(v: PromptView, item: str) -> str | None:
    """The price on the same row as the item's name (vertical overlap of their boxes)."""
    names = [e for e in v.elements if item.lower() in str(e.get("text", "")).lower() and "at" in e]
    for name in names:
        if found := PRICE_RE.search(str(name.get("text", ""))):
            return found.group(1)
        top, bottom = name["at"][1], name["at"][3]
        height = max(1, bottom - top)
        for e in v.elements:
            found = PRICE_RE.search(str(e.get("text", "")))
            if found and "at" in e and e["at"][1] < bottom + height and e["at"][3] > top - height:
                return found.group(1)
    return None


def _leave(v: PromptView) -> str:
    """The tool that leaves an app: `home` where it is offered (iOS), else `back` (Android)."""
    return "home" if "home" in v.tools else "back"


def _goto_app(v: PromptView, label: str, why: str) -> tuple[str, dict[str, Any]] | None:
    """None when already in the app; else a launcher tap, or the way toward the launcher."""
    if label.lower().replace(" ", "") in v.app.lower():
        return None
    icon = next((e for e in v.elements if e.get("tap") and v.label(e).lower() == label.lower()), None)
    if icon is not None:
        return _call("tap", element_id=icon["id"], reason=f"open {label} {why}")
    if _leave(v) == "home":
        return _call("home", reason=f"go to the home screen to open {label}")
    return _call("back", reason=f"go back toward the launcher to open {label}")


def _compare(v: PromptView, item: str, shops: list[str], buy: bool) -> tuple[str, dict[str, Any]]:
    facts = v.facts
    key = {shop: f"price_{shop.lower()}" for shop in shops}
    for shop in shops:
        if key[shop] in facts:
            continue
        move = _goto_app(v, shop, f"to read the price of {item}")
        if move is not None:
            return move
        price = _price_near(v, item)
        if price is not None:
            others = [s for s in shops if s != shop and key[s] not in facts]
            remember = {key[shop]: price}
            if others or buy:
                return _call(_leave(v), remember=remember, reason=f"{item} costs ${price} in {shop}; leave {shop}")
            return _call("done", success=True, remember=remember,
                         summary=_summary(item, {**facts, **remember}, key))
        return _search(v, item, shop)
    cheaper = min(shops, key=lambda s: float(facts[key[s]]))
    if not buy:
        return _call("done", success=True, summary=_summary(item, facts, key))
    checked_out = any('"Checkout"' in line and "-> failed" not in line for line in v.history)
    if checked_out or any(re.search(r"order placed|thank you", v.label(e), re.IGNORECASE) for e in v.elements):
        return _call("done", success=True, summary=_summary(item, facts, key) + f"; bought in {cheaper}")
    move = _goto_app(v, cheaper, f"to buy {item}")
    if move is not None:
        return move
    tappable = [e for e in v.elements if e.get("tap") and not e.get("disabled")]
    checkout = next((e for e in tappable if re.fullmatch(r"checkout|place order|pay|confirm", v.label(e), re.IGNORECASE)), None)
    if checkout is not None:
        return _call("tap", element_id=checkout["id"], reason=f"check out {item} in {cheaper}")
    if any('"Add to cart"' in line and "-> failed" not in line for line in v.history):
        # the cart button: its content-desc on Android, its label (the element text) on iOS (issue 11)
        cart = next((e for e in v.elements if v.label(e).startswith("Cart")), None)
        if cart is not None:
            return _call("tap", element_id=cart["id"], expect={"visible": "Checkout"}, reason="open the cart")
    add = next((e for e in tappable if re.fullmatch(r"buy|buy now|add to cart", v.label(e), re.IGNORECASE)), None)
    if add is not None and _has(v, item):
        return _call("tap", element_id=add["id"], reason=f"buy {item} in {cheaper}, the cheaper shop")
    rows = [e for e in tappable if not e.get("edit") and item.lower() in str(e.get("in", "")).lower()
            and not re.fullmatch(r"search|go", v.label(e), re.IGNORECASE) and not v.label(e).startswith("Cart")]
    row = min(rows, key=lambda e: "row" not in str(e.get("rid", "")), default=None)
    if row is not None:
        return _call("tap", element_id=row["id"], reason=f"open {item} in {cheaper}")
    return _search(v, item, cheaper)


def _summary(item: str, facts: dict[str, Any], key: dict[str, str]) -> str:
    parts = [f"{shop} ${facts[k]}" for shop, k in key.items() if k in facts]
    return f"{item}: " + ", ".join(parts)


def _search(v: PromptView, item: str, shop: str) -> tuple[str, dict[str, Any]]:
    box = _field(v, ("search", "query", "find"))
    if box is not None and item.lower() not in str(box.get("text", "")).lower():
        return _call("type_text", element_id=box["id"], text=item, reason=f"search {shop} for {item}")
    button = next((e for e in v.elements if e.get("tap") and re.fullmatch(r"search|go", v.label(e), re.IGNORECASE)), None)
    if button is not None and not (v.history and f'"{v.label(button)}"' in v.history[-1]):
        return _call("tap", element_id=button["id"], reason=f"run the search in {shop}")
    scroller = _scrollable(v)
    if scroller is not None and _history_count(v, " swipe") < 4:
        return _call("swipe", direction="up", element_id=scroller["id"], reason=f"look for {item} in {shop}")
    return _call("done", success=False, summary=f"could not find the price of {item} in {shop}")


def updater_answer(v: PromptView) -> tuple[str, dict[str, Any]]:
    """The three TSR views, carried forward and refocused from the transition section."""
    state = v.state
    transition = json.loads(v.sections.get("transition") or "{}")
    tracker = state.get("tracker") or {}
    decomposition = list(tracker.get("decomposition") or []) or [v.instruction]
    completed = list(tracker.get("completed") or [])
    remaining = [m for m in decomposition if m not in completed]
    verdict = transition.get("verdict")
    confirmed = bool(transition.get("confirmed"))
    effect = "took_effect" if confirmed or verdict == "changed" else ("no_effect" if verdict == "no_change" else "uncertain")
    action = transition.get("action") or "the last action"
    if effect == "no_effect":
        focus = f"pull to refresh and verify '{action}' took effect before any retry"
    elif effect == "uncertain":
        focus = f"verify the state after '{action}': the change was uncertain"
    else:
        focus = f"continue with: {remaining[0]}" if remaining else "verify the goal on screen and finish"
    facts = {k: str(val) for k, val in v.facts.items()}
    return _call("update_task_state",
                 summary={"goal": str((state.get("summary") or {}).get("goal") or v.instruction), "facts": facts},
                 tracker={"decomposition": decomposition, "completed": completed,
                          "current": remaining[0] if remaining else None, "remaining": remaining[1:]},
                 focus={"last_action_effect": effect, "evidence": f"oracle verdict {verdict}", "next_focus": focus})


def _claim_terms(claim: str) -> list[str]:
    quoted = re.findall(r"['\"“]([^'\"”]+)['\"”]", claim)
    if quoted:
        return quoted
    named = re.findall(r"\b(?:by|named|called|titled|shows?|says)\s+([A-Z$][\w.$]*)", claim)
    if named:
        return named
    return [w for w in re.findall(r"\b[A-Z][\w]+\b", claim)[1:]] or re.findall(r"\$\d+(?:\.\d+)?", claim)


def check_answer(v: PromptView) -> tuple[str, dict[str, Any]]:
    claim = v.sections.get("claim", "").strip()
    terms = _claim_terms(claim)
    if not terms:
        return _call("report_verdict", verdict="fail", evidence=[], region=None,
                     explanation="the claim names nothing the reference policy can look for")
    negative = bool(_NEG_RE.search(claim))
    hits = [(t, e) for t in terms for e in _has(v, t)]
    evidence = [{"element_id": e["id"], "quote": v.label(e)} for _, e in hits[:3]]
    if negative:
        if hits:
            return _call("report_verdict", verdict="fail", evidence=evidence, region=None,
                         explanation=f"{hits[0][0]!r} is still on screen")
        area = _scrollable(v)
        region = area["at"] if area else None
        cite = [{"element_id": area["id"], "quote": ""}] if area else []
        return _call("report_verdict", verdict="pass", evidence=cite, region=region,
                     explanation=f"no element mentions {', '.join(map(repr, terms))}")
    missing = [t for t in terms if not _has(v, t)]
    if missing:
        return _call("report_verdict", verdict="fail", evidence=evidence, region=None,
                     explanation=f"not on screen: {', '.join(map(repr, missing))}")
    return _call("report_verdict", verdict="pass", evidence=evidence, region=None,
                 explanation=f"on screen: {', '.join(map(repr, terms))}")
