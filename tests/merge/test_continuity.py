"""The continuity merge, one rule at a time: merged file compared byte for byte with ``expected/``."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowgit.checks.judge import Side as JudgeSide, judge_change
from flowgit.config import load_config
from flowgit.continuity.patterns import pattern_map
from flowgit.continuity.document import Document
from flowgit.merge.continuity import Side, merge_continuity
from flowgit.merge.markers import find_markers
from tests.merge.cases import CASES, CACHE_1X
from tests.merge.fixtures import BASE, STORE, edit, store_lookup

EXPECTED = Path(__file__).parent / "expected"
SIDES = (Side("ours", "2026-11-26"), Side("theirs", "2026-11-27"))


def merged(name: str, **kw):
    ours, theirs, newer = CASES[name]
    return merge_continuity(BASE, ours, theirs, lookup=store_lookup, newer=kw.pop("newer", newer), sides=SIDES, **kw)


def gate_errors(cfg, parent: str, result: str, override: str | None = None, merge_parents=()) -> list[str]:
    side = lambda text: JudgeSide(text.encode(), STORE, "CONTINUITY.md", ".flow/episodes.jsonl")  # noqa: E731
    parents = [side(text) for text in merge_parents]
    return [f.format() for f in judge_change(cfg, side(parent), side(result), override=override,
                                             merge_parents=parents) if f.is_error]


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_rule_merges_to_the_expected_file_byte_for_byte(name):
    result = merged(name)
    assert result.text == (EXPECTED / f"{name}.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(set(CASES) - {"protected_conflict"}))
def test_a_clean_merge_passes_the_gate_against_both_parents_and_has_no_markers(name, tmp_path):
    cfg = load_config(tmp_path)
    ours, theirs, _ = CASES[name]
    result = merged(name)
    assert result.clean and find_markers(result.text) is None
    # both wraps are valid (a Foundation edit is valid only as a deliberate, overridden commit)
    override = "both agents reworded Foundation the same way" if name == "protected_identical" else None
    assert gate_errors(cfg, BASE, ours, override) == [] and gate_errors(cfg, BASE, theirs, override) == []
    assert gate_errors(cfg, ours, result.text, merge_parents=(ours, theirs)) == []
    assert gate_errors(cfg, theirs, result.text, merge_parents=(ours, theirs)) == []


def test_both_add_keeps_both_new_patterns_ours_first():
    names = list(pattern_map(Document.parse(merged("both_add").text)))
    assert names == ["retry_budget", "cache_first", "queue_depth", "pool_sizing", "backoff_jitter"]


def test_both_raise_takes_the_higher_level_that_holds_with_unioned_evidence():
    pats = pattern_map(Document.parse(merged("both_raise").text))
    retry, cache = pats["retry_budget"], pats["cache_first"]
    assert retry.section == "Proven Knowledge" and retry.pattern.level == 3 and len(retry.pattern.evidence) == 4
    assert cache.pattern.level == 2 and len(cache.pattern.evidence) == 4


def test_a_higher_level_whose_evidence_does_not_hold_loses_to_the_lower_one():
    """Ours graduated retry_budget on evidence the merged store does not hold (a --no-verify commit)."""
    ours, theirs, _ = CASES["both_raise"]
    result = merge_continuity(BASE, ours, theirs, lookup=lambda ids: {}, newer="theirs", sides=SIDES)
    retry = pattern_map(Document.parse(result.text))["retry_budget"]
    assert retry.section == "Developing Knowledge" and retry.pattern.level == 2
    assert any("does not hold" in n for n in result.notes)


def test_newer_ours_keeps_ours_state_and_notes_theirs():
    result = merged("both_replace_state", newer="ours")
    state = result.text.split("## Top of Mind")[0]
    assert "Focus: cache. Critical path: balances cache." in state.split("# flowgit merge")[0]
    assert "# | Focus: jitter. Critical path: backoff tuning." in state
    assert "another wrap (theirs, 2026-11-27)" in state


def test_protected_conflict_is_reported_with_markers():
    result = merged("protected_conflict")
    assert result.conflicts == ["Foundation"] and not result.clean
    assert find_markers(result.text) is not None


def test_unchanged_sides_and_one_sided_changes_are_byte_exact():
    crlf = BASE.replace("\n", "\r\n")
    ours = edit(crlf, ("- provider storms", "- cache"))
    assert merge_continuity(crlf, crlf, crlf).text == crlf
    assert merge_continuity(crlf, ours, crlf).text == ours
    assert merge_continuity(crlf, crlf, ours).text == ours
    tail = BASE.rstrip("\n")  # a missing final newline stays missing
    assert merge_continuity(tail, tail, edit(tail, ("- provider storms", "- x"))).text.endswith("pattern.")


def test_archived_on_one_side_and_raised_on_the_other_is_kept():
    from tests.merge.fixtures import C

    ours = edit(BASE, (CACHE_1X + "\n", ""))
    theirs = CASES["rename_vs_raise"][1]
    result = merge_continuity(BASE, ours, theirs, lookup=store_lookup)
    assert f"[evidence: {C[0].id}, {C[1].id}]" in result.text and "archived on one side" in result.notes[0]
    untouched = merge_continuity(BASE, ours, BASE).text
    assert "cache_first" not in untouched


def test_unicode_case_variants_of_a_name_are_one_pattern():
    ours = edit(BASE, (CACHE_1X, CACHE_1X.replace("cache_first", "Cache_First")))
    theirs = edit(BASE, (CACHE_1X, CACHE_1X + " [<- retry_budget]"))
    result = merge_continuity(BASE, ours, theirs)
    assert result.text.casefold().count("cache_first") == 1
    assert "! Cache_First: serve balances from cache before the provider | 1x [<- retry_budget]" in result.text


def test_repeated_merges_quote_an_earlier_note_once_instead_of_nesting_it():
    ours, theirs, _ = CASES["both_replace_state"]
    first = merge_continuity(BASE, ours, theirs, newer="theirs", sides=SIDES).text
    later = edit(BASE, ("Focus: outages. Critical path: retry budget.", "Focus: a third wrap."))
    second = merge_continuity(BASE, first, later, newer="theirs", sides=SIDES).text
    state = second.split("## Top of Mind")[0]
    assert state.count("# | Focus: cache. Critical path: balances cache.") == 1
    assert "# | # |" not in second and state.count("# flowgit merge:") == 1
    assert "# | Focus: jitter. Critical path: backoff tuning." in state and "Focus: a third wrap." in state


def test_the_same_pattern_added_by_both_wraps_in_other_words_keeps_one_and_says_so():
    """Neither wording is dropped silently: the note names the one kept and quotes the other."""
    from tests.merge.cases import DEV_TAIL
    from tests.merge.fixtures import edit

    ours = edit(BASE, (DEV_TAIL, DEV_TAIL + "! queue_depth: alert on queue depth before latency | 1x\n"))
    theirs = edit(BASE, (DEV_TAIL, DEV_TAIL + "! queue_depth: page when the consumer lag grows | 1x\n"))
    result = merge_continuity(BASE, ours, theirs)
    assert result.clean and "! queue_depth: page when the consumer lag grows | 1x" in result.text
    assert any("queue_depth" in n and "alert on queue depth before latency" in n for n in result.notes)
    same = merge_continuity(BASE, ours, ours)
    assert not any("different words" in n for n in same.notes)


def test_a_category_someone_chose_wins_over_the_default_a_wrap_wrote():
    """Both raise cache_first to 2x: one wrap named no category (the default GENERAL), the other said DATA."""
    from tests.merge.cases import CACHE_2X
    from tests.merge.fixtures import C

    general = CACHE_2X.replace("(DATA)", "(GENERAL)") if "(DATA)" in CACHE_2X else None
    assert general is not None, "the case's 2x line names a category"
    ours = edit(BASE, (CACHE_1X, general.format(C[0].id, C[1].id)))
    theirs = edit(BASE, (CACHE_1X, CACHE_2X.format(C[2].id, C[3].id)))
    for newer in ("ours", "theirs"):
        result = merge_continuity(BASE, ours, theirs, lookup=store_lookup, newer=newer, sides=SIDES)
        cache = pattern_map(Document.parse(result.text))["cache_first"].pattern
        assert cache.level == 2 and cache.category == "DATA", (newer, cache)


def test_the_other_wraps_re_check_note_survives_a_merge_that_keeps_this_sides_line():
    """One wrap marks backoff_jitter for re-checking (it derives from a demoted pattern); the other adds it a
    link. The merged line keeps both: a merge must not quietly drop what a demotion asked for."""
    line = next(ln for ln in BASE.splitlines() if ln.startswith("!! backoff_jitter:"))
    note = " [derives from retry_budget, demoted 2026-11-26: re-check]"
    ours = edit(BASE, (line, line + note))
    theirs = edit(BASE, (line, line + " [<- cache_first]"))
    for newer in ("ours", "theirs"):
        result = merge_continuity(BASE, ours, theirs, lookup=store_lookup, newer=newer, sides=SIDES)
        kept = pattern_map(Document.parse(result.text))["backoff_jitter"].pattern
        assert note.strip(" []") in kept.notes and "<- cache_first" in kept.links, (newer, kept)


def test_a_line_of_ones_own_section_changed_on_both_sides_keeps_both_and_says_so():
    """A table row given another owner on one side and another week on the other: a line merge keeps both
    rows, which doubles a fact the agent reads first; the merge now says so."""
    base = BASE + "\n## Team Notes\n| service | owner | week |\n| --- | --- | --- |\n| pgbouncer | @li | 49 |\n"
    ours = base.replace("| pgbouncer | @li | 49 |", "| pgbouncer | @li | 50 |")
    theirs = base.replace("| pgbouncer | @li | 49 |", "| pgbouncer | @sam | 49 |")
    result = merge_continuity(base, ours, theirs)
    assert "| pgbouncer | @li | 50 |" in result.text and "| pgbouncer | @sam | 49 |" in result.text
    assert any("Team Notes: both sides changed `| pgbouncer | @li | 49 |`" in n for n in result.notes)
    same = merge_continuity(base, ours, ours)
    assert not any("both sides changed" in n for n in same.notes)  # one change made twice: no doubt


def test_a_merge_writes_the_re_check_note_only_where_a_derivation_first_meets_a_demotion():
    """Demoted on one side, derived on the other: the note. Held together on a side already (its note
    removed after the re-check): the merge does not put it back."""
    demoted, _, _ = CASES["raise_vs_demote"]
    wave = "! wave_shaping: shape retry waves | 1x [<- backoff_jitter]"
    derived = edit(BASE, ("! cache_first:", wave + "\n! cache_first:"))
    meeting = merge_continuity(BASE, demoted, derived, lookup=store_lookup, sides=SIDES)
    assert wave + " [derives from backoff_jitter, demoted 2026-11-26: re-check]\n" in meeting.text
    both = edit(demoted, ("! cache_first:", wave + "\n! cache_first:"))
    held = merge_continuity(demoted, both, edit(both, ("provider storms", "provider outages")),
                            lookup=store_lookup, sides=SIDES)
    assert wave + "\n" in held.text and "re-check" not in held.text


def test_a_lowering_on_one_side_and_a_graduation_on_the_other_keep_the_graduation_the_gate_accepts():
    """A Developing pattern lowered a level is no demotion: "demotion wins" wrote it at 1x in Developing, which
    the driver's own gate check refused (G205, Proven left without a demotion) and the merge could not be made.
    The graduation whose evidence holds is kept, with a note naming the lowering."""
    from flowgit.merge.driver import refused_by_gate
    from tests.merge.fixtures import A1, A2, B1

    two = f"!! retry_budget: cap retries per request so outages cannot multiply load | 2x (RELIABILITY) " \
          f"[evidence: {A1.id}, {B1.id}]"
    ours = edit(BASE, (two + "\n", "! retry_budget: cap retries per request so outages cannot multiply load | 1x\n"))
    proven = (f"!! retry_budget: cap retries per request so outages cannot multiply load | 3x (RELIABILITY — "
              f"2026-11-26) [evidence: {A1.id}, {B1.id}, {A2.id}]")
    theirs = edit(BASE, (two + "\n", ""), ("## Proven Knowledge\n", "## Proven Knowledge\n" + proven + "\n"))
    result = merge_continuity(BASE, ours, theirs, lookup=store_lookup, newer="ours")
    assert result.clean and proven in result.text.split("## Proven Knowledge")[1], result.text
    assert any("lowered it to 1x" in n for n in result.notes), result.notes
    cfg = load_config("/")
    assert refused_by_gate(cfg, [BASE.encode(), ours.encode(), theirs.encode()], result.text.encode(), STORE,
                           "CONTINUITY.md") == []
