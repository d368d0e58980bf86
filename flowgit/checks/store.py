"""The episodic store only grows: a commit may append lines, never change or drop one."""

from __future__ import annotations

from typing import Iterator

from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding
from flowgit.episodes import parse_store


def append_only(ctx: CheckContext) -> Iterator[Finding]:
    if not ctx.store_appended_only:
        old, new = ctx.old_store, ctx.new_store[:]  # a mapped store slices to bytes
        common = 0
        for a, b in zip(old.split(b"\n"), new.split(b"\n")):
            if a != b:
                break
            common += 1
        yield Finding("G701", "store-append-only", "error", ctx.store_path, common + 1,
                      "the episodic store is append-only: this commit changes or removes an existing line",
                      f"restore it (`git checkout HEAD -- {ctx.store_path}`) and append instead")
        return
    added = ctx.appended_store
    start = len(ctx.new_store) - len(added)
    if added and start > 0 and ctx.new_store[start - 1:start] != b"\n" and added[:1] != b"\n":
        yield Finding("G701", "store-append-only", "error", ctx.store_path,
                      ctx.new_store[:start].count(b"\n") + 1,
                      "the appended bytes continue the store's last line (it had no final newline), so that "
                      "recorded episode no longer reads as one line of JSON: every reader splits lines at \\n",
                      "start what is appended on a new line (`flowgit episode add` does)")
    for ident in sorted(ctx.repeated_ids):
        yield Finding("G703", "store-append-only", "error", ctx.store_path, _line_of(ctx, ident),
                      f"an appended line repeats episode {ident}, which the store already holds: a recorded "
                      "episode is never restated (its first line is the record)",
                      "remove the appended line; record something new with `flowgit episode add`")
    if added.strip():
        _, problems = parse_store(added)
        offset = ctx.new_store[: len(ctx.new_store) - len(added)].count(b"\n") if problems else 0
        for p in problems[:5]:
            yield Finding("G702", "store-append-only", "warning", ctx.store_path, offset + p.line, p.message,
                          "write episodes with `flowgit episode add`")


def _line_of(ctx: CheckContext, ident: str) -> int | None:
    """The store line number of the appended line that repeats ``ident`` (None if it cannot be told)."""
    added = ctx.appended_store
    needle = f'"{ident}"'.encode("utf-8")
    at = added.find(needle)
    if at == -1:
        return None
    start = len(ctx.new_store) - len(added)
    return ctx.new_store[:start].count(b"\n") + added[:at].count(b"\n") + 1
