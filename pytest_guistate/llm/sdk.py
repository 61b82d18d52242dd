"""The anthropic SDK, imported on first use.

Importing it takes about a second (pydantic models, httpx), and a test replaying its action cache
(`--guistate-llm=cache`, or `cache-fallback` until its first miss) never talks to a model: it
should not pay that second inside its own duration. Annotations import the SDK only for type
checking; the code that builds a client or catches its errors calls `anthropic_sdk()`.
"""

from __future__ import annotations

from types import ModuleType

__all__ = ["anthropic_sdk"]


def anthropic_sdk() -> ModuleType:
    import anthropic  # deferred on purpose (see the module docstring)

    return anthropic
