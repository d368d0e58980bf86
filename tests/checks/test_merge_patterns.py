"""G707: a merge keeps every pattern a branch added or changed since the branches parted."""

from __future__ import annotations

import json

from flowgit.checks.judge import Side, judge_merge
from flowgit.config import load_config
from tests.checks.gate_fixtures import base_text, committed_base, developing_lines
from tests.conftest import git
from tests.merge.test_properties import BASE, EPS, STORE, line

CFG = load_config("/")
ALPHA_1 = "! p_alpha: the alpha widget must be handled carefully | 1x"


def side(text: str, commit: str) -> Side:
    return Side(text.encode(), STORE, "CONTINUITY.md", ".flow/episodes.jsonl", commit=commit)


def codes(parents: list[str], result: str, base: str | None = BASE, override: str | None = None) -> list[str]:
    sides = [side(text, f"{n}" * 40) for n, text in enumerate(parents, start=1)]
    found = judge_merge(CFG, sides, side(result, "f" * 40), base=side(base, "0" * 40) if base else None,
                        override=override)
    return [f.code for f in found if f.is_error]


ADDED = BASE.replace(ALPHA_1, ALPHA_1 + "\n! p_echo: the echo widget must be handled carefully | 1x")
OTHER = BASE.replace("Focus: the widget audit.", "Focus: the echo audit.")


def test_a_pattern_this_side_added_and_the_result_lacks_is_refused_against_either_order():
    assert "G707" in codes([ADDED, OTHER], OTHER)
    assert "G707" in codes([OTHER, ADDED], OTHER)


def test_a_pattern_the_other_branch_archived_is_not_a_loss():
    """One branch archived p_bravo; the other left it as the base had it: the merge takes the archival."""
    archived = BASE.replace("! p_bravo: the bravo widget must be handled carefully | 1x\n", "")
    assert "G707" not in codes([archived, OTHER], archived.replace("Focus: the widget audit.",
                                                                   "Focus: the echo audit."))


def test_a_merge_that_keeps_both_sides_patterns_passes():
    both = ADDED.replace("Focus: the widget audit.", "Focus: the echo audit.")
    assert "G707" not in codes([ADDED, OTHER], both)


def test_without_shared_history_every_pattern_a_parent_holds_is_its_own():
    assert "G707" in codes([ADDED, OTHER], OTHER, base=None)


def test_an_override_lets_the_loss_through_on_the_record():
    sides = [side(ADDED, "1" * 40), side(OTHER, "2" * 40)]
    found = judge_merge(CFG, sides, side(OTHER, "f" * 40), base=side(BASE, "0" * 40), override="dropped on purpose")
    g707 = [f for f in found if f.code == "G707"]
    assert g707 and all(f.overridden for f in g707)


def test_a_checkout_theirs_merge_is_refused_by_the_hook_and_reported_by_the_audit(run, repo):
    """The path seen in teams: a conflict resolved by taking the other side's file whole."""
    committed_base(repo)
    assert run(repo, "install-hook").code == 0
    main = git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()
    git(repo, "checkout", "-qb", "side")
    (repo / "CONTINUITY.md").write_text(base_text(recent="The side branch looked at compaction.", developing=(
        developing_lines() + "\n! compaction_io: compaction saturates the disk queue | 1x")))
    git(repo, "commit", "-qam", "side adds compaction_io")
    git(repo, "checkout", "-q", main)
    (repo / "CONTINUITY.md").write_text(base_text(recent="Main looked at the breaker."))
    git(repo, "commit", "-qam", "main moves")
    git(repo, "merge", "-q", "--no-commit", "-s", "ours", "side")
    refused = run(repo, "check")
    assert refused.code == 1 and "G707" in refused.out + refused.err, refused.out + refused.err
    git(repo, "commit", "-qm", "merge side, keeping main's file", "--no-verify")
    audited = run(repo, "audit", "--json")
    found = [f for f in json.loads(audited.out)["findings"] if f["code"] == "G707"]
    assert audited.code == 1 and found and "compaction_io" in found[0]["message"], audited.out


RAISED = BASE.replace(ALPHA_1, line("alpha", 2, EPS["alpha"][:2]))
MORE_EVIDENCE = BASE.replace(line("charlie", 2, EPS["charlie"][:2]), line("charlie", 2, EPS["charlie"][:3]))


def test_a_merge_that_takes_a_raise_back_down_is_refused_against_either_order():
    """`git merge -s ours`, or the other side's file taken whole: the raise one branch recorded is undone."""
    assert "G707" in codes([RAISED, OTHER], OTHER)
    assert "G707" in codes([OTHER, RAISED], OTHER)


def test_a_merge_that_drops_the_evidence_a_branch_added_is_refused():
    assert "G707" in codes([MORE_EVIDENCE, OTHER], OTHER)


def test_a_merge_that_keeps_the_raise_passes():
    kept = RAISED.replace("Focus: the widget audit.", "Focus: the echo audit.")
    assert "G707" not in codes([RAISED, OTHER], kept)


def test_where_both_branches_changed_the_pattern_the_merge_is_left_to_the_per_parent_rules():
    """One branch raised p_alpha, the other reworded it at 1x: the result holding the reworded 1x line is the
    two changes meeting (judged by the per-parent rules), not a raise silently undone."""
    reworded = BASE.replace(ALPHA_1, ALPHA_1.replace("handled carefully", "handled with gloves"))
    assert "G707" not in codes([RAISED, reworded], reworded)


ECHO_LOWER = "! p_echo: the echo widget must be handled carefully | 1x"
ECHO_UPPER = "! P_Echo: the echo widget fails after three timeouts | 1x"


def test_one_pattern_added_on_both_sides_in_two_letter_cases_is_one_pattern_kept_in_one_wording():
    """`p_echo` on one branch and `P_Echo` on the other are one identity (NFKC, case folded): the driver keeps
    the newer wording, and the merge holding it drops nothing (it was refused G707, with no way through but
    an override, since keeping both lines is a duplicate name)."""
    lower = BASE.replace(ALPHA_1, ALPHA_1 + "\n" + ECHO_LOWER)
    upper = BASE.replace(ALPHA_1, ALPHA_1 + "\n" + ECHO_UPPER)
    kept = upper.replace("Focus: the widget audit.", "Focus: the echo audit.")
    assert "G707" not in codes([lower, upper], kept) and "G707" not in codes([upper, lower], kept)
    assert "G707" in codes([lower, OTHER], OTHER)  # gone under every spelling: still lost


def test_a_raise_undone_under_another_spelling_of_the_name_is_refused():
    """One branch raised p_alpha; the merge keeps `P_ALPHA` back at 1x: the same pattern, its raise undone."""
    recased = BASE.replace(ALPHA_1, ALPHA_1.replace("p_alpha", "P_ALPHA"))
    assert "G707" in codes([RAISED, OTHER], recased.replace("Focus: the widget audit.", "Focus: the echo audit."))
