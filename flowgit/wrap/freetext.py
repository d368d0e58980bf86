"""Plan free text may say anything, but it may not add structure to the continuity file.

``state``, ``recent``, ``top_of_mind``, action items and pattern text are
written into one section (or one line). A line in them that opens a ``##``
section, looks like a pattern line, or — in a pattern's one-line text or
reason — any line break or level marker would smuggle a section or a pattern
past the wrap's own operations (a pattern "graduated" by a State paragraph).
Such text is refused with the plan field named.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from flowgit.checks.recognition import pattern_misread
from flowgit.continuity.patterns import CATEGORY_LABEL_RE, LEVEL_RE, level_marks, looks_like_pattern
from flowgit.continuity.sections import Semantics
from flowgit.errors import FlowgitError

SECTION_RE = re.compile(r"^\s{0,3}##(?!#)(\s|$)")  # `##` opens a section; `###` is a subsection, `# ` a comment
RAW_SECTION_RE = re.compile(r"##(?!#)")  # (a reader of the raw file takes `##Foundation` for one too)
WRAPPER_RE = re.compile(r"^\s*</?(activation|reference|knowledge)\b", re.IGNORECASE)


def _as_a_reader_sees(line: str) -> str:
    """The line as a reader of the raw file sees it begin: what draws nothing (an invisible character) gone,
    a Braille blank and other spaces read as spaces, the indent (a tab, a form feed) aside."""
    from flowgit.checks.recognition import as_a_raw_reader_sees

    return as_a_raw_reader_sees(line).lstrip()


def _is_merge_note(line: str) -> bool:
    """Whether ``line`` begins as the merge driver's note lines do (:data:`flowgit.merge.notes.NOTE_LINES`),
    read as a reader sees it (compatibility forms folded, spacing and letter case aside)."""
    import unicodedata

    from flowgit.merge.notes import NOTE_LINES

    seen = " ".join(unicodedata.normalize("NFKC", _as_a_reader_sees(line)).casefold().split())
    return any(seen.startswith(" ".join(mark.casefold().split())) for mark in NOTE_LINES)


FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
OTHER_BREAKS_RE = re.compile("[\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")  # (G111's, but the CR of a CRLF)


def _block_problem(text: str, semantics: Semantics | None = Semantics.REPLACE) -> str | None:
    """The first line of a block of free text that would add structure, in a section of ``semantics``; what a
    closed code fence holds is code (the file reads it so: a `## Rollback` in a fenced snippet is no section),
    a fence left open is not (it would turn every section after it into code). Patterns and headings are
    recognised by the gate's own readers (:mod:`flowgit.checks.recognition`), so what the gate would refuse
    in the file is refused here as the plan's field."""
    odd = OTHER_BREAKS_RE.search(text)
    if odd is not None:
        return (f"line {text[:odd.start()].count(chr(10)) + 1} holds a line break other than \\n "
                f"(U+{ord(odd.group()):04X}), which some readers break at and the file does not: write a real one")
    fence, opened = None, 0
    for n, line in enumerate(text.splitlines(), 1):
        marks = FENCE_RE.match(line)
        if fence is not None:
            if marks and marks[1][0] == fence[0] and len(marks[1]) >= len(fence) and not line[marks.end():].strip():
                fence = None
            continue
        if marks and not (marks[1][0] == "`" and "`" in line[marks.end():]):
            fence, opened = marks[1], n
            continue
        if SECTION_RE.match(line) or "#" in line and RAW_SECTION_RE.match(_as_a_reader_sees(line)):
            return f"line {n} opens a section (`{line.strip()[:40]}`)"
        if looks_like_pattern(line) or semantics is not None and pattern_misread(line, semantics):
            return f"line {n} is a pattern line (`{line.strip()[:40]}`): patterns change only through " \
                   f"`patterns` operations"
        if WRAPPER_RE.match(line):
            return f"line {n} is a section wrapper tag (`{line.strip()[:40]}`)"
        if _is_merge_note(line):
            return f"line {n} is a line of a merge note (`{line.strip()[:40]}`): only the merge driver writes " \
                   "them, and the next session is shown them as flowgit's"
    if fence is not None:
        return f"line {opened} opens a code fence ({fence}) that the text does not close"
    return _heading_problem(text)


def _leading_comment(text: str) -> str | None:
    """A body REPLACEd or REWRITTEN whole that opens with a comment line (`# Sprint 2`, `<!-- … -->`): the file
    reads its leading comments as the section's guidance, which every later wrap keeps above what it writes,
    so the line would pile up wrap after wrap."""
    from flowgit.continuity.document import COMMENT_RE

    first = next((line for line in text.splitlines() if line.strip()), "")
    if not COMMENT_RE.match(first):
        return None
    return f"opens with a comment line (`{first.strip()[:40]}`): the file reads a section's leading `#` lines " \
           "as its guidance, which every later wrap keeps, so each wrap's line would pile up above the next; " \
           "start with the content (a `### Sprint 2` subheading, or the line after the first)"


def _heading_problem(text: str) -> str | None:
    """A heading a reader sees that the gate does not (underlined, HTML, another level naming a section),
    or an HTML block or comment left open that would hide the next section's heading."""
    from flowgit.checks.recognition import headings_a_reader_sees

    found = headings_a_reader_sees(text)
    if not found:
        return None
    lines = text.splitlines()
    if found[0] == len(lines):
        return "leaves an HTML block or comment open, which would hide the next section's heading from a reader"
    return f"line {found[0] + 1} is a heading to a reader (`{lines[found[0]].strip()[:40]}`: underlined, HTML " \
           "or naming a section), which the file would not read as one: write it as plain text or a `###` " \
           "subheading"


# FlowScript's bracketed markers, which a pattern's text may carry (the protocol compresses into them on
# graduation): a tension's axis, a state with its fields. Any other bracket would read as an annotation.
FLOWSCRIPT_BRACKETS_RE = re.compile(r"><\[[^\[\]\n]*\]|\[(?:decided|blocked|parking|exploring)(?:\([^\[\]()\n]*\))?\]"
                                    r"|\[[DBP]:[^\[\]\n]*\]")


CODE_SPAN_RE = re.compile(r"(`+)[^`]+?\1")


def _line_problem(text: str, flowscript: bool = False) -> str | None:
    if "\n" in text or "\r" in text:
        return "contains a line break; it is written into a single pattern line"
    if LEVEL_RE.search(text) or level_marks(text):  # (`｜ 3x` is a level to a reader too)
        return "contains a level marker (`| Nx`), which would change the pattern's level"
    rest = FLOWSCRIPT_BRACKETS_RE.sub(" ", text) if flowscript else text
    rest = CODE_SPAN_RE.sub(" ", rest)  # (`resp.headers["Retry-After"]` shown as code is no annotation)
    if "[" in rest or "]" in rest:
        allowed = " (FlowScript's `><[axis]`, `[decided(…)]`, `[blocked(…)]`, `[parking(…)]`, `[exploring]` " \
                  "are fine)" if flowscript else ""
        return f"contains `[` or `]`, which would read as an annotation (evidence, link or note){allowed}"
    return None


# The section a plan field is written into, by its semantics (a pattern's text, reason or category goes into
# a pattern line, where a level of its own would be read: see :func:`_line_problem`)
SEMANTICS = {"state": Semantics.REPLACE, "top_of_mind": Semantics.REPLACE, "recent": Semantics.REWRITE,
             "actions": Semantics.LIFECYCLE}


def _semantics_of(path: str) -> Semantics | None:
    """The semantics of the section the field at ``path`` (``plan.actions.next.x``) is written into as lines of
    its own; None for a pattern's fields (they go inside one pattern line)."""
    top = re.match(r"plan\.(\w+)", path)
    return SEMANTICS.get(top.group(1)) if top else None


Keys = tuple  # the keys and indices walked to a field (:func:`flowgit.wrap.plan.field_line` finds its line)


def _fields(data: dict[str, Any]) -> Iterator[tuple[str, str, bool, Keys]]:
    """(field path, text, is one line, keys) for every free-text field of a plan (a pattern's ``text`` may hold
    FlowScript's bracketed markers; a reason or category goes inside an annotation, so it may not)."""
    for key in ("state", "recent"):
        if isinstance(data.get(key), str):
            yield f"plan.{key}", data[key], False, (key,)
    tom = data.get("top_of_mind")
    if isinstance(tom, str):
        yield "plan.top_of_mind", tom, False, ("top_of_mind",)
    elif isinstance(tom, list):
        for i, item in enumerate(tom):
            if isinstance(item, str):
                yield f"plan.top_of_mind[{i}]", item, True, ("top_of_mind", i)
    yield from _action_fields(data.get("actions") or {})
    for i, op in enumerate(data.get("patterns", []) or []):
        for key in ("text", "reason", "category"):
            if isinstance(op, dict) and isinstance(op.get(key), str):
                yield f"plan.patterns[{i}].{key}", op[key], True, ("patterns", i, key)


def _action_fields(actions: dict[str, Any]) -> Iterator[tuple[str, str, bool, Keys]]:
    """Every text of ``actions``, each one line: ``add``'s items and ``done``/``remove``'s entries, and
    ``seen``/``next``'s keys and values (a value is written into the item's line, a key names an item)."""
    for kind in ("add", "done", "remove"):
        for i, item in enumerate(actions.get(kind, []) or []):
            if isinstance(item, str):
                yield f"plan.actions.{kind}[{i}]", item, True, ("actions", kind, i)
    for kind in ("seen", "next"):
        entries = actions.get(kind) or {}
        for key, value in entries.items() if isinstance(entries, dict) else ():
            yield f"plan.actions.{kind} key {key!r}", key, True, ("actions", kind, key)
            if isinstance(value, str):
                yield f"plan.actions.{kind}.{key}", value, True, ("actions", kind, key)


def undated_action(data: dict[str, Any]) -> tuple[str, tuple[str, str], str] | None:
    """(field, its keys, value) of the first ``actions.seen``/``actions.next`` value that is no date: it is
    written as the item's ``seen:``/``next:``, which staleness and overdue items are read from."""
    from flowgit.dates import parse_date

    actions = data.get("actions") or {}
    for kind in ("seen", "next"):
        for key, value in (actions.get(kind) or {}).items():
            if isinstance(value, str) and parse_date(value) is None:
                return f"plan.actions.{kind}.{key}", (kind, key), value
    return None


def refuse_structure(data: dict[str, Any], source: str, plan_text: str | None = None) -> None:
    """Raise a FlowgitError naming the first free-text field that would inject structure (and its line in
    ``plan_text``, the plan's source, when given)."""
    for path, text, one_line, keys in _fields(data):
        problem = _block_problem(text, _semantics_of(path)) or (None if one_line else _leading_comment(text))
        if problem is None and one_line:
            if "\n" in text or "\r" in text:
                problem = "contains a line break; it is written as one line"
            if path.startswith("plan.patterns"):
                problem = problem or _line_problem(text, flowscript=path.endswith(".text"))
            if path.endswith(".category") and ("(" in text or ")" in text):
                problem = problem or ("contains `(` or `)`: the category is written inside parentheses, and one "
                                      "of its own would end them early (the graduation date after it would go "
                                      "unread)")
            if path.endswith(".category") and text and not CATEGORY_LABEL_RE.fullmatch(text):
                problem = problem or ("is not a one-word label (`RELIABILITY`, `COST-CONTROL`): a phrase there "
                                      "reads as part of the claim (G209)")
        if problem:
            from flowgit.wrap.plan import field_line

            raise FlowgitError(f"field `{path}` {problem}", path=source,
                               line=field_line(plan_text, keys) if plan_text is not None else None,
                               fix="keep free text to prose and list items; use `patterns` operations for "
                                   "patterns and leave section headings to the file")
