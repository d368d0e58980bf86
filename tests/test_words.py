"""Words as the rules compare them (stems), and as a person reads them back (as written)."""

from __future__ import annotations

from flowgit.output import counted
from flowgit.words import as_written, content_words


def test_stems_are_read_back_as_the_text_writes_them():
    text = "retry_budget: cap retries per request so an outage cannot multiply load"
    stems = content_words("the retries during outages capped the load") & content_words(text)
    assert as_written(text, stems) == ["retry", "cap", "outage", "load"]
    assert as_written("nothing here", frozenset({"outag"})) == ["outag"]  # not written there: as it is


def test_a_count_takes_its_noun_in_the_right_number():
    assert [counted(n, "day") for n in (0, 1, 2)] == ["0 days", "1 day", "2 days"]
    assert counted(1, "try", "tries") == "1 try" and counted(3, "try", "tries") == "3 tries"
