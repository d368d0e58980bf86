"""Step 5's last bullet: what derives from a demoted pattern is marked for a re-check, in the file itself.

One rule for every way a demotion reaches the file (a plan's ``demote``, the same edit made by hand, a
merge that brings a derived pattern onto a demotion), so the same change makes the same commit. A pattern
derives from another through a FlowScript link: ``[<- a, b]`` derives from both, ``[<-> a]`` is mutual;
``[-> a]`` leads to ``a``, the other way round, and derives from nothing. Names compare by identity
(:func:`flowgit.continuity.identity.name_key`: ``[<- Retry_Budget]`` names ``retry_budget``).

A note is written when a derivation and a demotion first meet in the file, never again after: a note the
user removes once the re-check is done stays removed.
"""

from __future__ import annotations

import re
from typing import Iterable, NamedTuple

from flowgit.continuity.document import Document
from flowgit.continuity.identity import name_key
from flowgit.continuity.patterns import (Pattern, PatternAt, derivation_note, derivation_note_match, document_patterns,
                                        parse_pattern)
from flowgit.dates import parse_date

ARROW_RE = re.compile(r"\s*(<->|<-|->|[←→↔⟵⟶⟷])\s*")
DERIVES_FROM = frozenset({"<-", "<->", "←", "⟵", "↔", "⟷"})  # FlowScript: `<-` derives from, `<->` mutual
DEMOTED_RE = re.compile(r"demoted\b(?P<day>[^:]*):", re.IGNORECASE)


def link_names(link: str) -> tuple[str, list[str]]:
    """(arrow, names) of a link (``<- a, b`` -> ``("<-", ["a", "b"])``); ``("", [])`` for what is no link."""
    found = ARROW_RE.match(link)
    if found is None:
        return "", []
    return found[1], [n.strip() for n in link[found.end():].split(",") if n.strip()]


def derives_from(pattern: Pattern) -> list[str]:
    """The names the pattern derives from, as written: its ``<-`` and ``<->`` links (an arrow character,
    ``[← a]``, which the parser keeps as a note, reads the same)."""
    out: list[str] = []
    for link in (*pattern.links, *pattern.notes):
        arrow, names = link_names(link)
        if arrow in DERIVES_FROM:
            out += names
    return out


def demotion_day(pattern: Pattern) -> str | None:
    """The day of the pattern's last ``[demoted DAY: …]`` note as written ('' when it names no day), or None
    when it carries no demotion."""
    day = None
    for note in pattern.notes:
        found = DEMOTED_RE.match(note)
        if found is not None:
            written = found["day"].strip()
            day = written if written and parse_date(written) is not None else ""
    return day


class Recheck(NamedTuple):
    """A pattern deriving from a demoted one: where it stands, the demoted pattern's name and the day."""

    at: PatternAt
    source: str
    day: str

    @property
    def key(self) -> tuple[str, str, str]:
        return name_key(self.at.pattern.name), name_key(self.source), self.day


def rechecks(doc: Document, default_day: str) -> list[Recheck]:
    """Every pattern of ``doc`` deriving from a pattern that carries a demotion note (a day-less note is
    dated ``default_day``)."""
    demoted = {}
    for at in document_patterns(doc):
        day = demotion_day(at.pattern)
        if day is not None:
            demoted.setdefault(name_key(at.pattern.name), (at.pattern.name, day or default_day))
    if not demoted:
        return []
    out = []
    for at in document_patterns(doc):
        own = name_key(at.pattern.name)
        for key in dict.fromkeys(name_key(n) for n in derives_from(at.pattern)):
            if key in demoted and key != own:
                out.append(Recheck(at, *demoted[key]))
    return out


def annotate_dependants(doc: Document, seen: Iterable[Document | None],
                        default_day: str) -> tuple[Document, list[Recheck]]:
    """``doc`` with the re-check note on each pattern deriving from a demoted one, where no document of
    ``seen`` (HEAD for a wrap, both parents for a merge) already held that derivation of that demotion;
    and the notes written. A note for an earlier demotion of the same pattern gives way to the new one."""
    held = {r.key for old in seen if old is not None for r in rechecks(old, default_day)}
    written: list[Recheck] = []
    for r in rechecks(doc, default_day):
        if r.key in held:
            continue
        p = parse_pattern(doc.lines[r.at.line]) or r.at.pattern  # (an earlier note may have changed it)
        note = derivation_note(r.source, r.day)
        if note in p.notes:
            continue
        others = tuple(n for n in p.notes if not _notes_source(n, r.source))
        doc = doc.splice(r.at.line, r.at.line + 1, [p.changed(notes=others + (note,)).render()])
        written.append(r)
    return doc, written


def _notes_source(note: str, source: str) -> bool:
    found = derivation_note_match(note)
    return found is not None and name_key(found["name"]) == name_key(source)


def said(written: list[Recheck]) -> list[str]:
    """One sentence per demoted pattern naming what was marked for re-checking."""
    by_source: dict[str, list[str]] = {}
    for r in written:
        by_source.setdefault(r.source, []).append(r.at.pattern.name)
    return [f"`{source}` was demoted; annotated the patterns that derive from it for re-checking: "
            f"{', '.join(dict.fromkeys(names))}" for source, names in by_source.items()]


def unlink_archived(doc: Document, names: set[str]) -> Document:
    """``doc`` with the names of archived patterns taken out of the links on Proven lines (a link left empty
    goes whole): a link to a pattern is no claim, but one naming a pattern the file no longer holds reads as
    words of the proven claim, which the gate refuses (G404). Developing lines keep theirs: their claims are
    still earning evidence, and the link there says where they came from."""
    from flowgit.continuity.sections import PROVEN

    gone = {name_key(n) for n in names}
    for at in reversed(document_patterns(doc)):
        if at.section != PROVEN or not at.pattern.links:
            continue
        links = []
        for link in at.pattern.links:
            arrow, named = link_names(link)
            kept = [n for n in named if name_key(n) not in gone]
            if arrow and kept != named:
                if kept:
                    links.append(f"{arrow} {', '.join(kept)}")
                continue
            links.append(link)
        if tuple(links) != at.pattern.links:
            doc = doc.splice(at.line, at.line + 1, [at.pattern.changed(links=tuple(links)).render()])
    return doc
