"""A merge keeps every pattern a branch added or changed (G707), as it keeps every episode (G704).

Judged against each parent alone, a merge result that takes one side's continuity file whole (a
`git checkout --theirs CONTINUITY.md` after a conflict, a clone without the merge driver) reads as an
archival against the other side and as nothing against the side it copied: every per-parent rule passes,
and a pattern one branch added, raised or re-worded since the two histories parted is gone with no
`Archived:` trailer and no event in `flowgit log`. The merge driver never does this (patterns merge by
identity); a merge that means to archive one does it in a commit of its own.

A pattern the side left exactly as the merge base had it is not that side's work: another branch may have
archived it, and the merge taking that archival is a merge, not a loss.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Mapping

from flowgit.changes import ARCHIVED, diff_pattern_maps
from flowgit.checks.finding import Finding

if TYPE_CHECKING:
    from flowgit.checks.judge import Side
    from flowgit.config import Config
    from flowgit.continuity.patterns import PatternAt


def merge_lost_patterns(cfg: "Config", parents: "list[Side]", new: "Side", base: "Side | None"
                        ) -> Iterator[Finding]:
    """G707 for each pattern a parent added or changed since ``base`` (None: no shared history, so every
    pattern is that parent's) that the result no longer holds under any name."""
    from flowgit.continuity.identity import name_key

    if new.continuity is None:
        return
    result_doc = _document(cfg, new)
    result, held_as = _by_name(result_doc), _by_identity(result_doc)
    was = _by_identity(_document(cfg, base)) if base is not None and base.continuity is not None else {}
    seen: set[str] = set()
    for side in parents:
        if side.continuity is None:
            continue
        mine = _by_name(_document(cfg, side))
        for event in diff_pattern_maps(mine, result):
            key = name_key(event.name)
            if event.kind != ARCHIVED or key in seen or key in held_as:
                continue  # (held under another spelling of its name: one pattern, the merge kept one wording)
            held, before = mine[event.name], was.get(key)
            if before is not None and before.pattern.raw.strip() == held.pattern.raw.strip():
                continue  # as the base had it: another branch archived it, and the merge takes that
            seen.add(key)
            what = "added" if before is None else "changed"
            yield Finding("G707", "merge-keeps-patterns", "error", new.continuity_path, None,
                          f"the merge drops `{event.name}`, which {_parent(side)} {what} since "
                          f"the branches parted ({held.pattern.level}x in {held.section}): a merge keeps both "
                          "sides' patterns",
                          "take the pattern's line back from that parent (the flowgit merge driver, which "
                          "`flowgit init` sets up, merges patterns by identity); archive it, if it should go, "
                          "in a commit of its own after the merge")


def merge_lowered_patterns(cfg: "Config", parents: "list[Side]", new: "Side", base: "Side | None"
                           ) -> Iterator[Finding]:
    """G707 for a raise one parent made since ``base`` that the result undoes while every other parent holds the
    pattern as the base did: its level back down, or the evidence it cited for the raise gone (`git merge -s
    ours`, a side's file taken whole). Where another parent changed the pattern too, the two changes meet in
    the merge, and the per-parent rules judge what it made of them."""
    if new.continuity is None or base is None or base.continuity is None:
        return
    result = _by_identity(_document(cfg, new))  # (by identity: `Breaker` is `breaker`)
    was = _by_identity(_document(cfg, base))
    holding = [(side, _by_identity(_document(cfg, side))) for side in parents if side.continuity is not None]
    for side, mine in holding:
        for key, held in mine.items():
            name = held.pattern.name
            now, before = result.get(key), was.get(key)
            if now is None or before is None or _raw(before) == _raw(held) or _raw(now) == _raw(held):
                continue  # (gone: G707 above; new on the side; the side's own version kept)
            if any(other is not side and _raw(theirs.get(key)) != _raw(before) for other, theirs in holding):
                continue  # another parent changed it too
            raised = _rank(held) > _rank(before)
            lost = [i for i in held.pattern.evidence if i not in before.pattern.evidence
                    and i not in now.pattern.evidence]
            if (raised and _rank(now) < _rank(held)) or lost:
                what = (f"back to {now.pattern.level}x" if raised and _rank(now) < _rank(held) else
                        f"without {', '.join(lost[:3])}")
                yield Finding("G707", "merge-keeps-patterns", "error", new.continuity_path, now.lineno,
                              f"the merge takes `{name}` {what}, undoing what {_parent(side)} "
                              f"recorded since the branches parted ({held.pattern.level}x in {held.section}, "
                              f"evidence {', '.join(held.pattern.evidence) or 'none'}): a merge keeps both sides' "
                              "patterns as each left them", "take the pattern's line from that parent (the flowgit "
                              "merge driver merges patterns by identity); lower it, if it should be, in a wrap of "
                              "its own after the merge")


def _parent(side: "Side") -> str:
    """"parent 1a2b3c4d5e", or "one side" where the side is no commit yet (the merge driver judging its files)."""
    return f"parent {side.commit[:10]}" if side.commit else "one side"


def _raw(at: "PatternAt | None") -> str | None:
    return None if at is None else at.pattern.raw.strip()


def _rank(at: "PatternAt") -> int:
    """A pattern's standing: its level, or 3 in Proven (as the gate reads it)."""
    from flowgit.continuity.sections import PROVEN

    return 3 if at.section == PROVEN else at.pattern.level


def _document(cfg: "Config", side: "Side"):
    """The side's continuity file as the gate reads a base (None where it cannot be read)."""
    from flowgit.checks.judge import _base_document

    return _base_document(cfg, side.continuity or b"", side.continuity_path)[0]


def _by_name(doc) -> "Mapping[str, PatternAt]":
    from flowgit.continuity.patterns import pattern_map

    return pattern_map(doc) if doc is not None else {}


def _by_identity(doc) -> "Mapping[str, PatternAt]":
    """Patterns by identity (:func:`~flowgit.continuity.identity.name_key`: NFKC, case folded), as the merge
    driver and the gate's names rules know a pattern."""
    from flowgit.continuity.patterns import document_identity_map

    return document_identity_map(doc) if doc is not None else {}
