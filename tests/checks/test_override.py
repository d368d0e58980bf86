"""Reading an override's scope from its reason, as the hook, the wrap and the audit all read it."""

from __future__ import annotations

import pytest

from flowgit.checks.override import override_from_trailers, parse_override


@pytest.mark.parametrize("text, codes", [
    ("G402: adopting the foundation", {"G402"}),
    ("G402, G801: adopting", {"G402", "G801"}),
    ("g402 a401: lower case", {"G402", "A401"}),
    ("  G101 ,G103 :  spaces", {"G101", "G103"}),
    ("G101:", {"G101"}),
    ("Ｇ４０２: full width", {"G402"}),
])
def test_leading_codes_and_a_colon_scope_the_override(text, codes):
    found = parse_override(text)
    assert found is not None and found.codes == codes and found.reason == text
    assert all(found.covers(code) for code in codes) and not found.covers("G999")


@pytest.mark.parametrize("text", [
    "importing a legacy file",
    "fixing G101 later",  # a code inside the reason names nothing
    "G1012: five digits",
    "Cool: three letters after one are no code",
    "Q4 2026 plan",
])
def test_a_reason_without_leading_codes_covers_every_error(text):
    found = parse_override(text)
    assert found is not None and found.codes is None and found.covers("G101") and found.covers("A401")


def test_no_reason_is_no_override():
    assert parse_override(None) is None and parse_override("") is None and parse_override("   ") is None


def test_trailers_together_cover_what_each_names_and_any_unscoped_one_covers_everything():
    both = override_from_trailers(["G402: foundation", "G101: legacy"])
    assert both is not None and both.codes == {"G402", "G101"} and both.describe() == "G101, G402 only"
    assert override_from_trailers(["G402: foundation", "because"]).codes is None  # type: ignore[union-attr]
    assert override_from_trailers([]) is None


@pytest.mark.parametrize("text", ["G101 is fine here", "G402; G801: why", "G402/G801: why", "[G402]: why",
                                  "G4O2: why", "G402 - why", "G٤٠٢: why", "Г402: why", "X101: why"])
def test_a_reason_that_begins_like_codes_but_does_not_read_as_them_covers_nothing(text):
    found = parse_override(text)
    assert found is not None and found.unreadable and not found.covers("G101") and not found.covers("G402")
    assert found.describe().startswith("nothing")


def test_an_unreadable_trailer_adds_no_scope_and_alone_covers_nothing():
    assert override_from_trailers(["[G402]: x"]).unreadable  # type: ignore[union-attr]
    mixed = override_from_trailers(["[G402]: x", "G101: y"])
    assert mixed is not None and mixed.codes == {"G101"} and not mixed.unreadable
