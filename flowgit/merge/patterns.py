"""Patterns merged by identity: which line each pattern ends up as, and in which section.

Identity follows the gate: names compare after NFKC and case folding, and a
rename (a new name with the same description, or carrying all the old
evidence) is the same pattern. For each identity the three versions (base,
ours, theirs) decide:

* changed on one side only: that side's line;
* archived on one side, changed on the other: the changed line (a pattern that
  fired again is not stale; nothing is lost);
* archived on one side, untouched on the other: archived, unless the other
  side's episodes recorded since the base are about it (as G104 reads evidence):
  it fired there, so it is not stale, and it is kept with a note;
* a demotion (out of Proven) on one side against any change on the other: the
  demotion, with both sides' notes and the evidence of both; a Developing pattern
  lowered a level is no demotion and is ranked with the rest, with a note;
* otherwise (both raised, both added, both edited): the higher level whose
  evidence, the union of both lists, holds against the merged store; if the
  higher does not hold, the lower with the same union (if that holds) or as it
  stood. A rename on either side keeps its new name.

A pattern's item is its line and the lines under it that continue it
(:mod:`flowgit.continuity.attached`): a reader reads them as part of its claim,
so they merge with it and go where it goes. Changed on one side, that side's;
on both, the newer wrap's then the other's new ones. A raised pattern keeps the
lines its chosen side had: its evidence was recorded for that claim, and the
other wrap's lines, written for a claim at 1x, stay in their commit (a note).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from flowgit.config import Thresholds
from flowgit.continuity.document import Document, strip_eol
from flowgit.continuity.identity import is_rename
from flowgit.continuity.patterns import DEFAULT_CATEGORY, Pattern, derivation_note_match, iter_patterns
from flowgit.continuity.sections import PROVEN
from flowgit.episodes import Episode
from flowgit.evidence import Weight, assess, everyday_weight, records_it

PROVEN_KEY = PROVEN.casefold()
Lookup = Callable[[list[str]], Mapping[str, Episode]]


def identity_of(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold()


@dataclass(frozen=True)
class Placed:
    """A pattern line as one side has it: the pattern, its section key, its line index."""

    pattern: Pattern
    section: str
    line: int
    attached: tuple[str, ...] = ()  # the lines under it that continue its item, as written (no line endings)

    @property
    def proven(self) -> bool:
        return self.section == PROVEN_KEY

    def same(self, other: "Placed | None") -> bool:
        return other is not None and other.section == self.section and \
            self.pattern.render() == other.pattern.render() and self.attached == other.attached


@dataclass(frozen=True)
class Resolved:
    """Where a pattern ends up: its section key and the line's text (no line ending)."""

    section: str
    text: str
    note: str = ""
    attached: tuple[str, ...] = ()  # the lines written under it (those that continue its item)


@dataclass(frozen=True)
class SinceBase:
    """What each side's store recorded since the base, and the merged store's word weights: a pattern one
    side archived as stale that the other side's new episodes are about fired there this session."""

    ours: Sequence[Episode] = ()
    theirs: Sequence[Episode] = ()
    weight: Weight = everyday_weight
    theirs_unknown: bool = False  # no commit holds the other side (a stash popped): its episodes cannot be looked up

    def fired(self, side: str, p: Pattern, thresholds: Thresholds) -> list[str]:
        """Ids of ``side``'s new episodes about ``p``, by G104's reading (:func:`records_it`), as the wrap's
        cleanup reads "fired this session"."""
        episodes = self.ours if side == "ours" else self.theirs
        return [e.id for e in episodes if records_it(e, p.name, p.text, thresholds, self.weight)]


def placed_patterns(doc: Document, section_of: Callable[[int], str | None]) -> dict[str, Placed]:
    """Patterns by identity (first occurrence), with the key of the section they stand in.

    ``section_of`` maps a line index to its section key, or None for lines the
    pattern merge does not own (sections merged whole).
    """
    from flowgit.continuity.attached import attached_span

    found: dict[str, Placed] = {}
    for at in iter_patterns(doc):
        key = section_of(at.line)
        if key is not None and identity_of(at.pattern.name) not in found:
            under = tuple(strip_eol(line) for line in doc.lines[at.line + 1:attached_span(doc, at.line)])
            found[identity_of(at.pattern.name)] = Placed(at.pattern, key, at.line, under)
    return found


def side_identities(base: Mapping[str, Placed], side: Mapping[str, Placed]) -> dict[str, Placed]:
    """The side's patterns re-keyed by base identity where the side renamed one."""
    gone = {k: v for k, v in base.items() if k not in side}
    out: dict[str, Placed] = {}
    for key, at in side.items():
        if key in base:
            out.setdefault(key, at)
            continue
        source = next((k for k, b in gone.items() if is_rename(b.pattern, at.pattern)), None)
        if source is not None:
            gone.pop(source)
            out[source] = at
        else:
            out.setdefault(key, at)
    return out


class PatternMerge:
    """Decides every pattern identity once, for the whole document."""

    def __init__(self, base: Mapping[str, Placed], ours: Mapping[str, Placed], theirs: Mapping[str, Placed],
                 lookup: Lookup, thresholds: Thresholds, newer: str, since_base: SinceBase | None = None) -> None:
        self.base, self.ours, self.theirs = base, side_identities(base, ours), side_identities(base, theirs)
        self.lookup, self.thresholds, self.newer = lookup, thresholds, newer
        self.since_base = since_base or SinceBase()
        self.notes: list[str] = []
        self.resolved: dict[str, Resolved | None] = {}
        for key in dict.fromkeys([*self.ours, *self.theirs]):
            self.resolved[key] = self._resolve(key)

    def line_identities(self, side: str) -> dict[int, str]:
        """Line index -> the identity that side's pattern line merges under."""
        table = {"ours": self.ours, "theirs": self.theirs, "base": self.base}[side]
        return {at.line: ident for ident, at in table.items()}

    # ------------------------------------------------------------------ rules
    def _resolve(self, key: str) -> Resolved | None:
        b, o, t = self.base.get(key), self.ours.get(key), self.theirs.get(key)
        if o is None or t is None:
            present = o or t
            if b is not None and present.same(b):
                return self._archived_unless_fired("ours" if o is not None else "theirs", present)
            if b is not None:
                self.notes.append(f"`{present.pattern.name}` was archived on one side and changed on the "
                                  "other: kept as changed")
            return Resolved(present.section, present.pattern.render(), attached=present.attached)
        if o.same(t) or t.same(b):
            return Resolved(o.section, o.pattern.render(), attached=o.attached)
        if o.same(b):
            return Resolved(t.section, t.pattern.render(), attached=t.attached)
        return self._both_changed(b, o, t)

    def _archived_unless_fired(self, side: str, present: Placed) -> Resolved | None:
        """Archived on one side, untouched on ``side``: archived (None), unless ``side`` recorded episodes
        about it since the base. Its wrap kept it because it fired there; the archiving wrap could not see
        them. Kept, and said: nothing leaves or stays silently in a merge."""
        ids = self.since_base.fired(side, present.pattern, self.thresholds)
        if not ids:
            return None
        self.notes.append(f"`{present.pattern.name}` was archived on one side, but the other side's episodes "
                          f"since the base are about it ({', '.join(ids)}): it fired there, so it is not stale; "
                          "kept (archive it in a later wrap if it no longer holds)")
        return Resolved(present.section, present.pattern.render(), attached=present.attached)

    def _demoted(self, b: Placed | None, x: Placed) -> bool:
        """Whether side ``x`` demoted the pattern: took it out of Proven (the gate asks a demotion for a reason
        and an independent contradiction). A Developing pattern lowered a level is no demotion (nothing
        contradicted it): against a raise on the other side, the higher level whose evidence holds is kept."""
        return b is not None and b.proven and not x.proven

    @staticmethod
    def _lowered(b: Placed | None, x: Placed) -> bool:
        return b is not None and not x.proven and x.pattern.level < b.pattern.level

    def _name(self, b: Placed | None, chosen: Placed, other: Placed) -> str:
        """A rename on either side wins over the base name."""
        if b is not None and chosen.pattern.name == b.pattern.name and other.pattern.name != b.pattern.name:
            return other.pattern.name
        return chosen.pattern.name

    def _both_changed(self, b: Placed | None, o: Placed, t: Placed) -> Resolved:
        evidence = tuple(dict.fromkeys((*o.pattern.evidence, *t.pattern.evidence)))
        d_o, d_t = self._demoted(b, o), self._demoted(b, t)
        if d_o != d_t:
            chosen, other = (o, t) if d_o else (t, o)
            notes = tuple(dict.fromkeys((*chosen.pattern.notes, *other.pattern.notes)))
            return self._build(chosen, other, b, tuple(dict.fromkeys((*chosen.pattern.evidence, *evidence))),
                               notes)
        first, second = (o, t) if self.newer == "ours" else (t, o)
        ranked = sorted((first, second), key=lambda x: (x.proven, x.pattern.level), reverse=True)
        for cand in ranked:
            union = tuple(dict.fromkeys((*cand.pattern.evidence, *evidence)))
            if self._holds(cand, union):
                other = second if cand is first else first
                if self._lowered(b, other) and not self._lowered(b, cand):
                    self.notes.append(f"`{cand.pattern.name}`: one wrap lowered it to {other.pattern.level}x, the "
                                      f"other raised it on evidence that holds; kept the raise (lower it again in "
                                      "a later wrap if it no longer holds)")
                return self._build(cand, other, b, union, None)
        low, high = ranked[1], ranked[0]
        if self.since_base.theirs_unknown:  # the other side's episodes cannot be looked up: a citation is not
            union = tuple(dict.fromkeys((*high.pattern.evidence, *evidence)))  # dropped for that
            self.notes.append(f"`{high.pattern.name}`: the other side's episodes could not be looked up (no commit "
                              "holds them); both sides' citations are kept, and the gate judges them when this is "
                              "committed")
            return self._build(high, low, b, union, None)
        self.notes.append(f"`{low.pattern.name}`: the evidence for {high.pattern.level}x does not hold against "
                          f"the merged store; kept at {low.pattern.level}x")
        return self._build(low, high, b, low.pattern.evidence, None)

    def _holds(self, cand: Placed, evidence: tuple[str, ...]) -> bool:
        p = cand.pattern
        if p.level < 2 and not cand.proven:
            return True
        verdict = assess(p.name, p.text, p.level, evidence, self.lookup(list(evidence)), self.thresholds,
                         in_proven=cand.proven)
        return verdict.ok

    def _build(self, chosen: Placed, other: Placed, b: Placed | None, evidence: tuple[str, ...],
               notes: tuple[str, ...] | None) -> Resolved:
        p = chosen.pattern
        name = self._name(b, chosen, other)
        said = other.pattern.text
        if said != p.text and (b is None or said != b.pattern.text):  # the other wrap's own wording goes
            self.notes.append(f"`{name}`: both wraps wrote it, in different words; kept \"{p.text}\", the "
                              f"other said \"{said}\" (its commit keeps it)")
        links = tuple(dict.fromkeys((*p.links, *other.pattern.links)))
        if notes is None:  # the chosen side's notes, and the other wrap's re-check marks (a demotion it saw)
            notes = tuple(dict.fromkeys((*p.notes, *(n for n in other.pattern.notes
                                                      if derivation_note_match(n)))))
        category = p.category
        if category in ("", DEFAULT_CATEGORY) and other.pattern.category not in ("", DEFAULT_CATEGORY) \
                and p.level > 1:
            category = other.pattern.category  # a category someone chose wins over the wrap's default
        under = self._attached(name, chosen, other, b)
        if (name, evidence, links, notes, category) == (p.name, p.evidence, p.links, p.notes, p.category):
            return Resolved(chosen.section, p.render(), attached=under)
        merged = p.changed(name=name, evidence=evidence, links=links, notes=notes, category=category)
        for side in (chosen, other):  # byte-exact when one side already says exactly this
            if side.section == chosen.section and side.pattern.changed() == merged:
                return Resolved(chosen.section, side.pattern.render(), attached=under)
        return Resolved(chosen.section, merged.render(), attached=under)

    def _attached(self, name: str, chosen: Placed, other: Placed, b: Placed | None) -> tuple[str, ...]:
        """The lines under the merged pattern: changed on one side, that side's; on both, the chosen side's
        then the other's new ones. A raised result keeps the chosen side's: the gate holds a raised pattern
        to the claim its evidence was recorded for (G209), lines and all."""
        mine, theirs = chosen.attached, other.attached
        if theirs == mine or (b is not None and theirs == b.attached):
            return mine
        if b is not None and mine == b.attached:
            merged = theirs
        else:
            merged = mine + tuple(line for line in theirs if line not in mine)
        if merged != mine and (chosen.proven or chosen.pattern.level >= 2):
            self.notes.append(f"`{name}`: the other wrap changed the lines under it; kept this wrap's, as its "
                              f"{chosen.pattern.level}x rests on evidence recorded for them (the other's "
                              "commit keeps its lines)")
            return mine
        return merged
