"""G209's reading of a claim: which words are new, and which are the old ones spelled, compressed or folded."""

from __future__ import annotations

import pytest

from flowgit.checks.claims import claim_text, claim_words, new_words
from flowgit.continuity.patterns import parse_pattern

OLD = "retries without any budget multiply the load on the provider during every outage"


@pytest.mark.parametrize("after, added", [
    ("retries without any budget never multiply the load on the provider", ["never"]),
    ("retries without any budget don't multiply the load", ["don", "n't"]),
    ("retries without any budget multiply the load on the provider during 3 outages", ["3"]),
    ("retries with a budget multiply the load", ["with"]),  # `without` turned around
    ("retries without any budget multiply the unsafe load", ["unsafe"]),
    ("retries without budget -> multiply provider load during outage", []),  # FlowScript compression
    ("Retries without ANY budget **multiply** the load, on the provider.", []),  # case, emphasis, punctuation
    ("retries without any budjet multiply the lod on the provider", []),  # typos: two edits, or one if short
    ("retries without any budget multiply the lode on the provider", ["lode"]),  # two edits of a short word
])
def test_new_words(after, added):
    assert new_words(OLD, after) == added


def test_a_negation_is_never_a_typo_of_another_word():
    assert new_words("retries are safe", "retries are not safe") == ["not"]
    assert new_words("do it now", "do it not") == ["not"]  # one edit from `now`, but a negation


def test_a_number_is_never_a_typo_of_another_number():
    assert new_words("open after 5 failures", "open after 50 failures") == ["50"]


def test_folded_words_are_the_pattern_s_own():
    folded = frozenset(claim_words("backoff with jitter avoids a thundering herd"))
    assert new_words("jittered backoff spreads the retry wave", "jittered backoff spreads the wave, avoids the herd",
                     folded) == []


def test_the_claim_is_the_whole_line_less_the_wrap_s_notes():
    line = ("!! p: cap retries | 2x (RELIABILITY) [evidence: ep-1] except payments [payments never cap] "
            "[derives from q, demoted 2026-12-01: re-check] [demoted 2026-12-02: load grew (ep-9)]")
    text = claim_text(parse_pattern(line))
    assert "except payments" in text and "payments never cap" in text
    assert "derives from" not in text and "load grew" not in text
