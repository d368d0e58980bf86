"""The document's structure reader agrees with markdown-it on every input.

:func:`flowgit.continuity.document._headings` reads a file without fences line
by line (the hook's start-up) and any other piece by piece through markdown-it;
a whole-document markdown-it parse with the same block rules is the reference
it must match line for line, on generated text built from the pieces that
decide structure (hashes, fences, indentation by spaces and tabs, carriage
returns, BOMs, backticks in info strings).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from flowgit.continuity.document import Document, _headings, _parser

PIECES = ["#", "##", "###", "####", "#######", " ", "  ", "   ", "    ", "\t", " \t", "`", "```", "````",
          "~~~", "~~~~", "~", "``", "x", "State", "a`b", "\n", "\n", "\n", "\r", "\r\n", "\ufeff", "\0",
          "\u00a0", "\u3000", "## State", "### sub", "> ", "- ", "1. ", "<!--", "-->", "---", "==="]


def reference(source: str) -> list[tuple[int, str]]:
    """(line, tag) of every h2/h3 heading a whole-document markdown-it parse finds."""
    return [(tok.map[0], tok.tag) for tok in _parser().parse(source)
            if tok.type == "heading_open" and tok.map and tok.tag in ("h2", "h3")]


def read(source: str) -> list[tuple[int, str]]:
    return list(_headings(source))


def normalised(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", " ").lstrip("\ufeff")


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=60))
def test_headings_match_markdown_it(pieces: list[str]) -> None:
    source = normalised("".join(pieces))
    assert read(source) == reference(source)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("#`~ \t\nxS\r\ufeff>-")), max_size=200))
def test_headings_match_markdown_it_on_raw_characters(text: str) -> None:
    source = normalised(text)
    assert read(source) == reference(source)


CASES = {
    "plain": "# T\n\n## State\nx\n### sub\n## Developing\n",
    "fenced heading": "## A\n```\n## not\n```\n## B\n",
    "tilde fence closed by longer run": "## A\n~~~\n## no\n~~~~~  \n## B\n",
    "backtick info with backtick is no fence": "## A\n``` a`b\n## B\n",
    "unclosed fence runs to the end": "## A\n````\n## no\n```\n## no\n",
    "indented by a tab is code": "## A\n\t## no\n  \t## no\n   ## yes\n",
    "closing fence indented four is content": "## A\n```\n    ```\n## no\n",
    "no space after hashes": "##no\n####### seven\n##\n##\tTab\n",
    "fence interrupts a paragraph": "text\n```\n## no\n```\n## B\n",
}


def test_known_shapes_match_markdown_it() -> None:
    for name, text in CASES.items():
        assert read(text) == reference(text), name


def test_sections_read_from_the_same_lines() -> None:
    text = "\ufeff## Current State (Nov 30)\r\nnow\r\n```\r\n## Proven\r\n```\r\n## Developing\r\n! a: b | 1x\r\n"
    doc = Document.parse(text)
    assert [(s.name, s.heading, s.end) for s in doc.sections] == [("Current State (Nov 30)", 0, 5),
                                                                   ("Developing", 5, 7)]
    assert doc.text == text
