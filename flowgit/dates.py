"""Dates as FLOW files write them: ISO (``2026-11-30``) and short (``Jan 10``, ``Jan 10 2026``)."""

from __future__ import annotations

import re
from datetime import date, datetime, timezone

MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1)}
ISO_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ][\d:.+\-Z]*)?$")
SHORT_RE = re.compile(r"^([A-Za-z]{3})[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?$")
DAY_FIRST_RE = re.compile(r"^(\d{1,2})\s+([A-Za-z]{3})[a-z]*\.?(?:,?\s+(\d{4}))?$")


# What a date can hold: a commit's time is whatever its author's clock (or a hand) wrote, year 0 or 10000
_EARLIEST = datetime(1, 1, 1, tzinfo=timezone.utc)
_LATEST = datetime(9999, 12, 30, 23, 59, 59, tzinfo=timezone.utc)  # (a day spare: a chart ends a day later)


def utc_from_timestamp(seconds: int) -> datetime:
    """The UTC moment of a git timestamp, held within the years a date can hold: a commit dated outside them
    is shown at the nearest end (its date means nothing either way) instead of stopping the command."""
    if seconds <= _EARLIEST.timestamp():
        return _EARLIEST
    if seconds >= _LATEST.timestamp():
        return _LATEST
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


def today() -> date:
    return datetime.now(timezone.utc).date()


def parse_date(text: str, *, reference: date | None = None, nearest: bool = False) -> date | None:
    """Parse one date or return ``None``; a yearless date is the latest one not after ``reference`` (a date
    written about the past: ``seen:``, a graduation), or with ``nearest`` the one closest to it, the later one
    on a tie (a deadline: ``next: Dec 5`` written on Dec 1 is four days ahead, not a year overdue)."""
    s = text.strip().strip('"').strip()
    m = ISO_RE.match(s)
    if m:
        try:
            return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            return None
    m = SHORT_RE.match(s)
    month_s, day_s, year_s = (m.group(1), m.group(2), m.group(3)) if m else (None, None, None)
    if not m:
        m = DAY_FIRST_RE.match(s)
        if not m:
            return None
        day_s, month_s, year_s = m.group(1), m.group(2), m.group(3)
    month = MONTHS.get(month_s.lower())
    if month is None:
        return None
    if year_s:
        try:
            return date(int(year_s), month, int(day_s))
        except ValueError:
            return None
    ref = reference or today()
    found = _occurrences(ref, month, int(day_s))  # (Feb 29 has one every four years)
    if not found:
        return None
    if nearest:
        return min(found, key=lambda d: (abs((d - ref).days), -d.toordinal()))
    return max(d for d in found if d <= ref)


def _occurrences(ref: date, month: int, day: int) -> list[date]:
    """The ``month``/``day`` in the years around ``ref`` (none: no such day)."""
    found = []
    for year in range(ref.year - 4, ref.year + 5):
        try:
            found.append(date(year, month, day))
        except ValueError:
            continue
    return found


def short(d: date) -> str:
    """``Nov 30``: the FLOW style used in commit subjects."""
    return d.strftime("%b ") + str(d.day)


def option_date(text: str | None, option: str) -> date | None:
    """The date an option names (``--since``, ``--date`` …), None when not given; bad text is a usage error."""
    from flowgit.errors import FlowgitError

    if not text:
        return None
    if TIME_OF_DAY_RE.search(text):  # (read as its day, a time would be dropped without a word)
        raise FlowgitError(f"{text!r} holds a time of day; {option} takes a day", path=option,
                           fix="give the day alone: 2026-11-30 (the range is whole days)")
    day = parse_date(text)
    if day is None:
        raise FlowgitError(f"{text!r} is not a date", path=option, fix="use 2026-11-30")
    return day


TIME_OF_DAY_RE = re.compile(r"\d[T ]\d|\d:\d")  # `2026-11-30T15:00Z`, `2026-11-30 15:00`, `15:00`
