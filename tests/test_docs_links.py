"""The documentation holds together: README.md and docs/*.md link only to files and headings that exist, every
docs page is reachable from README.md, every module docs/architecture.md names exists, and every file a page
names is in the repository.

README.md is short and points into docs/; a page renamed, a heading reworded or a module moved would otherwise
leave a newcomer at a dead link. Anchors are GitHub's: a heading's text lower-cased, punctuation dropped, spaces
made hyphens, a repeated heading numbered `-1`, `-2`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.DOTALL | re.MULTILINE)
INLINE_CODE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
HTML_ID = re.compile(r"<a\s[^>]*(?:id|name)=\"([^\"]+)\"", re.IGNORECASE)
MODULE_PATH = re.compile(r"`(pytest_guistate/[\w./-]+)`")
CODE_SPAN = re.compile(r"`([^`\s]+)`")
FILE_NAME = re.compile(r"/[\w.-]+\.(?:md|py|json|sh|toml|ya?ml|txt|cfg)$")
PLACEHOLDER = re.compile(r"[<>*…{}$]")
RUN_MODULE = re.compile(r"python -m (pytest_guistate(?:\.\w+)+)")
# where a page's short paths are meant from: the repository, the package (`core/uitree.py`), the pages, the tests
# and the benchmarks
BASES = ("", "pytest_guistate", "docs", "tests", "benchmarks")


@dataclass(frozen=True)
class Link:
    """One relative link as written: the page it is on, and its target."""

    page: Path
    target: str


def _prose(text: str) -> str:
    """The text without fenced blocks and inline code: a link inside code is an example, not a link."""
    return INLINE_CODE.sub("code", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor a page offers: its headings (repeats numbered as GitHub does) and explicit html ids."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    found: set[str] = set()
    seen: Counter[str] = Counter()
    for heading in HEADING.findall(text):
        base = slug(heading)
        found.add(base if seen[base] == 0 else f"{base}-{seen[base]}")
        seen[base] += 1
    found.update(HTML_ID.findall(text))
    return found


def relative_links(page: Path) -> list[Link]:
    """The page's links that point inside the repository (no scheme, no mail address)."""
    targets = LINK.findall(_prose(page.read_text(encoding="utf-8")))
    return [Link(page, t) for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t, re.IGNORECASE)]


def documentation(root: Path) -> list[Path]:
    """README.md and every page of docs/."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def broken_links(root: Path) -> list[str]:
    """Every relative link whose file or heading does not exist, as `page: target (why)`."""
    problems = []
    for page in documentation(root):
        for link in relative_links(page):
            path_part, _, anchor = link.target.partition("#")
            target = (page.parent / path_part).resolve() if path_part else page
            where = f"{page.relative_to(root)}: {link.target}"
            if not target.exists():
                problems.append(f"{where} (no file {path_part})")
            elif not target.resolve().is_relative_to(root.resolve()):
                problems.append(f"{where} (outside the repository)")
            elif anchor and target.suffix == ".md" and anchor not in anchors(target):
                problems.append(f"{where} (no heading with anchor #{anchor} in {target.relative_to(root)})")
    return problems


def unreachable_pages(root: Path) -> list[str]:
    """docs pages no chain of links from README.md reaches."""
    readme = (root / "README.md").resolve()
    reached, todo = {readme}, [readme]
    while todo:
        page = todo.pop()
        for link in relative_links(page):
            path_part = link.target.partition("#")[0]
            if not path_part:
                continue
            target = (page.parent / path_part).resolve()
            if target.suffix == ".md" and target.is_file() and target not in reached:
                reached.add(target)
                todo.append(target)
    return [str(p.relative_to(root)) for p in documentation(root)[1:] if p.resolve() not in reached]


def missing_modules(root: Path) -> list[str]:
    """The `pytest_guistate/...` paths docs/architecture.md names that are not in the checkout."""
    text = (root / "docs" / "architecture.md").read_text(encoding="utf-8")
    return sorted({p for p in MODULE_PATH.findall(text) if not (root / p.rstrip("/")).exists()})


def unknown_files(root: Path) -> list[str]:
    """Files a page names in code (`dir/name.py`, with a folder and no placeholder) and modules it runs
    (`python -m pytest_guistate.x`) that the repository lacks: a file outside the repository, or one moved or
    renamed since the page was written."""
    problems = []
    for page in documentation(root):
        for name in CODE_SPAN.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
            named = FILE_NAME.search(name) and not PLACEHOLDER.search(name) and "://" not in name
            if named and not any((root / base / name).exists() for base in BASES):
                problems.append(f"{page.relative_to(root)}: {name}")
        for module in RUN_MODULE.findall(page.read_text(encoding="utf-8")):  # `python -m pytest_guistate.x.y`
            path = root / module.replace(".", "/")
            if not (path.with_suffix(".py").is_file() or (path / "__main__.py").is_file()):
                problems.append(f"{page.relative_to(root)}: python -m {module}")
    return sorted(set(problems))


def test_every_relative_link_and_anchor_resolves() -> None:
    problems = broken_links(ROOT)
    assert not problems, "broken links in README.md / docs:\n" + "\n".join(problems)


def test_every_docs_page_is_reachable_from_the_readme() -> None:
    lost = unreachable_pages(ROOT)
    assert not lost, f"docs pages no link from README.md reaches (link them from docs/index.md): {lost}"


def test_every_module_architecture_names_exists() -> None:
    missing = missing_modules(ROOT)
    assert not missing, f"docs/architecture.md names modules that do not exist: {missing}"


def test_every_file_the_docs_name_is_in_the_repository() -> None:
    unknown = unknown_files(ROOT)
    assert not unknown, "files named in README.md / docs that are not in the repository:\n" + "\n".join(unknown)


def test_the_architecture_page_names_modules_at_all() -> None:
    """The check above passes vacuously if the page stops naming modules as `pytest_guistate/...`."""
    named = MODULE_PATH.findall((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    assert len(set(named)) > 100, len(set(named))


def test_the_checks_find_what_is_broken(tmp_path: Path) -> None:
    """A dead file, a dead anchor, an unreachable page and a missing module are each reported."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "pytest_guistate").mkdir()
    (tmp_path / "pytest_guistate" / "here.py").write_text("", encoding="utf-8")
    (tmp_path / "README.md").write_text(
        "# Title\n\n## Set up: `pip` (fresh)\n\nSee [a](docs/a.md#the-part), [gone](docs/gone.md), "
        "[up](#set-up-pip-fresh), [bad](#nowhere) and [site](https://example.org/x.md).\n"
        "```\n[in a fence](docs/fenced.md)\n```\n`[in code](docs/code.md)`\n", encoding="utf-8")
    (tmp_path / "docs" / "a.md").write_text(
        "# A\n\n## The part\n\n## The part\n\n[again](#the-part-1) [back](../README.md#title) [no](#the-part-2)\n",
        encoding="utf-8")
    (tmp_path / "docs" / "island.md").write_text("# Island\n", encoding="utf-8")
    (tmp_path / "docs" / "architecture.md").write_text(
        "`pytest_guistate/here.py` `pytest_guistate/gone.py` `pytest_guistate/` `../shared/NOTES.md` "
        "`cassettes/<file>/<test>.json` `core/x.py` `python -m pytest_guistate.here` "
        "`python -m pytest_guistate.gone.cli`\n", encoding="utf-8")
    assert broken_links(tmp_path) == [
        "README.md: docs/gone.md (no file docs/gone.md)",
        "README.md: #nowhere (no heading with anchor #nowhere in README.md)",
        "docs/a.md: #the-part-2 (no heading with anchor #the-part-2 in docs/a.md)",
    ]
    assert unreachable_pages(tmp_path) == ["docs/architecture.md", "docs/island.md"]
    assert missing_modules(tmp_path) == ["pytest_guistate/gone.py"]
    assert unknown_files(tmp_path) == ["docs/architecture.md: ../shared/NOTES.md", "docs/architecture.md: core/x.py",
                                       "docs/architecture.md: pytest_guistate/gone.py",
                                       "docs/architecture.md: python -m pytest_guistate.gone.cli"]
