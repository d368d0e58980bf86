"""The FlowScript marker lexer and linter.

Codes follow the FlowScript linter's style: E001 tension without an axis, E002
a required field missing, E003 more than one state on one node, W001 parking
without why/until, W002 a date that is neither ISO nor ``Jan 10``.
``# `` comment lines (the template's guidance, a marker legend such as
``# FS: -> <- = != + | >< {block} ! ?``) are not linted. Code fences, inline
code, HTML tags and ``<name@host>`` addresses are masked first so ``<b></b>`` or a
quoted example never trips a rule; columns still point into the real line.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, NamedTuple, Sequence

from flowgit.continuity.document import fence_step, split_lines, strip_eol
from flowgit.dates import parse_date

MASK_RE = re.compile(r"`[^`]*`|<!--.*?-->|</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>|<[^<>\s@]+@[^<>\s]+>")
COMMENT_LINE_RE = re.compile(r"^\s{0,3}#(?:\s|$)")  # FLOW guidance / marker legend, not FlowScript
TENSION_RE = re.compile(r"><(?!\[[^\]]*\S[^\]]*\])")
LONG_STATE_RE = re.compile(r"\[(?P<kind>decided|blocked|parking|exploring)(?:\((?P<args>[^\]]*)\))?\]")
SHORT_STATE_RE = re.compile(r"\[(?P<kind>[DBP]):(?P<args>[^\]]*)\]")
FIELD_RE = re.compile(r"(\w+)\s*:\s*(\"[^\"]*\"|'[^']*'|[^,]*)")

REQUIRED = {"decided": ("rationale", "on"), "blocked": ("reason", "since")}
RECOMMENDED = {"parking": ("why", "until")}
SHORT_KIND = {"D": "decided", "B": "blocked", "P": "parking"}
DATE_FIELDS = {"on", "since"}


class Finding(NamedTuple):
    """One lint result at a 1-based line and column (a named tuple: the hook imports this module)."""

    line: int
    col: int
    code: str
    message: str

    @property
    def is_error(self) -> bool:
        return self.code.startswith("E")

    def format(self, path: str) -> str:
        return f"{path}:{self.line}:{self.col}: {self.code} {self.message}"


def _mask(line: str) -> str:
    return MASK_RE.sub(lambda m: " " * len(m.group(0)), line)


def _fields(args: str) -> dict[str, str]:
    return {k.lower(): v.strip().strip("\"'").strip() for k, v in FIELD_RE.findall(args or "")}


def lint_line(line: str, lineno: int) -> list[Finding]:
    """Lint one line (without its fence context)."""
    text = _mask(strip_eol(line))
    findings: list[Finding] = []
    for m in TENSION_RE.finditer(text):
        findings.append(Finding(lineno, m.start() + 1, "E001",
                                "tension `><` needs an axis: write `><[axis]`, e.g. `><[speed vs safety]`"))
    states: list[tuple[int, str]] = []
    for m in LONG_STATE_RE.finditer(text):
        kind = m.group("kind")
        states.append((m.start() + 1, kind))
        findings.extend(_check_fields(kind, _fields(m.group("args") or ""), lineno, m.start() + 1, long=True))
    for m in SHORT_STATE_RE.finditer(text):
        kind = SHORT_KIND[m.group("kind")]
        states.append((m.start() + 1, kind))
        first, _, second = m.group("args").rpartition(",")
        names = REQUIRED.get(kind) or RECOMMENDED[kind]
        values = dict(zip(names, (first.strip(), second.strip()))) if first else {names[0]: second.strip()}
        findings.extend(_check_fields(kind, {k: v for k, v in values.items() if v}, lineno, m.start() + 1, long=False))
    if len(states) > 1:
        col, _ = states[1]
        kinds = ", ".join(k for _, k in states)
        findings.append(Finding(lineno, col, "E003",
                                f"more than one state on one node ({kinds}): keep one, split the line"))
    return findings


def _check_fields(kind: str, values: dict[str, str], lineno: int, col: int, *, long: bool) -> list[Finding]:
    out: list[Finding] = []
    if kind in REQUIRED:
        missing = [f for f in REQUIRED[kind] if not values.get(f)]
        if missing:
            quoted = ", ".join(f'{f}: "…"' for f in REQUIRED[kind])
            example = f"[{kind}({quoted})]" if long else f"[{kind[0].upper()}:{','.join(REQUIRED[kind])}]"
            out.append(Finding(lineno, col, "E002",
                               f"`{kind}` is missing {' and '.join(missing)}: write {example}"))
    elif kind in RECOMMENDED:
        missing = [f for f in RECOMMENDED[kind] if not values.get(f)]
        if missing:
            out.append(Finding(lineno, col, "W001",
                               f"`parking` without {' and '.join(missing)}: say why it waits and until when"))
    for name in DATE_FIELDS & values.keys():
        if values[name] and parse_date(values[name]) is None:
            out.append(Finding(lineno, col, "W002",
                               f"`{name}: {values[name]}` is not a date: use 2026-11-30 or Nov 30"))
    return out


def lint_lines(lines: Sequence[str], indices: Iterable[int], *, fenced: bool = True) -> list[Finding]:
    """:func:`lint_text` of ``"".join(lines)`` limited to the 0-based ``indices``, without reading the rest.

    The gate lints the lines a change adds. Only a code fence makes a line's
    meaning depend on the lines above it; ``fenced=False`` says the text holds
    no run of three backticks or tildes (so no fence), and then each wanted line
    is linted on its own. With a fence, every line is walked for the fence state.
    """
    if fenced:
        wanted = set(indices)
        return _lint_all(lines, wanted.__contains__)
    findings: list[Finding] = []
    for index in sorted(set(indices)):
        line = lines[index]
        if ("><" not in line and "[" not in line) or COMMENT_LINE_RE.match(line):
            continue
        findings.extend(lint_line(line, index + 1))
    return findings


def lint_text(text: str, wanted: Callable[[int], bool] | None = None) -> list[Finding]:
    """Lint a whole document, skipping fenced code; ``wanted(index)`` limits it to some lines (0-based)."""
    return _lint_all(split_lines(text), wanted)


def _lint_all(lines: Sequence[str], wanted: Callable[[int], bool] | None) -> list[Finding]:
    findings: list[Finding] = []
    fence: str | None = None
    for index, line in enumerate(lines):
        fence, is_fence = fence_step(line, fence)
        if fence is not None or is_fence or ("><" not in line and "[" not in line):
            continue
        if COMMENT_LINE_RE.match(line) or (wanted is not None and not wanted(index)):
            continue
        findings.extend(lint_line(line, index + 1))
    return findings
