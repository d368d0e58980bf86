"""A merge note belongs only where both branches replaced the section (G304, judged from the merge base).

The merge driver takes a REPLACE or REWRITE section (State, Top of Mind,
Recent Context) whole from the newer wrap and quotes the other wrap's text
under it as ``# flowgit merge:`` note lines, for the next wrap to absorb, but
only when *both* branches replaced it since they parted. When one branch left
the section as the merge base had it, git and the driver alike take the other
branch's text, and no note is written.

Judged against each parent alone, a hand-written note in that case passes:
every line it quotes is text a parent holds. Yet it is the way to append in
two commits: merge any code-only branch, keep the base's old State as the
content and quote the current State as if another wrap had written it; the
next commit writes the new State plus the quoted one, read as the note
absorbed. So a note line no parent holds, in a section that a parent left as
every best merge base had it, is refused. Where the bases disagree on the
section (a criss-cross merge whose bases each replaced it), the driver's own
virtual base is not known here, and the note is judged by the per-parent rules
alone: a refusal there could be wrong.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator, Sequence

from flowgit.checks.finding import Finding
from flowgit.continuity.sections import Semantics
from flowgit.merge.notes import NOTE_LINES

if TYPE_CHECKING:
    from flowgit.checks.judge import Side
    from flowgit.config import Config
    from flowgit.continuity.document import Document

WHOLE = {Semantics.REPLACE: "append-not-replace", Semantics.REWRITE: "append-not-rewrite"}  # -> the rule's name


def one_sided_merge_notes(cfg: "Config", parents: "Sequence[Side]", new: "Side",
                          bases: "Callable[[], list[Document | None]]") -> Iterator[Finding]:
    """G304 for each merge-note line of a two-parent merge that no parent holds, in a section one parent left
    as every best merge base had it (``bases``: their documents, asked for only when a note is met, as
    finding the other best bases may start git)."""
    docs = _documents(cfg, parents, new)
    if docs is None:
        return
    result, sides = docs
    base_docs: list | None = None
    for section in result.sections:
        rule = WHOLE.get(section.semantics)  # type: ignore[call-overload]
        if rule is None or cfg.rules.get(rule, "on") == "off":
            continue
        held = [_lines_of(doc, section.label) for doc in sides]
        theirs = {line.rstrip("\r\n") for lines in held if lines for line in lines}
        planted = [i for i in range(section.body_start, section.body_end) if result.lines[i].startswith(NOTE_LINES)
                   and result.lines[i].rstrip("\r\n") not in theirs]
        if not planted:
            continue
        if base_docs is None:
            base_docs = bases()
        if not base_docs or any(doc is None for doc in base_docs):
            return  # a base without the memory, or none: the branches began apart and every rule judges alone
        at_base = {_lines_of(doc, section.label) for doc in base_docs}
        if len(at_base) != 1 or None in at_base or not (set(held) & at_base):
            continue  # the bases disagree or lack it, or both branches replaced it: the driver's case for a note
        for index in planted:
            yield _finding(cfg, rule, new, section.label, index, result.lines[index])


def _finding(cfg: "Config", rule: str, new: "Side", label: str, index: int, line: str) -> Finding:
    return Finding("G304", rule, "warning" if cfg.rules.get(rule) == "warning" else "error", new.continuity_path,
                   index + 1,
                   f"{label}: a merge note where only one branch replaced the section since the branches parted: "
                   f"\"{line.strip()[:60]}\" (a merge takes that branch's text whole; the driver quotes the "
                   "other wrap's text only when both replaced it, and a quote of the kept text would be "
                   "absorbed later as an append in two commits)",
                   f"take {label} as the branch that replaced it has it, without note lines "
                   "(`git checkout --theirs` or `--ours` of the section), or let the flowgit merge driver merge it")


def _lines_of(doc: "Document", label: str) -> tuple[str, ...] | None:
    """The section's lines as the driver compares them: heading to end, exactly (None: no such section)."""
    section = doc.find(label)
    return None if section is None else tuple(doc.lines[section.heading:section.end])


def _documents(cfg: "Config", parents: "Sequence[Side]", new: "Side"):
    """(the result's document, both parents' documents), or None when this is not a two-parent merge of
    readable memories (an octopus merges in steps whose notes are not known here)."""
    from flowgit.checks.judge import _base_document

    if len(parents) != 2 or new.continuity is None or any(p.continuity is None for p in parents):
        return None
    result, _ = _base_document(cfg, new.continuity, new.continuity_path)
    sides = [_base_document(p.config or cfg, p.continuity, f"parent:{p.continuity_path}")[0] for p in parents]
    if result is None or any(doc is None for doc in sides):
        return None
    return result, sides
