"""The README's own snippets, read out of it so tests run them as written."""

from __future__ import annotations

import re
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
README = PROJECT / "README.md"


def section(title: str) -> str:
    """The text of the README section headed ``title``, up to the next heading of its level or higher.

    Lines inside fenced code blocks are not headings (a YAML comment starts with ``#`` too).
    """
    lines = README.read_text(encoding="utf-8").splitlines(keepends=True)
    fenced, start, level, out = False, None, 0, []
    for line in lines:
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
    assert start, f"README has no section {title!r}"
    return "".join(out)


def blocks(title: str, lang: str) -> list[str]:
    """The fenced ``lang`` code blocks of a README section, in order."""
    return re.findall(rf"^```{lang}\n(.*?)^```", section(title), re.M | re.S)
