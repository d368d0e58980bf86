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
