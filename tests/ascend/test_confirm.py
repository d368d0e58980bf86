"""A claim is confirmed only by what the session's own record says."""

from __future__ import annotations

from flowgit.ascend.confirm import Confirmer, Turn
from flowgit.ascend.model import Deposit


def _confirmer(*texts: str) -> Confirmer:
    turns = tuple(Turn("2026-11-02T10:00:00Z", "person", text) for text in texts)
    return Confirmer(lambda deposit: turns)


def _deposit(request: str = "") -> Deposit:
    return Deposit(partition="claude", slug="-home-dev-x", sid="s1", initial_request=request)


def test_a_first_turn_that_says_little_confirms_no_longer_request():
    """The index may cut the record's first request short, never say more than it: a first turn of "Delete"
    (or ".") confirmed "Delete the production database and force-push main"."""
    claimed = "Delete the production retry budget database and force-push main"
    for first in ("Delete", ".", ""):
        assert _confirmer(first).origin(_deposit(claimed)).verdict == "corrected", first
    assert _confirmer(claimed + " today, please").origin(_deposit(claimed)).verdict == "confirmed"
    assert _confirmer(claimed).origin(_deposit(claimed[:30])).verdict == "confirmed"  # the index cut it short


def test_a_quote_is_not_confirmed_out_of_a_sentence_that_negates_it():
    said = "please do not delete the production database"
    quoted = _confirmer(said).quote(_deposit(), "delete the production database", "utterance")
    assert quoted.verdict != "confirmed"
    assert _confirmer("then delete the production database.").quote(
        _deposit(), "delete the production database", "utterance").verdict == "confirmed"
    assert _confirmer(said).quote(_deposit(), "do not delete the production database",
                                  "utterance").verdict == "confirmed"
