"""The README's own snippets, read out of it so tests run them as written."""

from __future__ import annotations

import re
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
README = PROJECT / "README.md"


def section(title: str) -> str:
    """The text of the README section headed ``title`` (any heading level), up to the next heading of that level."""
    text = README.read_text(encoding="utf-8")
    m = re.search(rf"^(#+) {re.escape(title)}\s*$", text, re.M)
    assert m, f"README has no section {title!r}"
    level = len(m.group(1))
    rest = text[m.end():]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.M)
    return rest[:end.start()] if end else rest


def blocks(title: str, lang: str) -> list[str]:
    """The fenced ``lang`` code blocks of a README section, in order."""
    return re.findall(rf"^```{lang}\n(.*?)^```", section(title), re.M | re.S)
