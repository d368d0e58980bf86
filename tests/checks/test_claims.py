"""How a claim is read: which words are new, which negations are lost, and which changes are typos fixed."""

from __future__ import annotations

import pytest

from flowgit.checks.claims import (as_read, claim_text, claim_words, lost_negations, name_gains, new_words,
                                   only_respelled, relabelled)
from flowgit.continuity.patterns import parse_pattern

OLD = "retries without any budget multiply the load on the provider during every outage"


@pytest.mark.parametrize("after, added", [
    ("retries without any budget never multiply the load on the provider", ["never"]),
    ("retries without any budget don't multiply the load", ["not"]),
    ("retries with a budget multiply the load", ["with"]),  # and `without` is lost (below)
    ("retries without any budget multiply the ¬safe load", ["safe", "¬"]),
    ("retries without any budget multiply the load, ~~the provider~~", ["¬"]),
    ("retries without any budget multiply the load, <s>the provider</s>", ["¬"]),
    ("retries without any budget multiply the load, ~the provider~", ["¬"]),
    ("retries without any budget multiply the load on the p\u0336r\u0336o\u0336v\u0336i\u0336d\u0336e\u0336r\u0336",
     ["¬"]),
    ("retries without any budget multiply the load on the provider during 3 outages", ["3"]),
    ("retries without any budget multiply the load on the provider during 5% outages", ["5%"]),
    ("retries without any budget multiply the unsafe load", ["unsafe"]),
    ("retries without budget -> multiply provider load during outage", []),  # FlowScript compression
    ("Retries without ANY budget **multiply** the load, on the provider.", []),  # case, emphasis, punctuation
    ("retries without any budjet multiply the lod on the provider", []),  # typos: one letter each
    ("retries without any budget multiply the lode on the provider", ["lode"]),  # a short word: only add/drop
    ("retries without any budget multiply the load on the provider during every outage outage", ["outage"]),
    ("<never> retries without any budget multiply the load on the provider", ["<never>"]),  # a made-up tag
    ("retries <span hidden>without any budget</span> multiply the load", ["<span hidden>"]),
    ("<b>retries</b> without any <em>budget</em> multiply the <span>load</span>", []),  # plain formatting
])
def test_new_words(after, added):
    assert new_words(OLD, after) == added


@pytest.mark.parametrize("after, lost", [
    ("retries with a budget multiply the load", ["without"]),
    ("retries budget multiply load", ["without"]),  # a compression may not drop a negation
    ("retries w/o any budget multiply the load", []),  # `w/o` is `without`
])
def test_lost_negations(after, lost):
    assert lost_negations(OLD, after) == lost


@pytest.mark.parametrize("before, after", [
    ("avoid caching auth tokens in the shared cache", "caching auth tokens in the shared cache"),
    ("stop retrying after five failures", "retrying after five failures"),
    ("never retry a charge", "<never> retry a charge"),  # a tag a reader does not see
    ("never retry a charge", "[](never) retry a charge"),  # a link with no text
    ("never retry a charge", "<!-- never --> retry a charge"),
])
def test_a_negation_a_reader_no_longer_sees_is_lost(before, after):
    assert lost_negations(before, after), after


@pytest.mark.parametrize("before, after", [("cannot retry", "can't retry"), ("cannot retry", "can not retry"),
                                           ("do not retry", "don't retry"), ("do not retry", "dont retry"),
                                           ("will not retry", "won't retry")])
def test_contractions_are_the_words_they_contract(before, after):
    assert new_words(before, after) == [] and lost_negations(before, after) == []


@pytest.mark.parametrize("before, after", [("retry at maximum forty times", "retry at minimum forty times"),
                                           ("retry forty times", "retry fifty times"),
                                           ("retry on the fifth attempt", "retry on the fifty attempt"),
                                           ("phase II of the rollout", "phase III of the rollout"),
                                           ("retries are safe", "retries are sale")])
def test_a_typo_allowance_never_turns_one_word_into_another(before, after):
    assert new_words(before, after), after


def test_numbers_are_read_as_written():
    assert new_words("open after 5 failures", "open after five failures") == []
    assert new_words("open after 5 failures", "open after 50 failures") == ["50"]
    assert new_words("open after 5 failures", "open after 5.5 failures") == ["5.5"]
    assert new_words("open after 5 failures", "open after -5 failures") == ["-5"]


def test_an_abbreviation_is_the_word_it_shortens():
    assert new_words("idempotency keys on every charge request", "idem keys on every charge req") == []


def test_folded_words_are_the_pattern_s_own():
    folded = claim_words("backoff with jitter avoids a thundering herd")
    assert new_words("jittered backoff spreads the retry wave", "jittered backoff spreads the wave, avoids the herd",
                     folded) == []


def test_a_proven_claim_in_place_may_only_have_its_typos_fixed():
    assert only_respelled("cap retries per request", "cap retires per request")
    assert not only_respelled("cap retries per request", "retries cap per request")  # order is read in place
    assert not only_respelled("cap retries per request", "cap retries")  # nor a word dropped


def _p(line: str):
    return parse_pattern(line)


@pytest.mark.parametrize("new_name, gained", [("retry_cap", []), ("retry_budget_v2", []), ("retry_budget_renamed", []),
                                              ("never_retry_budget", ["never"]), ("NeverRetryBudget", ["never"]),
                                              ("dont_retry_budget", ["not"]), ("retry_budget_is_wrong", ["wrong"]),
                                              ("retry_budget_disproven", ["disproven"])])
def test_a_rename_may_not_write_a_negation_into_the_name(new_name, gained):
    before = _p("!! retry_budget: cap retries per request | 2x")
    now = _p(f"!! {new_name}: cap retries per request | 2x")
    assert name_gains(before, now) == gained


@pytest.mark.parametrize("was, now, in_place, changed", [
    ("GENERAL", "RELIABILITY", True, False), ("", "COST-CONTROL", True, False),
    ("RELIABILITY", "COST", True, True), ("RELIABILITY", "COST", False, False),
    ("GENERAL", "ANTIPATTERN", True, True), ("GENERAL", "DISPROVEN", False, True),
    ("GENERAL", "BUDGETS ARE OPTIONAL", False, True)])
def test_a_category_is_a_label_that_says_nothing_against_the_claim(was, now, in_place, changed):
    assert relabelled(_p(f"!! x: y | 2x ({was})"), _p(f"!! x: y | 2x ({now})"), in_place=in_place) is changed


def test_the_claim_is_the_whole_line_less_what_the_wrap_writes_of_it():
    line = ("!! p: cap retries | 2x (RELIABILITY) [evidence: ep-1] except payments [payments never cap] "
            "[-> drop the cap in outages] [<- backoff, jitter, q] "
            "[derives from q, demoted 2026-12-01: re-check] [demoted 2026-12-02: load grew (ep-9)]")
    pattern = parse_pattern(line)
    named = lambda name: name in ("backoff", "jitter", "q")  # noqa: E731
    text = claim_text(pattern, demoted=lambda name: name == "q", named=named)
    assert "except payments" in text and "payments never cap" in text and "drop the cap in outages" in text
    assert "backoff" not in text and "derives from" not in text and "load grew" not in text
    assert "derives from q" in claim_text(pattern)  # a note naming no demoted pattern is prose like any other
    assert "<- backoff, jitter, q" in claim_text(pattern, named=lambda name: name == "backoff")  # a link naming
    # what no pattern is called is a sentence (`[-> never-cap-retries]`), read as words


@pytest.mark.parametrize("note, why", [
    ("[derives from q, demoted Dec 4 because backoff is false, never back off: re-check]", "prose for a day"),
    ("[derives from q, demoted 2026-12-01: re-check]", "on a pattern that does not derive from q"),
])
def test_a_note_in_the_derivation_notes_shape_is_a_claim_unless_the_wrap_could_have_written_it(note, why):
    """The wrap writes `[derives from X, demoted <day>: re-check]` with a date, on a pattern linked `[<- X]`;
    any other note of that shape on a Proven line is prose the gate reads (G404)."""
    links = "[<- q] " if "because" in note else "[<- backoff] "
    pattern = parse_pattern(f"!! p: cap retries | 3x (RELIABILITY) [evidence: ep-1] {links}{note}")
    text = claim_text(pattern, demoted=lambda name: name == "q", named=lambda name: name in ("q", "backoff"))
    assert "derives from q" in text, why


def test_what_a_reader_sees():
    assert as_read("Pr&#111;ven <b>keys</b> [docs](http://x) w/o") .split() == ["Proven", "keys", "docs", "without"]


@pytest.mark.parametrize("after, added", [
    ("cap retries 👎", ["👎"]), ("cap retries ⚠️", ["⚠"]), ("cap retries?", ["?"]), ("~cap retries", ["~"]),
    ("cap retries [exploring]", ["exploring", "[exploring"]),
    ("cap retries ![](https://img.shields.io/badge/status-disproven-red)", ["badge", "status", "disproven", "red"]),
    ("cap retries <https://example.org/retries-disproven>", ["disproven"]),
    ("cap retries at 3k", ["3k"]), ("cap retries → provider", []),
])
def test_what_else_a_reader_reads(after, added):
    assert new_words("cap retries at 3 provider", after) == added or set(added) <= set(new_words(
        "cap retries at 3 provider", after)), new_words("cap retries at 3 provider", after)


def test_a_number_keeps_its_unit():
    assert new_words("time out after 5s", "time out after 5m") == ["5m"]
    assert new_words("time out after 5 s", "time out after 5 s") == []


def test_a_swap_into_a_function_word_is_a_typo_fixed_unless_the_misspelling_is_a_word():
    """`teh`, `adn` and `taht` are fixed into words that carry no claim; `aws` (the cloud), `form` (a verb) and
    `three` (a number) are words themselves, and writing them as `was`, `from` and `there` changes the claim."""
    from flowgit.checks.claims import only_respelled

    assert only_respelled("retry so teh outage adn load stay flat", "retry so the outage and load stay flat")
    assert only_respelled("cap retries so taht an outage cannot grow", "cap retries so that an outage cannot grow")
    for was, now in [("deploy to aws first", "deploy to was first"), ("timeouts form storms", "timeouts from storms"),
                     ("keep three replicas", "keep there replicas")]:
        assert not only_respelled(was, now), (was, now)
