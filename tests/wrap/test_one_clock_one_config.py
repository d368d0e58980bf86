"""The wrap proposes what the gate accepts: the same configuration (committed at HEAD) and the same clock."""

from __future__ import annotations

import json
from datetime import date, timedelta

from flowgit.dates import today
from tests.wrap.test_wrap import A2, graduate_plan, snapshot, wrap, wrap_repo  # noqa: F401 (fixture)


def test_an_uncommitted_stricter_configuration_does_not_refuse_what_the_gate_accepts(run, wrap_repo):
    (wrap_repo / ".flowgit.toml").write_text("[thresholds]\nevidence_3x = 6\n")  # untracked: judges nothing
    res = wrap(run, wrap_repo, graduate_plan([A2.id]), "--json")
    assert res.code == 0, res.out + res.err
    assert json.loads(res.out)["committed"]


def test_an_uncommitted_looser_configuration_does_not_let_the_wrap_propose_what_the_gate_refuses(run, wrap_repo):
    """evidence_3x = 2 in an untracked file: the wrap's own judgement still asks for three, so the graduation
    stays (exit 3, refused by the immune system) instead of being written and then refused by the gate."""
    (wrap_repo / ".flowgit.toml").write_text("[thresholds]\nevidence_3x = 2\n")
    plan = {"session": "sess-c", "patterns": [{"op": "graduate", "name": "retry_budget", "evidence": []}]}
    before = snapshot(wrap_repo)
    res = wrap(run, wrap_repo, plan, "--json")
    data = json.loads(res.out)
    assert res.code == 3, res.out + res.err
    assert data["refused"] and data["refused"][0]["name"] == "retry_budget"
    assert snapshot(wrap_repo) == before


def test_a_wrap_dated_ahead_does_not_archive_a_proven_pattern_the_gate_finds_fresh(run, wrap_repo):
    """The cleanup measured a Proven pattern's window up to the plan's date, the gate up to now: dated a
    month ahead, the wrap archived a pattern and then refused its own commit (G205)."""
    ahead = (today() + timedelta(days=31)).isoformat()
    res = run(wrap_repo, "wrap", "--session", "sess-c", "--date", ahead, "--json")
    assert res.code == 0, res.out + res.err
    gate = json.loads(res.out)
    assert not any(f.get("code") == "G205" for f in gate.get("findings", []))


def test_a_wrap_dated_ahead_does_not_archive_a_developing_pattern_recorded_today(run, wrap_repo):
    """Dated months ahead (a plan's `date`, `--date`), the cleanup measured Developing staleness up to that day
    and archived a pattern added minutes earlier as "88 days stale". Staleness is measured up to today at the
    latest, for every section; a pattern stale as of today is still archived."""
    from tests.conftest import git

    text = (wrap_repo / "CONTINUITY.md").read_text()
    (wrap_repo / "CONTINUITY.md").write_text(text.replace(
        "## Proven Knowledge", "! fresh_idea: measure before tuning the pool | 1x\n\n## Proven Knowledge"))
    git(wrap_repo, "commit", "-qam", "fresh idea", "--no-verify")  # committed now
    ahead = (today() + timedelta(days=90)).isoformat()
    res = run(wrap_repo, "wrap", "--session", "sess-c", "--date", ahead, "--json")
    assert res.code == 0, res.out + res.err
    archived = {a["name"]: a["days"] for a in json.loads(res.out)["archived"]}
    assert "fresh_idea" not in archived
    assert "fresh_idea" in (wrap_repo / "CONTINUITY.md").read_text()
    # cache_first was last changed on Nov 24: stale as of today, and its days are counted up to today
    assert archived["cache_first"] == (today() - date(2026, 11, 24)).days
    assert "Archived: fresh_idea" not in git(wrap_repo, "log", "-1", "--format=%B")


def test_a_store_rewritten_without_an_append_is_judged_not_nothing_to_wrap(run, wrap_repo):
    """A byte-order mark put at the store's start appends nothing, but the store is not HEAD's: the gate's
    verdict (G701), not "nothing to wrap" with exit 0 and the rewrite left for a later commit."""
    store = wrap_repo / ".flow" / "episodes.jsonl"
    store.write_bytes(b"\xef\xbb\xbf" + store.read_bytes())
    before = snapshot(wrap_repo)
    res = run(wrap_repo, "wrap", "--session", "sess-c", "--no-cleanup", "--json")
    assert res.code == 1, res.out + res.err
    assert any(f["code"] == "G701" for f in json.loads(res.out)["gate"])
    assert snapshot(wrap_repo) == before


def test_nothing_to_wrap_names_a_staged_change_it_leaves(run, wrap_repo):
    from tests.conftest import git

    git(wrap_repo, "rm", "-q", "--cached", ".flow/episodes.jsonl")
    res = run(wrap_repo, "wrap", "--session", "sess-c", "--no-cleanup")
    assert res.code == 0 and "nothing to wrap" in res.out
    assert "staged change to .flow/episodes.jsonl (deleted)" in res.err + res.out
