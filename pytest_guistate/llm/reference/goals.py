"""The reference policy's goal grammar: an instruction in words -> a small plan of intents.

This is pattern matching, not a language model (issue 28): each clause of the goal must match one
of the forms below, or the whole goal is refused with the clause it could not read, so the policy
gives up with a reason instead of acting at random. Clauses are split on "then", ";" and, when the
whole clause is not one form, on "and". Forms (case-insensitive, any trailing period):

- turn/switch/set on|off X, turn X [to] on|off, enable|disable X, make sure|ensure [that] X is|are
  [turned|switched] on|off|enabled|disabled                                       -> `Toggle`
- sign/log in [to App] with user|e-mail|as U and password P (any order); credentials in brackets
  ("as U (password P)"), a pair "with U / P" or "U:P", a quoted password         -> `SignIn`
- type|enter 'T' into|in the F [field]                                             -> `TypeInto`
- search [App] for X [in App] [and open it]; open X in|from App                     -> `SearchItem`
- add|put X to|in the cart|bag [in App]; buy X in App (add to cart, then check out) -> `AddToCart`
- check out | checkout | place the order [in App]                                  -> `Checkout`
- delete|remove|get rid of the post by|from A | A's post | X [from the feed]      -> `DeleteItem`
- open the delete dialog of A's post and cancel it (keeping it) | keep A's post    -> `CancelDelete` | `FindItem`
- move [the photos] X[, Y and Z] to [the] Album [album]                             -> `MovePhotos`
- go back | go home | open|launch|switch to|go to App                              -> `Navigate` | `OpenApp`
- compare the price of X in|between A and B [and buy it in the cheaper one]        -> `ComparePrices`
- scroll to find X | find X | look for X                                           -> `FindItem`
- tap|press|click [on] [the] X [button] [in the toolbar]                             -> `TapItem`

"Please ...", "..., please" and quotes around a whole clause are dropped. A reading that would be a
guess is refused by name (issue 32: never an action on a wrong parse): a bare "the post", an article or
a place read as an author, a password with brackets inside brackets (quote it instead).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["GRAMMAR", "AddToCart", "CancelDelete", "Checkout", "ComparePrices", "DeleteItem", "FindItem", "Intent",
           "MovePhotos", "Navigate", "OpenApp", "OutsideGrammar", "SearchItem", "SignIn", "TapItem", "Toggle",
           "TypeInto", "parse_goal"]

GRAMMAR = ("turn on/off a setting; sign in (user/e-mail and password, also as U / P or in brackets); type text into a named field; search for and "
           "open an item; add an item to the cart; check out; delete or keep an item by its label; open a delete "
           "dialog and cancel it; move photos to an album; go back / go home / open an app; compare a price across "
           "two apps and buy in the cheaper; scroll to find something; tap a named button")


@dataclass(frozen=True)
class Toggle:
    setting: str
    on: bool
    app: str | None = "Settings"  # where settings live when the screen does not show the switch

    @property
    def title(self) -> str:
        return f"turn {'on' if self.on else 'off'} {self.setting}"


@dataclass(frozen=True)
class SignIn:
    user: str
    password: str
    app: str | None = "Settings"

    @property
    def title(self) -> str:
        return f"sign in as {self.user}"


@dataclass(frozen=True)
class TypeInto:
    text: str
    field: str
    app: str | None = None

    @property
    def title(self) -> str:
        return f"type {self.text!r} into {self.field}"


@dataclass(frozen=True)
class SearchItem:
    query: str
    open: bool = False
    app: str | None = None

    @property
    def title(self) -> str:
        return f"{'open' if self.open else 'search for'} {self.query}"


@dataclass(frozen=True)
class AddToCart:
    item: str
    app: str | None = None

    @property
    def title(self) -> str:
        return f"add {self.item} to the cart"


@dataclass(frozen=True)
class Checkout:
    app: str | None = None

    @property
    def title(self) -> str:
        return "check out"


@dataclass(frozen=True)
class DeleteItem:
    label: str
    app: str | None = None

    @property
    def title(self) -> str:
        return f"delete {self.label}"


@dataclass(frozen=True)
class CancelDelete:
    """Open an item's delete confirmation and cancel it: the item stays."""

    label: str
    app: str | None = None

    @property
    def title(self) -> str:
        return f"open the delete dialog of {self.label} and cancel it"


@dataclass(frozen=True)
class MovePhotos:
    labels: tuple[str, ...]
    album: str
    app: str | None = "Gallery"

    @property
    def title(self) -> str:
        return f"move {', '.join(self.labels)} to {self.album}"


@dataclass(frozen=True)
class Navigate:
    where: str  # back | home

    app: str | None = None

    @property
    def title(self) -> str:
        return f"go {self.where}"


@dataclass(frozen=True)
class OpenApp:
    app: str

    @property
    def title(self) -> str:
        return f"open {self.app}"


@dataclass(frozen=True)
class ComparePrices:
    item: str
    shops: tuple[str, str]
    buy: bool
    app: str | None = None

    @property
    def title(self) -> str:
        return f"compare the price of {self.item} in {' and '.join(self.shops)}"


@dataclass(frozen=True)
class FindItem:
    label: str
    app: str | None = None

    @property
    def title(self) -> str:
        return f"find {self.label}"


@dataclass(frozen=True)
class TapItem:
    """Tap one named control once (a hybrid app's native toolbar button before the page, issue 37)."""

    label: str
    app: str | None = None

    @property
    def title(self) -> str:
        return f"tap {self.label}"


Intent = (Toggle | SignIn | TypeInto | SearchItem | AddToCart | Checkout | DeleteItem | CancelDelete | MovePhotos
          | Navigate | OpenApp | ComparePrices | FindItem | TapItem)


@dataclass(frozen=True)
class OutsideGrammar:
    """The goal (or one clause of it) matches no form: the policy says so and does nothing."""

    clause: str

    @property
    def reason(self) -> str:
        return (f"the reference policy (pattern matching, not a language model) cannot read {self.clause!r}; "
                f"it understands: {GRAMMAR}")


_I = re.IGNORECASE
_ART = r"(?:(?:the|a|an|one|my)\s+)?"
_Q = r"['\"“‘]?"
_QE = r"['\"”’]?"
_APP_SUFFIX = re.compile(r"\s+(?:in|on|at|from|using)\s+(?:the\s+)?([A-Z][\w-]*)(?:\s+app)?$")
_THEN = re.compile(r"\s*(?:,?\s*\band then\b|,?\s*\bthen\b|;|,?\s*\bafterwards\b)\s*", _I)
_AND = re.compile(r"\s*(?:,\s*and\b|\band\b|,)\s*", _I)
_KINDS = r"(?:post|entry|item|message|comment)"
_OWNER = (re.compile(r"([A-Z]?[\w-]+)['’]s\s+" + _KINDS, _I),
          re.compile(_KINDS + r"s?\s+(?:by|from|of)\s+([A-Z]?[\w-]+)", _I))
# words that are never a name: "remove the post from the feed" names no author (issue 32: it read "The")
_NOT_A_NAME = frozenset({"the", "a", "an", "my", "this", "that", "his", "her", "their", "its", "it", "feed", "list",
                         "screen", "app", "page", "post", "item", "entry", "photo", "one"})
_PLACE = re.compile(r"\s+(?:from|in|on|off)\s+(?:the\s+|my\s+)?(?:feed|list|timeline|screen)$", _I)
_POLITE = re.compile(r"^(?:please|kindly|now|just|go\s+ahead\s+and|can\s+you|could\s+you)\s+|[\s,]+"
                     r"(?:please|for\s+me|thanks|thank\s+you)$", _I)


def _clean(text: str) -> str:
    text = text.strip().strip(".!?").strip()
    if len(text) >= 2 and text[0] in "'\"“‘" and text[-1] in "'\"”’":  # quotes around the whole, not one inside
        text = text[1:-1].strip()
    while (polite := _POLITE.sub("", text)) != text:  # "please turn on dark mode" = "turn on dark mode"
        text = polite.strip().strip(".!?,").strip()
    return text


def _label(text: str) -> str:
    """An item's label without its kind: 'the Beach photo' -> 'Beach'."""
    text = re.sub(r"^(?:the|a|an)\s+", "", _clean(text), flags=_I)
    return re.sub(r"\s+(?:photo|picture|image|post|item|entry|product)$", "", text, flags=_I)


def _single(intent: Intent | OutsideGrammar | None) -> Intent | OutsideGrammar | None:
    """None when a free-text slot swallowed another clause ('dark mode and go home'): split instead."""
    slots = [getattr(intent, name, "") for name in ("setting", "item", "label", "query", "field")]
    return None if any(re.search(r"\b(?:and|then)\b|,", str(s), _I) for s in slots) else intent


def _split_app(clause: str) -> tuple[str, str | None]:
    """'add X to the cart in ShopB' -> ('add X to the cart', 'ShopB'); the app must be Capitalised."""
    found = _APP_SUFFIX.search(clause)
    if found and found.group(1).lower() not in ("it", "the", "cart", "bag", "feed's"):
        return clause[: found.start()], found.group(1)
    return clause, None


def _owner(text: str) -> str | None:
    """The author an item is named by ("Erin's post", "the post by Erin"); never an article or a place."""
    for pattern in _OWNER:
        for found in pattern.finditer(text):
            if found.group(1).lower() not in _NOT_A_NAME:
                return found.group(1).capitalize()
    return None


def _toggle(c: str) -> Toggle | None:
    state_word = r"(on|off|enabled|disabled|active|inactive)"
    patterns = ((r"^(?:turn|switch|set|toggle|flip)\s+(on|off)\s+" + _ART + r"(.+?)(?:\s+setting)?$", 1, 2),
                (r"^(?:turn|switch|set|toggle|flip)\s+" + _ART + r"(.+?)(?:\s+setting)?\s+(?:to\s+)?(on|off)$", 2, 1),
                (r"^(?:make\s+sure|ensure|check)\s+(?:that\s+)?" + _ART + r"(.+?)(?:\s+settings?)?\s+(?:is|are)\s+"
                 r"(?:turned\s+|switched\s+|set\s+(?:to\s+)?)?" + state_word + "$", 2, 1),
                (r"^(enable|disable|activate|deactivate)\s+" + _ART + r"(.+?)(?:\s+setting)?$", 1, 2))
    for pattern, state, name in patterns:
        if m := re.match(pattern, c, _I):
            word = m.group(state).lower()
            return Toggle(_clean(m.group(name)), word in ("on", "enable", "enabled", "active", "activate"))
    return None


# "U / P", "U:P" after with|as|using, and "(password P)" / "[user U, password P]": brackets are dropped
# before the slots are read, so a password is never read with the bracket that closes it (issue 32)
_PAIR = re.compile(r"\b(?:with|as|using|via|in|on|into)\s+" + _Q + r"([^\s'\"”’,/:()]+)" + _QE + r"\s*[/:]\s*" + _Q
                   + r"([^\s'\"”’,()]+?)" + _QE + r"(?=$|[\s,;)])", _I)
_BRACKETED = re.compile(r"[(\[]\s*([^()\[\]]*?)\s*[)\]]")


def _sign_in(c: str, app: str | None) -> SignIn | OutsideGrammar | None:
    if not re.search(r"\b(?:sign|log)\s*(?:in|on|into)\b|\blogin\b", c, _I):
        return None
    target = re.search(r"\b(?:in|on)?to\s+(?:the\s+)?([A-Z][\w-]*)", c)
    secret_word = r"\b(?:password|passcode|passphrase)\s*(?:is\s+|of\s+|:|=)?\s*"
    quoted = re.search(secret_word + r"(['\"“‘])(.+?)['\"”’]", c, _I)  # a quoted password is read as it is
    if quoted is not None:
        c = c[: quoted.start()] + c[quoted.end():]
    unbracketed = _BRACKETED.sub(lambda m: " " + m.group(1) + " ", c)
    if re.search(r"[()\[\]]", unbracketed):  # nested or unpaired: which bracket is the password's is a guess
        return OutsideGrammar(c + " (brackets inside brackets or unpaired: put the password in quotes)")
    c = unbracketed
    if quoted is None and (pair := _PAIR.search(c)):
        return SignIn(pair.group(1), pair.group(2), app or (target.group(1) if target else "Settings"))
    secret = quoted or re.search(secret_word + _Q + r"([^\s'\"”’]+)", c, _I)
    user = (re.search(r"\b(?:user\s*name|username|user|e-?mail(?:\s+address)?|account|login)\s*(?:is\s+|:|=)?\s*"
                      + _Q + r"([^\s'\"”’,]+)", c, _I)
            or re.search(r"\bas\s+" + _Q + r"([^\s'\"”’,]+)", c, _I)
            or re.search(r"([^\s'\"”’,]+@[^\s'\"”’,]+)", c))
    if secret is None or user is None:
        return OutsideGrammar(c + " (a sign-in needs both a user or e-mail and a password)")
    password = secret.group(2) if secret is quoted else secret.group(1).rstrip(".,")
    return SignIn(user.group(1).rstrip(".,"), password,
                  app or (target.group(1) if target else "Settings"))


def _delete(target: str, app: str | None) -> DeleteItem | OutsideGrammar:
    """'Erin's post [from the feed]', 'the post by|from Erin', 'the Sunset photo'. A name read from
    "from X" is the author, not an app; a bare kind ('the post') names nothing and is refused."""
    target = _PLACE.sub("", target.strip())
    owner = _owner(target)
    if owner is not None:
        return DeleteItem(owner, None if app is not None and app.lower() == owner.lower() else app)
    target, app = _split_app(target)
    label = _label(target)
    if label.lower() in _NOT_A_NAME or not label or re.search(_KINDS + r"s?\s+(?:by|from|of)\b", label, _I):
        return OutsideGrammar(f"delete {target.strip()} (which one? name its author or label)")
    return DeleteItem(label, app)


def _one(clause: str) -> Intent | OutsideGrammar | None:
    """One clause -> one intent, or None when no form matches."""
    return _single(_match(_clean(clause)))


def _match(c: str) -> Intent | OutsideGrammar | None:
    if m := re.search(r"price\s+of\s+(.+?)\s+(?:in|between|across|at)\s+(\w+)\s+and\s+(\w+)", c, _I):
        buy = bool(re.search(r"\b(buy|purchase|order)\b", c, _I))
        return ComparePrices(_clean(m.group(1)), (m.group(2), m.group(3).rstrip(".,")), buy)
    if (sign_in := _sign_in(c, None)) is not None:
        return sign_in
    if re.search(r"\b(delete|remove)\b", c, _I) and re.search(r"\bcancel\b|\bkeep|\bdon'?t\b|\bdo not\b", c, _I):
        label = _owner(c)
        return CancelDelete(label) if label else OutsideGrammar(c + " (whose item?)")
    if m := re.match(r"^keep\s+(.+)$", c, _I):
        return FindItem(_owner(m.group(1)) or _label(m.group(1)))
    body, app = _split_app(c)
    if toggle := _toggle(body):
        return toggle
    if m := re.match(r"^(?:add|put|place)\s+" + _ART + r"(.+?)\s+(?:to|in|into)\s+(?:the|my)\s+(?:shopping\s+)?"
                     r"(?:cart|basket|bag)$", body, _I):
        return AddToCart(_clean(m.group(1)), app)
    if m := re.match(r"^(?:type|enter|write|put|input)\s+" + _Q + r"(.+?)" + _QE + r"\s+(?:in|into|in to)\s+" + _ART
                     + r"(.+?)(?:\s+(?:field|box|input|text\s*field))?$", body, _I):
        return TypeInto(_clean(m.group(1)), _clean(m.group(2)), app)
    if m := re.match(r"^fill\s+(?:in\s+)?" + _ART + r"(.+?)(?:\s+(?:field|box))?\s+with\s+" + _Q + r"(.+?)" + _QE + "$",
                     body, _I):
        return TypeInto(_clean(m.group(2)), _clean(m.group(1)), app)
    if m := re.match(r"^(?:search|look)(?:\s+([A-Z]\w*))?\s+for\s+" + _ART + r"(.+?)(\s+and\s+open\s+(?:it|the\s+"
                     r"(?:first\s+)?result|its\s+page|the\s+product))?$", body, _I):
        query, opened = _clean(m.group(2)), bool(m.group(3))
        query, inner_app = _split_app(query)
        return SearchItem(_clean(query), opened, app or m.group(1) or inner_app)
    if re.match(r"^(?:check\s*out|place\s+the\s+order|pay(?:\s+for\s+the\s+cart)?|complete\s+the\s+purchase)"
                r"(?:\s+the\s+cart)?$", body, _I):
        return Checkout(app)
    if m := re.match(r"^(?:delete|remove|erase|trash|get\s+rid\s+of)\s+(.+)$", c, _I):
        return _delete(m.group(1), app)
    if m := re.match(r"^move\s+(?:the\s+)?(?:photos?\s+(?:of\s+)?)?(.+?)(?:\s+photos?)?\s+(?:to|into)\s+" + _ART
                     + r"(\w+)(?:\s+album)?$", c, _I):
        labels = tuple(_clean(x) for x in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", m.group(1)) if _clean(x))
        return MovePhotos(labels, m.group(2).capitalize())
    if re.match(r"^(?:go|navigate|press|tap)\s+back$|^back$", body, _I):
        return Navigate("back")
    if re.match(r"^(?:go|return|press|navigate|get)\s+(?:back\s+)?(?:to\s+)?(?:the\s+)?home(?:\s+screen)?$", body, _I):
        return Navigate("home")
    if m := re.match(r"^(?:scroll(?:\s+down)?\s+(?:to|until\s+you)\s+(?:find|see|reach)|find|look\s+for|locate)\s+"
                     + _ART + r"(.+)$", body, _I):
        return FindItem(_owner(m.group(1)) or _label(m.group(1)), app)
    for said, where in ((body, app), (c, None)):  # "tap on Help": "on Help" is not an app here
        if m := re.match(r"^(?:tap|press|click)\s+(?:on\s+)?" + _ART + r"(.+?)(?:\s+(?:button|icon|link))?"
                         r"(?:\s+(?:in|on)\s+the\s+(?:toolbar|app\s*bar|title\s*bar))?$", said, _I):
            return TapItem(_clean(m.group(1)), where)
    if (m := re.match(r"^(?:open|launch|start|switch\s+to|go\s+to|return\s+to)\s+" + _ART + r"([\w-]+)(?:\s+app)?$",
                      c, _I)) and m.group(1).lower() not in ("it", "them", "this", "that", "one"):
        return OpenApp(m.group(1))
    if app and (m := re.match(r"^open\s+" + _ART + r"(.+?)(?:\s+(?:page|product))?$", body, _I)):
        return SearchItem(_clean(m.group(1)), True, app)
    if m := re.match(r"^(?:buy|purchase|order)\s+" + _ART + r"(.+)$", body, _I):
        return OutsideGrammar(c) if not app else AddToCart(_clean(m.group(1)), app)
    return None


def _expand(intent: Intent | OutsideGrammar | None, clause: str) -> list[Intent | OutsideGrammar]:
    if intent is None:
        return []
    if isinstance(intent, AddToCart) and re.match(r"^(?:buy|purchase|order)\b", _clean(clause), _I):
        return [intent, Checkout(intent.app)]  # "buy X in ShopA": put it in the cart, then check out
    return [intent]


def _clause(part: str) -> list[Intent | OutsideGrammar]:
    """A clause is several intents joined by "and" when every piece reads as one ("add X to the cart
    and check out"), else one intent ("sign in with the e-mail X and the password Y")."""
    pieces = [p for p in _AND.split(part) if p.strip()]
    if len(pieces) > 1:
        each = [_expand(_one(p), p) for p in pieces]
        if all(x and not isinstance(x[0], OutsideGrammar) for x in each):
            return [intent for x in each for intent in x]
    whole = _expand(_one(part), part)
    if whole:
        return whole
    if len(pieces) > 1:
        return [x for p in pieces for x in (_expand(_one(p), p) or [OutsideGrammar(_clean(p))])]
    return [OutsideGrammar(_clean(part))]


def parse_goal(goal: str) -> list[Intent] | OutsideGrammar:
    """The plan for `goal`: a whole-goal form first, else clause by clause (see the module docstring)."""
    text = _clean(goal)
    if not text:
        return OutsideGrammar(goal)
    whole = _match(text)
    if isinstance(whole, (CancelDelete, ComparePrices)):  # one form spans "..., then cancel it" / "... and buy"
        return [whole]
    found: list[Intent | OutsideGrammar] = []
    for part in filter(None, _THEN.split(text)):
        found.extend(_clause(part))
    for item in found:
        if isinstance(item, OutsideGrammar):
            return item
    plan = [item for item in found if not isinstance(item, OutsideGrammar)]
    # a later clause that names no app works where the previous one did ("in ShopB, add X ... and check out")
    for i, item in enumerate(plan):
        if isinstance(item, Checkout) and item.app is None and i and getattr(plan[i - 1], "app", None):
            plan[i] = Checkout(plan[i - 1].app)
    return plan
