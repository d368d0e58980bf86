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


def test_a_legacy_bare_issue_string_is_read_within_its_project_too():
    """`  - #12` (a legacy bare cross-reference) names one project's #12, as a structured one does."""
    ci, ci_later = _deposit("-home-u-alpha", "a1", "#12", "legacy"), _deposit("-home-u-alpha", "a2", "#12", "legacy")
    vat = _deposit("-home-u-beta", "b1", "#12", "legacy")
    assert _chained(ci, ci_later, vat) == {ci_later.key}


def test_an_everyday_word_is_no_shared_subject_for_a_bare_issue_number_across_projects():
    """Flaky CI runners and VAT rounding share "fix" and their `#12`: two issues, not one line of work."""
    def dep(slug: str, sid: str, topic: str) -> Deposit:
        return Deposit(partition="claude", slug=slug, sid=sid, topics=[topic],
                       anchors=[Anchor("github_issue", "#12", "user")])

    runners = dep("-home-u-alpha", "a1", "fix the flaky arm runners")
    others = [dep("-home-u-alpha", "a2", "arm runners still flaky"),
              dep("-home-u-beta", "b1", "fix invoice rounding in the VAT report"),
              dep("-home-u-beta", "b2", "VAT rounding follow-up"),
              *(dep("-home-u-misc", f"m{n}", topic) for n, topic in
                enumerate(("kafka lag alerts", "pdf fonts", "terraform locks", "cache stampede")))]
    assert _chained(runners, *others) == {others[0].key}


def test_a_qualified_issue_joins_across_projects():
    mine, theirs = _deposit("-home-dev-a", "a1", "acme/api#12"), _deposit("-home-dev-b", "b1", "acme/api#12")
    assert _chained(mine, theirs) == {theirs.key}


def test_a_css_colour_is_no_issue_but_an_issue_number_beside_prose_is():
    refs = {a.ref for a in anchors_in("make the heading text color #333; and use #333333 for borders")}
    assert refs == set()
    assert {a.ref for a in anchors_in("the flaky test in #333 again, see #4127")} == {"#333", "#4127"}
    assert {a.ref for a in anchors_in("body { background: #fafafa } then fix #1234;")} == {"#1234"}


def test_a_cluster_does_not_take_in_another_topic_sharing_one_rare_word_of_the_recall():
    """"webhook signatures": two PDF signature-field sessions share only `signature`, the rarer word."""
    from flowgit.ascend.assemble import Scope, clusters
    from flowgit.ascend.trace import RecallTrace
    from flowgit.words import stem

    def dep(sid: str, topic: str, words: list[str], day: str) -> Deposit:
        return Deposit(partition="claude", slug="-home-dev-x", sid=sid, topics=[topic], keywords=words,
                       date=day, started_at=f"{day}T10:00:00Z")

    deposits = [dep("w1", "webhook signature verification", ["webhook", "signature", "hmac"], "2026-10-01"),
                dep("w2", "webhook signature rotation", ["webhook", "signature", "secret"], "2026-10-08"),
                *[dep(f"d{n}", "webhook delivery retries", ["webhook", "delivery", "retry"], f"2026-10-1{n}")
                  for n in range(6)],
                dep("p1", "PDF signature field", ["pdf", "signature", "field"], "2026-09-20"),
                dep("p2", "PDF signature placement", ["pdf", "signature", "field"], "2026-09-25"),
                *[dep(f"n{n}", f"other work {n}", [f"topic{n}", "deploy", "pipeline"], "2026-08-01")
                  for n in range(12)]]  # (a store of other work too: `webhook` is no everyday word in it)
    index = DepositIndex.build(deposits)
    trace = RecallTrace(text="everything we figured out about webhook signatures",
                        keywords=[stem("webhook"), stem("signatures")])
    units, _ = clusters(index, [], trace, Scope(ignore_window=True))
    assert units and {d.sid for d in units[0].members} == {"w1", "w2"}


def test_a_session_tied_to_the_fragments_only_by_a_memory_entry_joins_the_cluster():
    """The latest session on the balance cache says "memoize totals, TTL cut"; it shares the memory entry
    `cache-policy.md` with the two that say "balance cache": a memory entry is a topic (Phase 1 §3)."""
    from flowgit.ascend.assemble import Scope, clusters
    from flowgit.ascend.trace import RecallTrace
    from flowgit.words import stem

    memory = [Anchor("memory", "cache-policy.md", "user")]

    def dep(sid: str, topic: str, words: list[str], anchors=()) -> Deposit:
        return Deposit(partition="claude", slug="-home-dev-x", sid=sid, topics=[topic], keywords=words,
                       anchors=list(anchors), date="2026-11-01", started_at="2026-11-01T10:00:00Z")

    deposits = [dep("c1", "balance cache", ["balance", "cache", "ttl"], memory),
                dep("c2", "balance cache warmup", ["balance", "cache", "warmup"], memory),
                dep("c3", "TTL cut to 10s after the incident", ["memoize", "totals", "incident"], memory),
                *[dep(f"n{n}", f"other work {n}", [f"topic{n}", "deploy", "pipeline"]) for n in range(10)]]
    index = DepositIndex.build(deposits)
    trace = RecallTrace(text="everything about the balance cache", keywords=[stem("balance"), stem("cache")])
    units, _ = clusters(index, [], trace, Scope(ignore_window=True))
    assert units and {d.sid for d in units[0].members} == {"c1", "c2", "c3"}


def test_what_connects_two_japanese_sessions_is_their_keyword_not_character_pairs():
    """The model reads 商品キャッシュ as pairs of characters; a reader is shown the keyword they share."""
    a = Deposit(partition="claude", slug="-p", sid="j1", topics=["商品キャッシュの予熱"], keywords=["商品キャッシュ"])
    b = Deposit(partition="claude", slug="-p", sid="j2", topics=["商品キャッシュの無効化"], keywords=["商品キャッシュ"])
    noise = [Deposit(partition="claude", slug="-p", sid=f"n{i}", topics=[f"deploy {i}"], keywords=["deploy"])
             for i in range(6)]
    index = DepositIndex.build([a, b, *noise])
    basis = next(e.basis for e in index.edges_from(a.key, frozenset({"topic"})) if e.b == b.key)
    assert "商品キャッシュ" in basis and "キャ," not in basis


def test_a_chain_keeps_the_line_the_recall_names_among_the_patterns_its_wraps_also_touched():
    """Each wrap touched two patterns, so the retry and pool patterns' edges reached every session: "the
    breaker line of work" was answered as a pool_saturation line of seven sessions."""
    from flowgit.ascend.assemble import Scope, chains
    from flowgit.ascend.trace import RecallTrace
    from flowgit.words import stem

    def dep(sid: str, day: str, topic: str, *refs: tuple[str, str]) -> Deposit:
        return Deposit(partition="git", slug="git:r", sid=sid, topics=[topic], date=day, started_at=f"{day}T10:00:00Z",
                       anchors=[Anchor(kind, ref) for kind, ref in refs])

    deposits = [dep("s1", "2026-11-01", "retry and pool", ("pattern", "retry_budget"), ("pattern", "pool_saturation")),
                dep("s2", "2026-11-02", "rollout", ("pattern", "retry_budget"), ("pattern", "pool_saturation")),
                dep("s3", "2026-11-03", "breaker next", ("pattern", "retry_budget"), ("pattern", "breaker_threshold")),
                dep("s4", "2026-11-04", "the breaker opened in staging", ("evidence", "ep-g")),
                dep("s6", "2026-11-06", "thresholds", ("pattern", "breaker_threshold"),
                    ("pattern", "pool_saturation"), ("evidence", "ep-g")),
                dep("s7", "2026-11-07", "pool sizing", ("pattern", "pool_saturation"))]
    index = DepositIndex.build(deposits)
    trace = RecallTrace(text="the breaker line of work", keywords=[stem("breaker")])
    units, _ = chains(index, [index.by_key["git:r:s3"]], trace, Scope(ignore_window=True))
    assert units and [d.sid for d in units[0].members] == ["s3", "s4", "s6"]
    assert units[0].label == "breaker_threshold"
