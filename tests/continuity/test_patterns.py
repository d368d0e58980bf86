"""Pattern lines: tolerant parse, exact re-render, canonical form after a change."""

from __future__ import annotations

import pytest

from flowgit.continuity.document import Document
from flowgit.continuity.patterns import iter_patterns, parse_pattern
from tests.conftest import DATA

CANONICAL = [
    "! retry_budget: cap retries per request | 1x",
    "!! retry_budget: cap retries per request | 2x (RELIABILITY) [evidence: ep-1a2b3c, ep-4d5e6f]",
    "!! retry_budget: cap retries | 3x (RELIABILITY — 2026-11-30) [evidence: ep-1, ep-2, ep-3] [<- other_pattern]",
    "  - ! indented_item: inside a list | 1x",
]


@pytest.mark.parametrize("line", CANONICAL)
def test_canonical_lines_render_back_exactly_even_after_a_change(line):
    p = parse_pattern(line)
    assert p is not None and p.render() == line
    assert p.changed().render() == line  # canonical form == original form


def test_fields():
    p = parse_pattern(CANONICAL[2])
    assert (p.name, p.level, p.category, p.date) == ("retry_budget", 3, "RELIABILITY", "2026-11-30")
    assert p.evidence == ("ep-1", "ep-2", "ep-3") and p.links == ("<- other_pattern",)


def test_tolerant_spacing_and_pipes_in_text():
    p = parse_pattern("!!  odd_one :  a | b choice |  2x  (CAT)   [evidence:ep-1,ep-2]  ")
    assert p.name == "odd_one" and p.text == "a | b choice" and p.level == 2
    assert p.evidence == ("ep-1", "ep-2")
    assert p.render() == "!!  odd_one :  a | b choice |  2x  (CAT)   [evidence:ep-1,ep-2]  "
    promoted = p.changed(level=3, date="2026-11-30")
    assert promoted.render() == "!! odd_one: a | b choice | 3x (CAT — 2026-11-30) [evidence: ep-1, ep-2]"


def test_not_patterns():
    for line in ["! urgent thing without level", "plain text | 2x", "!!: | 1x", "- item"]:
        assert parse_pattern(line) is None


def test_iter_patterns_skips_fenced_fake_and_groups_braces():
    doc = Document.parse((DATA / "flow_template.md").read_text())
    found = {p.pattern.name: p for p in iter_patterns(doc)}
    assert set(found) == {"lossless_edit", "restatement_check", "small_functions", "retry_budget"}
    assert found["retry_budget"].section == "Proven Knowledge"
    assert found["small_functions"].pattern.links == ("<- registry_pattern",)
