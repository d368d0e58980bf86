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


@pytest.mark.parametrize("inner", ["RELIABILITY — 2026-11-04", "RELIABILITY – 2026-11-04", "RELIABILITY - 2026-11-04",
                                   "RELIABILITY -- 2026-11-04", "RELIABILITY, 2026-11-04"])
def test_a_graduation_date_is_read_after_any_dash_a_keyboard_types(inner):
    """` -- ` is the dash of a plain keyboard: read as part of the category, the date was a changed claim."""
    p = parse_pattern(f"!! retry_budget: cap retries | 3x ({inner}) [evidence: ep-1]")
    assert (p.category, p.date) == ("RELIABILITY", "2026-11-04")


def test_not_patterns():
    for line in ["! urgent thing without level", "plain text | 2x", "!!: | 1x", "- item"]:
        assert parse_pattern(line) is None


def test_iter_patterns_skips_fenced_fake_and_groups_braces():
    doc = Document.parse((DATA / "flow_template.md").read_text())
    found = {p.pattern.name: p for p in iter_patterns(doc)}
    assert set(found) == {"lossless_edit", "restatement_check", "small_functions", "retry_budget"}
    assert found["retry_budget"].section == "Proven Knowledge"
    assert found["small_functions"].pattern.links == ("<- registry_pattern",)


@pytest.mark.parametrize("line", [
    "\u01c3\u01c3 breaker: open the breaker | 3\u0445 (R)",           # retroflex clicks, Cyrillic x
    "\u203c breaker: open the breaker | \uff13x (R)",                   # double exclamation, full-width 3
    "\uff01\uff01 breaker: open the breaker \uff5c 3x (R)",             # full-width ! and |
    "!! breaker threshold: open the breaker | 3\u0445 (R)",             # a spaced name and a Cyrillic x
    "!! breaker: open the breaker | \u0663x (R)",                       # an Arabic-Indic 3
    "breaker opens [\u0435vidence: ep-aaaaaaaaaaaa]",                   # a Cyrillic e in `evidence`
])
def test_a_pattern_typed_with_look_alike_characters_is_recognised_and_the_fix_says_so(line):
    from flowgit.continuity.patterns import grammar_fix, looks_like_pattern_loose

    assert parse_pattern(line) is None and looks_like_pattern_loose(line)
    assert "plain ASCII" in grammar_fix(line)


@pytest.mark.parametrize("line", [
    "- the cache — roughly ×2 faster after the fix, next: Dec 2",
    "Focus: ship the gate — then the report",
    "- Überprüfung der Wiederholungen: erledigt",
    "thought: retries → load ><",
])
def test_prose_with_non_ascii_characters_is_not_taken_for_a_pattern(line):
    from flowgit.continuity.patterns import looks_like_pattern_loose

    assert not looks_like_pattern_loose(line)


def test_skeleton_reads_look_alikes_as_what_they_mimic():
    from flowgit.continuity.patterns import skeleton

    assert skeleton("\u01c3\u01c3 R\u0435try \uff5c \u0663\u0445") == "!! retry | 3x"
    assert skeleton("plain ascii | 2x") == "plain ascii | 2x"


@pytest.mark.parametrize("name", ["बजट_सीमा", "งบ_ลองใหม่", "மறுமுயற்சி_வரம்பு", "poolgro\u0308\u00dfe"])
def test_a_name_whose_letters_carry_marks_is_a_name(name):
    """Vowel signs and a decomposed accent are combining marks, which ``\\w`` leaves out."""
    from flowgit.continuity.patterns import is_pattern_name

    found = parse_pattern(f"! {name}: cap retries per request | 1x")
    assert found is not None and found.name == name and is_pattern_name(name)


def test_a_plan_may_name_a_pattern_with_marked_letters():
    from flowgit.wrap.plan import Plan

    plan = Plan.from_data({"patterns": [{"op": "add", "name": "पुनःप्रयास_सीमा", "text": "cap retries"}]})
    assert plan.patterns[0].name == "पुनःप्रयास_सीमा"
