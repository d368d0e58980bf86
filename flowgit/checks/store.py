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
                      f"put that line back as HEAD has it (`git diff HEAD -- {ctx.store_path}` shows it) and "
                      "append a correction instead; keep the lines appended below it (a checkout of the whole "
                      "store would also drop the episodes recorded since HEAD)")
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
        yield from _appended_lines(ctx, added)


AHEAD_SECONDS = 3600  # clocks disagree a little; an hour ahead of the commit is a date, not a skew


def _appended_lines(ctx: CheckContext, added: bytes) -> Iterator[Finding]:
    """Every appended line read on its own, as JSON reads it (an `id` key spelled with escapes included):
    G703 for an id two appended lines carry (every lookup reads one of them, not always the one a rule
    read), G705 for one dated more than an hour after the commit that records it (the store's dates are
    what "recorded since" is read by, so a `ts` set ahead would pass an episode recorded before a demotion
    for one recorded after it)."""
    from collections import Counter
    from datetime import timedelta

    from flowgit.episodes import line_object, parse_ts, recorded_ts

    from flowgit.checks.context import ID_RE

    latest = ctx.when + timedelta(seconds=AHEAD_SECONDS) if ctx.when is not None else None
    seen: Counter[str] = Counter()
    ahead, disguised, nested = [], [], []
    for raw in added.split(b"\n"):
        try:
            data = line_object(raw) if raw.strip() else None
        except ValueError:
            continue  # (not an episode: G702)
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            continue
        plain = ID_RE.findall(raw)
        if not plain or plain[0].decode("utf-8", "replace") != data["id"]:
            disguised.append(data["id"])
        elif len(plain) > 1:
            nested.append((data["id"], plain[1].decode("utf-8", "replace")))
        seen[data["id"]] += 1
        ts = parse_ts(recorded_ts(data))
        if latest is not None and ts is not None and ts > latest:
            ahead.append((data["id"], data["ts"]))
    for ident in sorted(i for i, n in seen.items() if n > 1 and i not in ctx.repeated_ids):
        yield Finding("G703", "store-append-only", "error", ctx.store_path, _line_of(ctx, ident),
                      f"two appended lines carry episode {ident}: one episode is recorded once (a reader may take "
                      "either line for it)", "keep one line per episode; record something new with a new text")
    for ident in disguised[:5]:
        yield Finding("G706", "store-append-only", "error", ctx.store_path, _line_of_id(ctx, ident),
                      f"an appended line holds episode {ident!r} with its `id` spelled so that a plain "
                      '`"id": "…"` does not show it (a key or a value written with escapes, or two `id` keys): '
                      "the store's lookups find episodes by that plain form, so a restatement of it would pass "
                      "for a new episode and readers would disagree on which line records it",
                      "write the line as `flowgit episode add` does (`{\"id\": \"ep-…\", …}`)")
    for ident, other in nested[:5]:
        yield Finding("G706", "store-append-only", "error", ctx.store_path, _line_of_id(ctx, ident),
                      f"the appended line of episode {ident} also holds `\"id\": \"{other}\"` inside another field: "
                      f"the store's lookups, which find episodes by that plain form, would take this line for "
                      f"{other} (a merge could then drop {other}'s own line unnoticed)",
                      "record the episode as `flowgit episode add` does, with no `id` key but its own")
    for ident, ts in ahead[:5]:
        yield Finding("G705", "store-append-only", "error", ctx.store_path, _line_of(ctx, ident),
                      f"episode {ident} is dated {ts}, after this commit ({ctx.when:%Y-%m-%dT%H:%M:%SZ}): an "
                      "episode is recorded when it is committed, and a date set ahead would let it pass for one "
                      "recorded later (after a demotion, say)",
                      "put the date right in that line (the time it happened, now or earlier; its id does not "
                      "hold the date, so the line keeps its id), or commit it once that time has come")


def _line_of_id(ctx: CheckContext, ident: str) -> int | None:
    """The store line number of the first appended line whose JSON holds episode ``ident`` however spelled."""
    from flowgit.episodes import line_object

    start = len(ctx.new_store) - len(ctx.appended_store)
    first = ctx.new_store[:start].count(b"\n") + 1
    for offset, raw in enumerate(ctx.appended_store.split(b"\n")):
        try:
            data = line_object(raw) if raw.strip() else None
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("id") == ident:
            return first + offset
    return None


def _line_of(ctx: CheckContext, ident: str) -> int | None:
    """The store line number of the appended line that repeats ``ident`` (None if it cannot be told)."""
    added = ctx.appended_store
    needle = f'"{ident}"'.encode("utf-8")
    at = added.find(needle)
    if at == -1:
        return None
    start = len(ctx.new_store) - len(added)
    return ctx.new_store[:start].count(b"\n") + added[:at].count(b"\n") + 1
