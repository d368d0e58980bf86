"""Conflict markers: found where git writes them, not in a setext underline."""

from __future__ import annotations

from flowgit.merge.markers import find_markers


def test_markers_are_found_with_their_lines():
    text = "## Foundation\n<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n"
    found = find_markers(text)
    assert found.opening == (2,) and found.closing == (6,) and found.first == 2
    assert "lines 2, 6" in found.describe()
    assert find_markers(text.replace("\n", "\r\n").encode()).opening == (2,)


def test_a_setext_underline_or_marker_text_inside_a_line_is_not_a_conflict():
    assert find_markers("Title\n=======\nsee <<<<<<< in prose\n") is None
    assert find_markers(b'{"content": "<<<<<<< HEAD"}\n') is None
    assert find_markers("<<<<<<<\nx\n>>>>>>>\n").opening == (1,)


def test_longer_markers_from_a_conflict_marker_size_attribute_are_found():
    assert find_markers("<<<<<<<<<< ours\na\n==========\nb\n>>>>>>>>>> theirs\n").closing == (5,)


def test_the_byte_search_answers_as_the_substring_search_does():
    """``_holds_run`` (memchr, then a compare per hit, then a bounded hand-over) is ``find(run) != -1``."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from flowgit.merge.markers import _holds_run

    @settings(max_examples=2000, deadline=None)
    @given(st.binary(max_size=80).map(lambda b: bytes(b"<>\nx"[c % 4] for c in b)), st.integers(0, 6))
    def same(data: bytes, patience: int) -> None:
        for byte in (b"<", b">"):
            assert _holds_run(data, byte, patience=patience) == (data.find(byte * 7) != -1)

    same()
    noisy = b'{"content": "a -> b <- c"}\n' * 200
    assert find_markers(noisy) is None
    assert find_markers(noisy + b"<<<<<<< HEAD\n").opening == (201,)
