"""The generated wrap message: the subject names the key change, the trailers record every level change."""

from __future__ import annotations

from datetime import date

from flowgit.changes import LOWERED, RENAMED, PatternEvent
from flowgit.trailers import mismatches, parse_trailers
from flowgit.wrap.message import message, subject

DAY = date(2026, 12, 3)


def test_a_rename_is_named_in_the_subject():
    events = [PatternEvent(RENAMED, "retry_cap", 1, "Developing Knowledge", old_name="retry_budget", old_level=1)]
    assert subject(events, DAY, {"Developing Knowledge": "updated"}) == \
        "Session wrap Dec 3 — renamed retry_budget to retry_cap"


def test_a_lowered_pattern_gets_a_trailer_the_trailer_check_accepts():
    events = [PatternEvent(LOWERED, "warm_cache", 1, "Developing Knowledge", old_level=2)]
    text = message(events, DAY, "s4", [])
    assert text == "Session wrap Dec 3 — lowered warm_cache\n\nFlow-Session: s4\nLowered: warm_cache 2x->1x\n"
    assert mismatches(parse_trailers(text), events) == []


def test_a_renames_trailer_is_one_the_trailer_check_accepts():
    events = [PatternEvent(RENAMED, "retry_cap", 1, "Developing Knowledge", old_name="retry_budget", old_level=1)]
    text = message(events, DAY, "s4", [])
    assert "Renamed: retry_budget -> retry_cap\n" in text
    assert mismatches(parse_trailers(text), events) == []
