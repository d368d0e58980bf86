"""A pattern's item merges whole: the lines under it that continue it (a reader reads them as part of its claim)
go where it goes and are decided with it, never left under another pattern."""

from __future__ import annotations

import subprocess

import pytest

from flowgit.config import load_config
from flowgit.continuity.document import Document
from flowgit.merge.continuity import Side, merge_continuity
from tests.conftest import git
from tests.merge.cases import CACHE_1X, CACHE_2X
from tests.merge.fixtures import BASE, C, edit, store_lookup
from tests.merge.test_continuity import gate_errors
from tests.merge.conftest import commit, write

SIDES = (Side("ours", "2026-11-26"), Side("theirs", "2026-11-27"))
NOTE = "  - limit: only for read-only dashboards"
ITEM = f"{CACHE_1X}\n{NOTE}\n"
WITH_NOTE = edit(BASE, (CACHE_1X + "\n", ITEM))
ADDED_AFTER = "! queue_depth: alert on queue depth before latency | 1x"


def _merge(ours: str, theirs: str):
    return merge_continuity(BASE, ours, theirs, lookup=store_lookup, newer="theirs", sides=SIDES)


def _developing(text: str) -> list[str]:
    return text.split("## Developing Knowledge\n", 1)[1].split("\n## ", 1)[0].strip().split("\n")


def _clean_against_both(tmp_path, ours: str, theirs: str, text: str) -> None:
    cfg = load_config(tmp_path)
    for parent in (ours, theirs):
        assert gate_errors(cfg, parent, text, merge_parents=(ours, theirs)) == []


@pytest.mark.parametrize("swap", [False, True], ids=["ours-adds", "theirs-adds"])
def test_a_pattern_added_right_after_one_gets_no_note_the_other_wrap_wrote_under_it(tmp_path, swap):
    """The other wrap's new pattern goes after the whole item, not between the pattern and its note (the note
    would become the new pattern's claim)."""
    added = edit(BASE, (CACHE_1X + "\n", f"{CACHE_1X}\n{ADDED_AFTER}\n"))
    ours, theirs = (WITH_NOTE, added) if swap else (added, WITH_NOTE)
    result = _merge(ours, theirs)
    assert result.clean
    dev = _developing(result.text)
    assert dev[dev.index(CACHE_1X) + 1] == NOTE and ADDED_AFTER in dev
    _clean_against_both(tmp_path, ours, theirs, result.text)


@pytest.mark.parametrize("swap", [False, True], ids=["ours-archives", "theirs-archives"])
def test_a_note_added_under_a_pattern_the_other_wrap_archived_keeps_the_pattern_with_it(tmp_path, swap):
    """Archived on one side, its item changed on the other: kept as changed (as for its line), and the note
    stays under it, not under the raised pattern above, whose claim it would change (G209)."""
    archived = edit(BASE, (CACHE_1X + "\n", ""))
    ours, theirs = (WITH_NOTE, archived) if swap else (archived, WITH_NOTE)
    result = _merge(ours, theirs)
    assert result.clean
    dev = _developing(result.text)
    assert dev[-2:] == [CACHE_1X, NOTE]
    assert any("archived on one side and changed on the other" in n for n in result.notes)
    _clean_against_both(tmp_path, ours, theirs, result.text)


@pytest.mark.parametrize("swap", [False, True], ids=["ours-raises", "theirs-raises"])
def test_a_raise_keeps_the_lines_its_evidence_was_recorded_for(tmp_path, swap):
    """One wrap raises the pattern, the other writes a note under it at 1x: the raise rests on evidence for the
    claim without the note, so the merge keeps the raise as it was raised and says the note stays in its
    commit; the result passes the gate against both parents."""
    raised = edit(BASE, (CACHE_1X, CACHE_2X.format(C[0].id, C[1].id)))
    ours, theirs = (WITH_NOTE, raised) if swap else (raised, WITH_NOTE)
    result = _merge(ours, theirs)
    assert result.clean
    dev = _developing(result.text)
    assert dev[-1] == CACHE_2X.format(C[0].id, C[1].id) and NOTE not in dev
    assert any("the other wrap changed the lines under it" in n for n in result.notes)
    _clean_against_both(tmp_path, ours, theirs, result.text)


def test_notes_both_wraps_wrote_under_a_1x_pattern_are_both_kept_under_it(tmp_path):
    also = "  - also: warm it at start"
    ours = edit(BASE, (CACHE_1X + "\n", f"{CACHE_1X}\n{also}\n"))
    result = _merge(ours, WITH_NOTE)
    dev = _developing(result.text)
    assert result.clean and dev[-3] == CACHE_1X and set(dev[-2:]) == {also, NOTE}
    _clean_against_both(tmp_path, ours, WITH_NOTE, result.text)


def test_a_graduation_carries_the_lines_under_the_pattern_into_proven():
    """A graduated pattern's item moves whole; the other side's untouched copy in Developing leaves nothing."""
    retry = "!! retry_budget: cap retries per request so outages cannot multiply load"
    line = next(ln for ln in BASE.split("\n") if ln.startswith(retry))
    note = "  - per request, not per user"
    base = edit(BASE, (line + "\n", f"{line}\n{note}\n"))
    proven = base.replace(f"{line}\n{note}\n", "")
    at = proven.index("## Foundation")
    proven = proven[:at].rstrip("\n") + "\n" + line.replace("| 2x (RELIABILITY)", "| 3x (RELIABILITY — 2026-11-26)") \
        + f"\n{note}\n\n" + proven[at:]
    other = edit(base, (CACHE_1X, CACHE_1X.replace("| 1x", "| 1x (DATA)")))
    result = merge_continuity(base, proven, other, lookup=store_lookup, newer="theirs", sides=SIDES)
    doc = Document.parse(result.text)
    assert result.clean and result.text.count(note) == 1
    assert doc.section_at(result.text.split("\n").index(note)).label == "Proven Knowledge"


def test_git_merge_keeps_a_note_with_its_pattern_through_the_driver(team_repo):
    """The same decision in a real `git merge` with the registered driver: the other branch's new pattern
    comes after the note, not between the note and the pattern it was written under."""
    git(team_repo, "checkout", "-qb", "other")
    write(team_repo, WITH_NOTE)
    commit(team_repo, "theirs wrap", "2026-11-27T10:00:00Z")
    git(team_repo, "checkout", "-q", "main")
    write(team_repo, edit(BASE, (CACHE_1X + "\n", f"{CACHE_1X}\n{ADDED_AFTER}\n")))
    commit(team_repo, "ours wrap", "2026-11-26T10:00:00Z")
    proc = subprocess.run(["git", "merge", "--no-edit", "other"], cwd=team_repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    dev = _developing((team_repo / "CONTINUITY.md").read_text())
    assert dev[dev.index(CACHE_1X) + 1] == NOTE
