"""Gate rules for section semantics: replace, rewrite, and the protected zones."""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterator

from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding
from flowgit.continuity.document import is_structural
from flowgit.continuity.sections import PROVEN, Semantics

WORD_RE = re.compile(r"\w+")


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
    return tuple(" ".join(ln.split()) for ln in facts.body if not is_structural(ln))


def appended(ctx: CheckContext, before, section) -> bool:
    """The staged section is the old one (near word for word, one tweak allowed) plus new text.

    One short line kept verbatim (the momentum pointer the protocol asks for)
    is left out of the old text first.
    """
    old_lines, new_lines = _body_lines(ctx.old, before), _body_lines(ctx.new, section)
    kept = [ln for ln in old_lines if ln in new_lines and len(ln.split()) <= POINTER_WORDS]
    if kept and len(old_lines) > 1:
        old_lines = [ln for ln in old_lines if ln != kept[0]]
        new_lines = [ln for ln in new_lines if ln != kept[0]]
    old_words, new_words = _words(" ".join(old_lines)), _words(" ".join(new_lines))
    if len(old_words) < MIN_ADDED or len(new_words) < len(old_words) + MIN_ADDED:
        return False
    return retained(old_words, new_words) >= RETAINED


def append_not_replace(ctx: CheckContext) -> Iterator[Finding]:
    """State / Top of Mind that keep every old item and add more were appended to, not replaced."""
    for before, section in ctx.changed_pairs(Semantics.REPLACE):  # the same body adds nothing
        old = [i.text for i in ctx.old.items(before)]
        new = [i.text for i in ctx.new.items(section)]
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


def append_not_rewrite(ctx: CheckContext) -> Iterator[Finding]:
    """Recent Context that keeps the old narrative (a word tweaked at most) plus new text was appended to."""
    for before, section in ctx.changed_pairs(Semantics.REWRITE):  # the same body is the same prose
        old, new = _prose(ctx.old, before), _prose(ctx.new, section)
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
