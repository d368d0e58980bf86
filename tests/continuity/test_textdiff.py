"""The whole lines two versions share: never more than they really share, as str or as bytes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from flowgit.continuity.document import split_lines
from flowgit.continuity.textdiff import shared_lines

LINES = ["a\n", "b\n", "\n", "a", "b", "é\n", "\r\n", "a\r\n", "x" * 700 + "\n", "## h\n", "\u2028\n", "ab\n"]


def _check(old: str, new: str) -> None:
    for left, right in ((old, new), (old.encode(), new.encode())):
        for count in (None, len(split_lines(old))):
            shared = shared_lines(left, right, count)
            old_lines, new_lines = split_lines(old), split_lines(new)
            top, bottom = shared.top, shared.bottom
            assert top + bottom <= min(len(old_lines), len(new_lines))
            assert old_lines[:top] == new_lines[:top]
            assert old_lines[len(old_lines) - bottom:] == new_lines[len(new_lines) - bottom:]
            start, end = shared.new_mid
            # the middle is exactly the new lines between: top, middle and bottom give the new text back
            nl = b"\n" if isinstance(left, bytes) else "\n"
            assert right[:start].count(nl) == top and (not start or right[start - 1:start] == nl)
            middle = right[start:end].decode() if isinstance(right, bytes) else right[start:end]
            assert new_lines[:top] + split_lines(middle) + new_lines[len(new_lines) - bottom:] == new_lines
            o_start, o_end = shared.old_mid
            assert left[:o_start] == right[:start] and left[o_end:] == right[end:]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=30), st.lists(st.sampled_from(LINES), max_size=30))
def test_shared_lines_of_unrelated_texts_are_really_shared(old, new):
    _check("".join(old), "".join(new))


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=60), st.integers(0, 60), st.integers(0, 5),
       st.lists(st.sampled_from(LINES), max_size=5))
def test_shared_lines_of_an_edit_keep_all_but_the_edit(lines, at, cut, inserted):
    old = "".join(lines)
    new = "".join(lines[:at] + inserted + lines[at + cut:])
    _check(old, new)


def test_an_edit_in_the_middle_of_a_long_text_shares_the_rest():
    lines = [f"line {i} é\n" for i in range(2000)]
    edited = lines[:1000] + ["changed\n"] + lines[1001:]
    shared = shared_lines("".join(lines), "".join(edited))
    assert (shared.top, shared.bottom) == (1000, 999)
    shared = shared_lines("".join(lines).encode(), "".join(edited).encode(), 2000)
    assert (shared.top, shared.bottom) == (1000, 999)


def test_equal_texts_share_every_line_with_or_without_a_final_newline():
    assert shared_lines("a\nb\n", "a\nb\n")[:2] == (2, 0)
    assert shared_lines("a\nb", "a\nb")[:2] == (1, 1)
    assert shared_lines("", "")[:2] == (0, 0)


def test_a_line_that_only_gains_its_newline_is_not_shared():
    shared = shared_lines("a\nb", "a\nb\n")
    assert (shared.top, shared.bottom) == (1, 0)
    assert shared.new_mid == (2, 4)
    shared = shared_lines("x\nb", "y\nxb")  # "b" ends both, but starts a line in only one
    assert shared.bottom == 0
