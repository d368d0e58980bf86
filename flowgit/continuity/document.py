"""A continuity file as sections with exact line spans.

The text is kept as its lines, line endings included, so rendering an unchanged
document gives back the identical bytes. markdown-it-py finds the structure
with only ATX headings, fences and indented code enabled (only ``##`` opens a
section; ``###`` opens a subsection; a ``# `` line inside a section is a FLOW
comment; headings inside code fences do not count). A file with no run of
three backticks or tildes has no fence, and then its headings are exactly its
ATX heading lines, read without markdown-it (:func:`_headings` says why): the
pre-commit hook parses two documents on every commit, and markdown-it's import
alone costs more than the rest. ``tests/continuity/test_document_structure.py``
holds every reading to markdown-it's. Every edit splices lines inside one
section and re-parses, so no byte outside the edited span can move.

A history walk reads thousands of versions a few lines apart:
:meth:`Document.parse_against` reads a version as an edit of the one read
before it (shared lines, headings, tags and section facts taken from it, only
the lines between read), and ``tests/continuity/test_document_against.py``
holds every such reading to a fresh parse.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import OrderedDict
from functools import lru_cache
from typing import Callable, Iterable, Iterator, Mapping, NamedTuple, Sequence

from flowgit.continuity.identity import as_seen, canonical_section
from flowgit.continuity.sections import CANONICAL_ORDER, Semantics, alias_table, semantics_of
from flowgit.errors import FlowgitError

WRAPPER_RE = re.compile(r"^\s*<(/?)([A-Za-z][\w-]*)>\s*$")
COMMENT_RE = re.compile(r"^\s{0,3}#(?:\s|$)|^\s*<!--.*-->\s*$")
BULLET_RE = re.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+")
BRACE_RE = re.compile(r"^\s*[{}]\s*$")
FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def fence_step(line: str, open_fence: str | None) -> tuple[str | None, bool]:
    """CommonMark fences: (the fence open after ``line``, whether ``line`` is a fence line).

    A backtick fence's info string may not contain a backtick; a closing fence
    uses the opening character, at least as many times, and nothing else.
    """
    if "```" not in line and "~~~" not in line:
        return open_fence, False  # most lines: no run of three fence characters, so no fence line
    m = FENCE_RE.match(line.rstrip("\r\n"))
    if not m:
        return open_fence, False
    marker, rest = m.group(1), m.group(2)
    if open_fence is None:
        if marker[0] == "`" and "`" in rest:
            return None, False
        return marker, True
    if marker[0] == open_fence[0] and len(marker) >= len(open_fence) and not rest.strip():
        return None, True
    return open_fence, False


@lru_cache(maxsize=1)
def _parser():
    """A markdown-it parser with only the block rules that decide structure.

    Headings, fences and indented code (which stops a 4-space-indented `##` from
    being a heading, as CommonMark says) are all we need: inline parsing, lists and setext
    headings are switched off (a ``---`` under a line is not a section in FLOW
    files). It reads every file that holds a fence-like run (see :func:`_headings`),
    and is the reference the tests hold the fence-free reading to.
    """
    from markdown_it import MarkdownIt

    md = MarkdownIt("zero").enable(["heading", "fence", "code"])
    md.disable(["inline", "text_join"], ignoreInvalid=True)
    return md


@lru_cache(maxsize=1)
def _rendering_parser():
    """CommonMark's block rules with raw HTML on, as a renderer reads a file (no inline parsing: only where
    headings stand matters)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    md.disable(["inline", "text_join"], ignoreInvalid=True)
    return md


# The HTML blocks CommonMark opens on a line of their own (kinds 1 to 6): a comment, `<script>`, `<pre>`,
# `<style>`, `<textarea>`, `<?`, `<!X`, CDATA, and the block-level tags. Kind 7 (any other tag alone on a
# line, such as FLOW's own `<activation>`) is left out: FLOW files open with it right above a heading.
HIDING_HTML_RE = re.compile(
    r"^ {0,3}(?:<(?:script|pre|style|textarea)(?:\s|>|$)|<!--|<\?|<![A-Za-z]|<!\[CDATA\[|</?(?:address|article|aside|"
    r"base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|"
    r"figcaption|figure|footer|form|frame|frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|"
    r"menuitem|nav|noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|thead|"
    r"title|tr|track|ul)(?:\s|/?>|$))", re.IGNORECASE)


def rendered_structure(text: str) -> tuple[set[int], list[tuple[int, int]]]:
    """(the lines that start a level-2 heading as a renderer reads ``text``, ATX or underlined; the line
    spans of the HTML blocks of CommonMark's kind 7, a tag of its own alone on a line, which FLOW files open
    with right above a heading: see :data:`HIDING_HTML_RE`)."""
    from flowgit.continuity.browserhide import HiddenState, inline_tags, may_hide

    headings: set[int] = set()
    own_tags: list[tuple[int, int]] = []
    tokens = _rendering_parser().parse(text)
    browser = HiddenState() if may_hide(text) else None  # (a heading after `<!--` left open is none)
    for index, token in enumerate(tokens):
        if browser is not None and token.type == "inline":
            browser.feed(inline_tags(token.content), complete_comments_only=True)
        if not token.map:
            continue
        if token.type == "heading_open" and (token.tag == "h2" or names_a_section(tokens[index + 1].content)):
            if browser is None or not browser.hidden:
                headings.add(token.map[0])  # (any heading that names a section reads as one: `# Proven`, `===`)
        elif token.type == "html_block":
            if any(names_a_section(shown["text"]) for shown in HTML_HEADING_RE.finditer(token.content)) and (
                    browser is None or not browser.hidden):
                headings.add(token.map[0])  # (a heading anywhere in the block: `<details><summary><h2>…`)
            elif not HIDING_HTML_RE.match(token.content):
                own_tags.append((token.map[0], token.map[1]))
            if browser is not None:
                browser.feed(token.content)
    return headings, own_tags


HTML_HEADING_RE = re.compile(r"\s*<h[1-6]\b[^>]*>(?P<text>.*?)</h[1-6]\s*>", re.IGNORECASE | re.DOTALL)


def section_named(text: str) -> str | None:
    """The protocol section a heading's text names (by its name or a built-in alias) as a reader takes it:
    entities decoded, comments, emphasis and characters that draw nothing dropped, look-alike letters read as
    the letters they mimic (`Prоven` with a Cyrillic `о`), a leading emoji, symbol or ordinal skipped
    (`✅ Proven Knowledge`, `1. Proven Knowledge`), hyphens read as spaces (`Top-of-Mind`), a suffix the gate
    ignores ignored; None when it names none. The name whole: see :func:`section_seen_in` for a prefix."""
    from flowgit.continuity.identity import SUFFIX_RE

    key = _heading_key(text)
    table = _folded_aliases()
    return table.get(key) or table.get(SUFFIX_RE.sub("", key).strip())


def section_seen_in(text: str) -> str | None:
    """:func:`section_named`, or the section a ``## `` heading's folded text begins with as the gate reads
    one (`## Prоven Knowledge 2026`): the gate reads that heading as a free section of another name, so this
    tells it that a reader would take it (and its lines) for the protocol section's."""
    named = section_named(text)
    if named is not None:
        return named
    key = _heading_key(text, hyphen="-")  # (a hyphen joins a word on: `State-machine design` is another name)
    return canonical_section(key, alias_table()) if key else None


# What a heading may open with before the name a reader takes it by (read case-folded): a symbol or emoji, a
# number (`1.`, `2)`, `2026`), a Roman numeral or a letter as an ordinal (`ii.`, `a)`, `ii:`, `[ii]`,
# `ii –`), a part or section number (`part 2:`)
LEADING_DECORATION_RE = re.compile(r"^(?:[^\w\s]|_|\d{1,4}[.)]?|(?:[ivxlcdm]{1,6}|[a-z])\s*[.):\]\u2013\u2014-](?=\s)"
                                   r"|(?:part|section|chapter|step|appendix)\s+\w{1,6}\b[:.)]?|\s)+")


@lru_cache(maxsize=1 << 12)
def _heading_key(text: str, hyphen: str = " ") -> str:
    """A heading's text folded as :func:`section_named` reads it, hyphens read as ``hyphen`` (remembered:
    headings repeat)."""
    from flowgit.continuity.identity import fold_lookalikes

    text = fold_lookalikes(as_seen(text)).replace("*", " ").replace("_", " ").replace("-", hyphen)
    return " ".join(LEADING_DECORATION_RE.sub("", text).split()).rstrip(":").strip()


@lru_cache(maxsize=1)
def _folded_aliases() -> dict[str, str]:
    """The built-in names and aliases with hyphens read as spaces, as :func:`_heading_key` folds a heading."""
    return {" ".join(name.replace("-", " ").split()): canonical for name, canonical in alias_table().items()}


def names_a_section(text: str) -> bool:
    return section_named(text) is not None


def split_lines(text: str) -> list[str]:
    """Split on ``\\n`` only, keeping each line's ending (``\\r\\n`` stays intact)."""
    if not text:
        return []
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


class Subsection(NamedTuple):
    """A ``###`` block inside a section."""

    title: str
    heading: int
    end: int


class Section(NamedTuple):
    """A ``##`` section: heading line, body span and what the wrap may do to it.

    This module's value types are named tuples, not dataclasses: the gate's
    hook imports it on every commit, and a dataclass costs about a
    millisecond to define.
    """

    title: str
    name: str
    suffix: str
    canonical: str | None
    heading: int
    end: int
    body_end: int
    wrapper: str | None
    subsections: tuple[Subsection, ...] = ()

    @property
    def semantics(self) -> Semantics:
        return semantics_of(self.canonical)

    @property
    def label(self) -> str:
        return self.canonical or self.name

    @property
    def body_start(self) -> int:
        return self.heading + 1


class Item(NamedTuple):
    """One countable thing in a section: a list item, pattern line, FlowScript line or paragraph.

    A named tuple rather than a dataclass: a judgement builds hundreds per
    changed section, and a tuple is several times cheaper to make.
    """

    start: int
    end: int
    text: str
    kind: str  # "pattern" | "list" | "line" | "prose"

    @property
    def first_line(self) -> int:
        return self.start + 1


class Document:
    """A parsed continuity file. Build with :meth:`parse`; render with :attr:`text`."""

    def __init__(self, lines: list[str], sections: list[Section] | None = None,
                 aliases: Mapping[str, tuple[str, ...]] | None = None, path: str | None = None, *,
                 text: str | None = None) -> None:
        self.lines = lines
        self.sections: list[Section] = [] if sections is None else sections
        self.aliases = aliases
        self.path = path
        # items per body span: a document's lines are never changed in place (edits build a new one),
        # and the gate's rules ask for the same section's items many times per judgement
        self._item_cache: dict = {}
        self._body_cache: dict = {}
        self._line_set: frozenset[str] | None = None
        self._spans: list | None = None
        self._alias_cache: dict | None = None
        self._text: str | None = text  # the lines joined, when the caller already holds them
        self._find_cache: dict = {}
        self._names: list[tuple[str | None, str, Section]] | None = None
        self._facts_cache: dict = {}
        self._base: Document | None = None  # the version this one was read against (see parse_against)
        self._marks: Marks | None = None  # the lines that decide its sections, when parsed
        # (top lines shared with _base, first line of the shared bottom here, how far the bottom moved)
        self._shared: tuple[int, int, int] | None = None
        # what other modules derive from the whole document (its patterns, …), remembered with it
        self.memo: dict = {}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Document):
            return NotImplemented
        return (self.lines, self.sections, self.aliases, self.path) == \
            (other.lines, other.sections, other.aliases, other.path)

    __hash__ = None  # type: ignore[assignment]  # mutable, as before

    def __repr__(self) -> str:
        return f"Document(path={self.path!r}, lines={len(self.lines)}, sections={[s.label for s in self.sections]})"

    # ----------------------------------------------------------------- parse
    @classmethod
    def parse(cls, text: str, *, aliases: Mapping[str, tuple[str, ...]] | None = None,
              path: str | None = None) -> "Document":
        lines = split_lines(text)
        doc = cls(lines=lines, aliases=aliases, path=path, text=text)
        doc._marks = find_marks(text) if lines else Marks(False, (), (), ())
        doc.sections = _sections_at(lines, alias_table(aliases), doc._marks)
        return doc

    @classmethod
    def parse_against(cls, base: "Document", top: int, bottom: int, middle: str, *,
                      aliases: Mapping[str, tuple[str, ...]] | None = None,
                      path: str | None = None) -> "Document | None":
        """The document of ``base``'s first ``top`` lines, then ``middle``, then ``base``'s last ``bottom`` lines.

        What :meth:`parse` gives for that text (the tests hold the two equal),
        reading only ``middle``: the shared lines are ``base``'s own objects,
        their headings and tags ``base``'s, and the facts of a body that changed
        are derived from ``base``'s body of the same label. None when a
        fence-like run in ``base`` or ``middle`` makes that unsafe (then parse
        the whole text).
        """
        if base._marks is None or base._marks.runs or top + bottom > len(base.lines):
            return None
        if middle and not middle.endswith("\n") and bottom:
            return None  # the middle must end a line for the bottom to start one
        # lines between the first and the last change are mostly unchanged too: take base's objects for them
        known = {line: line for line in base.lines[top:len(base.lines) - bottom]}
        middle_lines = [known.get(line, line) for line in split_lines(middle)]
        lines = base.lines[:top] + middle_lines
        if bottom:
            lines += base.lines[len(base.lines) - bottom:]
        marks = marks_between(base._marks, len(base.lines), top, bottom, middle, len(lines))
        if marks is None:
            return None
        doc = cls(lines=lines, aliases=aliases, path=path)
        doc._marks = marks
        doc.sections = _sections_at(lines, alias_table(aliases), marks)
        doc._base = base
        doc._shared = (top, len(lines) - bottom, len(lines) - len(base.lines))
        base._base = base._shared = None  # one step back only: no chain of old versions stays alive
        return doc

    @property
    def text(self) -> str:
        """The document's text (joined once: a document's lines are never changed in place)."""
        if self._text is None:
            self._text = "".join(self.lines)
        return self._text

    def earlier(self, key: str) -> tuple[object, int, int] | None:
        """What ``memo`` holds under ``key`` for the version this one was read against (:meth:`parse_against`),
        with the span of lines between what the two share, ``(value, start, stop)``; None when this version
        was not read against one, or that one holds nothing under ``key``. Whatever is decided line by line
        is then decided for this version by the lines of that span."""
        base, shared = self._base, self._shared
        if base is None or shared is None or key not in base.memo:
            return None
        top, bottom_start, _ = shared
        return base.memo[key], top, bottom_start

    @property
    def newline(self) -> str:
        """The document's own line ending, used for every line an edit adds."""
        crlf = sum(1 for ln in self.lines[:200] if ln.endswith("\r\n"))
        return "\r\n" if crlf * 2 > min(len(self.lines), 200) else "\n"

    def require_sections(self) -> None:
        if not self.sections:
            raise FlowgitError("has no `## ` sections, so it is not a continuity file",
                               path=self.path, line=1,
                               fix="start sections with `## Current State` etc., or run `flowgit init`")

    # ---------------------------------------------------------------- lookup
    def find(self, name: str) -> Section | None:
        """The section called ``name`` (canonical, alias or literal heading, case-insensitive)."""
        found = self._find_cache.get(name, self)  # a document's sections never change: each name is looked up once
        if found is self:
            found = self._find_cache[name] = self._find(name)
        return found  # type: ignore[return-value]

    def _find(self, name: str) -> Section | None:
        lowered = name.strip().lower()
        wanted = self._table().get(lowered, name.strip())
        names = self._names
        if names is None:  # (each section's canonical and lower-cased names, worked out once per document)
            names = self._names = [(s.canonical, s.name.lower(), s) for s in self.sections]
        for canonical, lower, section in names:
            if canonical == wanted or lower == lowered:
                return section
        return None

    def get(self, name: str) -> Section:
        section = self.find(name)
        if section is None:
            raise FlowgitError(f"no section `{name}`", path=self.path,
                               fix="sections present: " + ", ".join(s.name for s in self.sections))
        return section

    def section_at(self, index: int) -> Section | None:
        for section in self.sections:
            if section.heading <= index < section.end:
                return section
        return None

    def body_text(self, section: Section | str) -> str:
        sec = self.get(section) if isinstance(section, str) else section
        return "".join(self.lines[sec.body_start:sec.body_end])

    def section_text(self, section: Section | str) -> str:
        sec = self.get(section) if isinstance(section, str) else section
        return "".join(self.lines[sec.heading:sec.end])

    def content_indices(self, section: Section | str) -> Iterator[int]:
        """Indices of a section's body lines that are not inside a code fence."""
        sec = self.get(section) if isinstance(section, str) else section
        start = sec.body_start
        return (start + offset for offset in self.facts(sec).content)

    def is_content(self, section: Section, index: int) -> bool:
        """Whether line ``index`` of ``section``'s body is content (outside any code fence)."""
        return index - section.body_start in self.facts(section).content_offsets

    def items(self, section: Section | str) -> list[Item]:
        sec = self.get(section) if isinstance(section, str) else section
        key = (sec.body_start, sec.body_end)
        if key not in self._item_cache:
            start = sec.body_start
            self._item_cache[key] = tuple(
                Item(start + a, start + b, text, kind) for a, b, text, kind in self.facts(sec).items)
        return list(self._item_cache[key])

    def facts(self, section: Section) -> "SectionFacts":
        """What the section's body lines alone decide (offsets from its first body line), shared by every
        document that has a section with exactly these body lines (found once per document: a long body's
        lines cost a hash each time they are looked up)."""
        key = (section.heading + 1, section.body_end)  # (body_start, without the property call: asked often)
        found = self._facts_cache.get(key)
        if found is None:
            found = self._kept_facts(key)
            if found is None:
                before = None if self._base is None else lambda: self._base_facts(section)
                found = _section_facts(self._body(section), before)
            self._facts_cache[key] = found
        return found

    def _kept_facts(self, key: tuple[int, int]) -> "SectionFacts | None":
        """The base version's facts of a body whose lines are all among those shared with it (the same
        line objects, so the same body), without looking the body up by its lines."""
        base, shared = self._base, self._shared
        if base is None or shared is None:
            return None
        top, bottom_start, shift = shared
        start, end = key
        if end <= top:
            return base._facts_cache.get(key)
        if start >= bottom_start:
            return base._facts_cache.get((start - shift, end - shift))
        return None

    def _base_facts(self, section: Section) -> "SectionFacts | None":
        """The facts of the section with ``section``'s label in the version this one was read against."""
        base = self._base
        if base is None:
            return None
        for other in base.sections:
            if other.label == section.label:
                return base.facts(other)
        return None

    @property
    def line_set(self) -> frozenset[str]:
        """Every line without its ending: what "is this line new?" is asked against (built span by span)."""
        if self._line_set is None:
            lines = self.lines
            first = self.sections[0].heading if self.sections else len(lines)
            outside = [lines[:first]]  # the preamble, each heading, and the blank or tag lines after a body
            for section in self.sections:
                outside.append(lines[section.heading:section.body_start])
                outside.append(lines[section.body_end:section.end])
            self._line_set = frozenset([ln.rstrip("\r\n") for part in outside for ln in part]).union(
                *(self.facts(section).derived("stripped", _stripped_body) for section in self.sections))
        return self._line_set

    def spans(self) -> list[tuple[str | None, tuple[str, ...]]]:
        """(section label or None for the preamble, its lines from heading to end): the file cut by section."""
        if self._spans is None:
            first = self.sections[0].heading if self.sections else len(self.lines)
            self._spans = [(None, tuple(self.lines[:first]))] + [
                (s.label, tuple(self.lines[s.heading:s.end])) for s in self.sections]
        return self._spans

    def _table(self) -> dict[str, str]:
        if self._alias_cache is None:
            self._alias_cache = alias_table(self.aliases)
        return self._alias_cache

    def _body(self, sec: Section) -> tuple[str, ...]:
        """A section's body lines, as the key its structure is remembered by across documents."""
        key = (sec.heading + 1, sec.body_end)  # (body_start, without the property call)
        body = self._body_cache.get(key)
        if body is None:
            body = self._body_cache[key] = tuple(self.lines[sec.body_start:sec.body_end])
        return body

    # ----------------------------------------------------------------- edits
    def splice(self, start: int, end: int, new_lines: Iterable[str]) -> "Document":
        """A new document with ``lines[start:end]`` replaced (the one primitive every edit uses)."""
        nl = self.newline
        fresh = [strip_eol(ln) + nl for ln in new_lines]
        lines = self.lines[:start] + fresh + self.lines[end:]
        if start > 0 and fresh and not self.lines[start - 1].endswith("\n"):
            lines[start - 1] = self.lines[start - 1] + nl
        if end >= len(self.lines) and fresh and self.lines and not self.lines[-1].endswith("\n"):
            lines[-1] = strip_eol(lines[-1])  # keep a missing final newline missing
        return Document.parse("".join(lines), aliases=self.aliases, path=self.path)

    def replace_body(self, name: str, body: str, *, keep_comments: bool = True) -> "Document":
        """REPLACE / REWRITE: swap a section's content, keeping its guidance comments.

        Leading ``# `` comment lines are the template's instructions for the
        section and survive; trailing blank lines and wrapper tags stay too.
        """
        sec = self.get(name)
        start = sec.body_start
        if keep_comments:
            last_comment = None
            for index in range(sec.body_start, sec.body_end):
                line = self.lines[index]
                if COMMENT_RE.match(line):
                    last_comment = index
                elif line.strip():
                    break
            if last_comment is not None:
                start = last_comment + 1
        while start < sec.body_end and not self.lines[start].strip():
            start += 1  # the blank lines that separate heading/comments from content stay
        new = split_lines(body.rstrip("\n") + "\n") if body.strip() else []
        return self.splice(start, sec.body_end, new)

    def append_lines(self, name: str, new_lines: list[str]) -> "Document":
        """Add lines at the end of a section's content."""
        sec = self.get(name)
        return self.splice(sec.body_end, sec.body_end, new_lines)

    def replace_lines(self, start: int, end: int, new_lines: list[str]) -> "Document":
        return self.splice(start, end, new_lines)

    def find_items(self, name: str, match: str) -> list[Item]:
        """Items of a section whose text contains ``match`` (case-insensitive)."""
        return [i for i in self.items(name) if match.lower() in i.text.lower()]

    def find_item(self, name: str, match: str) -> Item:
        hits = self.find_items(name, match)
        if len(hits) != 1:
            what = "no item" if not hits else f"{len(hits)} items"
            raise FlowgitError(f"{what} in `{name}` match {match!r}", path=self.path,
                               fix="quote a longer, unique part of the item's text")
        return hits[0]

    def insert_item(self, name: str, text: str, *, after: Item | None = None) -> "Document":
        """Add an item (one or more lines) after ``after``, or at the end of the section."""
        if self.find(name) is None:
            return self.add_section(name, text)
        at = after.end if after is not None else self.get(name).body_end
        return self.splice(at, at, split_lines(text.rstrip("\n") + "\n"))

    def update_item(self, name: str, item: Item | str, text: str) -> "Document":
        """Replace one item's lines (found by a part of its text, or given) with ``text``."""
        target = self.find_item(name, item) if isinstance(item, str) else item
        return self.splice(target.start, target.end, split_lines(text.rstrip("\n") + "\n"))

    def remove_item(self, name: str, item: Item | str) -> "Document":
        target = self.find_item(name, item) if isinstance(item, str) else item
        return self.splice(target.start, target.end, [])

    def move_line(self, index: int, to: str, text: str | None = None, end: int | None = None) -> "Document":
        """Take one line (or the lines up to ``end``) out of its section and append them to section ``to``,
        the first written as ``text`` when given."""
        end = index + 1 if end is None else end
        lines = [strip_eol(line) for line in self.lines[index:end]]
        if text is not None:
            lines[0] = text
        doc = self.splice(index, end, [])
        if doc.find(to) is None:
            doc = doc.add_section(to)
        return doc.append_lines(to, lines)

    def add_section(self, canonical: str, body: str = "") -> "Document":
        """Insert a missing canonical section after the nearest earlier one, in canonical order."""
        if self.find(canonical) is not None:
            return self
        order = list(CANONICAL_ORDER)
        position = order.index(canonical) if canonical in order else len(order)
        earlier = [s for s in self.sections if s.canonical in order[:position]]
        later = [s for s in self.sections if s.canonical in order[position + 1:]]
        block = [f"## {canonical}"] + ([""] + split_lines(body.rstrip("\n") + "\n") if body.strip() else []) + [""]
        if earlier:
            at = max(earlier, key=lambda s: s.heading).body_end
            return self.splice(at, at, [""] + block[:-1] if at and self.lines[at - 1].strip() else block)
        if later:
            at = min(later, key=lambda s: s.heading).heading
            return self.splice(at, at, block)
        tail = [""] if self.lines and self.lines[-1].strip() else []
        return self.splice(len(self.lines), len(self.lines), tail + block[:-1])


class ItemColumns(NamedTuple):
    """A body's items as four columns: shifting a block of them is two additions over tuples."""

    starts: tuple[int, ...]
    ends: tuple[int, ...]
    texts: tuple[str, ...]
    kinds: tuple[str, ...]


def shifted(values: Sequence[int], by: int) -> tuple[int, ...]:
    """``values`` each moved by ``by`` (a list display: about half the cost of mapping ``by.__add__``, which
    counts when a long body's items move below an inserted line)."""
    return tuple([value + by for value in values])


def _columns(items: tuple[Item, ...]) -> ItemColumns:
    if not items:
        return ItemColumns((), (), (), ())
    return ItemColumns(*zip(*items))


class SectionFacts:
    """What a section body's lines alone decide, relative to its first body line.

    Consecutive versions of a continuity file share almost every section, so
    these are remembered by the body's exact lines (a bounded cache): judging
    a change or walking history then costs what changed, not the whole file.
    """

    __slots__ = ("body", "content", "_items", "_columns", "_split", "_offsets", "_patterns", "_memo", "_runs",
                 "_shared")

    def __init__(self, body: tuple[str, ...], before: "SectionFacts | None" = None) -> None:
        self.body = body
        # (before, lines shared at its top, at its bottom): an earlier version of this body, read only for
        # what both decide line by line, and only while neither holds a fence-like run
        self._shared: tuple[SectionFacts, int, int] | None = None
        if before is not None and before._runs is False:
            top, bottom = shared_ends(before.body, body)
            if not has_fence_run("".join(body[top:len(body) - bottom])):
                self._runs = False  # the shared lines hold no run (``before`` has none), the others neither
                self.content: tuple[int, ...] = tuple(range(len(body)))
                self._shared = (before, top, bottom)
                before._shared = None  # one step back only: no chain of old bodies stays alive
        if self._shared is None:
            self._runs = has_fence_run("".join(body))  # lines keep their endings, so no run spans two
            self.content = _outside_fences(body, self._runs)  # lines outside code fences
        self._items: tuple[Item, ...] | None = None
        self._columns: ItemColumns | None = None
        self._split: tuple | None = None  # (facts derived from, items kept, items read, first item moved)
        self._offsets: frozenset[int] | None = None
        self._patterns: tuple | None = None
        self._memo: dict | None = None

    @property
    def content_offsets(self) -> frozenset[int]:
        if self._offsets is None:
            self._offsets = frozenset(self.content)
        return self._offsets

    @property
    def columns(self) -> "ItemColumns":
        """The items as columns (starts, ends, texts, kinds), counted from the first body line."""
        if self._columns is None:
            if self._items is None:
                self._items = tuple(_items(self.body, self.content))
            self._columns = _columns(self._items)
        return self._columns

    @property
    def items(self) -> tuple[Item, ...]:
        """Each item with its lines counted from the first body line, computed when first asked."""
        if self._items is None:
            starts, ends, texts, kinds = self.columns
            self._items = tuple(map(Item, starts, ends, texts, kinds))
        return self._items

    def item(self, index: int) -> Item:
        """One item, without building the others."""
        if self._items is not None:
            return self._items[index]
        starts, ends, texts, kinds = self.columns
        return Item(starts[index], ends[index], texts[index], kinds[index])

    @property
    def fenced(self) -> bool:
        """Whether some body line is a fence line or inside a fence."""
        return len(self.content) != len(self.body)

    def items_after(self, before: "SectionFacts") -> None:
        """Derive the items from ``before``'s, a body this one is an edit of, where both hold no fence.

        An item is decided by its own lines and, for a line that may continue
        it, the item above; a pattern line, a list line, and any line after a
        blank or structural line start afresh. So the items of the lines both
        bodies share at the top (those ending before the first difference) and
        at the bottom (from the first item there that starts afresh) are
        ``before``'s, moved; only the lines between are read.
        ``tests/continuity/test_document.py`` holds this to a fresh reading.
        """
        if self._columns is not None or self._items is not None or self.fenced or before.fenced or (
                before._columns is None and before._items is None):
            return
        old, new = before.body, self.body
        top, bottom = shared_ends(old, new)
        shared_from = len(old) - bottom  # old's first line of the shared bottom
        shift = len(new) - len(old)
        starts, ends, texts, kinds = before.columns
        count = len(starts)
        kept = bisect_left(ends, top)  # items ending before the first difference (ends only grow)
        start = ends[kept - 1] if kept else 0
        resume = count
        for k in range(max(kept, bisect_left(starts, shared_from)), count):
            at = starts[k]
            if _line_kind(old[at])[0] in (PATTERN_LINE, LIST_LINE) or (
                    at - 1 >= shared_from and _line_kind(old[at - 1])[0] == STRUCTURAL):
                resume = k
                break
        stop = starts[resume] + shift if resume < count else len(new)
        middle = _columns(tuple(_items(new, range(start, stop))))
        moved_starts, moved_ends = starts[resume:], ends[resume:]
        if shift:
            moved_starts, moved_ends = shifted(moved_starts, shift), shifted(moved_ends, shift)
        self._columns = ItemColumns(starts[:kept] + middle.starts + moved_starts,
                                    ends[:kept] + middle.ends + moved_ends,
                                    texts[:kept] + middle.texts + texts[resume:],
                                    kinds[:kept] + middle.kinds + kinds[resume:])
        self._split = (before, kept, len(middle.texts), resume)
        before._split = None  # one step back is all per_item reads: no chain of old bodies stays alive

    def per_item(self, key: str, value: Callable[[str, str], object]) -> tuple:
        """``value(text, kind)`` of each item, remembered under ``key``.

        After :meth:`items_after`, the items this body shares with the one it
        was derived from take that body's values (``value`` reads an item's
        text and kind, never where it stands), so only the items between are
        computed.
        """
        memo = self._memo
        if memo is None:
            memo = self._memo = {}
        found = memo.get(key)
        if found is None:
            _, _, texts, kinds = self.columns
            split = self._split
            earlier = split[0]._memo.get(key) if split is not None and split[0]._memo else None
            if earlier is not None:
                _, kept, read, resume = split
                found = earlier[:kept] + tuple(map(value, texts[kept:kept + read], kinds[kept:kept + read])) + \
                    earlier[resume:]
            else:
                found = tuple(map(value, texts, kinds))
            memo[key] = found
        return found

    @property
    def patterns(self) -> tuple:
        """(offset, Pattern) of each pattern line outside code fences, in order."""
        if self._patterns is None:
            shared = self._shared
            if shared is not None and shared[0]._patterns is not None:
                # no fence on either side: a line is a pattern by its text alone, so the shared lines'
                # patterns are the earlier body's (those at the bottom moved), and only the others are read
                before, top, bottom = shared
                old = before._patterns
                offsets = [at for at, _ in old]
                kept = bisect_left(offsets, top)
                tail_from = bisect_left(offsets, len(before.body) - bottom)
                shift = len(self.body) - len(before.body)
                tail = old[tail_from:]
                if shift and tail:
                    offsets, found = zip(*tail)
                    tail = tuple(zip(shifted(offsets, shift), found))
                self._patterns = old[:kept] + _patterns_in(self.body, range(top, len(self.body) - bottom)) + tail
            else:
                self._patterns = _patterns_in(self.body, self.content)
        return self._patterns

    def earlier(self, key: str) -> tuple[object, int, int] | None:
        """What :meth:`derived` remembered under ``key`` for the earlier body this one was read against,
        with how many lines the two share at the top and at the bottom (neither holds a fence-like run);
        None when there is no such body or it was not asked for ``key``."""
        shared = self._shared
        if shared is None:
            return None
        before, top, bottom = shared
        memo = before._memo
        if memo is None or key not in memo:
            return None
        return memo[key], top, bottom

    def derived(self, key: str, compute: Callable[["SectionFacts"], object]) -> object:
        """``compute(self)``, remembered under ``key``: for what a rule derives from the body's lines alone.

        Whatever ``compute`` reads besides the body (a configuration, the other
        side of a change, where the body stands) must not be remembered here
        unless ``key`` names it: the memo outlives the judgement that filled it
        and is found again by the body and the key alone.
        """
        memo = self._memo
        if memo is None:
            memo = self._memo = {}
        if key not in memo:
            memo[key] = compute(self)
        return memo[key]


def _patterns_in(body: tuple[str, ...], offsets: Iterable[int]) -> tuple:
    """(offset, Pattern) of each pattern line among ``body``'s lines at ``offsets``."""
    parse_pattern = _grammar.parse_pattern
    found = []
    for offset in offsets:
        line = body[offset]
        if "|" in line and "!" in line:
            pattern = parse_pattern(line)
            if pattern is not None:
                found.append((offset, pattern))
    return tuple(found)


STRIDE = 32  # lines compared at once (as one slice comparison in C) before going line by line


def shared_ends(old: Sequence[str], new: Sequence[str]) -> tuple[int, int]:
    """How many lines ``new`` shares with ``old`` at the top, and then at the bottom (never overlapping)."""
    limit = min(len(old), len(new))
    top = 0
    while top + STRIDE <= limit and old[top:top + STRIDE] == new[top:top + STRIDE]:
        top += STRIDE  # a block at a time (compared in C), then line by line
    while top < limit and old[top] == new[top]:
        top += 1
    bottom = 0
    room = limit - top
    end_old, end_new = len(old), len(new)
    while bottom + STRIDE <= room and \
            old[end_old - bottom - STRIDE:end_old - bottom] == new[end_new - bottom - STRIDE:end_new - bottom]:
        bottom += STRIDE
    while bottom < room and old[-1 - bottom] == new[-1 - bottom]:
        bottom += 1
    return top, bottom


def _outside_fences(body: tuple[str, ...], runs: bool) -> tuple[int, ...]:
    """Offsets of the lines outside code fences (every line when no line holds a fence-like run: ``runs``)."""
    if not runs:
        return tuple(range(len(body)))
    content: list[int] = []
    fence: str | None = None
    for index, line in enumerate(body):
        fence, is_fence = fence_step(line, fence)
        if fence is None and not is_fence:
            content.append(index)
    return tuple(content)


class _StrippedLines(dict):
    """Line -> the line without its ending, each distinct line stripped once (cleared when it grows large).

    Versions share their line objects (see :meth:`Document.parse_against`), so
    a lookup finds the line by identity with its hash already known, and the
    stripped line it gives is shared too: a body's set of stripped lines is
    then built without a new string or a new hash per line.
    """

    LIMIT = 1 << 14

    def __missing__(self, line: str) -> str:
        if len(self) >= self.LIMIT:
            self.clear()
        stripped = self[line] = line.rstrip("\r\n")
        return stripped


_STRIPPED = _StrippedLines()


def _stripped_body(facts: "SectionFacts") -> frozenset[str]:
    """The distinct lines of a body without their endings."""
    return frozenset(map(_STRIPPED.__getitem__, facts.body))


_FACTS: "OrderedDict[tuple[str, ...], SectionFacts]" = OrderedDict()
_FACTS_KEEP = 128  # a few versions' sections: the judgement of one change needs two


def _section_facts(body: tuple[str, ...], before: Callable[[], SectionFacts | None] | None = None) -> SectionFacts:
    """The facts of ``body`` (remembered by its lines); ``before`` gives an earlier version of it, if known."""
    found = _FACTS.get(body)
    if found is not None:
        _FACTS.move_to_end(body)
        return found
    found = _FACTS[body] = SectionFacts(body, before() if before is not None else None)
    if len(_FACTS) > _FACTS_KEEP:
        _FACTS.popitem(last=False)
    return found


# Where a ``##`` heading can start: at most three spaces, two hashes, then a space, a tab or the line's end
# (a tab before the hashes makes indented code). Every real heading matches; matches inside fences are not
# headings, which the parse decides.
H2_CANDIDATE_RE = re.compile(r"\n {0,3}##(?=[ \t\n]|\Z)")
# Any line starting in the first four columns with a character that is not blank: it ends indented code, and
# a paragraph above it either ends (a heading or fence interrupts it) or goes on without changing what the
# line is, so the text can be cut before it too.
LINE_CUT_RE = re.compile(r"\n(?= {0,3}[^ \t\n])")
Headings = tuple[tuple[int, str], ...]
_SECTIONS_SEEN: "OrderedDict[str, tuple[Headings, bool]]" = OrderedDict()
_LINES_SEEN: "OrderedDict[str, tuple[Headings, bool]]" = OrderedDict()


def _remember(cache: OrderedDict, key: str, value, keep: int):
    cache[key] = value
    if len(cache) > keep:
        cache.popitem(last=False)
    return value


def has_fence_run(text: str) -> bool:
    """Whether ``text`` holds a run of three backticks or tildes (without one, no line is a fence).

    The single character is looked for first: that search is several times
    cheaper on a long text, and most files hold no backtick or tilde at all.
    """
    return ("`" in text and "```" in text) or ("~" in text and "~~~" in text)


def _plain(piece: str) -> bool:
    """Text with no ``#`` and no run of three fence characters holds no heading and opens no fence."""
    return "#" not in piece and "```" not in piece and "~~~" not in piece


def _parse_piece(piece: str) -> tuple[Headings, bool]:
    """markdown-it on one piece: its h2/h3 headings as (line, tag), and whether a fence may be open at its end."""
    found = _LINES_SEEN.get(piece)
    if found is not None:
        return found
    if _plain(piece):
        return (), False
    tokens = _parser().parse(piece)
    heads = tuple((tok.map[0], tok.tag) for tok in tokens
                  if tok.type == "heading_open" and tok.map and tok.tag in ("h2", "h3"))
    line_count = piece.count("\n") + (0 if piece.endswith("\n") else 1)
    open_end = any(tok.type == "fence" and tok.map and tok.map[1] >= line_count for tok in tokens)
    return _remember(_LINES_SEEN, piece, (heads, open_end), 8192)


def _parse_section_piece(piece: str) -> tuple[Headings, bool]:
    """A piece cut at ``##`` candidates: remembered whole, else read line piece by line piece."""
    found = _SECTIONS_SEEN.get(piece)
    if found is not None:
        _SECTIONS_SEEN.move_to_end(piece)
        return found
    if _plain(piece):
        return (), False
    return _remember(_SECTIONS_SEEN, piece, _scan(piece, _line_starts, _parse_piece), 64)


def _line_starts(source: str) -> list[int]:
    """Offsets of the lines (after the first) that :data:`LINE_CUT_RE` allows a cut before."""
    return [m.start() + 1 for m in LINE_CUT_RE.finditer(source)]


def _scan(source: str, cuts, parse) -> tuple[Headings, bool]:
    """Headings of ``source`` parsed piece by piece, cut at the offsets ``cuts(source)`` gives.

    A piece whose last block is a fence that may still be open is joined with
    the pieces after it (twice as many each time) and parsed again, so a
    heading-like line inside a fence is never read as a heading.
    """
    starts = [0] + cuts(source)
    out: list[tuple[int, str]] = []
    line = 0
    i = 0
    open_end = False
    while i < len(starts):
        j = i + 1
        while True:
            piece = source[starts[i]:starts[j] if j < len(starts) else len(source)]
            heads, open_end = parse(piece)
            if not open_end or j >= len(starts):
                break
            j = min(len(starts), j + (j - i))
        out.extend((line + rel, tag) for rel, tag in heads)
        line += piece.count("\n")
        i = j
    return tuple(out), open_end


def _h2_starts(source: str) -> list[int]:
    """Offsets of the lines (after the first) that match :data:`H2_CANDIDATE_RE`, found from each ``##``.

    The same answer as the regular expression, without trying it at every line:
    a continuity file has few ``##`` and many lines.
    """
    out: list[int] = []
    pos = source.find("##")
    while pos != -1:
        line_start = source.rfind("\n", 0, pos) + 1
        after = source[pos + 2:pos + 3]
        if (line_start and pos - line_start <= 3 and not source[line_start:pos].strip(" ")
                and after in ("", " ", "\t", "\n")):
            out.append(line_start)
        pos = source.find("##", pos + 2)
    return out


ATX_RE = re.compile(r"^ {0,3}(#{2,3})(?=[ \t]|$)", re.MULTILINE)


def _headings(source: str) -> Headings:
    """Every h2/h3 heading of ``source`` as (line, tag): markdown-it's answer.

    Without a run of three backticks or tildes there is no fence, and with
    only headings, fences, indented code and paragraphs enabled a line is then
    a heading exactly when it is an ATX heading line: indented code needs four
    columns (a tab reaches four), and a heading interrupts a paragraph. So such
    a file is read line by line without markdown-it (the hook's usual case).
    Any file with a fence-like run goes to markdown-it, parsed a piece at a
    time: cut where the block state starts afresh, each piece parses as it
    would in place, and pieces are remembered by their text, so an unchanged
    section costs a lookup and a changed one its changed lines.
    """
    if not has_fence_run(source):
        return _atx_headings(source)
    return _scan(source, _h2_starts, _parse_section_piece)[0]


def _atx_headings(source: str) -> Headings:
    """The lines :data:`ATX_RE` matches, found from each ``#`` rather than tried at every character.

    A multi-line ``^`` makes the expression try every position of the text,
    and even a two-character search walks a long non-ASCII text slowly; a
    continuity file has a few dozen ``#``, each found by a one-character
    search. Each line holding one is checked once, at its start, with the
    expression itself.
    """
    out: list[tuple[int, str]] = []
    line_of = _line_finder(source)
    match = ATX_RE.match
    for line_start in lines_holding(source, "#"):
        m = match(source, line_start)
        if m:
            out.append((line_of(line_start), "h2" if len(m.group(1)) == 2 else "h3"))
    return tuple(out)


def lines_holding(source: str, char: str) -> Iterator[int]:
    """The start offset of each line of ``source`` that holds ``char``, in order, each line once."""
    pos = source.find(char)
    while pos != -1:
        yield source.rfind("\n", 0, pos) + 1
        line_end = source.find("\n", pos)
        if line_end == -1:
            return
        pos = source.find(char, line_end)


def _line_finder(source: str):
    """Offset -> 0-based line number, counting forward (the offsets asked for only grow)."""
    state = [0, 0]  # offset reached, lines before it

    def line_of(offset: int) -> int:
        state[1] += source.count("\n", state[0], offset)
        state[0] = offset
        return state[1]
    return line_of


class Marks(NamedTuple):
    """The lines of a text that decide its sections: ``##`` and ``###`` headings and lines holding ``<``.

    ``runs`` says whether the text holds a fence-like run. Without one, each
    of these is decided by its own line alone, so a version that shares lines
    with an earlier one takes the earlier one's marks there (see :func:`marks_between`).
    """

    runs: bool
    h2: tuple[int, ...]
    h3: tuple[int, ...]
    tags: tuple[int, ...]


def _find_sections(lines: list[str], table: Mapping[str, str], text: str | None = None) -> list[Section]:
    """The ``##`` sections of ``lines`` (``text``, when given, is the lines joined)."""
    return _sections_at(lines, table, find_marks("".join(lines) if text is None else text))


def find_marks(source: str, first: bool = True) -> Marks:
    """The :class:`Marks` of ``source``, line numbers counted from its first line (``first``: the file's)."""
    if not source:
        return Marks(False, (), (), ())
    if "\r" in source:  # a search for one character is far cheaper than a replace that finds nothing
        source = source.replace("\r\n", "\n").replace("\r", " ")
    if first:
        source = source.lstrip("\ufeff")
    h2: list[int] = []
    h3: list[int] = []
    for line, tag in _headings(source):
        (h2 if tag == "h2" else h3).append(line)
    if "<" in source:
        line_of = _line_finder(source)
        tags = tuple([line_of(start) for start in lines_holding(source, "<")])
    else:
        tags = ()
    return Marks(has_fence_run(source), tuple(h2), tuple(h3), tags)


def marks_between(before: Marks, before_count: int, top: int, bottom: int, middle: str, count: int) -> Marks | None:
    """The marks of a text that keeps ``before``'s first ``top`` and last ``bottom`` lines (of
    ``before_count``), with the ``middle`` text between them, ``count`` lines in all.

    None when a fence-like run on either side makes a line's meaning depend on the lines around it.
    """
    if before.runs:
        return None
    found = find_marks(middle, first=top == 0)
    if found.runs:
        return None
    shift, tail = count - before_count, before_count - bottom

    def merged(old: tuple[int, ...], new: tuple[int, ...]) -> tuple[int, ...]:
        kept = bisect_left(old, top)
        moved = old[bisect_left(old, tail):]
        return old[:kept] + tuple([top + at for at in new]) + (tuple([at + shift for at in moved]) if shift else moved)

    return Marks(False, merged(before.h2, found.h2), merged(before.h3, found.h3), merged(before.tags, found.tags))


def _sections_at(lines: list[str], table: Mapping[str, str], marks: Marks) -> list[Section]:
    """The sections ``marks`` cut ``lines`` into."""
    if not lines:
        return []
    h2 = marks.h2
    h3 = [(line, _heading_text(lines[line], 3)) for line in marks.h3]
    wrappers = _wrappers_at(lines, h2, marks.tags)
    sections: list[Section] = []
    named = _heading_reader(table)
    for i, start in enumerate(h2):
        end = h2[i + 1] if i + 1 < len(h2) else len(lines)
        body_end = end
        while body_end > start + 1 and (not lines[body_end - 1].strip() or WRAPPER_RE.match(lines[body_end - 1])):
            body_end -= 1
        title, name, suffix, canonical = named(lines[start])
        subs = [(ln, t) for ln, t in h3 if start < ln < end]
        subsections = tuple(
            Subsection(t, ln, subs[j + 1][0] if j + 1 < len(subs) else body_end)
            for j, (ln, t) in enumerate(subs))
        # (every field given in order: built without the named tuple's Python-level constructor)
        sections.append(tuple.__new__(Section, (title, name, suffix, canonical, start, end, body_end,
                                                wrappers.get(start), subsections)))
    return sections


_NAMED: "OrderedDict[tuple, dict[str, tuple[str, str, str, str | None]]]" = OrderedDict()


def _heading_reader(table: Mapping[str, str]) -> Callable[[str], tuple[str, str, str, str | None]]:
    """``##`` heading line -> (title, name, suffix, canonical name) under ``table``, each line read once.

    Remembered per alias table (by its contents: a table is a fresh dict per
    parse) and per line: the same headings come back in every version.
    """
    key = tuple(table.items())
    seen = _NAMED.get(key)
    if seen is None:
        seen = _remember(_NAMED, key, {}, 8)
    elif len(seen) > 4096:
        seen.clear()

    def named(line: str) -> tuple[str, str, str, str | None]:
        found = seen.get(line)
        if found is None:
            title = _heading_text(line, 2)
            name, _, suffix = title.partition("|")
            name = name.strip().rstrip(":").strip()
            found = seen[line] = (title, name, suffix.strip(), canonical_section(name, table))
        return found
    return named


def _heading_text(line: str, level: int) -> str:
    text = strip_eol(line).lstrip("\ufeff").strip()[level:].strip()
    return re.sub(r"\s+#+\s*$", "", text)


def _wrappers_at(lines: list[str], headings: Sequence[int], tags: Sequence[int]) -> dict[int, str]:
    """:func:`_wrapper_stack` at the given heading lines, reading only the lines that hold a ``<`` (``tags``).

    A wrapper tag is a line of its own holding ``<``, so only those lines move
    the stack; a heading's wrapper is the stack's top when it is reached.
    """
    if not tags:
        return {}
    inside: dict[int, str] = {}
    stack: list[str] = []
    next_tag = 0
    for heading in headings:
        while next_tag < len(tags) and tags[next_tag] < heading:
            _wrapper_move(stack, lines[tags[next_tag]])
            next_tag += 1
        if stack:
            inside[heading] = stack[-1]
    return inside


def _wrapper_move(stack: list[str], line: str) -> bool:
    """Open or close the wrapper tag ``line`` is (an unmatched closing tag is ignored); False if it is none."""
    m = WRAPPER_RE.match(line) if "<" in line else None
    if m is None:
        return False
    closing, tag = m.groups()
    if closing and tag in stack:
        while stack and stack.pop() != tag:
            pass
    elif not closing:
        stack.append(tag)
    return True


def _wrapper_stack(lines: list[str]) -> dict[int, str]:
    """For each line, the innermost wrapper tag (``<activation>`` …) it sits in.

    The plain walk over every line: the reference :func:`_wrappers_at` is held to by the tests.
    """
    stack: list[str] = []
    inside: dict[int, str] = {}
    for index, line in enumerate(lines):
        if not _wrapper_move(stack, line) and stack and line.lstrip().startswith("##"):
            inside[index] = stack[-1]
    return inside


def is_structural(line: str) -> bool:
    """Lines that are scaffolding rather than content: blank, comments, headings, tags, braces."""
    stripped = line.strip()
    return (not stripped or bool(COMMENT_RE.match(line)) or stripped.startswith("##")
            or bool(WRAPPER_RE.match(line)) or bool(BRACE_RE.match(line)))


STRUCTURAL, PATTERN_LINE, LIST_LINE, OTHER_LINE = range(4)


@lru_cache(maxsize=1 << 14)
def _line_kind(line: str) -> tuple[int, int, bool]:
    """(what the line opens, its indent, whether it carries FlowScript): asked once per distinct line."""
    if is_structural(line):
        return STRUCTURAL, 0, False
    indent = len(line) - len(line.lstrip())
    if _grammar.looks_like_pattern(line):
        return PATTERN_LINE, indent, False
    if BULLET_RE.match(line):
        return LIST_LINE, indent, False
    return OTHER_LINE, indent, _has_flowscript(line)


def is_structural_line(line: str) -> bool:
    """:func:`is_structural`, decided once per distinct line (the size rules read the same lines every change)."""
    return _line_kind(line)[0] == STRUCTURAL


def _items(lines: Sequence[str], indices: Iterable[int]) -> Iterator[Item]:
    current: list[int] | None = None
    kind = ""
    current_indent = 0
    previous = -2
    for index in indices:
        line = lines[index]
        if index != previous + 1 and current:  # a fence interrupted the item
            yield _item(lines, current, kind)
            current = None
        previous = index
        opens, indent, flowscript = _line_kind(line)
        if opens == STRUCTURAL:
            if current:
                yield _item(lines, current, kind)
            current = None
            continue
        if opens == PATTERN_LINE:
            new_kind = "pattern"
        elif opens == LIST_LINE:
            new_kind = "list"
        elif current and kind in ("list", "pattern") and indent > current_indent:
            current.append(index)  # continuation of the item above
            continue
        elif current and kind == "prose":
            current.append(index)
            continue
        else:
            new_kind = "line" if flowscript else "prose"
        if current:
            yield _item(lines, current, kind)
        current, kind, current_indent = [index], new_kind, indent
    if current:
        yield _item(lines, current, kind)


FLOWSCRIPT_LEAD = re.compile(r"^\s*(?:[!*~]|\+\+|\?|✓|thought:|->|<-|<->|><|\[)")


def _has_flowscript(line: str) -> bool:
    return bool(FLOWSCRIPT_LEAD.match(line)) or any(m in line for m in (" -> ", " <- ", "><[", "[decided", "[blocked", "[parking", "[D:", "[B:", "[P:"))


def _item(lines: Sequence[str], indices: list[int], kind: str) -> Item:
    text = lines[indices[0]].strip() if len(indices) == 1 else " ".join(lines[i].strip() for i in indices)
    return Item(start=indices[0], end=indices[-1] + 1, text=text, kind=kind)


# The pattern grammar reads documents, and this module reads pattern lines: imported last, once this module is
# whole, so either may be imported first (a call reads the attribute when it runs, not at import).
from flowgit.continuity import patterns as _grammar  # noqa: E402
