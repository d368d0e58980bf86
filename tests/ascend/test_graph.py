"""The connections the deposit index infers: what two deposits must share to be one line of work."""

from __future__ import annotations

from flowgit.ascend.graph import DepositIndex
from flowgit.ascend.model import CHAIN, Anchor, Deposit
from flowgit.ascend.transcripts import anchors_in


def _deposit(slug: str, sid: str, ref: str, kind: str = "github_issue") -> Deposit:
    return Deposit(partition="claude", slug=slug, sid=sid, anchors=[Anchor(kind, ref, "user")], topics=[sid])


def _chained(*deposits: Deposit) -> set[str]:
    """The deposits the first one's chain edges reach at the default scope (weight 1 or more)."""
    index = DepositIndex.build(deposits)
    return {e.b for e in index.edges_from(deposits[0].key, frozenset({CHAIN})) if e.weight >= 1.0}


def test_a_bare_issue_number_joins_sessions_of_one_project_only():
    """Every repository has its own `#1`: the flaky login test and the tomato irrigation are two issues (a
    weak hint remains, for a widened search)."""
    login, login_later = _deposit("-home-dev-payments", "p1", "#1"), _deposit("-home-dev-payments", "p2", "#1")
    garden = _deposit("-home-dev-garden", "g1", "#1")
    assert _chained(login, login_later, garden) == {login_later.key}


def test_a_bare_issue_number_across_projects_on_a_shared_subject_joins_them():
    payments = Deposit(partition="claude", slug="-home-dev-payments", sid="p1", topics=["retry budget"],
                       anchors=[Anchor("github_issue", "#412", "user")])
    infra = Deposit(partition="claude", slug="-home-dev-infra", sid="i1", topics=["retry budget rollout"],
                    anchors=[Anchor("github_issue", "#412", "user")])
    assert _chained(payments, infra) == {infra.key}


def test_a_qualified_issue_joins_across_projects():
    mine, theirs = _deposit("-home-dev-a", "a1", "acme/api#12"), _deposit("-home-dev-b", "b1", "acme/api#12")
    assert _chained(mine, theirs) == {theirs.key}


def test_a_css_colour_is_no_issue_but_an_issue_number_beside_prose_is():
    refs = {a.ref for a in anchors_in("make the heading text color #333; and use #333333 for borders")}
    assert refs == set()
    assert {a.ref for a in anchors_in("the flaky test in #333 again, see #4127")} == {"#333", "#4127"}
    assert {a.ref for a in anchors_in("body { background: #fafafa } then fix #1234;")} == {"#1234"}
