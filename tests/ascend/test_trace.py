"""Phase 0's recall trace: the time a recall names, and only the time it names."""

from __future__ import annotations

import json
from datetime import date

import pytest

from flowgit.ascend.trace import extract, temporal_window
from tests.ascend.corpus import Session, write_session

NOW = date(2026, 11, 20)


@pytest.mark.parametrize("recall", ["the marketplace payouts for sellers", "the payouts we may revisit",
                                    "the payout decision", "the junk marker we decided to augment",
                                    "a separate novel approach", "it may be in the janitor job"])
def test_a_month_inside_another_word_or_may_as_a_verb_is_no_time_hint(recall):
    assert temporal_window(recall, NOW) == (None, None)


@pytest.mark.parametrize("recall, hint, window", [
    ("what we did in November", "Nov", ("2026-11-01", "2026-11-31")),
    ("the Sept. outage", "Sep", ("2026-09-01", "2026-09-31")),
    ("the March 2025 migration", "Mar 2025", ("2025-03-01", "2025-03-31")),
    ("the fix on May 3", "May", ("2026-05-01", "2026-05-31")),
    ("the 3rd of May release", "May", ("2026-05-01", "2026-05-31")),
    ("may 2025, the cutover", "May 2025", ("2025-05-01", "2025-05-31")),
    ("back in december", "Dec", ("2025-12-01", "2025-12-31")),
])
def test_a_month_named_as_a_word_gives_its_window(recall, hint, window):
    assert temporal_window(recall, NOW) == (hint, window)


def test_marketplace_does_not_narrow_a_line_to_its_march_session(run, tmp_path):
    """Two sessions on marketplace payouts, in March and October, joined by #55: both are the answer."""
    config, issue = tmp_path / "claude", {"kind": "github_issue", "ref": "#55", "channel": "user"}
    for n, day in ((1, "2026-03-10"), (2, "2026-10-14")):
        write_session(config, Session("-home-dev-market", f"c100000{n}-0000-4000-8000-00000000000{n}",
                                      "/home/dev/market", day, f"Marketplace seller payouts, part {n}",
                                      ["marketplace payouts"], ["marketplace", "payouts", "sellers"],
                                      cross_refs=[issue]))
    data = json.loads(run(tmp_path, "ascend", "--claude-dir", str(config), "--partition", "claude",
                          "the marketplace payouts for sellers", "--json").out)
    assert data["state"]["trace"]["temporal"] is None
    assert data["status"] != "single_session" and len(data["unit"]["members"]) == 2


@pytest.mark.parametrize("recall, topic", [
    ("that thing we did last month", set()),
    ("the retry budget work last week", {"retry", "budget"}),
    ("the cache stampede from 2026-10", {"cach", "stamped"}),
    ("what we did on the billing export in November", {"bill", "export"}),
    ("the deploy freeze a few weeks ago", {"deploy", "freez"}),
])
def test_the_words_that_say_when_are_the_time_hint_not_topic_words(recall, topic):
    """"last month" must not match the monthly invoice job: time words go to the window only."""
    trace = extract(recall)
    assert not {"month", "week", "novemb", "2026", "10", "ago"} & set(trace.keywords)
    assert topic <= set(trace.keywords)


def test_words_four_sessions_share_are_their_topic_not_one_wraps_pattern_name(run, repo, tmp_path):
    """One wrap (of one of four sessions on the retry budget) added the pattern ``retry_budget``: "the retry
    budget" still names the four sessions' topic, not a term one session coined, so it is no single-session
    answer; a recall that writes the term as the term still names it."""
    from tests.ascend.corpus import A, Session, Wrap, continuity, write_session, write_wraps

    config = tmp_path / "claude"
    sid = lambda n: f"7a1c0e2f-{n:04d}-4000-8000-{n:012d}"  # noqa: E731
    asks = ["cap the payment retries with a retry budget", "measure the retry budget under load",
            "share the retry budget across calls", "did the retry budget hold in the outage"]
    for n, request in enumerate(asks, 1):
        write_session(config, Session(A, sid(n), "/home/dev/payments", f"2026-11-0{n + 1}", request,
                                      ["retry budget"], ["retry", "budget", "payments"]))
    others = [("rotate the signing keys for the gateway", ["key rotation"], ["keys", "gateway"]),
              ("why is the invoice pdf font wrong", ["invoice fonts"], ["invoice", "font", "pdf"]),
              ("migrate the search index to the new schema", ["search migration"], ["search", "schema"]),
              ("flaky login test waits for the cookie", ["login test"], ["login", "cookie"])]
    for n, (request, topics, keywords) in enumerate(others, 11):
        write_session(config, Session(A, sid(n), "/home/dev/payments", f"2026-11-{n}", request, topics, keywords))
    run(repo, "init", "--no-hooks")
    write_wraps(repo, [Wrap(sid(2), "2026-11-03", continuity("Focus: retries.", [
        "! retry_budget: spend from a per-client budget before retrying | 1x"]), "Session wrap — added retry_budget")])
    res = run(repo, "ascend", "--claude-dir", str(config), "that thing with the retry budget", "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["status"] != "single_session", data["text"]
    assert data["unit"], data["text"]
    assert (data["unit"]["type"], len(data["unit"]["deposits"])) == ("cluster", 4)
    named = json.loads(run(repo, "ascend", "--claude-dir", str(config), "the term retry_budget", "--json").out)
    assert named["unit"] is None or named["unit"]["type"] == "concept"
