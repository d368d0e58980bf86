"""Gate rules for section semantics: replace, rewrite, and the protected zones."""

from __future__ import annotations

from collections import Counter
from typing import Iterator

from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding
from flowgit.continuity.document import is_structural
from flowgit.continuity.sections import PROVEN, Semantics


def append_not_replace(ctx: CheckContext) -> Iterator[Finding]:
    """State / Top of Mind that keep every old item and add more were appended to, not replaced."""
    for before, section in ctx.section_pairs(Semantics.REPLACE):
        old = [i.text for i in ctx.old.items(before)]
        new = [i.text for i in ctx.new.items(section)]
        if old and len(new) > len(old) and not (Counter(old) - Counter(new)):
            yield Finding("G302", "append-not-replace", "error", ctx.path, section.heading + 1,
                          f"{section.label} kept all {len(old)} old item(s) and added {len(new) - len(old)}: "
                          "it is REPLACED each wrap, not appended to",
                          f"rewrite {section.label} as what is true now; move what still matters from the old "
                          "text into Recent Context")


def _prose(ctx_doc, section) -> str:
    lines = [ln for ln in ctx_doc.lines[section.body_start:section.body_end] if not is_structural(ln)]
    return " ".join(" ".join(lines).split())


def append_not_rewrite(ctx: CheckContext) -> Iterator[Finding]:
    """Recent Context that contains the old narrative verbatim plus new text was appended to."""
    for before, section in ctx.section_pairs(Semantics.REWRITE):
        old, new = _prose(ctx.old, before), _prose(ctx.new, section)
        if old and new != old and old in new:
            yield Finding("G303", "append-not-rewrite", "error", ctx.path, section.heading + 1,
                          f"{section.label} contains the old narrative word for word plus new text: "
                          "it is REWRITTEN each wrap as one shape, never appended to",
                          "rewrite it as compressed prose: fold the old narrative into a short momentum "
                          "pointer, or drop what was absorbed elsewhere")


def protected_evidence(ctx: CheckContext) -> Iterator[Finding]:
    """A Proven pattern's [evidence: …] may not be dropped or altered except by demotion or archival."""
    for name, before in ctx.old_patterns.items():
        if before.section != PROVEN or not before.pattern.evidence:
            continue
        now = ctx.new_patterns.get(name)
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
