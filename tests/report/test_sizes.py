"""The report's size figures are the gate's: held equal to flowgit.checks.size on every kind of file."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowgit.checks.size import developing_lines, state_chars
from flowgit.continuity.document import Document
from flowgit.continuity.sections import alias_table
from flowgit.report.sizes import measure, measure_document

DATA = Path(__file__).parent.parent / "data"

AWKWARD = [
    "## Current State\nFocus: x\n\n## Developing Knowledge\n! a: b | 1x\n",
    "## State | 2026-11-30 evening\n# a comment\nline one\n<activation>\n  \n## Developing\n```\n## not a heading\n! a: b | 1x\n```\n! c: d | 1x\n{\n}\n",
    "## Current State\r\nFocus\r\n\r\n## Developing Knowledge\r\n! a: b | 1x\r\n- item\r\n",
    "## Current State\n~~~\ninside a fence\n~~~\nafter\n## Developing Knowledge\n",
    "no sections at all\n",
    "",
    "## Current State\nfirst\n## Current State\nsecond, not counted\n## Developing Knowledge\n    ## indented\n- x\n",
    "## Now\naliased state\n## Developing Knowledge\n- a\n- b\n<!-- note -->\n",
    "\ufeff## Current State\nFocus: x\n## Developing Knowledge\n- a\n",  # a byte order mark opens the file
    "## Current State\nFocus: x\n\ufeff## Developing Knowledge\n- a\n",  # further down it is no heading
    "\ufeff```\n## Current State\n```\n## Developing Knowledge\n- a\n",
    "## Current State\nFocus: x\n## Developing\u00a0Knowledge\n! a: x | 1x\n! b: y | 1x\n",  # a pasted no-break space
    "## Current State (Nov 30)\nFocus: x\n## Developing Knowledge — week 48\n- a\n",  # names with a suffix
    "## State machine design\nnot the State section\n## Developing the plugin API\n- not Developing\n",
]


def _expected(text: str, aliases=None) -> tuple:
    """The gate's figures for ``text``; the audit notes them for the report as ``measure_document`` reads them."""
    doc = Document.parse(text, aliases=aliases)
    expected = state_chars(doc), developing_lines(doc), len(doc.text), len(doc.lines)
    noted = measure_document(doc)
    assert (noted.state_chars, noted.developing_lines, noted.chars, noted.lines) == expected
    return expected


@pytest.mark.parametrize("text", AWKWARD)
def test_measure_matches_the_gate_on_awkward_files(text: str) -> None:
    aliases = {"Current State": ("Now",)}
    size = measure(text, alias_table(aliases))
    assert (size.state_chars, size.developing_lines, size.chars, size.lines) == _expected(text, aliases)


@pytest.mark.parametrize("path", sorted(DATA.glob("*.md")), ids=lambda p: p.name)
def test_measure_matches_the_gate_on_fixtures(path: Path) -> None:
    text = path.read_bytes().decode("utf-8")
    size = measure(text, alias_table())
    assert (size.state_chars, size.developing_lines, size.chars, size.lines) == _expected(text)


def test_measure_matches_the_gate_on_generated_files() -> None:
    from benchmarks.generate import continuity

    for seed in range(4):
        text = continuity(120, 20_000, seed=seed)
        size = measure(text, alias_table())
        assert (size.state_chars, size.developing_lines, size.chars, size.lines) == _expected(text)
        assert size.developing_lines and size.state_chars  # the check can fail: both sections are there


pieces = st.sampled_from([
    "## Current State", "## State | x", "## Now", "## Developing Knowledge", "## Developing", "## Proven Knowledge",
    "##", "# comment", "    ## indented", "```", "```python", "~~~", "````", "``` `x`", "   ```", "~~~~",
    "! a: b | 1x", "- item", "text", "", "  ", "<activation>", "</activation>", "<!-- note -->", "{", "}",
    "a ``` in the middle", "lone \r carriage", "\ufeff## Developing Knowledge", "\ufeff```", "\ufeff",
])


@settings(max_examples=400, deadline=None)
@given(st.lists(pieces, max_size=40), st.sampled_from(["\n", "\r\n"]), st.sampled_from(["", "end"]))
def test_property_measure_matches_the_gate(lines, newline, tail):
    """Only lines that can open a section or a fence are classified: any mix of sections, fences and line
    endings still measures as the gate does."""
    text = newline.join(lines) + (newline if tail == "" else newline + tail)
    aliases = {"Current State": ("Now",)}
    size = measure(text, alias_table(aliases))
    assert (size.state_chars, size.developing_lines, size.chars, size.lines) == _expected(text, aliases)
