"""Gate rules for size: catastrophic shrink and the FLOW size budgets."""

from __future__ import annotations

from typing import Iterator

from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding
from flowgit.continuity.document import Document, is_structural_line
from flowgit.continuity.sections import ACTIONS, Semantics


def catastrophic_shrink(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.old is None:
        return
    old_chars = len(ctx.old.text)
    staged = ctx.new_patterns  # a pattern gone from the staged file is one that changed
    archived = sum(len(ctx.old.lines[at.line]) for name, at, _ in ctx.old_pattern_changes if name not in staged)
    base = old_chars - archived - _items_removed(ctx) - _replaced_shrink(ctx) - _merge_notes_dropped(ctx)
    new_chars = len(ctx.new.text)
    limit = ctx.cfg.budgets.shrink_max
    if base > 0 and (base - new_chars) / base > limit:
        yield Finding("G501", "catastrophic-shrink", "error", ctx.path, None,
                      f"the file shrank {100 * (base - new_chars) / base:.0f}% (from {base:,} to {new_chars:,} "
                      f"characters; archived patterns, removed Action Items, absorbed merge notes and what "
                      f"State, Top of Mind and Recent Context lost by being replaced or rewritten aside); more "
                      f"than {limit:.0%} is over-compression",
                      "compress for density, not size: restore what was lost outside State, Top of Mind and "
                      "Recent Context (git show HEAD:" + ctx.path + "); if a section of your own moved whole to "
                      "another file, commit the move alone with FLOWGIT_OVERRIDE=\"moved <section> to <file>\"")


def _replaced_shrink(ctx: CheckContext) -> int:
    """Characters of content the sections a wrap replaces or rewrites (State, Top of Mind, Recent Context) lost
    in this change: set aside as archived patterns are, since a long State replaced by one line of today's
    focus, or a long narrative rewritten into a momentum pointer ("previous narrative gets folded into a
    summary if still relevant, dropped if absorbed elsewhere"), is the protocol working. Only what they lost:
    the rule never judges more strictly than it did without them, and what the rest of the file loses still
    counts whole."""
    lost = 0
    for before, section in ctx.changed_pairs(Semantics.REPLACE, Semantics.REWRITE):
        was = ctx.old.facts(before).derived("size.content_chars", _content_chars)
        now = ctx.new.facts(section).derived("size.content_chars", _content_chars)
        lost += max(0, was - now)  # type: ignore[operator]
    return lost


def _merge_notes_dropped(ctx: CheckContext) -> int:
    """Characters of the merge notes HEAD held (``# flowgit merge:`` and the other wrap's text quoted ``# | ``)
    that the change drops: a merge leaves them for the next wrap to absorb and then drop, as the note says,
    and only a merge brings one (G304), so dropping them is the protocol, not over-compression. After many
    merges they can be half the file."""
    from collections import Counter

    from flowgit.merge.notes import NOTE_LINES

    holds_merge_notes(ctx.new)  # (asked first: read against HEAD's document, whose answer is remembered now)
    if not holds_merge_notes(ctx.old):
        return 0  # (most versions hold none)
    held = Counter(line.rstrip("\r\n") for line in ctx.old.lines if line.startswith(NOTE_LINES))
    kept = Counter(line.rstrip("\r\n") for line in ctx.new.lines if line.startswith(NOTE_LINES))
    return sum(len(line) * count for line, count in (held - kept).items())


def holds_merge_notes(doc: Document) -> bool:
    """Whether a line of ``doc`` begins as a merge note's lines do (remembered with the document).

    Each line decides alone, so a version read as an edit of one that held
    none is decided by the lines between what the two share: a history's
    versions are each read in the few lines their commit changed.
    """
    from flowgit.merge.notes import NOTE_LINES

    found = doc.memo.get("size.merge_notes")
    if found is None:
        earlier = doc.earlier("size.merge_notes")
        start, stop = (earlier[1], earlier[2]) if earlier is not None and not earlier[0] else (0, len(doc.lines))
        lines = doc.lines
        found = doc.memo["size.merge_notes"] = any(lines[i].startswith(NOTE_LINES) for i in range(start, stop))
    return found


KEPT_OVERLAP = 0.5  # content words a new item shares with a removed one for it to be that item, kept


def _items_removed(ctx: CheckContext) -> int:
    """Characters of the Action Items HEAD held that the change removes: the lifecycle's "mark completed items
    done … remove items that resolved", set aside as archived patterns are (twelve items finished and taken out
    in one wrap are no over-compression). An item ticked in this wrap and removed in it is gone from both
    versions alike, so the gate cannot tell it from one dropped: every item that is gone is set aside, and one
    moved or reworded (most of its words kept) still counts, and only what the section lost on balance."""
    before = ctx.old.find(ACTIONS)
    section = ctx.new.find(ACTIONS)
    if before is None or (section is not None and ctx.same_body(before, section)):
        return 0
    from flowgit.checks.compression import normalise
    from flowgit.words import content_words

    # (kept anywhere in the file: items moved into another section are not gone, and make no room)
    texts = [text for sec in ctx.new.sections for text in ctx.new.facts(sec).columns.texts]
    kept = {normalise(text) for text in texts}
    kept_words = [content_words(text) for text in kept]  # (an item is kept where most of its words are)
    facts = ctx.old.facts(before)
    removed = 0
    for item in facts.items:
        said = normalise(item.text)  # (bullet, marks and lifecycle fields aside: re-bulleted is kept)
        words = content_words(said)
        if said in kept or (words and any(len(words & other) / len(words) >= KEPT_OVERLAP for other in kept_words)):
            continue  # still there, moved or reworded: only what is gone is set aside
        removed += sum(len(ctx.old.lines[before.body_start + n]) for n in range(item.start, item.end))
    # Only what the section lost on balance: items swapped for new ones of the same size make no room for a
    # cut elsewhere (the resolved ones go, the section stays the size it was).
    was = sum(map(len, ctx.old.lines[before.body_start:before.body_end]))
    now = sum(map(len, ctx.new.lines[section.body_start:section.body_end])) if section is not None else 0
    return min(removed, max(0, was - now))


def state_chars(doc: Document) -> int | None:
    sec = doc.find("Current State")
    if sec is None:
        return None
    return doc.facts(sec).derived("size.content_chars", _content_chars)  # type: ignore[return-value]


def _content_chars(facts) -> int:
    """Characters of the body's content lines (endings aside): read from the body alone, so remembered."""
    return sum(len(ln.rstrip("\r\n")) for ln in facts.body if not is_structural_line(ln))


def developing_lines(doc: Document) -> int | None:
    sec = doc.find("Developing Knowledge")
    if sec is None:
        return None
    return doc.facts(sec).derived("size.content_lines", _content_lines)  # type: ignore[return-value]


def _content_lines(facts) -> int:
    """Content lines outside fences that are not blank, comments or tags: read from the body alone."""
    return sum(1 for offset in facts.content if not is_structural_line(facts.body[offset]))


def budgets(ctx: CheckContext) -> Iterator[Finding]:
    b = ctx.cfg.budgets
    measures = [
        ("G502", "State", state_chars, b.state_chars_target, b.state_chars_max, "characters",
         "move history out of State into Recent Context"),
        ("G503", "Developing Knowledge", developing_lines, b.developing_lines_target, b.developing_lines_max,
         "lines", "archive stale patterns, graduate or merge the rest"),
        ("G504", "the file", lambda d: len(d.text), b.file_chars_target, b.file_chars_max, "characters",
         "archive stale patterns (temporal cleanup) before cutting content"),
    ]
    for code, what, measure, target, hard, unit, fix in measures:
        value = measure(ctx.new)
        if value is None or value <= target:
            continue
        before = measure(ctx.old) if ctx.old else None
        worse = before is None or value > before or before <= hard
        severity = "error" if value > hard and worse else "warning"
        limit = hard if value > hard else target
        yield Finding(code, "size-budget", severity, ctx.path, None,
                      f"{what} is {value:,} {unit}, over the {'limit' if value > hard else 'target'} of {limit:,}",
                      fix)
    lines = len(ctx.new.lines)
    if lines > b.file_lines_target:
        yield Finding("G505", "size-budget", "warning", ctx.path, None,
                      f"the file is {lines} lines, over the ~{b.file_lines_target}-line target",
                      "archive stale patterns (temporal cleanup)")
