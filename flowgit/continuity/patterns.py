"""The pattern line: the unit the immune system graduates and demotes.

::

    ! retry_budget: cap retries per request | 1x
    !! retry_budget: cap retries per request | 2x (RELIABILITY) [evidence: ep-1, ep-2]
    !! retry_budget: cap retries per request | 3x (RELIABILITY — 2026-11-30) [evidence: …] [<- backoff]

A pattern's name is its identity across the whole git history. Parsing is
tolerant (list bullets, extra spaces, ``|`` inside the description); an
unchanged line renders back byte for byte, and a changed one renders in the
canonical form above.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from functools import lru_cache, partial
from itertools import chain, repeat
from operator import attrgetter
from typing import Iterator, NamedTuple

from flowgit.continuity.document import Document, shifted, strip_eol
from flowgit.continuity.identity import name_key
from flowgit.dates import parse_date

HEAD_RE = re.compile(r"^(?P<indent>\s*)(?P<bullet>(?:[-*+]\s+)?)(?P<bang>!{1,3})\s*"
                     r"(?P<name>[^\W_][\w.\-/]*)\s*:\s?")
LEVEL_RE = re.compile(r"\|\s*(?P<level>[1-9])x\b")
CATEGORY_RE = re.compile(r"^\s*\((?P<inner>[^()]*)\)")
ANNOTATION_RE = re.compile(r"\[(?P<inner>[^\[\]]*)\]")
DATE_SPLIT_RE = re.compile(r"\s*(?:—|–|\s--?\s|,)\s*")  # ` -- ` is how a dash is typed on a plain keyboard
EVIDENCE_ID_RE = re.compile(r"[A-Za-z0-9][\w.\-]*")


EVIDENCE_VALUE_RE = re.compile(r"\[\s*evidence\s*:(?P<value>[^\[\]]*)\]", re.IGNORECASE)
EVIDENCE_SEPARATORS_RE = re.compile(r"[\s,;]+")


def evidence_marks(line: str) -> str:
    """What a pattern line's ``[evidence: …]`` holds besides its ids and the commas between them ('' when
    nothing): a `~~strike~~`, a doubting `~` or `?`, a `¬`. A reader reads such an id as withdrawn or in
    doubt; the parser reads the id alone, so every rule would count it."""
    found = EVIDENCE_VALUE_RE.search(line)
    if found is None:
        return ""
    return EVIDENCE_SEPARATORS_RE.sub("", EVIDENCE_ID_RE.sub("", found["value"]))


DEFAULT_CATEGORY = "GENERAL"  # what a wrap writes when a raise names no category
CATEGORY_LABEL_RE = re.compile(r"[^\W_][\w&+/.\-]*")  # a category is a label: one word (`COST-CONTROL`, `API/UX`)


class Pattern(NamedTuple):
    """One parsed pattern line.

    A NamedTuple rather than a dataclass: the gate's hook imports this module
    on every commit, and a frozen dataclass costs about a millisecond to
    define. ``raw`` (the line as written) comes last and takes no part in
    equality or hashing: two spellings of one pattern are the same pattern.
    """

    name: str
    text: str
    level: int
    category: str = ""
    date: str = ""
    evidence: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    indent: str = ""
    bullet: str = ""
    has_evidence: bool = False
    raw: str | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pattern) and self[:-1] == other[:-1]

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self[:-1])

    def render(self) -> str:
        """The line without its ending: the original if unchanged, else canonical form."""
        if self.raw is not None:
            return self.raw
        bang = "!" if self.level <= 1 else "!!"
        out = f"{self.indent}{self.bullet}{bang} {self.name}: {self.text} | {self.level}x"
        if self.category or self.date:
            inner = " — ".join(x for x in (self.category, self.date) if x)
            out += f" ({inner})"
        if self.evidence or self.has_evidence:
            out += f" [evidence: {', '.join(self.evidence)}]"
        out += "".join(f" [{link}]" for link in self.links)
        out += "".join(f" [{note}]" for note in self.notes)
        return out

    def changed(self, **changes: object) -> "Pattern":
        """A copy with fields changed; it renders canonically from then on."""
        if "evidence" in changes:
            changes.setdefault("has_evidence", bool(changes["evidence"]))
        return self._replace(raw=None, **changes)  # type: ignore[arg-type]

    @property
    def words(self) -> str:
        return f"{self.name.replace('_', ' ').replace('-', ' ')} {self.text}"


@lru_cache(maxsize=1)
def _marked_head_re() -> "re.Pattern[str]":
    """:data:`HEAD_RE` with the combining marks a name's letters carry (a Hindi vowel sign, an accent saved
    decomposed): ``\\w`` leaves them out, which made such a name no name (built when a line first needs it)."""
    from flowgit.words import MARKS

    return re.compile(HEAD_RE.pattern.replace(r"[\w.\-/]*", rf"(?:[\w.\-/]|[{MARKS}])*"))


def head_match(raw: str) -> "re.Match[str] | None":
    """The marker and name at the start of a pattern line (marks on a name's letters read as its letters)."""
    if raw.isascii():
        return HEAD_RE.match(raw)
    return _marked_head_re().match(raw)


def is_pattern_name(name: str) -> bool:
    """Whether ``name`` is a name as the grammar reads one (a plan's name is held to it)."""
    found = head_match(f"! {name}: x")
    return found is not None and found["name"] == name


def looks_like_pattern(line: str) -> bool:
    return bool(head_match(line)) and bool(LEVEL_RE.search(line))


@lru_cache(maxsize=1 << 13)
def parse_pattern(line: str) -> Pattern | None:
    """Parse one line; ``None`` when it is not a pattern line.

    Remembered by the line's text (a Pattern is immutable): history and the
    audit meet the same lines in thousands of versions.
    """
    raw = strip_eol(line)
    head = head_match(raw)
    if not head:
        return None
    levels = list(LEVEL_RE.finditer(raw, head.end()))
    if not levels:
        return None
    last = levels[-1]
    text = raw[head.end():last.start()].strip()
    cat, tail = _category_and_rest(raw[last.end():])
    category = date = ""
    if cat:
        parts = [p for p in DATE_SPLIT_RE.split(cat.group("inner").strip()) if p]
        if parts and _is_date(parts[-1]):
            date = parts.pop()
        category = " — ".join(parts)
    evidence: list[str] = []
    links: list[str] = []
    notes: list[str] = []
    has_evidence = False
    for ann in ANNOTATION_RE.finditer(tail):
        inner = ann.group("inner").strip()
        key, sep, value = inner.partition(":")
        if sep and key.strip().lower() == "evidence":
            has_evidence = True
            evidence.extend(EVIDENCE_ID_RE.findall(value))
        elif inner.startswith(("<-", "->", "<->")):
            links.append(inner)
        else:
            notes.append(inner)
    return Pattern(name=head.group("name"), text=text, level=int(last.group("level")),
                   category=category, date=date, evidence=tuple(evidence), links=tuple(links),
                   notes=tuple(notes), indent=head.group("indent"), bullet=head.group("bullet"),
                   raw=raw, has_evidence=has_evidence)


def _category_and_rest(after_level: str) -> tuple[re.Match | None, str]:
    """(the category's parentheses, what follows them) of what follows a pattern's level mark."""
    cat = CATEGORY_RE.match(after_level)
    return (cat, after_level[cat.end():]) if cat else (None, after_level)


def stray_text(pattern: Pattern) -> str:
    """What the pattern's line says outside the grammar's fields, spacing aside: words after its category,
    between its annotations or after the last one. The parser passes them over, a reader does not."""
    raw = pattern.raw
    head = head_match(raw) if raw is not None else None
    levels = list(LEVEL_RE.finditer(raw, head.end())) if head is not None else []  # type: ignore[arg-type]
    if not levels:
        return ""  # a canonical rendering: nothing outside the fields
    _, rest = _category_and_rest(raw[levels[-1].end():])  # type: ignore[index]
    return " ".join(ANNOTATION_RE.sub(" ", rest).split())


def derivation_note(name: str, day: str) -> str:
    """The note the wrap adds to a pattern deriving from a demoted one (Step 5): it asks for a re-check and
    claims nothing, so the gate lets it come and go on a Proven line."""
    return f"derives from {name}, demoted {day}: re-check"


DERIVATION_NOTE_RE = re.compile(r"derives from (?P<name>[^\s,]+), demoted (?P<day>[^:]{1,40}): re-check")


def derivation_note_match(note: str) -> "re.Match[str] | None":
    """The wrap's derivation note, exactly: ``derives from X, demoted <a date>: re-check``. Only a date stands
    where the day goes (prose there, `demoted Dec 4 because X is false`, is a claim written in the note's
    shape)."""
    found = DERIVATION_NOTE_RE.fullmatch(note)
    return found if found is not None and parse_date(found["day"]) is not None else None


def free_notes(pattern: Pattern) -> tuple[str, ...]:
    """The pattern's ``[…]`` notes that say something of it (the wrap's derivation notes aside)."""
    return tuple(n for n in pattern.notes if not derivation_note_match(n))


def _is_date(text: str) -> bool:
    return parse_date(text) is not None


class PatternAt(NamedTuple):
    """A pattern together with where it stands in a document."""

    pattern: Pattern
    line: int  # 0-based index
    section: str

    @property
    def lineno(self) -> int:
        return self.line + 1


def iter_patterns(doc: Document) -> Iterator[PatternAt]:
    """Every pattern line in the document, in order, with its section's label."""
    return iter(document_patterns(doc))


def document_patterns(doc: Document) -> tuple[PatternAt, ...]:
    """:func:`iter_patterns` as a tuple, remembered with the document.

    Each section's pattern lines come from its body's :class:`SectionFacts`
    (shared by every version that has that body), so a new version costs its
    changed sections; a history walk then asks the same document again as the
    next change's old side.
    """
    found = doc.memo.get("patterns")
    if found is None:
        found = doc.memo["patterns"] = tuple(chain.from_iterable(placed_patterns(doc)))
    return found


def placed_patterns(doc: Document) -> tuple[tuple[PatternAt, ...], ...]:
    """Each section's patterns (a tuple per section, in order), remembered with the document.

    A section whose body stayed where it was in the version this one was read
    against gives the very same tuple object (see :func:`_placed`): comparing
    two versions can pass over it by identity.
    """
    found = doc.memo.get("placed")
    if found is None:
        found = doc.memo["placed"] = tuple(_placed(doc, section) for section in doc.sections)
    return found


def _placed(doc: Document, section) -> tuple[PatternAt, ...]:
    """A section's patterns at its lines and label, remembered with its body's facts under both (a body
    that stays where it was gives the next version the same objects)."""
    facts = doc.facts(section)
    key = (section.body_start, section.label)
    placed: dict = facts.derived("placed", lambda _: {})  # type: ignore[assignment]
    found = placed.get(key)
    if found is None:
        if len(placed) >= 2:  # the last two placements: a body judged as both sides of a change
            del placed[next(iter(placed))]
        start, label = key
        found = placed[key] = _placed_at(facts.patterns, start, label)
    return found


_MAKE_AT = partial(tuple.__new__, PatternAt)  # a PatternAt from its fields in order, without its Python constructor


def _placed_at(patterns: tuple, start: int, label: str) -> tuple[PatternAt, ...]:
    """PatternAt of each (offset, Pattern) of a body whose first line is ``start`` (built in C: a body of
    dozens of patterns is placed again whenever a section above it grows or shrinks)."""
    if not patterns:
        return ()
    offsets, found = zip(*patterns)
    return tuple(map(_MAKE_AT, zip(found, shifted(offsets, start), repeat(label))))


def document_identity_map(doc: Document) -> dict[str, "PatternAt"]:
    """:func:`pattern_identity_map` of the document's patterns, remembered with it (read-only).

    Built from each section's own map (remembered with its placed patterns, so
    a section that stayed where it was costs nothing): when no identity occurs
    in two sections, the sections' maps joined in order are the document's.
    """
    found = doc.memo.get("identity")
    if found is None:
        parts = [_section_identity_map(placed) for placed in placed_patterns(doc)]
        found = {}
        for part in parts:
            found.update(part)
        if len(found) != sum(map(len, parts)):  # an identity in two sections: the first occurrence wins
            found = pattern_identity_map(document_patterns(doc))
        doc.memo["identity"] = found
    return found


_SECTION_MAPS: "OrderedDict[int, tuple[tuple, dict]]" = OrderedDict()


def _section_identity_map(placed: tuple) -> dict[str, "PatternAt"]:
    """:func:`pattern_identity_map` of one section's placed patterns, remembered for the last few tuples
    (by the tuple itself: a body that stayed in place gives the next version the very same one)."""
    kept = _SECTION_MAPS.get(id(placed))
    if kept is not None and kept[0] is placed:
        return kept[1]
    found = pattern_identity_map(placed)
    _SECTION_MAPS[id(placed)] = (placed, found)  # the tuple is held, so its id is not reused meanwhile
    if len(_SECTION_MAPS) > 64:
        _SECTION_MAPS.popitem(last=False)
    return found


def pattern_map(doc: Document) -> dict[str, PatternAt]:
    """Patterns by name (the first occurrence wins; duplicates are the gate's business)."""
    patterns = document_patterns(doc)
    return _first_by(list(map(_NAME, patterns)), patterns)


# ------------------------------------------------------------------ recognition
# What *looks like* a pattern line to a reader, whatever the markup. Anything
# matching this that :func:`parse_pattern` does not parse is a pattern the gate
# would otherwise not see, so the gate refuses it (see checks/recognition.py).
MARKUP_RE = re.compile(r"^\s*(?:>\s*)*(?:(?:[-*+]|\d{1,3}[.)])\s+)?(?:\[[ xX]\]\s+)?")
LOOSE_LEVEL_RE = re.compile(r"\|\s*\**\s*[0-9]+\s*\**\s*[xX×✕✖]", re.IGNORECASE)
LOOSE_BANG_RE = re.compile(r"^!{1,3}\s*\**\s*[^\s:|]+\s*\**\s*:(?!\S)")  # `! name:` (`! fix the cache: …` is FlowScript)
EVIDENCE_RE = re.compile(r"\[\s*evidence\s*:", re.IGNORECASE)


def looks_like_pattern_loose(line: str) -> bool:
    """A line a reader would take for a pattern: a `!` name marker, a `| Nx` level in any form, or evidence.

    Typed with look-alike characters too (``ǃǃ``, ``‼``, a full-width ``｜``
    or digit, a Cyrillic ``х`` for the level's ``x``, ``[еvidence:``): the
    line is read again as its :func:`skeleton`, so a pattern a reader sees
    cannot hide from the gate behind a character that only looks right.
    """
    readings = _readings(strip_eol(line))
    return any(map(_looks_loose, readings)) or bool(LOOSE_BANG_RE.match(DECORATION_RE.sub("", readings[-1])))


def claims_a_raised_pattern(line: str) -> bool:
    """:func:`looks_like_pattern_loose` by what only a pattern line that claims more than a first sighting
    carries: a `!` opening it and a `| Nx` level, or an evidence annotation. (A `| 2x` alone is
    a table cell or a speed-up, and `! note: …` FlowScript's urgent note, in a section of one's own.)"""
    for reading in _readings(strip_eol(line)):
        body = MARKUP_RE.sub("", reading, count=1)
        if EVIDENCE_RE.search(body):
            return True
        if DECORATION_RE.sub("", body).lstrip().startswith("!") and LOOSE_LEVEL_RE.search(body):
            return True  # (a name of any form after the marks: `!! retry budget: … | 3x`, `!! x - … | 3x`)
    return False


def level_marks(line: str) -> int:
    """How many `| Nx`-like levels a reader sees on the line (in any form: see :func:`skeleton`). A pattern
    line holds one; the parser reads the last, a reader the first."""
    return max(len(LOOSE_LEVEL_RE.findall(reading)) for reading in _readings(strip_eol(line)))


def _readings(line: str) -> tuple[str, ...]:
    """The line as written and, where it may disguise a mark, as a reader takes it: its :func:`skeleton`,
    then that as plain text (links as their text, emphasis marks off). The last is the plainest."""
    if not _may_disguise(line):
        return (line,)
    folded = skeleton(line)
    return line, folded, _plain(folded)


def _plain(text: str) -> str:
    return LINK_RE.sub(r"\1", text).replace("*", "").replace("_", "")


def _may_disguise(line: str) -> bool:
    """Whether the line holds anything a skeleton reads differently: non-ASCII, an entity, an escape,
    emphasis or a link."""
    return not line.isascii() or "&" in line or "\\" in line or "_" in line or "*" in line or "](" in line


DECORATION_RE = re.compile(r"^[\s#*_\[•·‣◦⁃∙●▪]+")
LINK_RE = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def _marks_only_in_skeleton(body: str) -> bool:
    """Whether a mark of the grammar (name marker, level, evidence) is there only as a reader takes the line
    (:func:`_readings`), not as it is written."""
    readings = _readings(body)
    if len(readings) == 1:
        return False
    rules = (LOOSE_BANG_RE.match, LOOSE_LEVEL_RE.search, EVIDENCE_RE.search)
    return any(rule(reading) and not rule(body) for rule in rules for reading in readings[1:]) or (
        not _looks_loose(body) and looks_like_pattern_loose(body))


def _looks_loose(line: str) -> bool:
    body = MARKUP_RE.sub("", line, count=1)
    return bool(LOOSE_BANG_RE.match(body) or LOOSE_LEVEL_RE.search(body) or EVIDENCE_RE.search(body))


# What other characters draw (NFKC already folds the full-width forms and ‼): the pattern grammar's marks
# (exclamation marks, vertical bars, the level's x and digits), and Latin letters drawn as small capitals or
# in other scripts, for names compared as a reader reads them.
MARK_LOOKALIKES = str.maketrans({
    **dict.fromkeys("ǃ❗❕❢ⵑꜝꜞ︕", "!"),
    **dict.fromkeys("ǀ∣│┃￨׀⏐❘ⵏᛁ¦丨⎪▏▕〡⼁⎸⎹╎╏┆┇┊┋", "|"),
    **dict.fromkeys("ⅹ᙮ᕁ⨯╳ꭓ✗✘ⲭꓫҳᚷ", "x"),
    **dict.fromkeys("зʒʓӡ", "3"), **dict.fromkeys("ƨ", "2"),
    # Latin small capitals and other letters drawn like a, c, o, s, u (after case folding)
    **dict.fromkeys("ɑᴀ", "a"), "ʙ": "b", **dict.fromkeys("ᴄϲꮯꓚ", "c"), "ᴅ": "d", "ᴇ": "e", "ɢ": "g", "ʜ": "h",
    "ɪ": "i", "ᴊ": "j", "ᴋ": "k", "ʟ": "l", "ᴍ": "m", "ɴ": "n", **dict.fromkeys("ᴏօ", "o"), "ᴘ": "p",
    "ʀ": "r", "ꜱ": "s", "ᴛ": "t", **dict.fromkeys("ᴜս", "u"), "ᴠ": "v", "ᴡ": "w", "ʏ": "y", "ᴢ": "z",
})
ESCAPED_MARK_RE = re.compile(r"\\([!-/:-@\[-`{-~])")  # `\!` is how Markdown writes a literal `!`
DROPPED_CATEGORIES = frozenset({"Cf", "Mn", "Me"})  # format characters (bidi, joiners, tags), combining marks
DROPPED = frozenset("\u3164\u115f\u1160\uffa0")  # Hangul fillers: letters that draw nothing


@lru_cache(maxsize=1 << 12)
def skeleton(text: str) -> str:
    """``text`` as a reader takes it: HTML entities and Markdown escapes read, NFKC, case folded, invisible
    characters and combining marks dropped, look-alike letters (Cyrillic, Greek) and marks read as the Latin
    letter, ASCII mark or digit they mimic, any decimal digit as its ASCII digit."""
    import html
    import unicodedata

    from flowgit.continuity.identity import CAPITALS, CONFUSABLES

    if "&" in text:
        text = html.unescape(text)
    if "\\" in text:
        text = ESCAPED_MARK_RE.sub(r"\1", text)
    folded = unicodedata.normalize("NFKC", text)
    if not folded.isascii():
        folded = folded.translate(CAPITALS)
    folded = folded.casefold()
    if folded.isascii():
        return folded
    table: dict[int, str | None] = {}
    for ch in set(folded):  # (each distinct character once: a line holds a few non-ASCII ones)
        if ch.isascii():
            continue
        if ch in DROPPED or unicodedata.category(ch) in DROPPED_CATEGORIES:
            table[ord(ch)] = None
        elif ch.isdecimal():
            table[ord(ch)] = str(unicodedata.decimal(ch))
    if table:
        folded = folded.translate(table)
    return folded.translate(CONFUSABLES).translate(MARK_LOOKALIKES)


def grammar_fix(line: str) -> str:
    """What to change so the line parses as the one canonical pattern grammar."""
    raw = strip_eol(line)
    body = MARKUP_RE.sub("", raw, count=1)
    if _marks_only_in_skeleton(body):
        return ("type the pattern's marks in plain ASCII (`!`, `|`, digits, `x`, `[evidence:`): a look-alike "
                "character hides the line from every rule")
    if raw.lstrip().startswith(">"):
        return "patterns are not quoted: remove the `>`"
    if re.match(r"^\s*(?:\d{1,3}[.)]|[-*+]\s+\[[ xX]\])", raw):
        return "use a plain `- ` bullet or none, not a numbered item or a check box"
    if "**" in body.split("|")[0] or "__" in body.split(":")[0]:
        return "write the name without emphasis: `! name: description | 1x`"
    head = re.match(r"^(!{1,3})\s*([^:]*):", body)
    if head and not re.fullmatch(r"[^\W_][\w.\-/]*", head.group(2).strip()):
        return "a name is one word (letters, digits, `_ . - /`): `! retry_budget: … | 1x`"
    if not head:
        return "start with the marker and name: `! name: description | 1x`"
    level = LOOSE_LEVEL_RE.search(body)
    if level is None:
        return "put the level on the same line: `… | 1x` (hard-wrapped patterns are not read)"
    return "write the level as `| 1x`, `| 2x` or `| 3x` (lower-case x)"


def pattern_identity_map(patterns) -> dict[str, "PatternAt"]:
    """Patterns keyed by :func:`name_key` (first occurrence wins)."""
    patterns = patterns if isinstance(patterns, (tuple, list)) else list(patterns)
    return _first_by(list(map(name_key, map(_NAME, patterns))), patterns)


_NAME = attrgetter("pattern.name")


def _first_by(keys: list[str], patterns) -> dict[str, "PatternAt"]:
    """Each key's first pattern (``keys[i]`` is the key of ``patterns[i]``), built in C when no key repeats."""
    found: dict[str, PatternAt] = dict(zip(keys, patterns))
    if len(found) == len(keys):
        return found  # each key once: its first occurrence is its only one
    found = {}
    for key, at in zip(keys, patterns):
        found.setdefault(key, at)
    return found
