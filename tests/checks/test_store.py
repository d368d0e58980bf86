"""The store rules' reading of dates: one reading for the check of dates set ahead (G705) and for every rule
that counts evidence by when it was recorded (G208)."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

from flowgit.episodes import line_object, recorded_ts
from tests.conftest import git

PROVEN_ANCHOR = "Demote when contradicted.\n"
DEVELOPING_ANCHOR = "# Archived after 7 days without new evidence.\n"


def test_a_ts_that_is_not_text_is_no_date():
    assert recorded_ts(line_object(b'{"id": "ep-1", "ts": 20261202}')) == ""
    assert recorded_ts(line_object(b'{"id": "ep-1", "ts": ["2026-12-02"]}')) == ""
    assert recorded_ts(line_object(b'{"id": "ep-1", "ts": "2026-12-02T09:00:00Z"}')) == "2026-12-02T09:00:00Z"


def _days_ago(n: int) -> str:
    return (datetime.now(timezone.utc) - timedelta(days=n)).strftime("%Y-%m-%dT12:00:00Z")


def _place(repo: Path, section: str, line: str) -> None:
    """``line`` as the only pattern line, under Developing or Proven (the other left empty)."""
    text = (repo / "CONTINUITY.md").read_text()
    for name, (start, stop) in {"dev": (DEVELOPING_ANCHOR, "</reference>"),
                                "proven": (PROVEN_ANCHOR, "## Cross-Domain")}.items():
        i, j = text.index(start) + len(start), text.index(stop)
        text = text[:i] + (line + "\n\n" if name == section else "\n") + text[j:]
    (repo / "CONTINUITY.md").write_text(text)


def test_a_ts_written_as_a_number_cannot_pass_an_episode_for_one_recorded_after_a_demotion(run, repo, monkeypatch):
    """Planted before the demotion with a date written as a JSON number set after it: read as a date, it would
    re-raise the demoted pattern (G705 read only text). Every reader now reads it as undated: refused."""
    def at(day: str) -> None:
        monkeypatch.setenv("GIT_AUTHOR_DATE", day)
        monkeypatch.setenv("GIT_COMMITTER_DATE", day)

    def episode(session: str, day: str, text: str) -> str:
        res = run(repo, "--json", "episode", "add", "--type", "finding", "--session", session, "--agent",
                  f"agent-{session}", "--ts", day, text)
        assert res.code == 0, res.err
        return json.loads(res.out)["added"][0]["id"]

    def commit(message: str) -> None:
        git(repo, "add", "-A")
        assert run(repo, "check").code == 0, message
        git(repo, "commit", "-qm", message)

    days = {n: _days_ago(n) for n in (15, 13, 11, 9, 8)}
    at(days[15])
    assert run(repo, "init", "--commit").code == 0
    claim = "retry_budget: cap retries per request"
    e1 = episode("s1", days[15], "capping retries per request kept provider load flat in the first outage")
    _place(repo, "dev", f"! {claim} | 1x")
    commit("one")
    at(days[13])
    e2 = episode("s2", days[13], "capping retries per request kept provider load flat again")
    _place(repo, "dev", f"!! {claim} | 2x (RELIABILITY) [evidence: {e1}, {e2}]")
    commit("two")
    at(days[11])
    e3 = episode("s3", days[11], "a third outage: the cap on retries per request held provider load flat")
    _place(repo, "proven", f"!! {claim} | 3x (RELIABILITY — {days[11][:10]}) [evidence: {e1}, {e2}, {e3}]")
    commit("three")
    at(days[9])  # the plant: recorded now, dated (as a number) after the demotion to come
    planted = [episode("s4", days[9], "capping retries per request kept provider load flat in the new region"),
               episode("s5", days[9], "the per request retry cap kept provider load flat under the replay test")]
    store = repo / ".flow" / "episodes.jsonl"
    ahead = _days_ago(3)[:10].replace("-", "")
    store.write_text(re.sub(rf'"ts": "{re.escape(days[9])}"', f'"ts": {ahead}', store.read_text()))
    commit("plant")
    at(days[8])
    cause = episode("s6", days[8], "capping retries per request did not keep provider load flat: load rose")
    demoted = f"[demoted {days[8][:10]}: load rose despite the cap ({cause})]"
    _place(repo, "dev", f"! {claim} | 1x {demoted}")
    commit("demote")
    monkeypatch.delenv("GIT_AUTHOR_DATE")
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    _place(repo, "dev", f"!! {claim} | 2x (RELIABILITY) [evidence: {', '.join(planted)}] {demoted}")
    git(repo, "add", "-A")
    res = run(repo, "check")
    assert res.code == 1 and "G208" in res.err, res.err
    git(repo, "commit", "-qm", "re-raised on the plant", "--no-verify")
    audit = run(repo, "audit", "--json")
    assert audit.code == 1 and "G208" in {f["code"] for f in json.loads(audit.out)["findings"]}, audit.out
