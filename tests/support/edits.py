"""Chains of random line edits, for the tests that hold an incremental read equal to a fresh one."""

from __future__ import annotations

from typing import Callable, Sequence, TypeVar

from hypothesis import strategies as st

Line = TypeVar("Line")


def edit_lists(lines: st.SearchStrategy, most_at: int) -> st.SearchStrategy:
    """One to four edits: (where, how many lines to cut, lines to insert)."""
    return st.lists(st.tuples(st.integers(0, most_at), st.integers(0, 3), st.lists(lines, max_size=3)),
                    min_size=1, max_size=4)


def edited_versions(lines: Sequence[Line], edits, render: Callable[[list[Line]], object]) -> list:
    """``render`` of the lines, then of the lines after each edit in turn."""
    current = list(lines)
    versions = [render(current)]
    for at, cut, inserted in edits:
        at = min(at, len(current))
        current = current[:at] + list(inserted) + current[at + cut:]
        versions.append(render(current))
    return versions
