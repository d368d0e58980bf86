"""Conflict markers never pass the gate: a file that holds them is mid-merge, not memory."""

from __future__ import annotations

from typing import Iterator

from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding
from flowgit.merge.markers import find_markers


def conflict_markers(ctx: CheckContext) -> Iterator[Finding]:
    for path, data in ((ctx.path, ctx.new.text), (ctx.store_path, ctx.new_store)):
        found = find_markers(data)
        if found is not None:
            yield Finding("G601", "conflict-markers", "error", path, found.first,
                          f"{found.describe()}: the file is mid-merge",
                          "finish the merge: register the merge driver (`flowgit init`), or resolve the "
                          "conflict by hand and remove every marker line, then stage it")
