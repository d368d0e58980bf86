"""A continuity file as sections with exact line spans.

The text is kept as its lines, line endings included, so rendering an unchanged
document gives back the identical bytes. The structure is CommonMark's, as
markdown-it-py reads it with only ATX headings, fences and indented code
enabled (only ``##`` opens a section; ``###`` opens a subsection; a ``# ``
line inside a section is a FLOW comment; headings inside code fences do not
count): :func:`block_headings` reads exactly that in one pass over the lines,
without importing markdown-it, because the pre-commit hook parses two
documents on every commit and markdown-it's import alone costs more than the
rest of the parse. ``tests/continuity/test_document_structure.py`` holds the
two readings equal. Every edit splices lines inside one section and re-parses,
so no byte outside the edited span can move.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, Iterator, Mapping

from flowgit.continuity.identity import canonical_section
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
    files). :func:`block_headings` is the reading every caller uses; this parser
    is the reference the tests hold it to.
    """
    from markdown_it import MarkdownIt

    md = MarkdownIt("zero").enable(["heading", "fence", "code"])
    md.disable(["inline", "text_join"], ignoreInvalid=True)
    return md


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


@dataclass(frozen=True)
class Subsection:
    """A ``###`` block inside a section."""

    title: str
    heading: int
    end: int


@dataclass(frozen=True)
class Section:
    """A ``##`` section: heading line, body span and what the wrap may do to it."""

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


@dataclass(frozen=True)
class Item:
    """One countable thing in a section: a list item, pattern line, FlowScript line or paragraph."""

    start: int
    end: int
    text: str
    kind: str  # "pattern" | "list" | "line" | "prose"

    @property
    def first_line(self) -> int:
        return self.start + 1


@dataclass
class Document:
    """A parsed continuity file. Build with :meth:`parse`; render with :attr:`text`."""

    lines: list[str]
    sections: list[Section] = field(default_factory=list)
    aliases: Mapping[str, tuple[str, ...]] | None = None
    path: str | None = None
    # items per body span: a document's lines are never changed in place (edits build a new one),
    # and the gate's rules ask for the same section's items many times per judgement
    _item_cache: dict = field(default_factory=dict, repr=False, compare=False)

    # ----------------------------------------------------------------- parse
    @classmethod
    def parse(cls, text: str, *, aliases: Mapping[str, tuple[str, ...]] | None = None,
              path: str | None = None) -> "Document":
        lines = split_lines(text)
        doc = cls(lines=lines, aliases=aliases, path=path)
        doc.sections = _find_sections(lines, alias_table(aliases))
        return doc

    @property
    def text(self) -> str:
        return "".join(self.lines)

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
        table = alias_table(self.aliases)
        wanted = table.get(name.strip().lower(), name.strip())
        for section in self.sections:
            if section.canonical == wanted or section.name.lower() == name.strip().lower():
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
        fence: str | None = None
        for index in range(sec.body_start, sec.body_end):
            fence, is_fence = fence_step(self.lines[index], fence)
            if fence is None and not is_fence:
                yield index

    def items(self, section: Section | str) -> list[Item]:
        sec = self.get(section) if isinstance(section, str) else section
        key = (sec.body_start, sec.body_end)
        if key not in self._item_cache:
            self._item_cache[key] = tuple(_items(self.lines, list(self.content_indices(sec))))
        return list(self._item_cache[key])

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

    def move_line(self, index: int, to: str, text: str | None = None) -> "Document":
        """Take one line out of its section and append it (or ``text``) to section ``to``."""
        line = strip_eol(self.lines[index]) if text is None else text
        doc = self.splice(index, index + 1, [])
        if doc.find(to) is None:
            doc = doc.add_section(to)
        return doc.append_lines(to, [line])

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


def _find_sections(lines: list[str], table: Mapping[str, str]) -> list[Section]:
    if not lines:
        return []
    source = "".join(lines).replace("\r\n", "\n").replace("\r", " ").lstrip("\ufeff")
    h2: list[int] = []
    h3: list[tuple[int, str]] = []
    for index, level in block_headings(source):
        if level == 2:
            h2.append(index)
        elif level == 3:
            h3.append((index, _heading_text(lines[index], 3)))
    wrappers = _wrapper_stack(lines)
    sections: list[Section] = []
    for i, start in enumerate(h2):
        end = h2[i + 1] if i + 1 < len(h2) else len(lines)
        body_end = end
        while body_end > start + 1 and (not lines[body_end - 1].strip() or WRAPPER_RE.match(lines[body_end - 1])):
            body_end -= 1
        title = _heading_text(lines[start], 2)
        name, _, suffix = title.partition("|")
        name = name.strip().rstrip(":").strip()
        subs = [(ln, t) for ln, t in h3 if start < ln < end]
        subsections = tuple(
            Subsection(t, ln, subs[j + 1][0] if j + 1 < len(subs) else body_end)
            for j, (ln, t) in enumerate(subs))
        sections.append(Section(title=title, name=name, suffix=suffix.strip(),
                                canonical=canonical_section(name, table), heading=start, end=end,
                                body_end=body_end, wrapper=wrappers.get(start),
                                subsections=subsections))
    return sections


def block_headings(source: str) -> list[tuple[int, int]]:
    """(line index, level) of every ATX heading outside fenced code, as markdown-it reads ``source``.

    ``source`` has ``\\n`` line breaks only. With headings, fences, indented
    code and paragraphs as the only block rules, CommonMark's structure comes
    down to this: a line indented four columns or more (a tab reaches the next
    multiple of four) is code or a paragraph's continuation, so it neither
    opens nor closes anything; outside a fence, a run of three or more
    backticks (no backtick after it) or tildes opens one, and 1-6 ``#``
    followed by a space, a tab or the line's end is a heading; inside a fence
    only a run of the same character, at least as long, followed by nothing
    but spaces and tabs closes it; an unclosed fence runs to the end.
    Paragraphs and indented code never hide a heading or a fence, because
    both interrupt a paragraph and neither can start four columns in.
    """
    found: list[tuple[int, int]] = []
    fence_char = ""
    fence_len = 0
    for index, line in enumerate(source.split("\n")):
        first = line[:1]
        if first not in _BLOCK_LEADS:
            if first not in (" ", "\t"):
                continue
            rest = line.lstrip(" \t")
            if rest[:1] not in _BLOCK_LEADS or _indent_columns(line, len(line) - len(rest)) >= 4:
                continue
        else:
            rest = line
        lead = rest[0]
        run = len(rest) - len(rest.lstrip(lead))
        if fence_char:
            if lead == fence_char and run >= fence_len and not rest[run:].strip(" \t"):
                fence_char = ""
        elif lead == "#":
            if run <= 6 and (run == len(rest) or rest[run] in " \t"):
                found.append((index, run))
        elif run >= 3 and not (lead == "`" and "`" in rest[run:]):
            fence_char, fence_len = lead, run
    return found


_BLOCK_LEADS = frozenset("#`~")


def _indent_columns(line: str, count: int) -> int:
    """Columns taken by the first ``count`` characters of ``line`` (spaces and tabs; tab stops of 4)."""
    columns = 0
    for ch in line[:count]:
        columns += 4 - columns % 4 if ch == "\t" else 1
    return columns


def _heading_text(line: str, level: int) -> str:
    text = strip_eol(line).lstrip("\ufeff").strip()[level:].strip()
    return re.sub(r"\s+#+\s*$", "", text)


def _wrapper_stack(lines: list[str]) -> dict[int, str]:
    """For each line, the innermost wrapper tag (``<activation>`` …) it sits in."""
    stack: list[str] = []
    inside: dict[int, str] = {}
    for index, line in enumerate(lines):
        m = WRAPPER_RE.match(line)
        if m:
            closing, tag = m.groups()
            if closing and tag in stack:
                while stack and stack.pop() != tag:
                    pass
            elif not closing:
                stack.append(tag)
        elif stack and line.lstrip().startswith("##"):
            inside[index] = stack[-1]
    return inside


def is_structural(line: str) -> bool:
    """Lines that are scaffolding rather than content: blank, comments, headings, tags, braces."""
    stripped = line.strip()
    return (not stripped or bool(COMMENT_RE.match(line)) or stripped.startswith("##")
            or bool(WRAPPER_RE.match(line)) or bool(BRACE_RE.match(line)))


def _items(lines: list[str], indices: list[int]) -> Iterator[Item]:
    from flowgit.continuity.patterns import looks_like_pattern

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
        if is_structural(line):
            if current:
                yield _item(lines, current, kind)
            current = None
            continue
        bullet = BULLET_RE.match(line)
        indent = len(line) - len(line.lstrip())
        if looks_like_pattern(line):
            new_kind = "pattern"
        elif bullet:
            new_kind = "list"
        elif current and kind in ("list", "pattern") and indent > current_indent:
            current.append(index)  # continuation of the item above
            continue
        elif current and kind == "prose":
            current.append(index)
            continue
        else:
            new_kind = "line" if _has_flowscript(line) else "prose"
        if current:
            yield _item(lines, current, kind)
        current, kind, current_indent = [index], new_kind, indent
    if current:
        yield _item(lines, current, kind)


FLOWSCRIPT_LEAD = re.compile(r"^\s*(?:[!*~]|\+\+|\?|✓|thought:|->|<-|<->|><|\[)")


def _has_flowscript(line: str) -> bool:
    return bool(FLOWSCRIPT_LEAD.match(line)) or any(m in line for m in (" -> ", " <- ", "><[", "[decided", "[blocked", "[parking", "[D:", "[B:", "[P:"))


def _item(lines: list[str], indices: list[int], kind: str) -> Item:
    text = " ".join(strip_eol(lines[i]).strip() for i in indices)
    return Item(start=indices[0], end=indices[-1] + 1, text=text, kind=kind)
