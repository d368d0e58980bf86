"""A base continuity file, the episodes its patterns cite, and helpers to write two wraps of it."""

from __future__ import annotations

from flowgit.episodes import lookup, make_episode


def ep(content: str, session: str, type_: str = "finding", agent: str = "agent-a", tags=()):
    return make_episode({"type": type_, "content": content, "session": session, "agent": agent,
                         "ts": "2026-11-20T10:00:00Z", "tags": list(tags)})


A1 = ep("retry storm multiplied provider load during the outage", "s-a")
B1 = ep("budget on retries held provider load flat in the second outage", "s-b", "observation")
A2 = ep("retry budget per request kept the queue stable under load", "s-c", "outcome", agent="agent-b")
B2 = ep("a retry budget of three per request stopped the storm", "s-d", "outcome", agent="agent-c")
C = [ep("cache of provider balances served reads during the outage", "s-e"),
     ep("serving balances from cache first cut provider calls", "s-f", "outcome"),
     ep("cache hit on balances avoided a provider timeout", "s-g", "observation", agent="agent-b"),
     ep("balances cache first kept the dashboard up", "s-h", "outcome", agent="agent-c")]
J = [ep("jittered backoff spread the retry wave", "j1", tags=("backoff",)),
     ep("backoff jitter avoided a thundering herd of retries", "j2", tags=("backoff",)),
     ep("jitter on backoff waves halved the peak", "j3", agent="reviewer", tags=("backoff",)),
     ep("backoff jitter again flattened the retry peak after deploy", "j4", agent="agent-b", tags=("backoff",))]
CONTRA = ep("jittered backoff made the backoff recovery slower than a fixed delay", "j5", "tension",
            agent="agent-c", tags=("backoff",))
EPISODES = [A1, B1, A2, B2, *C, *J, CONTRA]
STORE = b"".join(e.to_json().encode() + b"\n" for e in EPISODES)

BASE = f"""# Continuity

<activation>
## Current State | 2026-11-24
Focus: outages. Critical path: retry budget.

## Top of Mind
- provider storms

## Action Items
- write the retry budget — seen: Nov 20, next: Nov 25
- ask the provider for their status page
</activation>

## Recent Context
We chased two outages this week.

## Developing Knowledge
!! retry_budget: cap retries per request so outages cannot multiply load | 2x (RELIABILITY) [evidence: {A1.id}, {B1.id}]
! cache_first: serve balances from cache before the provider | 1x

## Proven Knowledge
!! backoff_jitter: jittered backoff spreads retry waves over time | 3x (RELIABILITY — 2026-11-20) [evidence: {J[0].id}, {J[1].id}, {J[2].id}]

## Foundation
Write the episode before the pattern.
"""


def store_lookup(ids):
    return lookup(STORE, ids)


def edit(text: str, *pairs: tuple[str, str]) -> str:
    """Apply exact replacements, each of which must match once (so a test cannot edit nothing)."""
    for old, new in pairs:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text
