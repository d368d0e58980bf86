"""The rules read only what changed, and a sneaky change is still what changed.

Each rule skips what it cannot judge differently: a line HEAD has, a section
whose body is HEAD's, a Proven pattern that is the very same parsed line in the
same section, items both bodies share at the top and bottom. Each test below
makes the skipped part change in a way a hurried agent might hope goes unseen
(a trailing space, a look-alike letter, a moved line, a renamed heading, a
comment or fence opened by a line HEAD already had, a configuration changed at
the parent) and expects the rule to fire, through the real hook or the audit.
"""

from __future__ import annotations

import json
import random

import pytest

from flowgit.checks.context import has_line
from tests.checks.gate_fixtures import (
    DEVELOPING, E_RETRY, GRADUATED, SHORTER, base_text, check, committed_base, developing_lines, stage,
)
from tests.conftest import git

RETRY_IDS = ", ".join(e.id for e in E_RETRY)
PROVEN = (f"!! retry_budget: cap retries per request so an outage cannot multiply load | 3x "
          f"(RELIABILITY — {GRADUATED}) [evidence: {RETRY_IDS}]")


# ----------------------------------------------------------------- a line HEAD has
@pytest.mark.parametrize("seed", range(6))
def test_has_line_is_exactly_a_line_of_the_text_without_its_ending(seed):
    rnd = random.Random(seed)
    pieces = ["", "a", "ab", "b a", "\r", " a", "a ", "ab\r", "x—y", "a\ra"]
    for _ in range(300):
        text = "\n".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 6))) + rnd.choice(["", "\n", "\r\n"])
        lines = {ln.rstrip("\r\n") for ln in text.split("\n")[:-1]} | (
            {text.split("\n")[-1].rstrip("\r\n")} if text.split("\n")[-1] else set())
        for wanted in {p.rstrip("\r\n") for p in pieces}:
            found = has_line(text, wanted, tries=rnd.choice([0, 1, 16]))
            assert found is None or found == (wanted in lines), (text, wanted)
        assert has_line(text, "a", tries=10_000) == ("a" in lines)


def test_a_line_only_part_of_a_longer_head_line_is_new(run, repo):
    # HEAD holds the malformed pattern inside a longer Recent Context line, never as a line of its own
    committed_base(repo, base_text(recent="We saw `! p13: hidden | 2X` written by hand last week."))
    stage(repo, base_text(recent="We saw `! p13: hidden | 2X` written by hand last week.",
                          developing=developing_lines() + "\n! p13: hidden | 2X"))
    code, data, codes = check(run, repo)
    assert code == 1 and "G110" in codes


def test_a_trailing_space_or_look_alike_letter_makes_a_line_new(run, repo):
    committed_base(repo)
    lines = developing_lines().splitlines()
    lines[0] = lines[0].replace("p01:", "p0l:").replace("! p0l", "! p0\u04cf")  # a Cyrillic palochka for `1`
    lines[1] = "!! p02: " + DEVELOPING[1][1] + " | 2X "  # a trailing space and a capital X
    stage(repo, base_text(developing="\n".join(lines)))
    code, data, codes = check(run, repo)
    assert code == 1 and {"G110", "G113"} <= codes


def test_a_moved_line_is_not_new_but_a_moved_and_edited_one_is(run, repo):
    committed_base(repo, base_text(top="- speed >< safety, decided last week"))
    moved = base_text(top="- provider 503 storms", recent="- speed >< safety, decided last week")
    stage(repo, moved)
    assert not {"E001", "E002"} & check(run, repo)[2]  # the lint error moved: HEAD has that line
    stage(repo, base_text(top="- provider 503 storms", recent="- speed >< safety, decided last week "))
    assert "E001" in check(run, repo)[2] or "E002" in check(run, repo)[2]


# ----------------------------------------------------------------- hidden by a line HEAD has
def test_a_pattern_inside_a_comment_opened_by_an_unchanged_line_is_hidden(run, repo):
    opened = developing_lines() + "\n<!-- notes kept for later\nthe next idea\n-->"
    committed_base(repo, base_text(developing=opened))
    inside = opened.replace("the next idea", "the next idea\n!! sneaky: a pattern nobody judges | 3x")
    stage(repo, base_text(developing=inside))
    code, data, codes = check(run, repo)
    assert code == 1 and "G111" in codes and "comment" in json.dumps(data)


def test_a_pattern_inside_a_fence_opened_by_an_unchanged_line_is_hidden(run, repo):
    opened = developing_lines() + "\n```\nexample\n```"
    committed_base(repo, base_text(developing=opened))
    stage(repo, base_text(developing=opened.replace("example", "example\n! sneaky: in a fence | 1x")))
    code, data, codes = check(run, repo)
    assert code == 1 and "G111" in codes and "fence" in json.dumps(data)


def test_a_quoted_pattern_with_no_comment_or_fence_anywhere_is_hidden(run, repo):
    committed_base(repo)
    stage(repo, base_text(developing=developing_lines() + "\n> !! sneaky: quoted | 2x"))
    assert "G111" in check(run, repo)[2]


# ----------------------------------------------------------------- sections whose body is HEAD's
def test_a_protected_line_retyped_with_a_look_alike_letter_is_a_change(run, repo):
    committed_base(repo)
    stage(repo, base_text().replace("Always write the episode", "Always writ\u0435 the episode"))
    code, _, codes = check(run, repo)
    assert code == 1 and codes == {"G402"}


def test_a_protected_section_renamed_with_its_body_unchanged_is_gone(run, repo):
    committed_base(repo)
    stage(repo, base_text().replace("## Foundation\n", "## Foundations\n"))
    code, data, codes = check(run, repo)
    assert code == 1 and "G402" in codes and "section is gone" in json.dumps(data)


def test_state_appended_to_with_its_old_text_respaced_is_an_append(run, repo):
    old = "Focus: ship the gate. Critical path: the compression rule, then the benchmark."
    committed_base(repo)
    stage(repo, base_text(state=old.replace(" ", "  ") + "\nAlso the docs and the release notes need a review."))
    code, _, codes = check(run, repo)
    assert code == 1 and codes == {"G302"}


def test_recent_context_appended_to_with_a_tweaked_word_is_an_append(run, repo):
    committed_base(repo)
    old = "We spent the week on the document model. The round trip held on every fixture."
    stage(repo, base_text(recent=old.replace("week", "wееk") + "\nToday we added the gate and its first rules."))
    code, _, codes = check(run, repo)
    assert code == 1 and codes == {"G303"}


def test_restatements_at_both_ends_of_a_section_with_items_moved_between(run, repo):
    committed_base(repo)
    items = [(name, SHORTER[name] if name in ("p01", "p06", "p12") else text) for name, text in DEVELOPING]
    items[4], items[6] = items[6], items[4]  # two untouched items swap places
    stage(repo, base_text(developing=developing_lines(items)))
    code, data, codes = check(run, repo)
    assert code == 1 and codes == {"G301"}
    assert all(f"`{n}`" in data["findings"][0]["message"] for n in ("p01", "p06", "p12"))


# ----------------------------------------------------------------- Proven patterns left as they were
def test_a_proven_line_moved_unchanged_to_developing_left_proven(run, repo):
    committed_base(repo)
    text = base_text(developing=developing_lines() + "\n" + PROVEN).replace(PROVEN + "\n\n## Foundation",
                                                                           "\n## Foundation")
    assert text.count(PROVEN) == 1
    stage(repo, text)
    assert "G205" in check(run, repo)[2]


def test_a_proven_name_retyped_with_a_look_alike_while_evidence_is_dropped(run, repo):
    committed_base(repo)
    sneaky = PROVEN.replace("retry_budget", "rеtry_budget").replace(f", {E_RETRY[2].id}", "")
    stage(repo, base_text().replace(PROVEN, sneaky))
    code, _, codes = check(run, repo)
    assert code == 1 and {"G401", "G113"} <= codes


def test_a_same_named_pattern_added_above_an_unchanged_proven_one_takes_its_identity(run, repo):
    committed_base(repo)
    stage(repo, base_text(developing=developing_lines() + "\n! retry_budget: retries are fine | 1x"))
    code, _, codes = check(run, repo)
    assert code == 1 and "G112" in codes
    assert "G205" not in codes  # the Proven pattern did not leave: the copy beside it is the violation


# ----------------------------------------------------------------- the audit: memos warm, config at the parent
def test_the_audit_judges_by_the_parents_aliases_with_every_memo_warm(run, repo):
    """An alias committed at the parent names the Proven section; the next commit drops evidence there.
    Documents and section facts are reused from commit to commit (the walk's memos are warm)."""
    committed_base(repo)
    git(repo, "tag", "base")
    for n in range(3):  # commits that warm every memo on the same sections
        stage(repo, base_text(state=f"Focus: wrap {n}."))
        git(repo, "commit", "-qm", f"wrap {n}", "--no-verify")
    (repo / ".flowgit.toml").write_text('[aliases]\n"Proven Knowledge" = ["Settled"]\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "alias", "--no-verify")
    alias = git(repo, "rev-parse", "HEAD").strip()  # aliases changed without an override: the gate's G801
    stage(repo, base_text(state="Focus: wrap 3.").replace("## Proven Knowledge", "## Settled"))
    git(repo, "commit", "-qm", "rename under the alias", "--no-verify")
    stage(repo, base_text(state="Focus: wrap 4.").replace("## Proven Knowledge", "## Settled")
          .replace(f", {E_RETRY[2].id}", ""))
    git(repo, "commit", "-qm", "drop", "--no-verify")
    bad = git(repo, "rev-parse", "HEAD").strip()
    res = run(repo, "audit", "--json", "--jobs", "1", "--range", "base..HEAD")
    data = json.loads(res.out)
    assert res.code == 1 and {(f["code"], f["commit"]) for f in data["findings"]} == {
        ("A401", alias), ("G401", bad), ("G103", bad)}


def test_a_lower_duplicate_removed_from_above_an_unchanged_proven_line_is_a_jump(run, repo):
    # HEAD (committed without the hook) has `retry_budget` at 1x in Developing and at 3x in Proven: its
    # identity is the first, so dropping that line makes the untouched Proven line a 1x -> 3x jump
    committed_base(repo, base_text(developing=developing_lines() + "\n! retry_budget: cap retries | 1x"))
    stage(repo, base_text())
    assert "G201" in check(run, repo)[2]


def test_a_heading_retyped_in_another_case_moves_its_patterns(run, repo):
    notes = "\n## Notes\n!! p20: a pattern kept under notes | 2x (X)\n"
    committed_base(repo, base_text() + notes)
    stage(repo, base_text() + notes.replace("## Notes", "## notes"))
    assert "G101" in check(run, repo)[2]  # moved to another section: judged again, and it has no evidence
