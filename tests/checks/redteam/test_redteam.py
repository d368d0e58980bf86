"""Run the red-team table: real git, real hooks, one copy of the base repository per attempt.

A violation must be refused (non-zero exit, HEAD where it was) for the reason
the case names; a legitimate change must go through. The counts are reported
so a regression shows up as a false accept or a false reject by name.
"""

from __future__ import annotations

import pytest

from tests.checks.redteam.cases import CASES, Case
from tests.checks.redteam.lab import build_base, copy_base


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return build_base(tmp_path_factory.mktemp("redteam") / "base")


def test_the_table_is_large_and_labelled():
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)), "case names are unique"
    assert len(CASES) >= 120
    assert {c.label for c in CASES} == {"violation", "legitimate"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.label[:5]}-{c.name}")
def test_attempt(case: Case, base, tmp_path):
    lab = copy_base(base, tmp_path / "repo")
    result = case.act(lab)
    if case.label == "violation":
        assert result.returncode != 0, f"FALSE ACCEPT: {case.name}\n{result.output}"
        assert result.head_after == result.head_before, f"{case.name}: HEAD moved although refused"
    else:
        assert result.returncode == 0, f"FALSE REJECT: {case.name}\n{result.output}"
    if case.expect:
        assert case.expect in result.output, f"{case.name}: expected {case.expect}\n{result.output}"


MERGES_THE_AUDIT_JUDGES = ("merge_of_a_branch_forked_before_a_wrap_appends_to_state",
                           "merge_of_a_branch_forked_before_a_raise_negates_the_raised_claim",
                           "merge_renames_a_raised_pattern_into_proven_with_a_new_claim",
                           "a_trailing_space_on_a_branch_does_not_buy_it_a_vote",
                           "a_heading_suffix_on_a_branch_does_not_buy_it_a_vote",
                           "a_criss_cross_merge_appends_to_top_of_mind_whichever_base_git_names",
                           "a_merge_quotes_the_only_replacement_of_state_as_the_other_wraps_text",
                           "a_criss_cross_merge_quotes_the_only_replacement_of_state")


@pytest.mark.parametrize("name", MERGES_THE_AUDIT_JUDGES)
def test_a_merge_the_hook_refuses_is_reported_by_the_audit_when_committed_without_it(name, base, tmp_path):
    """One verdict: the same merge, committed with --no-verify, is what `flowgit audit` reports."""
    case = next(c for c in CASES if c.name == name)
    lab = copy_base(base, tmp_path / "repo")
    refused = case.act(lab)
    assert refused.returncode != 0
    lab.git("commit", "-q", "--no-verify", "-m", "merge side (no hooks)")
    audit = lab.flowgit("audit")
    assert audit.returncode == 1 and case.expect in audit.output, audit.output
