"""The reference policy behind the reference server: deterministic, NOT a language model, and it
decides only from the prompt it is sent (instruction, elements with ids, task state, history, the
tools offered), never from the sim or its ground truth (issue 28).

The actor's turn: the instruction is parsed into a plan of intents (`goals.parse_goal`, whose
docstring is the grammar); each intent's progress is what the policy remembered earlier through
`remember` (facts `goal N: <intent>` in the task state); the first intent not yet done picks one tool
call from the element list. A non-repeatable action (a toggle, a confirm, a checkout) is never sent
twice: when its effect does not show, the policy refreshes or waits, then gives up. A goal outside
the grammar, or a screen with nothing that fits, ends in `done(success=false)` with the reason.
It reads the tools it is offered as a model does: where `home` is offered (an iPhone, which has no
back key) it leaves an app with `home`, else with `back` to the launcher. The checker judges simple
"X is visible / X is gone" claims citing element ids; the updater returns the three TSR views.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pytest_guistate.llm.cache.identity import identity, identity_words, surroundings
from pytest_guistate.llm.prompt import parse_elements, parse_sections
from pytest_guistate.llm.reference.goals import (
    AddToCart,
    CancelDelete,
    Checkout,
    ComparePrices,
    DeleteItem,
    FindItem,
    Intent,
    MovePhotos,
    Navigate,
    OpenApp,
    OutsideGrammar,
    SearchItem,
    SignIn,
    TapItem,
    Toggle,
    TypeInto,
    parse_goal,
)

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


Answer = tuple[str, dict[str, Any]]
_REMEMBERS = ("tap", "type_text", "back", "home", "done")  # the tools whose schema has `remember`


def _call(name: str, **args: Any) -> Answer:
    return name, {k: v for k, v in args.items() if v is not None}


@dataclass(frozen=True)
class Act:
    """The tool call for this turn."""

    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Satisfied:
    """The intent holds on this screen (or its one-shot action is done); `notes` are facts to remember
    with the next call (a price read on this screen)."""

    summary: str
    notes: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class GiveUp:
    reason: str


Decision = Act | Satisfied | GiveUp


def _act(name: str, **args: Any) -> Act:
    return Act(*_call(name, **args))


I_co = TypeVar("I_co", bound=Intent, covariant=True)


@dataclass(frozen=True)
class PlanStep(Generic[I_co]):
    """One intent of the plan and its progress marker, kept in the task state's facts (the policy has
    no memory of its own: what it did earlier is what it remembered through `remember`). Typed by its
    intent, so each decider reads its own intent's fields (`_DECIDERS` picks it by that type)."""

    index: int
    intent: I_co
    marker: str = ""

    @property
    def key(self) -> str:
        return f"goal {self.index}: {self.intent.title}"

    def mark(self, value: str) -> dict[str, str]:
        return {self.key: value}


# -- reading the element list ----------------------------------------------------------------------
def _norm_pattern(words: str) -> re.Pattern[str]:
    """'Wi-Fi' matches 'wifi', 'Wi Fi', 'WI-FI'; whole words only ('Bob' is not 'Bobby')."""
    chunks = re.findall(r"[a-z0-9@.$]+", words.lower())
    return re.compile(r"(?<![a-z0-9])" + r"[\s\-_]*".join(map(re.escape, chunks)) + r"(?![a-z0-9])")


def _mentions(text: Any, words: str) -> bool:
    return bool(words.strip()) and bool(_norm_pattern(words).search(str(text or "").lower()))


def _names(e: Element) -> str:
    return " ".join(str(e.get(k, "")) for k in ("text", "desc", "rid", "hint", "value"))


def _has(v: PromptView, text: str) -> list[Element]:
    low = text.lower()
    return [e for e in v.elements if low in v.label(e).lower()]


def _shows(v: PromptView, pattern: str) -> Element | None:
    return next((e for e in v.elements if re.search(pattern, v.label(e), re.IGNORECASE)), None)


def _tappable(v: PromptView) -> list[Element]:
    return [e for e in v.elements if e.get("tap") and not e.get("disabled")]


def _button(v: PromptView, pattern: str, *, context: str = "") -> Element | None:
    """A tappable (not editable) element whose own label fully matches `pattern`."""
    return next((e for e in _tappable(v) if not e.get("edit") and re.fullmatch(pattern, v.label(e).strip(), re.IGNORECASE)
                 and (not context or context in str(e.get("in", "")))), None)


def _scrollable(v: PromptView) -> Element | None:
    return next((e for e in v.elements if e.get("scroll")), None)


def _history_count(v: PromptView, word: str) -> int:
    return sum(1 for line in v.history if word in line)


def _last_verdict(v: PromptView) -> str:
    return str((v.state.get("focus") or {}).get("verdict") or "")


def _last_action(v: PromptView) -> str:
    return str((v.state.get("focus") or {}).get("last_action") or "")


def _in_app(v: PromptView, app: str | None) -> bool:
    return app is None or re.sub(r"\W", "", app.lower()) in re.sub(r"\W", "", v.app.lower())


def _at_home(v: PromptView) -> bool:
    icons = [e for e in v.elements if e.get("kind") == "Icon" or e.get("rid") == "icon"]
    return "launcher" in v.app.lower() or v.app == "SpringBoard" or len(icons) >= 2


def _scroll_for(v: PromptView, what: str, limit: int = 6) -> Decision:
    """Swipe the list to bring `what` into view; give up at the end of the list or after `limit` swipes."""
    scroller = _scrollable(v)
    if _last_action(v).startswith("swipe") and _last_verdict(v) == "no_change":
        return GiveUp(f"reached the end of the list without finding {what}")
    if scroller is not None and _history_count(v, " swipe") < limit:
        return _act("swipe", direction="up", element_id=scroller["id"], reason=f"look for {what} further down")
    return GiveUp(f"nothing on this screen matches {what}")


def _looks_since_action(v: PromptView) -> int:
    """How many waits and refreshes the history shows since the last real action."""
    looks = 0
    for line in reversed(v.history):
        if line.split(" ", 2)[1:2] not in (["wait"], ["refresh"]):
            break
        looks += 1
    return looks


def _look_again(v: PromptView, why: str, failed: str) -> Decision:
    """The last non-repeatable action shows no effect yet: look again (never act twice), then give up."""
    if _looks_since_action(v) < 2:
        if _scrollable(v) is not None and _last_verdict(v) in ("uncertain", "no_change"):
            return _act("refresh", reason=f"{why}: refresh the list instead of repeating the action")
        return _act("wait", seconds=1.0, reason=f"{why}: look again instead of repeating the action")
    return GiveUp(failed)


def _leave(v: PromptView) -> str:
    """The tool that leaves an app: `home` where it is offered (iOS), else `back` (Android)."""
    return "home" if "home" in v.tools else "back"


def _goto_app(v: PromptView, label: str, why: str) -> Answer | None:
    """None when already in the app; else a launcher tap, or the way toward the launcher."""
    if _in_app(v, label):
        return None
    icon = next((e for e in v.elements if e.get("tap") and v.label(e).lower() == label.lower()), None)
    if icon is not None:
        return _call("tap", element_id=icon["id"], reason=f"open {label} {why}")
    if _leave(v) == "home":
        return _call("home", reason=f"go to the home screen to open {label}")
    return _call("back", reason=f"go back toward the launcher to open {label}")


def _goto(v: PromptView, app: str | None, why: str) -> Decision | None:
    if app is None or _in_app(v, app):
        return None
    if _at_home(v) and not any(e.get("tap") and v.label(e).lower() == app.lower() for e in v.elements):
        return GiveUp(f"no app named {app} on the home screen")
    if _history_count(v, " back") >= 6:
        return GiveUp(f"six times back and still not at {app}")
    move = _goto_app(v, app, why)
    return Act(*move) if move is not None else None


# -- one decider per intent --------------------------------------------------------------------------
def _switches(v: PromptView, setting: str) -> list[Element]:
    """Every switch on screen named `setting` (by its row or its own names)."""
    found: list[Element] = []
    for e in _tappable(v):
        is_switch = e.get("kind") in ("Switch", "ToggleButton", "CheckBox") or "checked" in e \
            or str(e.get("text", "")).upper() in ("ON", "OFF")
        if is_switch and (_mentions(e.get("in"), setting) or _mentions(_names(e), setting)):
            found.append(e)
    return found


# -- telling lookalikes apart ----------------------------------------------------------------------
_QUOTED = r'("(?:[^"\\]|\\.)*")'
_HINT_RE = re.compile(r"Recorded target: " + _QUOTED)
_SIDE_RE = re.compile(r"\b(?:above|below): " + _QUOTED)


def _near_key(s: PlanStep[Any]) -> str:
    return f"{s.key} (near)"


def _hinted(v: PromptView, s: PlanStep[Any], what: str) -> list[str]:
    """The labels around the element meant, as the request says them: the handover's recorded target
    (`Recorded target: "Dark mode" switch ...; above: "Wi-Fi"; below: "Notifications"`) when it names
    `what`, else what this intent remembered around the element it acted on. [] when nothing says."""
    text = v.sections.get("handover", "")
    found = _HINT_RE.search(text)
    if found is not None and identity_words(json.loads(found.group(1))) & identity_words(what):
        return [json.loads(side) for side in _SIDE_RE.findall(text[found.end():].split("\n")[0])]
    noted = v.facts.get(_near_key(s))
    if isinstance(noted, str) and noted.startswith("["):
        return [str(x) for x in json.loads(noted)]
    return []


def _one_of(v: PromptView, s: PlanStep[Any], found: list[Element], what: str) -> Element | GiveUp:
    """The one element among `found` (several match the goal) that is meant: the goal's words first
    (the only one named exactly `what`), then the surroundings a hint or an earlier turn gives (the only
    one with most of those labels around it). Otherwise no guess: a give-up naming every twin, never
    the first on screen (a wrong action that makes a test pass is worse than a clear failure)."""
    if len(found) == 1:
        return found[0]
    exact = [e for e in found if identity_words(identity(e).label) == identity_words(what)]
    if len(exact) == 1:
        return exact[0]
    found = exact or found
    around = [surroundings(v.elements, e) for e in found]
    hint = _hinted(v, s, what)
    if hint:
        scores = [sum(any(identity_words(h) and identity_words(h) == identity_words(x) for x in near) for h in hint)
                  for near in around]
        best = max(scores)
        if best > 0 and scores.count(best) == 1:
            return found[scores.index(best)]
    twins = ", ".join(f"{e['id']} between {a!r} and {b!r}" for e, (a, b) in zip(found, around))
    said = "the goal nor the recorded target's surroundings" if hint else "the goal"
    return GiveUp(f"ambiguous: {len(found)} elements match {what!r} and neither {said} tells them apart "
                  f"({twins}); name the one meant (its section or a neighbour) in the goal")


def _noted_near(v: PromptView, s: PlanStep[Any], found: list[Element], chosen: Element) -> dict[str, str]:
    """With lookalikes on screen, remember the surroundings of the one acted on: the next turn has no
    hint, and must judge the same element, not its twin."""
    if len(found) < 2:
        return {}
    return {_near_key(s): json.dumps([x for x in surroundings(v.elements, chosen) if x])}


def _switch_on(e: Element) -> bool | None:
    if isinstance(e.get("checked"), bool):
        return bool(e["checked"])
    text = str(e.get("text", "")).upper()
    if text in ("ON", "OFF"):
        return text == "ON"
    found = re.search(r"·\s*(On|Off)\b", str(e.get("in", "")))
    return found.group(1) == "On" if found else None


def _login_form(v: PromptView) -> bool:
    return any(e.get("edit") for e in v.elements) and _password_field(v) is not None


def _decide_toggle(v: PromptView, s: PlanStep[Toggle]) -> Decision:
    it = s.intent
    word = "on" if it.on else "off"
    found = _switches(v, it.setting)
    if not found:
        if (move := _goto(v, it.app, f"to turn {word} {it.setting}")) is not None:
            return move
        if _login_form(v):
            return GiveUp(f"{v.app} shows a sign-in form first and the goal gives no credentials")
        return _scroll_for(v, f"a {it.setting} switch")
    if len(found) > 1 and all(_switch_on(e) is it.on for e in found):
        return Satisfied(f"every {it.setting} is {word}")
    switch = _one_of(v, s, found, it.setting)
    if isinstance(switch, GiveUp):
        return switch
    state = _switch_on(switch)
    if state is it.on:
        return Satisfied(f"{it.setting} is {word}")
    if s.marker == "tapped":
        return _look_again(v, f"{it.setting} does not show {word} yet", f"{it.setting} did not turn {word} after one tap")
    return _act("tap", element_id=switch["id"], remember={**s.mark("tapped"), **_noted_near(v, s, found, switch)},
                reason=f"turn {word} {it.setting} (it is {'off' if it.on else 'on'})")


def _password_field(v: PromptView) -> Element | None:
    return next((e for e in v.elements if e.get("edit") and (e.get("kind") == "SecureTextField"
                                                              or re.search(r"pass", _names(e), re.IGNORECASE))), None)


def _user_field(v: PromptView) -> Element | None:
    password = _password_field(v)
    fields = [e for e in v.elements if e.get("edit") and e is not password]
    named = [e for e in fields if re.search(r"user|e-?mail|login|name|account|phone", _names(e), re.IGNORECASE)]
    return next(iter(named or fields), None)


def _decide_sign_in(v: PromptView, s: PlanStep[SignIn]) -> Decision:
    it = s.intent
    if _shows(v, rf"(signed in|logged in|welcome).*{re.escape(it.user)}"):
        return Satisfied(f"signed in as {it.user}")
    if (refused := _shows(v, r"invalid|incorrect|wrong (password|credentials)|try again")) is not None:
        return GiveUp(f"the app says {v.label(refused)!r}")
    user_field, password_field = _user_field(v), _password_field(v)
    if password_field is None:
        if s.marker == "submitted":
            return _look_again(v, "no sign of being signed in yet", "no sign of being signed in after submitting")
        if (move := _goto(v, it.app, "to sign in")) is not None:
            return move
        return GiveUp("no sign-in form on this screen")
    if user_field is not None and str(user_field.get("text", "")) != it.user:
        return _act("type_text", element_id=user_field["id"], text=it.user, reason="enter the user name")
    shown = str(password_field.get("text", ""))
    if not (len(shown) == len(it.password) and set(shown) <= {"•", "*", "●"}):
        return _act("type_text", element_id=password_field["id"], text=it.password, reason="enter the password")
    if s.marker == "submitted":
        return _look_again(v, "the form is still shown", "the sign-in form is still shown after submitting")
    button = _button(v, r"(log|sign)\s*(in|on)|submit|continue")
    if button is None:
        return GiveUp("no Log in / Sign in button on this screen")
    return _act("tap", element_id=button["id"], remember=s.mark("submitted"), reason="submit the sign-in form")


# what a field is called in a goal -> what its element may be called instead ("the Email field" is `username`)
_FIELD_WORDS = {"email": ("e-mail", "user", "username", "login", "account"), "user": ("username", "email", "login"),
                "username": ("user", "email", "login"), "search": ("query", "find"), "password": ("pass",)}


def _field_named(v: PromptView, name: str) -> Element | None:
    fields = [e for e in v.elements if e.get("edit")]
    key = re.sub(r"[^a-z]", "", name.lower().removesuffix(" address"))
    for words in ((name,), _FIELD_WORDS.get(key, ())):
        for word in words:
            found = next((e for e in fields if _mentions(_names(e), word)), None) \
                or next((e for e in fields if _mentions(e.get("in"), word)), None)
            if found is not None:
                return found
    return None


def _decide_type(v: PromptView, s: PlanStep[TypeInto]) -> Decision:
    it = s.intent
    field_ = _field_named(v, it.field)
    if field_ is None:
        if (move := _goto(v, it.app, f"to type into {it.field}")) is not None:
            return move
        return GiveUp(f"no field named {it.field!r} on this screen")
    if it.text in str(field_.get("text", "")) or s.marker == "typed":
        return Satisfied(f"typed {it.text!r} into {it.field}")
    return _act("type_text", element_id=field_["id"], text=it.text, remember=s.mark("typed"),
                reason=f"type into the {it.field} field")


def _item_page(v: PromptView, item: str) -> bool:
    """The item's own page: its name shown and no search box or list of results around it."""
    return (not any(e.get("edit") for e in v.elements) and _scrollable(v) is None
            and any(_mentions(e.get("text"), item) and not e.get("tap") for e in v.elements))


def _result_row(v: PromptView, item: str) -> Element | None:
    rows = [e for e in _tappable(v) if not e.get("edit") and (_mentions(e.get("in"), item) or _mentions(e.get("text"), item))
            and not re.fullmatch(r"search|go|cart.*|.*bag.*|add to cart", v.label(e), re.IGNORECASE)]
    return min(rows, key=lambda e: not (e.get("kind") == "Cell" or "row" in str(e.get("rid", ""))), default=None)


def _shop_app(v: PromptView, app: str | None, what: str) -> Decision | None:
    """Where to shop: the named app, else the app on screen; at the home screen the goal must say which."""
    if app is not None:
        return _goto(v, app, what)
    if _at_home(v):
        return GiveUp(f"the goal does not say in which app to {what} (say 'in <App>')")
    return None


def _decide_search(v: PromptView, s: PlanStep[Intent], query: str, opened: bool, app: str | None) -> Decision:
    if opened and _item_page(v, query):
        return Satisfied(f"{query} is open")
    if not opened and _result_row(v, query) is not None and s.marker == "searched":
        return Satisfied(f"the results show {query}")
    if (move := _shop_app(v, app, f"find {query}")) is not None:
        return move
    if s.marker == "opened":
        return _look_again(v, f"{query}'s page is not shown yet", f"{query}'s page did not open")
    row = _result_row(v, query)
    if row is not None and opened:
        return _act("tap", element_id=row["id"], remember=s.mark("opened"), reason=f"open {query}")
    if (empty := _shows(v, r"^no results")) is not None:
        return GiveUp(f"the app says {v.label(empty)!r}")
    box = _field_named(v, "search") or _field_named(v, "query") or next((e for e in v.elements if e.get("edit")), None)
    if box is None:
        if not _at_home(v) and _history_count(v, " back") < 3:
            return _act("back", reason=f"no search box here: go back to search for {query}")
        return GiveUp(f"no search box to look for {query}")
    if query.lower() not in str(box.get("text", "")).lower():
        return _act("type_text", element_id=box["id"], text=query, reason=f"search for {query}")
    if s.marker != "searched":
        button = _button(v, r"search|go|find")
        if button is not None:
            return _act("tap", element_id=button["id"], remember=s.mark("searched"), reason=f"run the search for {query}")
    return _scroll_for(v, query, limit=4)


def _decide_search_item(v: PromptView, s: PlanStep[SearchItem]) -> Decision:
    it = s.intent
    return _decide_search(v, s, it.query, it.open, it.app)


def _cart_count(v: PromptView) -> int | None:
    for e in v.elements:
        found = re.search(r"(?:cart|bag)\D*(\d+)", v.label(e), re.IGNORECASE)
        if found and e.get("tap"):
            return int(found.group(1))
    return None


def _decide_add(v: PromptView, s: PlanStep[AddToCart]) -> Decision:
    it = s.intent
    if s.marker == "added":
        if _shows(v, r"added to (cart|bag)") or _last_verdict(v) == "changed" or (_cart_count(v) or 0) > 0:
            return Satisfied(f"{it.item} is in the cart")
        return _look_again(v, "the cart shows no change yet", f"no sign that {it.item} went into the cart")
    if (move := _shop_app(v, it.app, f"buy {it.item}")) is not None:
        return move
    if _item_page(v, it.item):
        add = _button(v, r"add to (cart|bag|basket)|buy( now)?")
        if add is None:
            offer = _button(v, r"notify me|sold out|out of stock")
            why = f"it offers {v.label(offer)!r} instead" if offer is not None else "no Add to cart"
            return GiveUp(f"{it.item} cannot be added to the cart: {why}")
        return _act("tap", element_id=add["id"], remember=s.mark("added"), reason=f"add {it.item} to the cart")
    row_add = _row_add_button(v, it.item)
    if row_add is not None:  # a list that sells from its rows (no product page)
        return _act("tap", element_id=row_add["id"], remember=s.mark("added"), reason=f"add {it.item} from its row")
    return _decide_search(v, s, it.item, True, None)


def _row_add_button(v: PromptView, item: str) -> Element | None:
    """An Add to cart button inside the item's own row: the row named exactly the item is preferred over a
    longer name that contains it ('Phone Case Pro')."""
    adds = [e for e in _tappable(v) if re.fullmatch(r"add to (cart|bag|basket)", v.label(e), re.IGNORECASE)
            and _mentions(e.get("in"), item)]
    exact = re.compile(rf"(^|·)\s*{re.escape(item)}\s*(·|$)", re.IGNORECASE)
    return next((e for e in adds if exact.search(str(e.get("in") or ""))), adds[0] if adds else None)


def _decide_checkout(v: PromptView, s: PlanStep[Checkout]) -> Decision:
    it = s.intent
    if s.marker == "checked out":
        if _shows(v, r"order placed|thank you|cart is empty|bag is empty") or _last_verdict(v) == "changed":
            return Satisfied("checked out")
        return _look_again(v, "no order confirmation yet", "no sign that the order was placed")
    if (move := _shop_app(v, it.app, "check out")) is not None:
        return move
    button = _button(v, r"check\s*out|place (the )?order|pay( now)?")
    if button is not None:
        return _act("tap", element_id=button["id"], remember=s.mark("checked out"), reason="check out the cart")
    if any(e.get("disabled") and re.fullmatch(r"check\s*out", v.label(e), re.IGNORECASE) for e in v.elements) \
            or _shows(v, r"(cart|bag) is empty"):
        return GiveUp("the cart is empty: there is nothing to check out")
    cart = next((e for e in _tappable(v) if re.match(r"(shopping )?(cart|bag|basket)\b", v.label(e), re.IGNORECASE)), None)
    if cart is not None:
        return _act("tap", element_id=cart["id"], expect={"visible": "Checkout"}, reason="open the cart")
    return GiveUp("no cart and no Checkout on this screen")


def _question(v: PromptView, label: str) -> Element | None:
    """A confirmation that names the item ('Delete post by Carol?')."""
    return next((e for e in v.elements if not e.get("tap") and str(v.label(e)).strip().endswith("?")
                 and _mentions(v.label(e), label)), None)


def _delete_buttons(v: PromptView, label: str) -> list[Element]:
    """Each row's Delete for the item: the button's own name or its row's texts name the label; never
    a dialog's button (its context is a question)."""
    return [e for e in _tappable(v) if re.search(r"\b(delete|remove)\b", _names(e), re.IGNORECASE)
            and "?" not in str(e.get("in", "")) and (_mentions(e.get("in"), label) or _mentions(e.get("desc"), label)
                                                      or _mentions(e.get("rid") if e.get("text") else "", label))]


def _item_gone(v: PromptView, label: str) -> bool:
    return not _delete_buttons(v, label) and not any(_mentions(e.get("text"), label) for e in v.elements)


def _decide_delete(v: PromptView, s: PlanStep[DeleteItem]) -> Decision:
    it = s.intent
    question = _question(v, it.label)
    if question is not None and s.marker != "confirmed":
        text = v.label(question)
        confirm = _button(v, r"delete|remove|ok|yes|confirm", context=text)
        if confirm is None:
            return GiveUp(f"the dialog {text!r} has no Delete button")
        return _act("tap", element_id=confirm["id"], expect={"gone": text}, remember=s.mark("confirmed"),
                    reason=f"confirm deleting {it.label}")
    if s.marker == "confirmed":
        if _item_gone(v, it.label):
            return Satisfied(f"{it.label} was deleted and is gone from the list")
        if _looks_since_action(v) < 2:
            return _act("refresh", reason=f"{it.label} may be a stale row: refresh, do not delete again")
        return GiveUp(f"{it.label} is still shown after two refreshes")
    if (move := _goto(v, it.app, f"to delete {it.label}")) is not None:
        return move
    buttons = _delete_buttons(v, it.label)
    if buttons:
        found = _one_per_row(v, [b for b in buttons if _mentions(_names(b), it.label)] or buttons)
        button = _one_of(v, s, found, it.label)
        if isinstance(button, GiveUp):
            return button
        return _act("tap", element_id=button["id"], expect=_asks(button, it.label),
                    reason=f"open the delete dialog of {it.label}")
    return _scroll_for(v, f"{it.label} with a Delete button")


def _one_per_row(v: PromptView, found: list[Element]) -> list[Element]:
    """The first of the elements sharing a row (their boxes overlap vertically: a row's icon and text
    Delete are one post's), so that only different rows count as lookalikes."""
    kept: list[Element] = []
    for e in found:
        at = e.get("at")
        if not any(isinstance(at, list) and isinstance(k.get("at"), list) and at[1] < k["at"][3] and k["at"][1] < at[3]
                   for k in kept):
            kept.append(e)
    return kept


def _asks(button: Element, label: str) -> dict[str, str] | None:
    """What a Delete button named 'Delete post by Carol' will ask: 'Delete post by Carol?'. Only for that
    naming (a wrong expectation fails the step); 'Remove Carol's post' expects nothing."""
    name = str(button.get("desc") or button.get("text") or "")
    if _mentions(name, label) and re.match(r"delete\s+\w+\s+by\b", name, re.IGNORECASE):
        return {"visible": f"{name}?"}
    return None


def _decide_cancel(v: PromptView, s: PlanStep[CancelDelete]) -> Decision:
    it = s.intent
    question = _question(v, it.label)
    if question is not None:
        cancel = _button(v, r"cancel|no|keep|not now", context=v.label(question))
        if cancel is None:
            return GiveUp(f"the dialog {v.label(question)!r} has no Cancel button")
        return _act("tap", element_id=cancel["id"], expect={"gone": v.label(question)}, remember=s.mark("cancelled"),
                    reason=f"cancel: keep {it.label}")
    if s.marker == "cancelled":
        if _delete_buttons(v, it.label) or any(_mentions(e.get("text"), it.label) for e in v.elements):
            return Satisfied(f"the delete dialog was cancelled and {it.label} is kept")
        return GiveUp(f"{it.label} is no longer shown after cancelling")
    if s.marker == "opened":
        return _look_again(v, "the delete dialog is not shown yet", "the delete dialog did not open")
    if (move := _goto(v, it.app, f"to find {it.label}")) is not None:
        return move
    buttons = _delete_buttons(v, it.label)
    if buttons:
        return _act("tap", element_id=buttons[0]["id"], remember=s.mark("opened"), expect=_asks(buttons[0], it.label),
                    reason=f"open the delete dialog of {it.label} (to cancel it)")
    return _scroll_for(v, f"{it.label} with a Delete button")


def _photo(v: PromptView, label: str) -> Element | None:
    return next((e for e in _tappable(v) if e.get("kind") not in ("Button",)
                 and re.match(rf"{re.escape(label)}\b", _names(e).strip(), re.IGNORECASE)), None)


def _decide_move(v: PromptView, s: PlanStep[MovePhotos]) -> Decision:
    it = s.intent
    if s.marker == "moved":
        if _shows(v, rf"moved .*{re.escape(it.album)}") or _last_verdict(v) == "changed":
            return Satisfied(f"moved {', '.join(it.labels)} to {it.album}")
        return _look_again(v, "no sign of the move yet", f"no sign that the photos moved to {it.album}")
    if (move := _goto(v, it.app, f"to move photos to {it.album}")) is not None:
        return move
    chosen = [x for x in s.marker.removeprefix("selected:").split(",") if x] if s.marker.startswith("selected:") else []
    picker = [e for e in _tappable(v) if re.match(r"\w+ \(\d+\)$", v.label(e))]
    if picker:
        target = next((e for e in picker if re.match(rf"{re.escape(it.album)}\b", v.label(e), re.IGNORECASE)), None)
        if target is None:
            return GiveUp(f"no album named {it.album}; the picker offers {[v.label(e) for e in picker]}")
        return _act("tap", element_id=target["id"], remember=s.mark("moved"), reason=f"move to {it.album}")
    for label in it.labels:
        if label in chosen:
            continue
        cell = _photo(v, label)
        if cell is None:
            return _scroll_for(v, f"the photo {label}", limit=4)
        return _act("tap", element_id=cell["id"], remember=s.mark("selected:" + ",".join([*chosen, label])),
                    reason=f"select {label}")
    counted = _shows(v, r"^\d+ selected$")
    if counted is not None and int(v.label(counted).split()[0]) != len(it.labels):
        return GiveUp(f"the screen says {v.label(counted)!r}, not the {len(it.labels)} photos asked for")
    button = _button(v, r"move( to album)?")
    if button is None:
        return GiveUp("no enabled Move to album button")
    return _act("tap", element_id=button["id"], reason=f"open the album picker for {it.album}")


def _decide_navigate(v: PromptView, s: PlanStep[Navigate]) -> Decision:
    it = s.intent
    if it.where == "back":
        return _act("back", remember=s.mark("done"), reason="go back, as asked")
    if _at_home(v):
        return Satisfied("on the home screen")
    if "home" in v.tools:
        return _act("home", remember=s.mark("done"), reason="go to the home screen, as asked")
    if _history_count(v, " back") >= 6:
        return GiveUp("six times back and still not on the home screen")
    return _act("back", reason="go back toward the home screen (this device has no home tool)")


def _decide_open(v: PromptView, s: PlanStep[OpenApp]) -> Decision:
    it = s.intent
    if _in_app(v, it.app):
        return Satisfied(f"{it.app} is open")
    move = _goto(v, it.app, "as asked")
    return move if move is not None else Satisfied(f"{it.app} is open")


def _decide_find(v: PromptView, s: PlanStep[FindItem]) -> Decision:
    it = s.intent
    seen = next((e for e in v.elements if _mentions(e.get("text"), it.label) or _mentions(e.get("desc"), it.label)), None)
    if seen is not None:
        return Satisfied(f"{it.label} is on screen ({seen['id']})")
    if (move := _goto(v, it.app, f"to find {it.label}")) is not None:
        return move
    return _scroll_for(v, it.label, limit=8)


def _decide_tap(v: PromptView, s: PlanStep[TapItem]) -> Decision:
    it = s.intent
    if s.marker == "tapped":
        return Satisfied(f"tapped {it.label}")
    target = _button(v, re.escape(it.label)) or next(
        (e for e in _tappable(v) if not e.get("edit") and _mentions(e.get("desc"), it.label)), None)
    if target is None:
        if (move := _goto(v, it.app, f"to tap {it.label}")) is not None:
            return move
        return GiveUp(f"no {it.label!r} control on this screen")
    return _act("tap", element_id=target["id"], remember=s.mark("tapped"), reason=f"tap {it.label}, as asked")


def _decide_compare(v: PromptView, s: PlanStep[ComparePrices]) -> Decision:
    it = s.intent
    return _compare(v, it.item, list(it.shops))


# an interstitial the goal did not ask for (rate-the-app, a cookie notice): its way out, never its "OK"
_DISMISS = (r"not now|no,? thanks|maybe later|remind me later|later|dismiss|skip|got it|reject all|decline|"
            r"not interested|close")

def _in_app_bar(v: PromptView, e: Element) -> bool:
    """A control in the screen's top bar (its top eighth) is the app's own (a hybrid app's toolbar Close,
    issue 37), never the way out of a prompt the goal did not ask for: those are dialogs and sheets below."""
    at, bottoms = e.get("at"), [x["at"][3] for x in v.elements if isinstance(x.get("at"), list)]
    return isinstance(at, list) and bool(bottoms) and at[3] <= max(bottoms) / 8


_DECIDERS: dict[type, Callable[[PromptView, PlanStep[Any]], Decision]] = {
    Toggle: _decide_toggle, SignIn: _decide_sign_in, TypeInto: _decide_type,
    SearchItem: _decide_search_item, AddToCart: _decide_add, Checkout: _decide_checkout,
    DeleteItem: _decide_delete, CancelDelete: _decide_cancel, MovePhotos: _decide_move,
    Navigate: _decide_navigate, OpenApp: _decide_open, FindItem: _decide_find,
    ComparePrices: _decide_compare, TapItem: _decide_tap}


def actor_answer(v: PromptView) -> Answer:
    """One tool call for the actor's turn: the goal's plan (`goals.parse_goal`), each intent's progress
    from the task state's facts, and the first intent not yet done decides from the element list."""
    if any(w in v.label(e).lower() for e in v.elements for w in SPINNER_WORDS):
        return _call("wait", seconds=1.0, reason="a spinner is on screen")
    plan = parse_goal(v.instruction)
    if isinstance(plan, OutsideGrammar):
        return _call("done", success=False, summary=plan.reason)
    if (nag := _button(v, _DISMISS)) is not None and not _in_app_bar(v, nag):
        return _call("tap", element_id=nag["id"], reason=f"dismiss {str(nag.get('in') or 'a prompt')!r}: not part "
                                                          "of the goal")
    facts = v.facts
    finished: dict[str, str] = {}
    summaries: list[str] = []
    index = 0
    while index < len(steps := _with_purchase(plan, {**facts, **finished})):
        intent = steps[index]
        index += 1
        step = PlanStep(index, intent, str(facts.get(PlanStep(index, intent).key, "")))
        if step.marker == "done":
            summaries.append(_compare_summary(intent, facts) if isinstance(intent, ComparePrices) else intent.title)
            continue
        decision = _DECIDERS[type(intent)](v, step)
        if isinstance(decision, Satisfied):
            finished.update(decision.notes)
            finished[step.key] = "done"
            summaries.append(decision.summary)
            continue
        if isinstance(decision, GiveUp):
            return _call("done", success=False, summary=f"{intent.title}: {decision.reason}", remember=finished or None)
        args = dict(decision.args)
        if finished and decision.name in _REMEMBERS:
            args["remember"] = {**finished, **(args.get("remember") or {})}
        return decision.name, args
    return _call("done", success=True, summary="; ".join(summaries), remember=finished or None)


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


def _compare(v: PromptView, item: str, shops: list[str]) -> Decision:
    """Read the item's price in each app in turn (search, the price on the item's row), remembering each
    as `price_<app>`; satisfied once every price is known. Buying in the cheaper app is the plan's next
    intents (`_with_purchase`)."""
    facts = v.facts
    key = {shop: f"price_{shop.lower()}" for shop in shops}
    for shop in shops:
        if key[shop] in facts:
            continue
        move = _goto_app(v, shop, f"to read the price of {item}")
        if move is not None:
            return Act(*move)
        price = _price_near(v, item)
        if price is not None:
            remember = {key[shop]: price}
            if [s for s in shops if s != shop and key[s] not in facts]:
                return _act(_leave(v), remember=remember, reason=f"{item} costs ${price} in {shop}; leave {shop}")
            return Satisfied(_summary(item, {**facts, **remember}, key), remember)
        name, args = _search(v, item, shop)
        return GiveUp(str(args["summary"])) if name == "done" else Act(name, args)
    return Satisfied(_summary(item, facts, key))


def _compare_summary(intent: ComparePrices, facts: dict[str, Any]) -> str:
    return _summary(intent.item, facts, {shop: f"price_{shop.lower()}" for shop in intent.shops})


def _cheaper(facts: dict[str, Any], shops: tuple[str, ...]) -> str | None:
    prices = {shop: facts.get(f"price_{shop.lower()}") for shop in shops}
    if any(p is None for p in prices.values()):
        return None
    return min(shops, key=lambda s: float(prices[s]))  # type: ignore[arg-type]


def _with_purchase(plan: list[Intent], facts: dict[str, Any]) -> list[Intent]:
    """'... and buy it in the cheaper shop': once the prices are remembered, the plan goes on with adding
    the item to the cart and checking out in the cheaper app (their own deciders and markers)."""
    out: list[Intent] = []
    for intent in plan:
        out.append(intent)
        if isinstance(intent, ComparePrices) and intent.buy and (cheaper := _cheaper(facts, intent.shops)):
            out += [AddToCart(intent.item, cheaper), Checkout(cheaper)]
    return out


def _summary(item: str, facts: dict[str, Any], key: dict[str, str]) -> str:
    parts = [f"{shop} ${facts[k]}" for shop, k in key.items() if k in facts]
    return f"{item}: " + ", ".join(parts)


def _search(v: PromptView, item: str, shop: str) -> tuple[str, dict[str, Any]]:
    box = _field_named(v, "search") or _field_named(v, "query")
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
