"""What a gate rule sees: HEAD's document and store, the staged ones, and the config."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from typing import Any, Callable, Iterable, Iterator

from flowgit.config import Config
from flowgit.continuity.document import Document, shared_ends
from flowgit.continuity.identity import is_rename, name_key
from flowgit.continuity.patterns import PatternAt, document_identity_map, document_patterns, placed_patterns
from flowgit.continuity.sections import Semantics
from flowgit.episodes import Episode, locate, store_index
from flowgit.git import blob_oid


class computed_once:  # noqa: N801 (used as a decorator, like the functools one it stands in for)
    """``functools.cached_property`` without the lock Python 3.11 takes on each first read.

    A history audit builds a context per commit and reads a dozen of these on
    each; the value is stored in the instance's dict, where every later read
    finds it without calling the descriptor. Contexts are not shared between
    threads.
    """

    def __init__(self, compute: Callable[[Any], Any]) -> None:
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.compute(instance)
        return value


def is_prefix(new_store: bytes, old_entry: tuple[str, int] | None) -> bool:
    """Whether the blob ``old_entry`` (id, size) is exactly the first bytes of ``new_store``."""
    if old_entry is None:
        return True
    oid, size = old_entry
    return len(new_store) >= size and blob_oid(memoryview(new_store)[:size], len(oid)) == oid


ID_RE = re.compile(rb'"id"\s*:\s*"([^"\\]+)"')
_WEIGHTS: dict = {}  # store blob id -> (its bytes, their word weight): the last few a walk met


EMPTY_LINE_RE = re.compile(r"(?:\A|\n)\r*(?:\n|\r\Z)")  # a line with nothing but its ending (and \r's)


def has_line(text: str, stripped: str, tries: int = 16) -> bool | None:
    """Whether ``text`` has a line (cut at ``\\n``) that is ``stripped`` once ``\\r``/``\\n`` are taken off its end.

    Found by substring search in C: an occurrence counts where a line starts
    and only ``\\r`` then ``\\n`` (or the end) follow it. None when more than
    ``tries`` occurrences sit inside longer lines: the caller then asks a set
    of every line, so a very common text cannot make the search slow.
    """
    if not stripped:
        return EMPTY_LINE_RE.search(text) is not None
    if text.startswith(stripped) and _ends_line(text, len(stripped)):
        return True
    needle = "\n" + stripped
    pos = text.find(needle)
    while pos != -1:
        if _ends_line(text, pos + len(needle)):
            return True
        tries -= 1
        if tries < 0:
            return None
        pos = text.find(needle, pos + 1)
    return False


def _ends_line(text: str, end: int) -> bool:
    """Whether only ``\\r``s and then a ``\\n`` or the end of ``text`` follow offset ``end``."""
    size = len(text)
    while end < size and text[end] == "\r":
        end += 1
    return end == size or text[end] == "\n"


class CheckContext:
    """Old (HEAD) and new (staged) continuity and store; ``old`` is None on a first commit.

    HEAD's store is only read when a rule needs its bytes: whether the staged
    store merely appended to it is decided from its blob id and size. The
    optional fields below are keyword arguments whose class-level values are
    the defaults (no dataclass: the hook imports this module on every commit,
    and defining a dataclass costs about a millisecond).
    """

    cfg: Config
    new: Document
    old: Document | None
    new_store: bytes  # or a read-only mmap of a clean working-tree file: both search and slice alike
    path: str
    store_path: str
    old_store_entry: tuple[str, int] | None = None  # (blob id, size) at HEAD
    old_store_loader: Callable[[], bytes] | None = None
    appended_check: Any = None  # a Background computing is_prefix, when the caller started one
    when: Any = None  # datetime of the change (episodes dated later do not count)
    new_store_oid: str | None = None  # the staged store's blob id, when the caller knows it (the audit does)
    old_store_in_memory: bool = False  # HEAD's store bytes are already read: compare them instead of hashing
    new_raw: bytes | None = None  # the staged continuity file's bytes, when the caller has them (``new``'s text)
    merge_parents: tuple = ()  # a merge result judged against one parent: every parent's Document
    base_unreadable: str | None = None  # why HEAD's file could not be read as text (then read leniently)
    attributes: tuple | None = None  # (old, new) readings of the judged attributes, when the change touches them

    def __init__(self, cfg: Config, new: Document, old: Document | None, new_store: bytes, path: str,
                 store_path: str, **optional: Any) -> None:
        unknown = set(optional).difference(type(self).__annotations__)
        if unknown:
            raise TypeError(f"CheckContext got unknown field(s): {', '.join(sorted(unknown))}")
        self.cfg, self.new, self.old, self.new_store = cfg, new, old, new_store
        self.path, self.store_path = path, store_path
        self.__dict__.update(optional)
        self._episodes: dict[str, Episode] = {}

    @computed_once
    def old_store(self) -> bytes:
        return self.old_store_loader() if self.old_store_loader else b""

    @computed_once
    def store_appended_only(self) -> bool:
        """Whether HEAD's store is an exact prefix of the staged one, and what follows starts a new line.

        A HEAD store whose last line has no newline would otherwise let bytes be
        glued onto that committed episode and still count as an append.
        """
        if not self._is_prefix:
            return self._markers_removed is not None
        if self.old_store_entry is None or self.old_store_entry[1] == 0:
            return True
        size = self.old_store_entry[1]
        if len(self.new_store) == size or self.new_store[size - 1:size] == b"\n":
            return True
        return self.new_store[size:size + 1] in (b"\n", b"\r")  # the old last line is ended, not extended

    @computed_once
    def _is_prefix(self) -> bool:
        if self.appended_check is not None:
            return self.appended_check.result()
        if self.old_store_entry is None:
            return True
        if self.new_store_oid is not None and self.new_store_oid == self.old_store_entry[0]:
            return True  # the very same blob
        if self.old_store_in_memory:
            size, old = self.old_store_entry[1], self.old_store
            if len(old) == size and isinstance(self.new_store, bytes):
                return self.new_store.startswith(old)  # compared in place, not through a copy of the prefix
            return len(self.new_store) >= size and self.new_store[:size] == old
        return is_prefix(self.new_store, self.old_store_entry)

    @computed_once
    def _markers_removed(self) -> int | None:
        """The length of HEAD's store less git's conflict-marker lines, when that is exactly how the staged store
        begins (followed by nothing or a new line) and the staged store holds no marker: a repair of markers a
        merge without flowgit's driver committed (each side's episodes kept, only git's lines taken out), which
        the store's rule must accept, or G601 ("remove every marker line") and G701 refuse every way out."""
        from flowgit.merge.markers import find_markers

        old = self.old_store
        if not old or find_markers(old) is None or find_markers(self.new_store[:]) is not None:
            return None
        kept = _without_marker_lines(old)
        new = self.new_store[:len(kept) + 1]
        if not new.startswith(kept) or (len(new) > len(kept) and kept and not kept.endswith(b"\n")
                                        and new[len(kept):len(kept) + 1] not in (b"\n", b"\r")):
            return None
        return len(kept)

    @computed_once
    def appended_store(self) -> bytes:
        if self.old_store_entry and self.store_appended_only:
            size = self._markers_removed if not self._is_prefix else self.old_store_entry[1]
        else:
            size = 0
        return self.new_store[size or 0:]

    @computed_once
    def appended_ids(self) -> frozenset[str]:
        """Ids of the episodes this change appends to the store: new ids only.

        An appended line that repeats an id the store already held changes
        nothing about that episode (every lookup reads an id's first line), and
        it must not move the held episode into this change's batch either (an
        old session's episode would then count as a new source): it is left
        out here and reported by the store rule (:attr:`repeated_ids`).
        """
        return self._appended_split[0]

    @computed_once
    def repeated_ids(self) -> frozenset[str]:
        """Ids an appended line repeats although an earlier line of the store already holds that episode."""
        return self._appended_split[1]

    @computed_once
    def _appended_split(self) -> tuple[frozenset[str], frozenset[str]]:
        if self.merge_parents and not self.store_appended_only and self.old_store_entry is not None:
            # A merge's store interleaves the other branch's lines with this parent's: what it brings against
            # this parent is the episodes this parent lacks (appended on the other branch, commit by commit,
            # and judged there), not every line after the first difference as one batch.
            held = frozenset(ID_RE.findall(self.old_store))
            return frozenset(m.decode("utf-8", "replace") for m in ID_RE.findall(self.new_store[:])
                             if m not in held), frozenset()
        ids = frozenset(m.decode("utf-8", "replace") for m in ID_RE.findall(self.appended_store))
        held_until = len(self.new_store) - len(self.appended_store)
        if not ids or held_until == 0:
            return ids, frozenset()
        first = self._locate(ids)  # each id's first line that is an episode with that id
        repeated = frozenset(i for i in ids if i in first and first[i][1] <= held_until)
        return ids - repeated, repeated

    @computed_once
    def word_weight(self):
        """How rare each word is in the staged store (see :func:`flowgit.evidence.store_weight`).

        A history walk meets each store version for many commits: the weights
        (and the words already weighed) are kept per store blob, for its bytes only.
        """
        from flowgit.evidence import store_weight

        if self.new_store_oid is None or not isinstance(self.new_store, bytes):
            return store_weight(self.new_store)
        kept = _WEIGHTS.get(self.new_store_oid)
        if kept is None or not (kept[0] is self.new_store or kept[0] == self.new_store):
            kept = (self.new_store, store_weight(self.new_store))
            _WEIGHTS.pop(self.new_store_oid, None)
            _WEIGHTS[self.new_store_oid] = kept
            while len(_WEIGHTS) > 2:
                del _WEIGHTS[next(iter(_WEIGHTS))]
        return kept[1]

    @computed_once
    def new_patterns(self) -> dict[str, PatternAt]:
        """Staged patterns by identity (:func:`name_key`), first occurrence wins."""
        return document_identity_map(self.new)

    @computed_once
    def old_patterns(self) -> dict[str, PatternAt]:
        """HEAD's patterns by identity (:func:`name_key`)."""
        return document_identity_map(self.old) if self.old else {}

    @computed_once
    def renames(self) -> dict[str, PatternAt]:
        """New identity -> HEAD's pattern it renames: same description, or the same evidence, new name."""
        gone = [at for key, at in self.old_patterns.items() if key not in self.new_patterns]
        if not gone:
            return {}
        out: dict[str, PatternAt] = {}
        for key, at in self.new_patterns.items():
            if key in self.old_patterns:
                continue
            for old in gone:
                if is_rename(old.pattern, at.pattern):
                    out[key] = old
                    gone.remove(old)
                    break
        return out

    def new_for(self, key: str) -> PatternAt | None:
        """The staged version of HEAD's pattern ``key``: same identity, or its rename."""
        found = self.new_patterns.get(key)
        if found is None:
            old = self.old_patterns.get(key)
            found = next((self.new_patterns[k] for k, o in self.renames.items() if o is old), None)
        return found

    def old_for(self, at: PatternAt) -> PatternAt | None:
        """HEAD's version of a staged pattern: same identity, or the pattern it renames."""
        key = name_key(at.pattern.name)
        return self.old_patterns.get(key) or self.renames.get(key)

    @computed_once
    def all_new_patterns(self) -> list[PatternAt]:
        return list(document_patterns(self.new))

    @computed_once
    def new_unique(self) -> bool:
        """Whether no two staged patterns share an identity (so each is a value of :attr:`new_patterns`)."""
        return len(self.new_patterns) == len(self.all_new_patterns)

    @computed_once
    def old_unique(self) -> bool:
        """Whether no two of HEAD's patterns share an identity."""
        return self.old is None or len(self.old_patterns) == len(document_patterns(self.old))

    @staticmethod
    def _patterns_not_shared(doc: Document, other: Document | None, unique: bool) -> Iterator[PatternAt]:
        """``doc``'s patterns in order, less the sections whose placed patterns are ``other``'s very same
        tuple (only when ``other`` has each identity once: then each of those is one of its identity map's
        values, which is all the callers pass over)."""
        if other is None or not unique:
            return iter(document_patterns(doc))
        shared = other.memo.get("checks.placed_ids")
        if shared is None:  # (the placed tuples live as long as the document: their ids stand)
            shared = other.memo["checks.placed_ids"] = frozenset(map(id, placed_patterns(other)))
        bodies = _bodies_by_label(other)
        return (at for section, placed in zip(doc.sections, placed_patterns(doc))
                if placed and id(placed) not in shared and (section.label, id(doc.facts(section))) not in bodies
                for at in placed)

    @computed_once
    def candidate_lines(self) -> tuple[int, ...]:
        """Staged lines that may be new or changed, in order: every other line is one HEAD has.

        A span (preamble, or a section from its heading) that HEAD has word for
        word holds no new line; in any other, the lines it shares at the top and
        bottom with HEAD's span of the same label are HEAD's. Whether a line
        between is really new is decided when a rule asks (:meth:`line_is_new`).
        """
        if self.old is None:
            return tuple(range(len(self.new.lines)))
        old_spans = self.old.spans()
        unchanged = set(old_spans)
        by_label = {label: lines for label, lines in reversed(old_spans)}  # the first of a label
        out: list[int] = []
        start = 0
        for span in self.new.spans():
            lines = span[1]
            if span not in unchanged:
                top, bottom = shared_ends(by_label.get(span[0], ()), lines)
                out.extend(range(start + top, start + len(lines) - bottom))
            start += len(lines)
        return tuple(out)

    @computed_once
    def preamble_added(self) -> tuple[int, ...]:
        """Lines above the first section that HEAD's preamble does not hold (each of HEAD's lines taken once),
        in order: the preamble is no section, so the rules that read sections read none of it."""
        new = self.new.spans()[0][1]
        old = self.old.spans()[0][1] if self.old is not None else ()
        if new == old:
            return ()
        left = Counter(old)
        out = []
        for index, line in enumerate(new):
            if left[line] > 0:
                left[line] -= 1
            else:
                out.append(index)
        return tuple(out)

    @computed_once
    def candidate_set(self) -> frozenset[int]:
        """:attr:`candidate_lines` as a set."""
        return frozenset(self.candidate_lines)

    @computed_once
    def new_line_indices(self) -> frozenset[int]:
        """Staged lines that are new or changed compared with HEAD (HEAD has no line with that text)."""
        return frozenset(i for i in self.candidate_lines if self.line_is_new(i))

    def line_is_new(self, index: int) -> bool:
        """Whether a staged line is new or changed compared with HEAD (its text is nowhere in HEAD's file).

        A candidate line is looked for in HEAD's text (:func:`has_line`) once, when first asked.
        """
        if index not in self.candidate_set:
            return False
        if self.old is None:
            return True
        known = self._line_new.get(index)
        if known is None:
            stripped = self.new.lines[index].rstrip("\r\n")
            found = has_line(self.old.text, stripped)
            if found is None:
                found = stripped in self.old.line_set
            known = self._line_new[index] = not found
        return known

    @computed_once
    def _line_new(self) -> dict[int, bool]:
        return {}

    def new_lines_in(self, section) -> list[int]:
        """The new or changed lines of one staged section's body, in order (worked out once per body span)."""
        key = ("context.new_lines", section.body_start, section.body_end)
        found = self.memo.get(key)
        if found is None:
            ordered = self.candidate_lines
            found = self.memo[key] = [
                i for i in ordered[bisect_left(ordered, section.body_start):bisect_left(ordered, section.body_end)]
                if self.line_is_new(i)]
        return found

    def untouched(self, section) -> bool:
        """Whether HEAD has a section of the same label with exactly these body lines (so none is new).

        Asked of each staged section by several rules: answered once per section.
        """
        if self.old is None:
            return False
        known = self._untouched.get(section)
        if known is None:
            before = self.old_section(section.label)
            known = self._untouched[section] = before is not None and self.same_body(before, section)
        return known

    @computed_once
    def _untouched(self) -> dict:
        return {}

    @computed_once
    def memo(self) -> dict:
        """What rules derive from this change and share (keyed by the rule's module: ``"recognition.…"``)."""
        return {}

    def same_body(self, before, section) -> bool:
        """Whether HEAD's section ``before`` and the staged ``section`` have exactly the same body lines.

        Both documents share one :class:`SectionFacts` per distinct body, so an
        unchanged body is usually told by identity, without comparing its lines.
        """
        old_facts, new_facts = self.old.facts(before), self.new.facts(section)  # type: ignore[union-attr]
        return old_facts is new_facts or old_facts.body == new_facts.body

    @computed_once
    def changed_patterns(self) -> list[PatternAt]:
        """Patterns whose line is new or changed, or that moved section, since HEAD.

        A staged pattern that *is* one of HEAD's identity map (a section body
        that stayed where it was gives both documents the same placed patterns)
        is HEAD's version of itself: it is passed over by identity.
        """
        held, unmoved = _identity_ids(self.old)
        out = []
        for at in self._patterns_not_shared(self.new, self.old, self.old_unique):
            if id(at) in held or unmoved.get(id(at.pattern)) == at.section:
                continue  # HEAD's very pattern, or HEAD's very parsed line (so its identity) in the same section
            before = self.old_for(at)
            if before is None or before.section != at.section or (
                    before.pattern is not at.pattern and before.pattern.render() != at.pattern.render()):
                out.append(at)  # (the very same parsed line renders the same: compared at once)
        return out

    @computed_once
    def old_pattern_changes(self) -> list[tuple[str, PatternAt, PatternAt | None]]:
        """(identity, HEAD's pattern, its staged version or None) for each of HEAD's patterns that did not
        stay the very same parsed line in the same section, in HEAD's order.

        A pattern left as it was (most of them, in any one change) can neither lose evidence, nor leave its
        section, nor be reworded: the rules about HEAD's patterns read only these.
        """
        staged = self.new_patterns
        held, unmoved = _identity_ids(self.new)  # (HEAD's very objects, where a body stayed in place)
        out = []
        if self.old is not None and self.old_unique and self.new_unique:
            # every pattern is its identity's only one on both sides: a section the staged file shares with
            # HEAD as the very same placed patterns holds only patterns in ``held``; the others are the
            # identity map's values, in its order
            changes = ((None, at) for at in self._patterns_not_shared(self.old, self.new, True))
        else:
            changes = iter(self.old_patterns.items())
        for key, before in changes:
            if id(before) in held or unmoved.get(id(before.pattern)) == before.section:
                continue  # staged as it was: the very same parsed line (so the same identity), same section
            if key is None:
                key = name_key(before.pattern.name)
            now = staged.get(key)
            if now is not None and now.pattern is before.pattern and now.section == before.section:
                continue
            out.append((key, before, now if now is not None else self.new_for(key)))
        return out

    def episodes(self, ids: Iterable[str]) -> dict[str, Episode]:
        """Cited episodes from the staged store, looked up in one pass and cached.

        The first call fetches every id cited by a changed pattern at once.
        """
        wanted = set(ids)
        if not self._episodes and wanted:
            wanted |= {i for at in self.changed_patterns for i in at.pattern.evidence}
        missing = [i for i in wanted if i not in self._episodes and i not in self._absent]
        if missing:
            found = self._lookup(missing)
            self._episodes.update(found)
            self._absent.update(i for i in missing if i not in found)
        return self._episodes

    @computed_once
    def _absent(self) -> set[str]:
        return set()

    def _lookup(self, ids: list[str]) -> dict[str, Episode]:
        """Episodes by id from the staged store: through the store's index when its blob id is known (a
        history walk meets each store version many times), else one search of the bytes."""
        return {i: ep for i, (ep, _) in self._locate(ids).items()}

    def _locate(self, ids) -> dict[str, tuple[Episode, int]]:
        """:func:`flowgit.episodes.locate` in the staged store, each id searched once per change (the ids a
        change appends are mostly the ones its patterns cite: a store of 100,000 episodes is read once)."""
        known = self._located
        missing = [i for i in dict.fromkeys(ids) if i not in known]
        if missing:
            found = self._search(missing)
            for ident in missing:
                known[ident] = found.get(ident)
        return {i: hit for i in ids if (hit := known.get(i)) is not None}

    @computed_once
    def _located(self) -> dict:
        return {}

    def _search(self, ids: list[str]) -> dict[str, tuple[Episode, int]]:
        """:func:`flowgit.episodes.locate` (through the store's index when its blob id is known)."""
        if self.new_store_oid is None or not isinstance(self.new_store, bytes):
            return locate(self.new_store, ids)
        prefix = None
        if self.old_store_in_memory and self.old_store_entry is not None and self.appended_check is None \
                and self._is_prefix:  # compared once already: the index need not compare again
            prefix = (self.old_store_entry[0], self.old_store)
        return store_index(self.new_store, self.new_store_oid, prefix=prefix).locate(ids)

    def sections(self, doc: Document | None, *semantics: Semantics):
        if doc is None:
            return []
        return [s for s, kind in _kinds(doc) if kind in semantics]

    def old_section(self, label: str):
        return self.old.find(label) if self.old else None

    def section_pairs(self, *semantics: Semantics):
        """(HEAD's section, the staged section) for every staged section of these semantics HEAD also had."""
        for section in self.sections(self.new, *semantics):
            before = self.old_section(section.label)
            if before is not None:
                yield before, section

    def changed_pairs(self, *semantics: Semantics):
        """:meth:`section_pairs` whose body lines differ: a rule that compares a section with HEAD's and
        finds nothing in the same lines reads only these."""
        for before, section in self.section_pairs(*semantics):
            if not self.same_body(before, section):
                yield before, section


def _identity_ids(doc: Document | None) -> tuple[frozenset[int], dict[int, str]]:
    """(ids of the document's identity map values, id of each one's parsed line -> its section), remembered
    with the document: it is one change's staged side and the next one's HEAD.

    A parsed line names one identity, so a pattern on the other side with the very same parsed line in the
    same section is that identity, unmoved. (The map's values live as long as the document: their ids stand.)
    """
    if doc is None:
        return frozenset(), {}
    found = doc.memo.get("checks.identity_ids")
    if found is None:
        values = document_identity_map(doc).values()
        found = doc.memo["checks.identity_ids"] = (frozenset(map(id, values)),
                                                   {id(at.pattern): at.section for at in values})
    return found


def _bodies_by_label(doc: Document) -> frozenset[tuple[str, int]]:
    """(label, id of its body's facts) of each of the document's sections, remembered with it.

    A section of the other version with the same label and the very same
    facts (the same body, moved up or down by an edit above it) holds the very
    same parsed lines in a section of the same label: with each identity once,
    every one of them is that version's identity map value, unmoved, which is
    all :meth:`CheckContext._patterns_not_shared`'s callers pass over. (The
    facts live as long as the document: their ids stand.)
    """
    found = doc.memo.get("checks.bodies")
    if found is None:
        found = doc.memo["checks.bodies"] = frozenset((s.label, id(doc.facts(s))) for s in doc.sections)
    return found


def _kinds(doc: Document) -> tuple:
    """(section, its semantics) for each of the document's sections, remembered with the document (the rules
    ask for sections by semantics a dozen times per change, and the document is the next change's HEAD)."""
    found = doc.memo.get("checks.kinds")
    if found is None:
        found = doc.memo["checks.kinds"] = tuple((s, s.semantics) for s in doc.sections)
    return found


def _without_marker_lines(data: bytes) -> bytes:
    """``data`` with every line that is one of git's conflict markers taken out (whole lines, endings too)."""
    from flowgit.merge.markers import MARKER_RE

    return b"".join(line for line in data.splitlines(keepends=True) if not MARKER_RE.fullmatch(line.rstrip(b"\n")))
