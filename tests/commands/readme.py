"""The documentation's own snippets, read out of it so tests run them as written.

A section is found by its heading title in README.md first, then in each ``docs/*.md`` page in name
order; the first file that has it wins. A section may so move between the README and the docs without
its tests changing (keep each title unique across them).
"""

from __future__ import annotations

import re
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
README = PROJECT / "README.md"
DOCS = PROJECT / "docs"


def pages() -> list[Path]:
    """The files a section is looked for in, in order: README.md, then docs/*.md by name."""
    return [README, *sorted(DOCS.glob("*.md"))]


def section_in(path: Path, title: str) -> str | None:
    """The text of the section of ``path`` headed ``title``, up to the next heading of its level or higher;
    None when ``path`` has no such heading.

    Lines inside fenced code blocks are not headings (a YAML comment starts with ``#`` too).
    """
    fenced, start, level, out = False, None, 0, []
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.startswith("```"):
            fenced = not fenced
        heading = None if fenced else re.match(r"^(#+) (.*?)\s*$", line)
        if start is None:
            if heading and heading.group(2) == title:
                start, level = True, len(heading.group(1))
            continue
        if heading and len(heading.group(1)) <= level:
            break
        out.append(line)
    return "".join(out) if start else None


def section(title: str) -> str:
    """The text of the section headed ``title`` in README.md, else in the first docs/*.md page that has it."""
    found = next((text for text in (section_in(page, title) for page in pages()) if text is not None), None)
    assert found is not None, f"README has no section {title!r}"
    return found


def blocks(title: str, lang: str) -> list[str]:
    """The fenced ``lang`` code blocks of a section (found as ``section`` finds it), in order."""
    return re.findall(rf"^```{lang}\n(.*?)^```", section(title), re.M | re.S)
