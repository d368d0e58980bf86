"""The three-way merge of a continuity file by section semantics.

Every section is merged by what the wrap protocol says it is:

* REPLACE / REWRITE (Current State, Top of Mind, Recent Context): changed on one
  side only, that side's; replaced on both, the newer wrap's version, with the
  other kept below it as comment lines (``# | …``) for the next wrap to absorb
  — comments, so no section an agent reads first ever holds conflict markers,
  and the next wrap's REPLACE drops them;
* Developing, Proven and any other section the user keeps: line by line, keyed
  by identity (a pattern line by its pattern's identity, decided once for the
  whole file by :mod:`flowgit.merge.patterns`, other lines by their text), our
  order first and theirs inserted after the line they follow;
* Action Items: the same, keyed by item (:mod:`flowgit.merge.actions`);
* protected zones (Foundation, Partnership, Cross-Domain Discoveries) and the
  text before the first section: identical edits merge, differing edits are a
  real conflict (markers, reported).

A section neither side changed is copied byte for byte, and a section one side
changed is that side's bytes, so the result is byte-exact outside the regions
that needed merging.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from flowgit.config import Thresholds
from flowgit.continuity.attached import attached_span
from flowgit.continuity.document import COMMENT_RE, WRAPPER_RE, Document, strip_eol
from flowgit.continuity.sections import Semantics
from flowgit.merge import actions
from flowgit.merge.notes import NOTE_ABSORB, NOTE_HEAD, QUOTE
from flowgit.merge.patterns import Lookup, PatternMerge, SinceBase, placed_patterns

WHOLE_NEWER = (Semantics.REPLACE, Semantics.REWRITE)
WHOLE_CONFLICT = (Semantics.PROTECTED, None)  # None: the text before the first section
PREAMBLE = ""


def _quoted(lose: list[str], win: list[str]) -> list[str]:
    """The losing version as ``# | `` lines, flattened: an earlier note's quotes are kept once, not re-quoted.

    Lines the winning version already holds (template comments, the same
    quotes) are not repeated; the heading is quoted only if it differs.
    """
    present = {strip_eol(ln) for ln in win}
    out: list[str] = []
    for i, ln in enumerate(lose):
        text = strip_eol(ln)
        if (i == 0 and ln == win[0]) or not text.strip() or WRAPPER_RE.match(ln) or text in present:
            continue
        if text.startswith((NOTE_HEAD, NOTE_ABSORB)):
            continue
        if i > 0 and COMMENT_RE.match(ln) and not text.startswith(QUOTE):
            continue  # the section's guidance comments are the template's, not the wrap's
        quoted = text if text.startswith(QUOTE) else QUOTE + text
        if quoted not in present and quoted not in out:
            out.append(quoted)
    return out


@dataclass(frozen=True)
class Span:
    """A region of one side: the preamble or a ``##`` section, as line indices."""

    key: str
    label: str
    semantics: Semantics | None
    start: int
    end: int


@dataclass
class MergeResult:
    text: str
    conflicts: list[str] = field(default_factory=list)  # labels of sections left with conflict markers
    notes: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.conflicts

    def to_dict(self) -> dict:
        return {"clean": self.clean, "conflicts": self.conflicts, "notes": self.notes}


@dataclass(frozen=True)
class Side:
    """What the merge needs to know about a side besides its text."""

    label: str
    when: str = ""  # the wrap's date, shown in notes
    commit: str = ""  # the wrap's short id and who made it ("e1c0f9f3cc by Bob, session b1"): what a note names


def spans(doc: Document) -> list[Span]:
    """The preamble and every section, keyed by label (a repeated label gets ``#1``, ``#2`` …)."""
    first = doc.sections[0].heading if doc.sections else len(doc.lines)
    out = [Span(PREAMBLE, "the text before the first section", None, 0, first)]
    seen: Counter[str] = Counter()
    for s in doc.sections:
        base_key = s.label.casefold()
        key = base_key if not seen[base_key] else f"{base_key}#{seen[base_key]}"
        seen[base_key] += 1
        out.append(Span(key, s.label, s.semantics, s.heading, s.end))
    return out


def _owned(span_list: list[Span]) -> Callable[[int], str | None]:
    """Line index -> key of the line-merged section it is in (None for sections merged whole)."""
    table: dict[int, str] = {}
    for sp in span_list:
        if sp.semantics not in WHOLE_NEWER and sp.semantics not in WHOLE_CONFLICT:
            for i in range(sp.start, sp.end):
                table[i] = sp.key
    return table.get


class ContinuityMerge:
    """One merge: the patterns decided once for the whole file, then each section by its semantics."""

    def __init__(self, base: Document, ours: Document, theirs: Document, *, lookup: Lookup,
                 thresholds: Thresholds, newer: str, sides: tuple[Side, Side], notes: bool = True,
                 since_base: SinceBase | None = None) -> None:
        self.docs = {"base": base, "ours": ours, "theirs": theirs}
        self.spans = {name: spans(doc) for name, doc in self.docs.items()}
        self.by_key = {name: {sp.key: sp for sp in sps} for name, sps in self.spans.items()}
        placed = {name: placed_patterns(doc, _owned(self.spans[name])) for name, doc in self.docs.items()}
        self.patterns = PatternMerge(placed["base"], placed["ours"], placed["theirs"], lookup, thresholds, newer,
                                     since_base)
        self.idents = {name: self.patterns.line_identities(name) for name in self.docs}
        self.newer, self.sides = newer, {"ours": sides[0], "theirs": sides[1]}
        self.with_notes = notes  # (a merge commit: only a merge may bring a merge note, G304)
        self.nl = ours.newline
        self.result = MergeResult("", notes=self.patterns.notes)

    # --------------------------------------------------------------- driver
    def run(self) -> MergeResult:
        out: list[str] = []
        for key in self._order():
            out.extend(self._section(key))
        self.result.text = "".join(out)
        if self.result.clean:
            self._annotate_dependants()
        return self.result

    def _annotate_dependants(self) -> None:
        """Step 5 across the merge: where a derived pattern meets a demotion neither side held it with (one
        side demoted, the other added `[<- it]`), the re-check note the wrap writes, as it would write it."""
        from flowgit.continuity.derivation import annotate_dependants, said
        from flowgit.dates import today

        ours, theirs = self.docs["ours"], self.docs["theirs"]
        day = self.sides[self.newer].when or today().isoformat()
        merged, written = annotate_dependants(Document.parse(self.result.text, aliases=ours.aliases),
                                              [ours, theirs], day)
        if written:
            self.result.text = merged.text
            self.result.notes.extend(said(written))

    def _lines(self, side: str, key: str) -> list[str] | None:
        sp = self.by_key[side].get(key)
        return None if sp is None else self.docs[side].lines[sp.start:sp.end]

    def _order(self) -> list[str]:
        """Our sections in our order; sections only theirs has, after the one they follow there."""
        order = [sp.key for sp in self.spans["ours"]]
        for i, sp in enumerate(self.spans["theirs"]):
            if sp.key in order:
                continue
            before = [p.key for p in self.spans["theirs"][:i] if p.key in order]
            order.insert(order.index(before[-1]) + 1 if before else 0, sp.key)
        return order

    def _semantics(self, key: str) -> tuple[Semantics | None, str]:
        for side in ("ours", "theirs", "base"):
            sp = self.by_key[side].get(key)
            if sp is not None:
                return sp.semantics, sp.label
        return None, key

    # -------------------------------------------------------------- sections
    def _section(self, key: str) -> list[str]:
        b, o, t = (self._lines(s, key) for s in ("base", "ours", "theirs"))
        semantics, label = self._semantics(key)
        whole = semantics in WHOLE_NEWER or semantics in WHOLE_CONFLICT
        if o is None or t is None:
            present, side = (o, "ours") if t is None else (t, "theirs")
            if b is not None and present == b:
                return []  # removed on one side, untouched on the other
            if b is not None:
                self.result.notes.append(f"{label} was removed on one side and changed on the other: kept")
            return present if whole else self._keyed(key, semantics, b or [], present, present, side, side)
        if whole:
            if o == t or t == b:
                return o
            if o == b:
                return t
            if semantics in WHOLE_NEWER:
                return self._newer_with_note(label, o, t)
            self.result.conflicts.append(label)
            return self._conflict(o, t)
        return self._keyed(key, semantics, b or [], o, t, "ours", "theirs")

    def _newer_with_note(self, label: str, ours: list[str], theirs: list[str]) -> list[str]:
        win, lose = (ours, theirs) if self.newer == "ours" else (theirs, ours)
        loser = self.sides["theirs" if self.newer == "ours" else "ours"]
        nl = self.nl
        quoted = _quoted(lose, win)
        if not quoted:
            return win
        if not self.with_notes:
            self.result.notes.append(f"{label}: both sides replaced it; kept the newer ({self.newer}); the other's "
                                     "text is not quoted, as no merge commit follows (a cherry-pick, a revert, a "
                                     "stash applied, a checkout -m) and only a merge may bring a merge note; "
                                     "it stays in its commit")
            return win
        end = len(win)
        while end > 1 and (not win[end - 1].strip() or WRAPPER_RE.match(win[end - 1])):
            end -= 1
        when = f", {loser.when}" if loser.when else ""
        note = [nl, f"{NOTE_HEAD} another wrap ({loser.commit or loser.label}{when}) also replaced {label}; the newer "
                    f"wrap's text is above, the other's below.{nl}",
                f"{NOTE_ABSORB}{nl}"] + [f"{q}{nl}" for q in quoted]
        head = list(win[:end])
        if head and not head[-1].endswith("\n"):
            head[-1] += nl
            note[-1] = strip_eol(note[-1])
        self.result.notes.append(f"{label}: both wraps replaced it; kept the newer ({self.newer}) and the "
                                 f"other as a note")
        return head + note + list(win[end:])

    def _conflict(self, ours: list[str], theirs: list[str]) -> list[str]:
        nl = self.nl

        def ended(lines: list[str]) -> list[str]:
            return [ln if ln.endswith("\n") else ln + nl for ln in lines]

        return [f"<<<<<<< {self.sides['ours'].label}{nl}", *ended(ours), f"======={nl}", *ended(theirs),
                f">>>>>>> {self.sides['theirs'].label}{nl}"]

    # ----------------------------------------------------- keyed line merge
    def _units(self, side: str, key: str, semantics: Semantics | None, lines: list[str]) -> list[tuple[tuple, str]]:
        sp = self.by_key[side].get(key)
        start = sp.start if sp is not None else 0
        idents = self.idents[side] if sp is not None else {}
        seen: Counter[tuple] = Counter()
        units = []
        top: int | None = None  # the indentation of the section's items (deeper lines belong to the item above)
        item_end = 0  # one past the last line that continues the pattern above (they go where it goes)
        for offset, line in enumerate(lines):
            ident = idents.get(start + offset)
            if ident is None and offset < item_end:
                units[-1] = (units[-1][0], units[-1][1] + line)
                continue
            if ident is not None and sp is not None:
                item_end = attached_span(self.docs[side], start + offset) - start
            if semantics == Semantics.LIFECYCLE and ident is None and units and units[-1][0][0] == "a" \
                    and actions.is_continuation(line, top):
                units[-1] = (units[-1][0], units[-1][1] + line)  # a sub-task goes where its item goes
                continue
            if ident is not None:
                base_key: tuple = ("p", ident)
            elif semantics == Semantics.LIFECYCLE and actions.is_item_start(line):
                base_key = ("a", actions.item_key(line))
                top = actions.indent(line) if top is None else top
            else:
                base_key = ("l", strip_eol(line))
            units.append((base_key + (seen[base_key],), line))
            seen[base_key] += 1
        return units

    def _keyed(self, key: str, semantics: Semantics | None, b: list[str], o: list[str], t: list[str],
               o_side: str, t_side: str) -> list[str]:
        bu = self._units("base", key, semantics, b)
        ou = self._units(o_side, key, semantics, o)
        tu = self._units(t_side, key, semantics, t)
        if semantics == Semantics.FREE:
            self._note_lines_changed_on_both_sides(key, bu, ou, tu)
        return merge_units(bu, ou, tu, lambda k, x, y, z: self._decide(key, k, x, y, z))

    def _note_lines_changed_on_both_sides(self, key: str, bu, ou, tu) -> None:
        """A note for each line of a section of one's own that both sides replaced, each with its own line (a
        table row given another owner here and another week there): both new lines are kept, as a line merge
        keeps them, and the note says so, so that a doubled fact does not pass unseen."""
        base, ours, theirs = ({k for k, _ in units} for units in (bu, ou, tu))
        added_ours, added_theirs = {k for k in ours - base}, {k for k in theirs - base}
        if not added_ours or not added_theirs or added_ours == added_theirs:
            return
        _, label = self._semantics(key)
        for k, line in bu:
            if k not in ours and k not in theirs and strip_eol(line).strip():
                self.result.notes.append(f"{label}: both sides changed `{strip_eol(line).strip()[:60]}`; each "
                                         "side's new line is kept: keep the one that holds")

    def _decide(self, section: str, key: tuple, b: str | None, o: str | None, t: str | None) -> str | None:
        kind = key[0]
        if kind == "p":
            resolved = self.patterns.resolved.get(key[1])
            if resolved is None or resolved.section != section:
                return None
            unit = o if o is not None else t
            written = self.nl.join((resolved.text, *resolved.attached))
            return unit if strip_eol(unit) == written else written + unit[len(strip_eol(unit)):]
        if o is not None and t is not None:
            if kind == "a" and o != t and t != b:
                return t if o == b else actions.merge_block(b, o, t)
            return o
        present = o if o is not None else t
        if b is None:
            return present
        if kind == "a" and present != b:
            first = strip_eol(present.split("\n", 1)[0]).strip()
            self.result.notes.append(f"action item `{first}` was removed on one side and changed on the other "
                                     "(its sub-tasks with it): kept")
            return present
        return None


def merge_units(base: Sequence[tuple[tuple, str]], ours: Sequence[tuple[tuple, str]],
                theirs: Sequence[tuple[tuple, str]],
                decide: Callable[[tuple, str | None, str | None, str | None], str | None]) -> list[str]:
    """A three-way merge of keyed lines: ours in order, theirs' new keys after the key they follow.

    ``decide(key, base, ours, theirs)`` returns the line to keep (or None to
    drop it); it is asked once per key present on either side. A theirs-only
    line goes after the nearest earlier theirs line that is in the result, and
    after any lines ours added right there, so two sides appending to the same
    place come out ours first, then theirs.
    """
    b_map = dict(base)
    o_keys = {k for k, _ in ours}
    t_map = dict(theirs)
    out: list[tuple[tuple, str | None, bool]] = []  # (key, text, added by ours)
    for k, line in ours:
        out.append((k, decide(k, b_map.get(k), line, t_map.get(k)), k not in b_map))
    position = {k: i for i, (k, _, _) in enumerate(out)}
    for j, (k, line) in enumerate(theirs):
        if k in o_keys:
            continue
        text = decide(k, b_map.get(k), None, line)
        if text is None:
            continue
        anchor = next((position[p] for p, _ in reversed(theirs[:j]) if p in position), -1)
        at = anchor + 1
        while at < len(out) and out[at][2] and out[at][0] not in t_map:
            at += 1
        out.insert(at, (k, text, False))
        position = {key: i for i, (key, _, _) in enumerate(out)}
    return [text for _, text, _ in out if text is not None]


def merge_continuity(base: str, ours: str, theirs: str, *, aliases: Mapping[str, tuple[str, ...]] | None = None,
                     thresholds: Thresholds | None = None, lookup: Lookup | None = None, newer: str = "theirs",
                     sides: tuple[Side, Side] = (Side("ours"), Side("theirs")), notes: bool = True,
                     since_base: SinceBase | None = None) -> MergeResult:
    """Merge two versions of a continuity file that share ``base``.

    ``lookup(ids)`` returns the cited episodes found in the merged store;
    ``newer`` names the side whose wrap is newer ("ours" or "theirs"); ``notes``: whether the result is a
    merge commit, where the other wrap's replaced text is quoted as a merge note (else it is left out);
    ``since_base``: the episodes each side recorded since the base (a pattern they fired is not archived).
    """
    docs = [Document.parse(text, aliases=aliases) for text in (base, ours, theirs)]
    merge = ContinuityMerge(*docs, lookup=lookup or (lambda ids: {}), thresholds=thresholds or Thresholds(),
                            newer=newer, sides=sides, notes=notes, since_base=since_base)
    return merge.run()
