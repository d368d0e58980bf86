"""A committed base continuity file and store, and helpers to stage a change and run the gate."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from flowgit.episodes import make_episode
from tests.conftest import git


# retry_budget graduated 19 days before the day the tests run: fresh (archival needs 30), whatever the date.
GRADUATED = (datetime.now(timezone.utc).date() - timedelta(days=19)).isoformat()


def ep(content: str, session: str, type_: str = "finding", agent: str = "agent-a", tags=()):
    return make_episode({"type": type_, "content": content, "session": session, "agent": agent,
                         "tags": list(tags)})


# Episodes the base file's Proven pattern and later graduations cite.
E_RETRY = [
    ep("retry storm: requests retried five times multiplied provider load", "s1", tags=["retries"]),
    ep("a retry budget of three per request kept provider load flat", "s2", "outcome", tags=["retries"]),
    ep("retry budget exhausted quickly in 503 bursts but load held", "s3", "observation", agent="reviewer"),
]
E_BACKOFF = [
    ep("jittered backoff spread the retry wave over forty seconds", "s4", tags=["backoff"]),
    ep("backoff with jitter avoided the synchronized thundering herd", "s5", "outcome", agent="reviewer"),
    ep("jitter in backoff halved peak queue depth after the deploy", "s5", "observation"),
]
E_SAME_SESSION = [
    ep("idempotency keys stopped a double charge on retry", "s6"),
    ep("idempotency key reuse detected a duplicate payment call", "s6", "observation"),
    ep("idempotency keys made the payment retry safe to repeat", "s6", "outcome"),
]
E_UNRELATED = ep("the office coffee machine was fixed on Tuesday", "s7")

DEVELOPING = [
    ("p01", "retries without any budget multiply the load on the provider during every outage"),
    ("p02", "a circuit breaker should open after five consecutive failures within one minute"),
    ("p03", "idempotency keys must be attached to every single payment request we send"),
    ("p04", "cache the provider balances for thirty seconds to cut the number of calls"),
    ("p05", "schema migrations need to run before the new application code is deployed"),
    ("p06", "the ledger totals should be reconciled against invoices at the end of each day"),
    ("p07", "queue workers have to acknowledge the messages only after the write has committed"),
    ("p08", "timeouts for the provider calls should be shorter than the timeouts of our own clients"),
    ("p09", "deploys in the late afternoon tend to collide with the provider batch window"),
    ("p10", "the review gate must always run before any merge to the main branch happens"),
    ("p11", "connection pools must be sized from the measured concurrency and not from guesses"),
    ("p12", "archive stale patterns before cutting any content when the file is over budget"),
]
# Each rewording keeps the content words and drops about 30% of the words.
SHORTER = {
    "p01": "retries without budget multiply provider load during outage",
    "p02": "circuit breaker opens after five consecutive failures per minute",
    "p03": "idempotency keys attached to every payment request",
    "p04": "cache provider balances thirty seconds to cut calls",
    "p05": "schema migrations run before new application code deployed",
    "p06": "reconcile ledger totals against invoices each day",
    "p07": "queue workers acknowledge messages after write committed",
    "p08": "provider call timeouts shorter than our client timeouts",
    "p09": "late afternoon deploys collide with provider batch window",
    "p10": "review gate runs before any merge to main branch",
    "p11": "size connection pools from measured concurrency, not guesses",
    "p12": "archive stale patterns before cutting content when over budget",
}


def developing_lines(items=DEVELOPING, overrides: dict[str, str] | None = None) -> str:
    overrides = overrides or {}
    return "\n".join(f"! {name}: {overrides.get(name, text)} | 1x" for name, text in items)


TOP = "- provider 503 storms arrive in bursts of forty seconds\n- trailer format still under review"


def base_text(*, developing: str | None = None, proven_extra: str = "", recent: str | None = None,
              state: str | None = None, top: str | None = None, actions: str | None = None,
              partnership: str = "We decide in writing and keep the reasons next to the decision.") -> str:
    ids = ", ".join(e.id for e in E_RETRY)
    return f"""# Continuity
# Read at session start.

## Current State
{state if state is not None else "Focus: ship the gate. Critical path: the compression rule, then the benchmark."}

## Top of Mind
{top if top is not None else TOP}

## Action Items
{actions if actions is not None else ACTIONS}

## Recent Context
{recent if recent is not None else "We spent the week on the document model. The round trip held on every fixture."}

## Developing Knowledge
{developing if developing is not None else developing_lines()}

## Proven Knowledge
!! retry_budget: cap retries per request so an outage cannot multiply load | 3x (RELIABILITY — {GRADUATED}) [evidence: {ids}]
{proven_extra}
## Foundation
Always write the episode before the pattern.

## Partnership
{partnership}
"""


ACTIONS = """- the gate blocks ungrounded graduations, which is what makes the wrap safe to run — next: Dec 1
- the benchmark of the hook is needed because every commit of every user pays for it — next: Dec 2
- the trailers need review since the audit reads them back out of history — seen: Nov 29"""


def write_store(root: Path, episodes) -> None:
    store = root / ".flow" / "episodes.jsonl"
    store.parent.mkdir(parents=True, exist_ok=True)
    with store.open("a", encoding="utf-8") as fh:
        for e in episodes:
            fh.write(e.to_json() + "\n")


def committed_base(repo: Path, text: str | None = None, episodes=None) -> Path:
    """Commit the base continuity file and store; returns the repository."""
    (repo / "CONTINUITY.md").write_text(text if text is not None else base_text())
    write_store(repo, episodes if episodes is not None else [*E_RETRY, *E_BACKOFF, *E_SAME_SESSION, E_UNRELATED])
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base", "--no-verify")
    return repo


def stage(repo: Path, text: str, new_episodes=()) -> None:
    (repo / "CONTINUITY.md").write_text(text)
    if new_episodes:
        write_store(repo, new_episodes)
    git(repo, "add", "-A")


def check(run, repo: Path):
    res = run(repo, "check", "--json")
    data = json.loads(res.out)
    return res.code, data, {f["code"] for f in data["findings"]}
