"""One session, one node: the same session's deposits from different partitions become one member.

A Claude Code session can leave a hypomnesis deposit, a transcript, a wrap
commit (its ``Flow-Session`` trailer) and episodes in the store. Counted
separately they inflate every unit ("a line of work across 11 sessions" built
from 5) and crowd ranks. They are merged here, before any edge is inferred:
the node keeps the most descriptive deposit as its face (a hypomnesis deposit,
then a transcript, then a wrap commit, then episodes), gains the others'
anchors, words and coined terms, and lists every source so each can be
resumed or confirmed. Several wrap commits of one session are one node too.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from flowgit.ascend.model import Deposit, instant, session_key, time_key

FACE_ORDER = {"claude": 0, "transcripts": 1, "git": 2, "episodes": 3}


def _union(*lists: list) -> list:
    return list(dict.fromkeys(x for items in lists for x in items))


def merge_sessions(deposits: Iterable[Deposit]) -> list[Deposit]:
    """Deposits grouped by session id (however it is spelled: :func:`session_key`); each group folded into its
    face deposit, order of first sight kept."""
    groups: dict[str, list[Deposit]] = defaultdict(list)
    for d in deposits:
        groups[session_key(d.sid)].append(d)
    out = []
    for group in groups.values():
        if len(group) == 1:
            out.append(group[0])
            continue
        group.sort(key=lambda d: (FACE_ORDER.get(d.partition, 9), *time_key(d.when, d.sid)))
        face, rest = group[0], group[1:]
        face.also = rest
        for d in rest:
            _fold(face, d)
        out.append(face)
    return out


def fold_into(face: Deposit, other: Deposit) -> None:
    """Merge one more deposit of the face's session (read later) into it."""
    face.also.append(other)
    _fold(face, other)


def _fold(face: Deposit, other: Deposit) -> None:
    """Add what ``other`` knows about the session to ``face`` (the face's own values win)."""
    face.topics = _union(face.topics, other.topics)
    face.keywords = _union(face.keywords, other.keywords)
    seen = {a.key for a in face.anchors}
    face.anchors = face.anchors + [a for a in other.anchors if a.key not in seen]
    known = {c.token.lower() for c in face.coined}
    face.coined = face.coined + [c for c in other.coined if c.token.lower() not in known]
    face.continuations = _union(face.continuations, other.continuations)
    face.continues = _union(face.continues, other.continues)
    face.forks = _union(face.forks, other.forks)
    face.key_utterances = _union(face.key_utterances, other.key_utterances)
    face.decisions = _union(face.decisions, other.decisions)
    face.identifiers = _union(face.identifiers, other.identifiers)
    if not face.initial_request:
        face.initial_request = other.initial_request
    if not face.outcome and other.outcome:
        face.outcome = other.outcome
    if not face.date:
        face.date = other.date
    began, other_began = instant(face.started_at), instant(other.started_at)
    if began is None or (other_began is not None and other_began < began and FACE_ORDER.get(face.partition, 9) >= 2):
        face.started_at = other.started_at or face.started_at
    if other.last_turn_at > face.last_turn_at:
        face.last_turn_at = other.last_turn_at
