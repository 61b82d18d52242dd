"""What every generated page shares: the one autoescaping Jinja2 environment, the page names, and
how a failure's message is shown.

Below both pages that use it: `html.py` (a test's report.html) and `index.py` (the run's
index.html, which links each report.html and quotes each failure's first line), so the index
needs nothing of the report module and `guistate report --run` can use the index.
"""

from __future__ import annotations

from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

__all__ = ["REPORT_NAME", "TIMELINE_NAME", "environment", "error_lines"]

REPORT_NAME = "report.html"
TIMELINE_NAME = "timeline.svg"


def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("pytest_guistate.report", "templates"),
        autoescape=select_autoescape(enabled_extensions=("html", "svg", "j2"), default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _text(value: Any) -> Markup:
    """Escape for element content only (`&`, `<`, `>`): big JSON blocks in `<pre>` stay readable
    in the source and a third smaller than with quotes escaped too. Never use in attributes."""
    text = str(value)
    return Markup(text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


_ENV = _environment()
_ENV.filters["text"] = _text
# what an <img> shows until its step is first shown and the page sets its display copy (1x1 GIF)
_ENV.globals["PLACEHOLDER"] = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"


def environment() -> Environment:
    """The one autoescaping Jinja2 environment of the report templates (report, timeline, index)."""
    return _ENV


def error_lines(error: str | None) -> list[str]:
    """The assertion message of a failure: pytest's `E` lines, else the first line."""
    if not error or not error.strip():
        return []
    lines = [line[1:].strip() for line in error.splitlines() if line.startswith("E ")]
    return lines or [error.strip().splitlines()[0]]
