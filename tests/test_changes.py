"""Pattern events between versions: the walk's shortcut for an unchanged line gives exactly the full comparison."""

from __future__ import annotations

import random

from flowgit.changes import diff_pattern_maps
from flowgit.continuity.patterns import PatternAt, parse_pattern

LINES = [
    "! retry_budget: cap retries per request | 1x",
    "!! retry_budget: cap retries per request | 2x (RELIABILITY) [evidence: ep-1, ep-2]",
    "!! retry_budget: cap retries per request | 3x (RELIABILITY) [evidence: ep-1, ep-2, ep-3]",
    "!!  retry_budget:  cap retries per request |  2x (RELIABILITY) [evidence: ep-1, ep-2]",  # respelled
    "! backoff: wait longer each time | 1x",
    "! backoff: wait longer and longer each time | 1x",
    "!! backoff: wait longer each time | 2x [evidence: ep-4, ep-5]",
    "!! jitter: spread the retries | 2x [evidence: ep-4, ep-5]",  # backoff renamed, same evidence
]
SECTIONS = ["Developing Knowledge", "Proven Knowledge"]


def _version(rng: random.Random) -> dict[str, PatternAt]:
    out: dict[str, PatternAt] = {}
    for n, line in enumerate(rng.sample(LINES, rng.randrange(len(LINES)))):
        at = PatternAt(parse_pattern(line), n, rng.choice(SECTIONS))
        out.setdefault(at.pattern.name, at)
    return out


def _fresh(version: dict[str, PatternAt]) -> dict[str, PatternAt]:
    """The same patterns as distinct objects: the comparison cannot take the identity shortcut."""
    return {k: at._replace(pattern=at.pattern._replace()) for k, at in version.items()}


def test_the_identity_shortcut_changes_no_event():
    rng = random.Random(3)
    for _ in range(3000):
        before, after = _version(rng), _version(rng)
        shared = diff_pattern_maps(before, after)
        assert shared == diff_pattern_maps(_fresh(before), _fresh(after))
        assert diff_pattern_maps(after, after) == []


def test_the_history_follows_the_gates_identity_rule():
    """A misspelt name on the same description, raised 1x -> 2x: the gate judges it as the pattern renamed
    (and its level step as an increment), so the history must not tell of a new pattern appearing at 2x."""
    from flowgit.continuity.identity import is_rename

    old = PatternAt(parse_pattern("! drain_before_switch: drain the queue before switching | 1x"), 3,
                    "Developing Knowledge")
    new = PatternAt(parse_pattern("!! drain_befor_switch: drain the queue before switching | 2x (OPS) "
                                  "[evidence: ep-1, ep-2]"), 3, "Developing Knowledge")
    assert is_rename(old.pattern, new.pattern)
    events = [(e.kind, e.name, e.old_name) for e in diff_pattern_maps({old.pattern.name: old},
                                                                       {new.pattern.name: new})]
    assert events == [("renamed", "drain_befor_switch", "drain_before_switch"),
                      ("incremented", "drain_befor_switch", None)]
    other = PatternAt(parse_pattern("! queue_drain: a different claim entirely | 1x"), 3, "Developing Knowledge")
    assert [e.kind for e in diff_pattern_maps({old.pattern.name: old}, {other.pattern.name: other})] == \
        ["added", "archived"]


def test_a_level_taken_down_inside_developing_is_lowered_and_only_leaving_proven_is_demoted():
    def at(line: str, section: str) -> dict:
        p = parse_pattern(line)
        return {p.name: PatternAt(p, 3, section)}

    two = at("!! p: cap retries | 2x (CORE) [evidence: ep-1, ep-2]", "Developing Knowledge")
    one = at("! p: retries need a cap for payments only | 1x", "Developing Knowledge")
    proven = at("!! p: cap retries | 3x (CORE — 2026-11-20) [evidence: ep-1, ep-2, ep-3]", "Proven Knowledge")
    assert [(e.kind, e.old_level, e.level) for e in diff_pattern_maps(two, one)] == [("lowered", 2, 1)]
    assert [e.kind for e in diff_pattern_maps(proven, two)] == ["demoted"]
