"""Dates as FLOW files write them: a yearless date is read about the past, or about a deadline."""

from __future__ import annotations

from datetime import date

import pytest

from flowgit.dates import parse_date

DEC_1 = date(2026, 12, 1)


@pytest.mark.parametrize("text, seen, due", [
    ("Dec 5", date(2025, 12, 5), date(2026, 12, 5)),      # four days ahead, not a year overdue
    ("Nov 20", date(2026, 11, 20), date(2026, 11, 20)),   # eleven days ago either way
    ("Jan 10", date(2026, 1, 10), date(2027, 1, 10)),     # next month's deadline
    ("Jul 1", date(2026, 7, 1), date(2026, 7, 1)),        # five months ago: nearer than next July
    ("2026-12-05", date(2026, 12, 5), date(2026, 12, 5)), # a year written is the year
    ("Feb 29", date(2024, 2, 29), date(2028, 2, 29)),     # only leap years have one
])
def test_a_yearless_date_is_the_latest_past_one_or_for_a_deadline_the_nearest(text, seen, due):
    assert parse_date(text, reference=DEC_1) == seen
    assert parse_date(text, reference=DEC_1, nearest=True) == due


def test_an_action_due_in_four_days_is_not_overdue():
    from flowgit.continuity.document import Document
    from flowgit.wrap.judgement import action_states

    doc = Document.parse("# C\n\n## Action Items\n- ship the report — next: Dec 5\n- review the gate — next: Nov 20\n")
    states = action_states(doc, DEC_1)
    assert [(s.body, s.days_overdue(DEC_1)) for s in states] == [("review the gate — next: Nov 20", 11)]
