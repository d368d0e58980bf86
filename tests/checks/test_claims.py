"""How a claim is read: which words are new, and which are the old ones re-spelled, compressed or folded."""

from __future__ import annotations

import pytest

from flowgit.checks.claims import claim_text, claim_words, new_words, only_respelled
from flowgit.continuity.patterns import parse_pattern

OLD = "retries without any budget multiply the load on the provider during every outage"


@pytest.mark.parametrize("after, added", [
    ("retries without any budget never multiply the load on the provider", ["never"]),
    ("retries without any budget don't multiply the load", ["do", "n't"]),
    ("retries with a budget multiply the load", ["with", "(without `without`)"]),  # `without` turned around
    ("retries budget multiply load", ["(without `without`)"]),  # a compression may not drop a negation
    ("retries without any budget multiply the ¬safe load", ["safe", "¬"]),
    ("retries without any budget multiply the load, ~~the provider~~", ["~~the provider~~"]),
    ("retries without any budget multiply the load on the provider during 3 outages", ["3"]),
    ("retries without any budget multiply the load on the provider during 5% outages", ["5%"]),
    ("retries without any budget multiply the unsafe load", ["unsafe"]),
    ("retries without budget -> multiply provider load during outage", []),  # FlowScript compression
    ("Retries without ANY budget **multiply** the load, on the provider.", []),  # case, emphasis, punctuation
    ("retries without any budjet multiply the lod on the provider", []),  # typos: two edits, or one if short
    ("retries without any budget multiply the lode on the provider", ["lode"]),  # two edits of a short word
    ("retries without any budget multiply the load on the provider during every outage outage", ["outage"]),
])
def test_new_words(after, added):
    assert new_words(OLD, after) == added


def test_a_negation_is_never_a_typo_of_another_word():
    assert new_words("retries are safe", "retries are not safe") == ["not"]
    assert new_words("do it now", "do it not") == ["not"]  # one edit from `now`, but a negation


@pytest.mark.parametrize("after, added", [("open after 50 failures", ["50"]), ("open after 5.5 failures", ["5.5"]),
                                          ("open after -5 failures", ["-5"]), ("open after five failures", [])])
def test_a_number_is_read_as_written_and_never_as_a_typo(after, added):
    assert new_words("open after 5 failures", after) == added


def test_an_abbreviation_is_the_word_it_shortens():
    assert new_words("idempotency keys on every charge", "idem keys on every charge") == []


def test_folded_words_are_the_pattern_s_own():
    folded = frozenset(claim_words("backoff with jitter avoids a thundering herd"))
    assert new_words("jittered backoff spreads the retry wave", "jittered backoff spreads the wave, avoids the herd",
                     folded) == []


def test_a_proven_claim_in_place_may_only_have_its_typos_fixed():
    assert only_respelled("cap retries per request", "cap retires per request")
    assert not only_respelled("cap retries per request", "retries cap per request")  # order is read in place
    assert not only_respelled("cap retries per request", "cap retries")  # nor a word dropped


def test_the_claim_is_the_whole_line_less_what_the_wrap_writes_of_it():
    line = ("!! never_p: cap retries | 2x (RELIABILITY) [evidence: ep-1] except payments [payments never cap] "
            "[-> drop the cap in outages] [<- backoff, jitter] "
            "[derives from q, demoted 2026-12-01: re-check] [demoted 2026-12-02: load grew (ep-9)]")
    pattern = parse_pattern(line)
    text = claim_text(pattern, demoted=lambda name: name == "q")
    assert "except payments" in text and "payments never cap" in text and "drop the cap in outages" in text
    assert "backoff" not in text and "derives from" not in text and "load grew" not in text
    assert text.endswith(" never")  # a name that turns negative says so
    assert "derives from q" in claim_text(pattern)  # a note naming no demoted pattern is prose like any other
