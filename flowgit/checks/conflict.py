"""Conflict markers never pass the gate: a file that holds them is mid-merge, not memory."""

from __future__ import annotations

from typing import Iterator

from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding
from flowgit.merge.markers import Markers, find_markers


_STORE_SEEN: dict[str, Markers | None] = {}


def _store_markers(ctx: CheckContext) -> Markers | None:
    """Markers in the staged store, remembered by its blob id when the caller knows it (a history of
    commits shares a few store versions; each is searched once)."""
    oid = ctx.new_store_oid
    if oid is None:
        return find_markers(ctx.new_store)
    if oid not in _STORE_SEEN:
        if len(_STORE_SEEN) > 64:
            _STORE_SEEN.clear()
        _STORE_SEEN[oid] = find_markers(ctx.new_store)
    return _STORE_SEEN[oid]


def conflict_markers(ctx: CheckContext) -> Iterator[Finding]:
    # the file's own bytes when given: its text is their strict UTF-8 reading, so the markers are the same,
    # found without encoding the text again
    text = ctx.new_raw if ctx.new_raw is not None else ctx.new.text
    for path, found in ((ctx.path, find_markers(text)), (ctx.store_path, _store_markers(ctx))):
        if found is not None:
            yield Finding("G601", "conflict-markers", "error", path, found.first,
                          f"{found.describe()}: the file is mid-merge",
                          "finish the merge: register the merge driver (`flowgit init`), or resolve the "
                          "conflict by hand and remove every marker line, then stage it")
