"""Gate rules for section semantics: replace, rewrite, and the protected zones."""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Iterator

from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding
from flowgit.continuity.document import COMMENT_RE, is_structural
from flowgit.continuity.sections import PROVEN, Semantics

WORD_RE = re.compile(r"\w+")
COMMENT_MARKUP_RE = re.compile(r"^\s*#+|<!--|-->")
MERGE_NOTE_LINES = ("# flowgit merge:", "# Absorb what still matters", "# | ")  # flowgit.merge.continuity's note


RETAINED = 0.8      # share of the old text's words kept, in order, that makes a longer section an append
MIN_ADDED = 4       # words added beyond the old text
POINTER_WORDS = 30  # a kept line this short is a momentum pointer, not the old narrative


def _words(text: str) -> list[str]:
    return [w.casefold() for w in WORD_RE.findall(text)]


def retained(old: list[str], new: list[str]) -> float:
    """Share of ``old``'s words found in ``new`` in the same order (a tweaked word barely lowers it)."""
    if not old:
        return 0.0
    from difflib import SequenceMatcher

    matcher = SequenceMatcher(None, old, new, autojunk=False)
    return sum(b.size for b in matcher.get_matching_blocks()) / len(old)


def _body_lines(doc, section) -> tuple[str, ...]:
    """The body's content lines with spacing collapsed, remembered with the body (it reads nothing else)."""
    return doc.facts(section).derived("semantics.body_lines", _content_lines)  # type: ignore[return-value]


def _content_lines(facts) -> tuple[str, ...]:
    return tuple(line for line in map(_content_line, facts.body) if line is not None)


@lru_cache(maxsize=1 << 12)
def _content_line(line: str) -> str | None:
    """A body line with its spacing collapsed, or None for scaffolding (remembered: most lines of a section
    rewritten each wrap are the last version's)."""
    return None if is_structural(line) else " ".join(line.split())


def _line_words(doc, section) -> tuple[tuple[str, ...], ...]:
    """The words of each of :func:`_body_lines` (case-folded), remembered with the body.

    A word never spans the space that joins two lines, so the words of lines
    joined are these, one line's after another's.
    """
    return doc.facts(section).derived("semantics.line_words", _words_of_lines)  # type: ignore[return-value]


def _words_of_lines(facts) -> tuple[tuple[str, ...], ...]:
    return tuple(map(_words_of_line, facts.derived("semantics.body_lines", _content_lines)))


@lru_cache(maxsize=1 << 12)
def _words_of_line(line: str) -> tuple[str, ...]:
    return tuple(_words(line))


def _commented_in(ctx: CheckContext, before, section) -> dict[int, str]:
    """Comment lines (``# …``, ``<!-- … -->``) the staged body adds, by body offset, with the markup taken off.

    A section's guidance comments are carried over from HEAD's body as they
    are; a comment line HEAD's body lacks holds text someone wrote this time,
    often the old State or narrative turned into comments to keep it. The
    replace and rewrite rules read such lines as content: kept text is kept,
    whatever it is wrapped in.
    """
    key = ("semantics.commented", section)
    found = ctx.memo.get(key)
    if found is None:
        found = ctx.memo[key] = _comment_lines_added(_comment_lines(ctx.old.facts(before)),
                                                     _comment_lines(ctx.new.facts(section)), merge_note=ctx.merging)
    return found


def _comment_lines(facts) -> tuple[tuple[int, str], ...]:
    """(offset, line) of each comment line of a body, remembered with it (most bodies hold one or none)."""
    return facts.derived("semantics.comment_lines", _find_comment_lines)  # type: ignore[return-value]


def _find_comment_lines(facts) -> tuple[tuple[int, str], ...]:
    return tuple((offset, line) for offset, line in enumerate(facts.body) if COMMENT_RE.match(line))


def _comment_lines_added(old: tuple[tuple[int, str], ...], new: tuple[tuple[int, str], ...], *,
                         merge_note: bool) -> dict[int, str]:
    """See :func:`_commented_in` (a comment line is one in either body alike, so the old body's comment
    lines are all a new one is looked for among). In a merge result, the note the merge driver writes when
    both wraps replaced the section (the other wrap's text quoted as ``# | `` lines, to absorb in the next
    wrap) is the merge's record, not text kept: it is passed over there, and only there."""
    if not new:
        return {}
    held = {line for _, line in old}
    out: dict[int, str] = {}
    for offset, line in new:
        if line in held or (merge_note and line.startswith(MERGE_NOTE_LINES)):
            continue
        text = " ".join(COMMENT_MARKUP_RE.sub(" ", line).split())
        if text:
            out[offset] = text
    return out


def _new_content(ctx: CheckContext, before, section) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """(content lines, their words) of the staged body, comment lines it adds included (see above)."""
    lines, words = _body_lines(ctx.new, section), _line_words(ctx.new, section)
    commented = _commented_in(ctx, before, section)
    if not commented:
        return lines, words
    body = ctx.new.facts(section).body
    out = []
    for offset, line in enumerate(body):
        text = commented.get(offset)
        if text is None:
            text = _content_line(line)
        if text is not None:
            out.append(text)
    return tuple(out), tuple(map(_words_of_line, out))


def appended(ctx: CheckContext, before, section) -> bool:
    """The staged section is the old one (near word for word, one tweak allowed) plus new text.

    One short line kept verbatim (the momentum pointer the protocol asks for)
    is left out of the old text first. The words are counted before they are
    compared: a section that did not grow by :data:`MIN_ADDED` words is no append.
    """
    old_lines, old_words = _body_lines(ctx.old, before), _line_words(ctx.old, before)
    new_lines, new_words = _new_content(ctx, before, section)
    pointer = next((ln for ln in old_lines if ln in new_lines and len(ln.split()) <= POINTER_WORDS), None)
    if pointer is not None and len(old_lines) > 1:
        old_words = tuple(w for ln, w in zip(old_lines, old_words) if ln != pointer)
        new_words = tuple(w for ln, w in zip(new_lines, new_words) if ln != pointer)
    old_count, new_count = sum(map(len, old_words)), sum(map(len, new_words))
    if old_count < MIN_ADDED or new_count < old_count + MIN_ADDED:
        return False
    return retained([w for ws in old_words for w in ws], [w for ws in new_words for w in ws]) >= RETAINED


def append_not_replace(ctx: CheckContext) -> Iterator[Finding]:
    """State / Top of Mind that keep every old item and add more were appended to, not replaced."""
    for before, section in ctx.changed_pairs(Semantics.REPLACE):  # the same body adds nothing
        old = ctx.old.facts(before).columns.texts
        new = ctx.new.facts(section).columns.texts + tuple(_commented_in(ctx, before, section).values())
        kept_all = old and len(new) > len(old) and not (Counter(old) - Counter(new))
        if kept_all or (section.label != "Top of Mind" and appended(ctx, before, section)):
            what = (f"kept all {len(old)} old item(s) and added {len(new) - len(old)}" if kept_all else
                    "kept the old text (near word for word) and added to it")
            yield Finding("G302", "append-not-replace", "error", ctx.path, section.heading + 1,
                          f"{section.label} {what}: it is REPLACED each wrap, not appended to",
                          f"rewrite {section.label} as what is true now; move what still matters from the old "
                          "text into Recent Context")


def _prose(ctx_doc, section) -> str:
    lines = [ln for ln in ctx_doc.lines[section.body_start:section.body_end] if not is_structural(ln)]
    return " ".join(" ".join(lines).split())


def _new_prose(ctx: CheckContext, before, section) -> str:
    """:func:`_prose` of the staged section, comment lines it adds included (see :func:`_commented_in`)."""
    if not _commented_in(ctx, before, section):
        return _prose(ctx.new, section)
    return " ".join(_new_content(ctx, before, section)[0])


def append_not_rewrite(ctx: CheckContext) -> Iterator[Finding]:
    """Recent Context that keeps the old narrative (a word tweaked at most) plus new text was appended to."""
    for before, section in ctx.changed_pairs(Semantics.REWRITE):  # the same body is the same prose
        old, new = _prose(ctx.old, before), _new_prose(ctx, before, section)
        if old and new != old and (old in new or appended(ctx, before, section)):
            yield Finding("G303", "append-not-rewrite", "error", ctx.path, section.heading + 1,
                          f"{section.label} contains the old narrative word for word plus new text: "
                          "it is REWRITTEN each wrap as one shape, never appended to",
                          "rewrite it as compressed prose: fold the old narrative into a short momentum "
                          "pointer, or drop what was absorbed elsewhere")


def protected_evidence(ctx: CheckContext) -> Iterator[Finding]:
    """A Proven pattern's [evidence: …] may not be dropped or altered except by demotion or archival."""
    for name, before, now in ctx.old_pattern_changes:  # a pattern left as it was keeps its evidence
        if before.section != PROVEN or not before.pattern.evidence:
            continue
        if now is None:
            continue  # archived: git keeps its text, the wrap records it
        if now.section != PROVEN:
            continue  # demotion: judged by identity_rules.proven_leaves_properly
        dropped = [i for i in before.pattern.evidence if i not in now.pattern.evidence]
        if dropped:
            yield Finding("G401", "protected-evidence", "error", ctx.path, now.lineno,
                          f"`{name}` is Proven and its evidence annotation lost {', '.join(dropped)}",
                          "evidence on graduated patterns is the audit trail: restore it, or demote/archive "
                          "the pattern with a reason")
