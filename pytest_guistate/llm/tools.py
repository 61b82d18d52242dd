"""Tool definitions (the only way the model may answer) and a small validator for their inputs.

One tool call per turn, with an input schema, instead of free-text parsing (issue 5). The
validator covers the subset of JSON Schema these tools use (type, required, enum, properties,
items, minimum/maximum) so malformed input gets a message naming the field.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ACTOR_TOOLS", "CHECK_TOOL", "IOS_ACTOR_TOOLS", "QUERY_TOOL", "UPDATER_TOOL", "ToolInputError", "actor_tools",
           "tool_names", "unoffered", "validate"]


class ToolInputError(ValueError):
    """A tool call whose input does not match the tool's schema."""


# `expect` and `remember` are explained once in the actor's system prompt (rules 4 and 6), not in
# every tool: the tool list is sent on every call, so its size is paid on every turn.
_EXPECT = {"type": "object", "properties": {"visible": {"type": "string"}, "gone": {"type": "string"}}}
_REMEMBER = {"type": "object", "additionalProperties": {"type": "string"}}
_REASON = {"type": "string"}
_MARKED = {"expect": _EXPECT, "remember": _REMEMBER}


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    props = dict(properties)
    props.setdefault("reason", _REASON)
    return {"name": name, "description": description,
            "input_schema": {"type": "object", "properties": props, "required": required}}


ACTOR_TOOLS: list[dict[str, Any]] = [
    _tool("tap", "Tap one element by its id from <elements> (preferred), or a point x,y in the pixels of the "
                 "screenshot you were shown. Give element_id or both x and y.",
          {"element_id": {"type": "string"}, "x": {"type": "integer", "minimum": 0},
           "y": {"type": "integer", "minimum": 0}, "expect": _EXPECT, "remember": _REMEMBER}, []),
    _tool("type_text", "Type text into an editable element (by id), or into the focused field when element_id is "
                       "omitted. Typing appends; it is never repeated automatically.",
          {"element_id": {"type": "string"}, "text": {"type": "string"}, "expect": _EXPECT,
           "remember": _REMEMBER}, ["text"]),
    _tool("swipe", "Scroll the screen (or the scrollable element_id): 'up' shows content further down.",
          {"direction": {"type": "string", "enum": ["up", "down", "left", "right"]},
           "element_id": {"type": "string"}}, ["direction"]),
    _tool("back", "Press the system back key (closes dialogs; at an app's root it returns to the launcher).",
          _MARKED, []),
    _tool("wait", "Wait for a loading spinner or a delayed redraw, then look again.",
          {"seconds": {"type": "number", "minimum": 0.1, "maximum": 5}}, ["seconds"]),
    _tool("refresh", "Pull to refresh the list on screen; use it when the task state says the last effect is "
                     "uncertain, instead of repeating the action.", {}, []),
    _tool("done", "Finish: success=true only when the task state and the screen show every requirement met; "
                  "success=false when the task cannot be completed (say why in summary).",
          {"success": {"type": "boolean"}, "summary": {"type": "string"}, "remember": _REMEMBER},
          ["success", "summary"]),
]

# An iPhone has no back key and no launcher app (issue 11): `back` is the navigation bar's back
# button or the edge swipe, and `home` (XCUITest's `pressButton` home) is the way to another app.
# Android's list stays as it was: its order and names are part of every recorded cassette.
_IOS_ONLY: dict[str, dict[str, Any]] = {
    "back": _tool("back", "Go back one screen: tap the navigation bar's back button, or swipe from the left edge "
                          "when there is no bar. iPhones have no back key: it does not close alerts (tap one of "
                          "their buttons) and does nothing at an app's first screen; use home to leave an app.",
                  _MARKED, []),
    "home": _tool("home", "Go to the home screen (SpringBoard), whose icons open apps; the app you leave keeps its "
                          "screen and is resumed when you tap its icon again.", _MARKED, []),
}
IOS_ACTOR_TOOLS: list[dict[str, Any]] = [
    tool for t in ACTOR_TOOLS
    for tool in ([_IOS_ONLY["back"], _IOS_ONLY["home"]] if t["name"] == "back" else [t])
]
_PLATFORM_TOOLS = {"android": ACTOR_TOOLS, "ios": IOS_ACTOR_TOOLS}
# What to use instead of a tool another platform has (the actor's error names it).
_INSTEAD = {("android", "home"): "Android goes home with back at an app's root, then taps the app's icon"}


def actor_tools(platform: str) -> list[dict[str, Any]]:
    """The actor's tool list on `platform` (android, ios); the same list every turn (prompt cache)."""
    try:
        return _PLATFORM_TOOLS[platform]
    except KeyError:
        raise ValueError(f"no actor tool set for platform {platform!r}; known: {sorted(_PLATFORM_TOOLS)}") from None


def unoffered(name: str, platform: str) -> str:
    """Why the tool `name` cannot be called on `platform`: the message the actor gets back."""
    offered = tool_names(actor_tools(platform))
    elsewhere = [p for p, tools in _PLATFORM_TOOLS.items() if p != platform and name in tool_names(tools)]
    if not elsewhere:
        return f"unknown tool {name!r}; the tools on {platform} are {offered}"
    instead = _INSTEAD.get((platform, name), f"use one of {offered}")
    return f"tool {name!r} exists on {', '.join(elsewhere)} only, not on this {platform} device: {instead}"


_VIEW_SUMMARY = {
    "type": "object",
    "properties": {"goal": {"type": "string"},
                   "facts": {"type": "object", "additionalProperties": {"type": "string"}}},
    "required": ["goal", "facts"],
}
_VIEW_TRACKER = {
    "type": "object",
    "properties": {"decomposition": {"type": "array", "items": {"type": "string"}},
                   "completed": {"type": "array", "items": {"type": "string"}},
                   "current": {"type": ["string", "null"]},
                   "remaining": {"type": "array", "items": {"type": "string"}}},
    "required": ["decomposition", "completed", "current", "remaining"],
}
_VIEW_FOCUS = {
    "type": "object",
    "properties": {"last_action_effect": {"type": "string", "enum": ["took_effect", "no_effect", "uncertain"]},
                   "evidence": {"type": "string"}, "next_focus": {"type": "string"}},
    "required": ["last_action_effect", "next_focus"],
}
UPDATER_TOOL: dict[str, Any] = {
    "name": "update_task_state",
    "description": "Return the updated task state S_t: the global summary, the progress tracker and the "
                   "transition-aware focus. The screen wins over the previous state.",
    "input_schema": {"type": "object",
                     "properties": {"summary": _VIEW_SUMMARY, "tracker": _VIEW_TRACKER, "focus": _VIEW_FOCUS},
                     "required": ["summary", "tracker", "focus"]},
}

CHECK_TOOL: dict[str, Any] = {
    "name": "report_verdict",
    "description": "Judge the claim about the current screen. Cite evidence: element ids from <elements> with the "
                   "exact text you rely on, and/or a region [left, top, right, bottom] in shown-image pixels.",
    "input_schema": {"type": "object", "properties": {
        "verdict": {"type": "string", "enum": ["pass", "fail"]},
        "evidence": {"type": "array", "items": {"type": "object", "properties": {
            "element_id": {"type": "string"}, "quote": {"type": "string"}}, "required": ["element_id"]}},
        "region": {"type": ["array", "null"], "items": {"type": "integer"}},
        "explanation": {"type": "string"}}, "required": ["verdict", "evidence", "explanation"]},
}

QUERY_TOOL: dict[str, Any] = {
    "name": "report_answer",
    "description": "Answer the question from the current screen, in the <answer_type> asked. Cite every part of "
                   "the value: per part (its path) the element id from <elements> it was read from and the exact "
                   "text you read. answered=false (with why in explanation) when the screen does not show it.",
    "input_schema": {"type": "object", "properties": {
        "answered": {"type": "boolean"},
        "value": {},
        "evidence": {"type": "array", "items": {"type": "object", "properties": {
            "path": {"type": "string"}, "element_id": {"type": "string"}, "quote": {"type": "string"}},
            "required": ["path", "element_id"]}},
        "explanation": {"type": "string"}}, "required": ["answered", "evidence", "explanation"]},
}


def tool_names(tools: list[dict[str, Any]]) -> list[str]:
    return [str(t["name"]) for t in tools]


_TYPES: dict[str, tuple[type, ...]] = {"object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
                                       "integer": (int,), "number": (int, float), "null": (type(None),)}


def validate(value: Any, schema: dict[str, Any], path: str = "input") -> None:
    """Raise `ToolInputError` naming the first field that breaks `schema`."""
    kinds = schema.get("type")
    if kinds is not None:
        allowed = [kinds] if isinstance(kinds, str) else list(kinds)
        ok = any(isinstance(value, _TYPES[k]) and not (k in ("integer", "number") and isinstance(value, bool))
                 for k in allowed)
        if not ok:
            raise ToolInputError(f"{path} must be {' or '.join(allowed)}, got {type(value).__name__} {value!r:.60}")
    if "enum" in schema and value not in schema["enum"]:
        raise ToolInputError(f"{path} must be one of {schema['enum']}, got {value!r:.60}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise ToolInputError(f"{path} must be >= {schema['minimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            raise ToolInputError(f"{path} must be <= {schema['maximum']}, got {value}")
    if isinstance(value, dict):
        for name in schema.get("required", []):
            if name not in value:
                raise ToolInputError(f"{path} is missing the required field {name!r}")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            if key in props:
                validate(item, props[key], f"{path}.{key}")
            elif isinstance(extra, dict):
                validate(item, extra, f"{path}.{key}")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            validate(item, schema["items"], f"{path}[{i}]")
