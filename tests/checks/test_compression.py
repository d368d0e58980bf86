"""Performance compression's normalisation: the lifecycle fields it strips, found as the full pattern finds them."""

from __future__ import annotations

import random
import re

import pytest

from flowgit.checks import compression
from flowgit.checks.compression import LIFECYCLE_HINT_RE, LIFECYCLE_RE, MARKUP_RE

KEYWORDS = ("seen", "next", "due", "since", "until")
EVERY_CHARACTER = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)


def _reference_normalise(text: str) -> str:
    """:func:`compression.normalise` as first written: the lifecycle pattern tried on every text with a colon
    (each field read as the rule reads it: a date dropped, words kept)."""
    text = MARKUP_RE.sub(" ", text)
    if ":" in text:
        text = LIFECYCLE_RE.sub(compression._field_words, text)
    return " ".join(text.replace("✓", " ").split())


def test_the_hint_finds_every_keyword_the_lifecycle_pattern_finds_in_any_case_form():
    """Each letter of each keyword replaced by every character case-insensitive matching takes for it (a
    capital, the long s, the Kelvin sign…): wherever the full pattern finds a field, so does the hint."""
    looked_at = 0
    for word in KEYWORDS:
        for at, letter in enumerate(word):
            for stand_in in set(re.findall(letter, EVERY_CHARACTER, re.IGNORECASE)):
                text = f"- a task {word[:at]}{stand_in}{word[at + 1:]} : Dec 1"
                assert LIFECYCLE_RE.search(text), text  # the full pattern reads it as a field
                assert LIFECYCLE_HINT_RE.search(text), text
                looked_at += 1
    assert looked_at > 5 * 4 * 2  # capitals and the odd stand-ins were tried, not only the letters


@pytest.mark.parametrize("seed", range(4))
def test_normalise_strips_exactly_what_it_stripped_before(seed):
    rnd = random.Random(seed)
    pieces = ["- ", "* ", "1. ", "retry", "budget", "seen:", "SEEN :", "ſeen:", "next: Dec 2", "due:", "since:",
              "until :", "until", "— ", "– ", "-", ",", ";", "|", "]", "`code`", "**bold**", "[evidence: ep-a]",
              "✓", "done", "Next", "unseen:", "seen", ":", " ", "sext:", "neen:"]
    for _ in range(2000):
        text = "".join(rnd.choice(pieces) + rnd.choice(["", " "]) for _ in range(rnd.randint(1, 9)))
        assert compression.normalise.__wrapped__(text) == _reference_normalise(text), text


def test_a_field_of_words_keeps_them_a_date_field_does_not():
    """Splitting an item into what is done and its next step (the lifecycle Step 4 asks for) moves words into
    `next:`; they are the item's content, so the split is no restatement in fewer words."""
    assert compression.normalise("- migrate the schema — next: verify the backups restore") == \
        "migrate the schema next verify the backups restore"
    assert compression.normalise("- migrate the schema — next: Dec 4") == "migrate the schema"


def test_a_field_is_stripped_and_a_text_without_one_is_kept():
    assert compression.normalise("- ship the gate — next: Dec 1") == "ship the gate"
    assert compression.normalise("- ship the gate, SEEN: Nov 30; then more") == "ship the gate, then more"
    assert compression.normalise("- the next step: ship") == "the next step: ship"  # `next step:` is no field


def _item(text: str) -> "compression.Item":
    return compression.Item(0, 1, text, "item")


@pytest.mark.parametrize("old, new", [
    ("- [ ] finish the consumer rewrite for billing events — next: schema review",
     "- [ ] finish the consumer rewrite for billing events — next: 2026-12-07"),   # the next step dated
    ("- [ ] write the runbook for queue cutover next: ask Priya about dead letters",
     "- ✓ write the runbook for queue cutover"),                                    # done: the step is moot
    ("- [ ] migrate the schema — next: verify the backups restore",
     "- [ ] migrate the schema — seen: Dec 2, next: Dec 9"),
    ('- [blocked(reason: "vendor API keys not issued", since: "2026-11-05")] migrate billing to the v2 API — '
     'next: 2026-11-12', "- migrate billing to the v2 API — seen: 2026-11-07, next: 2026-11-09"),  # unblocked
    ("- [decided(rationale: \"the cheaper region (eu-2)\", on: \"Nov 3\")] move the replicas", "- move the replicas"),
])
def test_a_lifecycle_fields_value_changed_or_dropped_is_no_restatement(old, new):
    """Step 4's lifecycle (`seen:`/`next:` kept current, `✓` when done) changes a field's value, words and all:
    the item itself says what it said (the wrap's own `actions.next` writes such an edit)."""
    assert compression.shortening(_item(old), _item(new)) is None


@pytest.mark.parametrize("old, new", [
    ("- [ ] finish the consumer rewrite for billing events and the dead letter queue — next: schema review",
     "- [ ] finish consumer rewrite for billing — next: schema review"),            # the body cut, the field kept
    ("- [ ] finish the consumer rewrite for billing events and the dead letter queue — next: schema review",
     "- [ ] finish consumer rewrite — next: 2026-12-07"),                           # cut while the field is dated
    ('- [blocked(reason: "keys", since: "2026-11-05")] migrate billing to the v2 API with the runbook and a dry run',
     "- migrate billing v2"),                                                       # unblocked and cut
])
def test_an_items_own_words_cut_is_a_restatement_whatever_its_fields_do(old, new):
    assert compression.shortening(_item(old), _item(new)) is not None


def test_the_wraps_own_next_operation_on_two_items_passes_the_gate(run, repo):
    """The false reject seen: two items' `next:` steps dated by `actions.next` were refused as G301."""
    from tests.checks.gate_fixtures import base_text, committed_base

    committed_base(repo, base_text(actions="- [ ] finish the consumer rewrite for billing events — next: schema "
                                           "review\n- [ ] write the runbook for queue cutover — next: ask Priya "
                                           "about dead letters"))
    plan = repo / "plan.json"
    plan.write_text('{"session": "s9", "state": "Focus: cutover prep.", "actions": {"next": '
                    '{"consumer rewrite": "2026-12-07", "runbook": "2026-12-08"}}}')
    res = run(repo, "wrap", "--plan", str(plan))
    assert res.code == 0 and "G301" not in res.out + res.err, res.out + res.err
    assert "next: 2026-12-07" in (repo / "CONTINUITY.md").read_text()
