"""The transcripts partition: Claude Code's own session files, read directly when no deposit exists.

Most people do not run the tool that writes hypomnesis deposits, but every
Claude Code session leaves ``{config}/projects/{slug}/{sid}.jsonl``. This
partition derives, at read time, what a deposit would hold — the first
request, key statements of the person, anchors (``#412``, ``PR 88``,
``PAY-17``, file paths), keywords, the working directory, start and end
times, the terms the person coined ("let's call it budget-first") and the
sessions it continues — and keeps it only in memory for this
command. Nothing is cached or written.

Reading is streaming and bounded per file: lines are read up to
:data:`HEAD_LIMIT` bytes (a person's turns come early and are short; tool
output is long and skipped by a byte test before any JSON is parsed), and the
end time comes from the file's last few kilobytes. A session that has a
deposit is skipped when the deposit partition is read too: deposits win.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass
from typing import Iterator

from flowgit.ascend import formats, surrogates
from flowgit.ascend.model import Anchor, Coinage, Deposit, printable_name, refused_name, safe_id
from flowgit.ascend.safeio import Tree, bounded_lines
from flowgit.words import STOP, stem

HEAD_LIMIT = 256 * 1024      # bytes of a transcript read for its turns
LINE_LIMIT = 64 * 1024       # a longer line is tool output or a paste: not a turn worth parsing
TAIL_BYTES = 16 * 1024       # where the last timestamp is looked for
MAX_TURNS = 40               # person turns kept per session
KEYWORDS = 24
STATEMENT_CUES = re.compile(r"\b(let'?s|we should|we need|decid|don'?t|must|never|always|instead|the plan|"
                            r"go with|switch to|agreed|turns out|root cause|because)\b", re.I)
ISSUE_RE = re.compile(r"(?<![\w/#])#(\d{1,6})\b")
PR_RE = re.compile(r"\b(?:PR|pull request)\s*#?(\d{1,6})\b", re.I)
TICKET_RE = re.compile(r"\b([A-Z][A-Z0-9]{1,9}-\d{1,6})\b")
PATH_RE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w-]+\.[A-Za-z0-9]{1,6})\b")
WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*")
# a person naming something: "let's call this budget-first", "we'll call it the two-key rule"
COINING_RE = re.compile(r"\b(?:call(?:ing)? (?:it|this|that|them)|name(?:d)? (?:it|this|that)|dub(?:bed)? (?:it|this)|"
                        r"coin(?:ed)? (?:the term)?)\s+(?:the\s+)?[\"'“‘`]?([A-Za-z][\w-]{2,40})", re.I)
SYSTEM_PREFIXES = ("<command-", "<local-command", "<system-reminder", "Caveat:", "[Request interrupted")
# A block the agent wraps a program's text in when it records it as a `user` line: a command the person ran
# from the agent and what it printed (`<bash-input>`, `<bash-stdout>`, `<bash-stderr>`), a slash command's
# output, a hook's (`<user-prompt-submit-hook>`), a background task's (`<task-notification>`). The agent's
# markup names are lower case and hyphenated, so an HTML tag a person typed (`<b>`, `<div>`) is not one.
OUTPUT_BLOCK_RE = re.compile(r"<([a-z][a-z0-9]*(?:-[a-z0-9]+)+)(?:\s[^<>]*)?>.*?</\1\s*>", re.S)


def person_text(obj: dict) -> str | None:
    """The text of a person's turn, or None: a ``user`` line whose content is text, not a tool result or meta.

    A sidechain line (``isSidechain``: the prompt the agent wrote for a sub-agent, and that sub-agent's
    exchange) and a line of another ``userType`` than ``external`` are the agent's words, not the person's.
    """
    if obj.get("type") != "user" or obj.get("isMeta") or obj.get("isCompactSummary") or not main_line(obj):
        return None
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        text = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    else:
        return None
    text = without_program_output(text).strip()
    if not text or text.startswith(SYSTEM_PREFIXES):
        return None
    return text


def without_program_output(text: str) -> str:
    """``text`` without the blocks of program output the agent records as a person's line (:data:`OUTPUT_BLOCK_RE`).

    What a command or hook printed is a file, a page or a log, never the person's words: a quote found only
    there is not theirs, nor is an "ok, do it" a command wrote to stderr their agreement. What the person
    wrote around such a block stays; a tag they only name (no block) is their text.
    """
    if "</" not in text:
        return text
    return "\n".join(part for part in OUTPUT_BLOCK_RE.split(text)[::2] if part.strip())


def main_line(obj: dict) -> bool:
    """Whether a transcript line belongs to the session's own conversation, not a sub-agent's side chain."""
    return obj.get("isSidechain") is not True and obj.get("userType", "external") in ("external", None)


COLOUR_CONTEXT_RE = re.compile(r"colou?r|background|fill|stroke|border|shadow|hex|rgb|css|theme|palette|font",
                               re.IGNORECASE)


def _a_colour(text: str, match: "re.Match[str]") -> bool:
    """Whether a `#` and digits is a CSS colour (`color: #333`, `#000000;`), not an issue: three, four, six or
    eight digits with a colour word just around it, or three or six with a `;` or `}` just after."""
    digits = len(match[1])
    if digits not in (3, 4, 6, 8):
        return False
    after = text[match.end():match.end() + 2].lstrip()
    return (digits in (3, 6) and after[:1] in (";", "}")) or \
        COLOUR_CONTEXT_RE.search(text[max(0, match.start() - 16):match.end() + 12]) is not None


def anchors_in(text: str) -> list[Anchor]:
    """Issue, PR and ticket ids and file paths a person named, in the deposits' anchor kinds."""
    found: dict[tuple[str, str], Anchor] = {}
    for n in PR_RE.findall(text):
        found[("github_pr", n)] = Anchor("github_pr", f"PR #{n}", "transcript")
    for match in ISSUE_RE.finditer(text):
        n = match[1]
        if ("github_pr", n) not in found and not _a_colour(text, match):
            found[("github_issue", n)] = Anchor("github_issue", f"#{n}", "transcript")
    for t in TICKET_RE.findall(text):
        found[("ticket", t)] = Anchor("ticket", t, "transcript")
    for p in PATH_RE.findall(text):
        found[("path", p)] = Anchor("path", p, "transcript")
    return list(found.values())


def keywords_of(texts: list[str]) -> list[str]:
    """The person's most used meaningful words, compounds kept whole (``retry-budget``)."""
    counts: Counter = Counter()
    for i, text in enumerate(texts):
        weight = 2 if i == 0 else 1   # the first request says what the session is about
        for word in WORD_RE.findall(text):
            low = word.lower()
            if len(low) < 3 or low in STOP or low.isdigit():
                continue
            counts[low] += weight
    by_stem: dict[str, str] = {}
    ranked = []
    for word, _ in counts.most_common():
        key = stem(word)
        if key not in by_stem:
            by_stem[key] = word
            ranked.append(word)
        if len(ranked) >= KEYWORDS:
            break
    return ranked


def _statements(turns: list[str]) -> list[str]:
    """Key statements: later turns that decide, state a cause or set a direction (else the longest)."""
    later = turns[1:]
    cued = [t for t in later if STATEMENT_CUES.search(t)]
    chosen = cued or sorted(later, key=len, reverse=True)
    return [" ".join(t.split())[:300] for t in chosen[:5]]


def _last_timestamp(fh, size: int) -> str:
    fh.seek(max(0, size - TAIL_BYTES))
    tail = fh.read(TAIL_BYTES).splitlines()
    for line in reversed(tail):
        if b'"timestamp"' in line:
            try:
                obj = surrogates.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict) and obj.get("timestamp"):
                return str(obj["timestamp"])
    return ""


def derive(slug: str, sid: str, path: str, tree: Tree) -> Deposit | None:
    """What a deposit would hold, derived from one transcript in one bounded pass."""
    fh = tree.open(path)
    if fh is None:
        return None
    with fh:
        size = os.fstat(fh.fileno()).st_size
        cwd = started = summary = ""
        turns: list[str] = []
        predecessors: list[str] = []
        read = 0
        for line, length in bounded_lines(fh, LINE_LIMIT, HEAD_LIMIT):
            read += length
            if read > HEAD_LIMIT:
                break
            if line is None:
                continue
            head = not started or not cwd
            if not head and b'"user"' not in line and b'"summary"' not in line:
                continue
            if not head and (b'"tool_result"' in line or len(turns) >= MAX_TURNS and b'"summary"' not in line):
                continue
            try:
                obj = surrogates.loads(line)
            except ValueError:
                continue
            if not isinstance(obj, dict):
                continue
            if obj.get("type") == "summary" and not summary:
                summary = str(obj.get("summary") or "")[:200]
                continue
            other = obj.get("sessionId")
            if isinstance(other, str) and other != sid:   # carried over from the session this one resumes
                if safe_id(other) and other not in predecessors:
                    predecessors.append(other)
                continue
            started = started or str(obj.get("timestamp") or "")
            cwd = cwd or (formats.as_path(obj.get("cwd")) or "")
            if len(turns) < MAX_TURNS:
                text = person_text(obj)
                if text is not None:
                    turns.append(text[:4000])
        ended = _last_timestamp(fh, size) or started
    if not turns and not started:
        return None
    request = " ".join(turns[0].split())[:500] if turns else ""
    anchors: dict[str, Anchor] = {}
    for text in turns:
        for a in anchors_in(text):
            anchors.setdefault(a.key, a)
    words = keywords_of(turns)
    coined = list(dict.fromkeys(m.group(1).strip("-").lower() for t in turns for m in COINING_RE.finditer(t)))
    topics = [summary] if summary else ([request[:80]] if request else [])
    return Deposit(partition="transcripts", slug=slug, sid=sid, cwd=cwd or None,
                   date=started[:10] if re.match(r"\d{4}-\d{2}-\d{2}", started) else None,
                   started_at=started, last_turn_at=ended, topics=topics, keywords=words,
                   anchors=list(anchors.values()), initial_request=request, key_utterances=_statements(turns),
                   coined=[Coinage(c, 0.5) for c in coined],
                   fingerprint=" ".join(turns[:3])[:2000], continues=predecessors, path=path, source=path,
                   full=True, notes=["derived from the transcript (no deposit)"])


# Separate expressions, each starting with a literal, so the scan runs at memory speed (one alternation
# over every transcript's bytes is thirty times slower). Tickets are searched for only once one is known.
SKETCH_ISSUE_RE = re.compile(rb"#(\d{1,6})(?!\d)")
SKETCH_PR_RE = re.compile(rb"PR ?#?(\d{1,6})(?!\d)")
SESSION_ID_RE = re.compile(rb'"sessionId": ?"([^"]{1,128})"')
SESSION_SCAN = 4096    # carried-over lines of a resumed session come first
EXPAND_ROUNDS = 3
EXPAND_LIMIT = 2000    # transcripts derived for one recall, at most


@dataclass(frozen=True)
class Focus:
    """What one recall looks for, as bytes a transcript can be searched for without parsing it.

    A probe is the start of a recall word's stem ("retri" finds "retries" and
    "retry"); anchors are issue, PR and ticket ids; sessions are ids or prefixes
    named by ``--from`` or a Refine answer.
    """

    probes: tuple[bytes, ...] = ()
    anchors: tuple[bytes, ...] = ()
    sessions: tuple[str, ...] = ()

    @classmethod
    def of(cls, words: list[str], anchors: list[str], sessions: list[str]) -> "Focus":
        probes = tuple(dict.fromkeys(w[: max(4, len(w) - 2)].lower().encode() for w in words if len(w) >= 3))
        return cls(probes, tuple(a.strip().lower().encode() for a in anchors), tuple(sessions))


@dataclass
class Sketch:
    """One transcript as the byte scan saw it: enough to decide whether to read it, and to follow it."""

    slug: str
    sid: str
    path: str
    anchors: frozenset[bytes]          # lowercased anchor keys, e.g. b"ref:#412"
    predecessors: tuple[str, ...]
    hits: frozenset[bytes]             # the focus probes found in it


def _sketch_anchors(data: bytes) -> frozenset[bytes]:
    return frozenset([b"ref:#" + n for n in SKETCH_ISSUE_RE.findall(data)]
                     + [b"ref:pr #" + n for n in SKETCH_PR_RE.findall(data)])


def _hits(data: bytes, probes: tuple[bytes, ...]) -> frozenset[bytes]:
    """The (lower-case) probes the bytes hold in any case: one lower-casing pass, then one search each."""
    if not probes:
        return frozenset()
    low = data.lower()
    return frozenset(p for p in probes if p in low)


# A person's turn as Claude Code writes it: the message's role, then its content as a string or as text
# blocks. The role is found with a plain byte search (memory speed; a regular expression over every byte
# is several times slower) and only what follows it is matched; tool results (content blocks of another
# type) and the assistant's turns, most of the bytes, never match.
SPOKEN_MARKS = (b'"role":"user","content":', b'"role": "user", "content": ')
SPOKEN_TAIL = re.compile(rb'(?:"|\[\{"type": ?"text", ?"text": ?")((?:[^"\\]|\\.){0,8000})')


def spoken(data: bytes) -> bytes:
    """What a person said in a transcript (JSON-escaped), found without parsing a line."""
    out = []
    for mark in SPOKEN_MARKS:
        at = data.find(mark)
        while at != -1:
            m = SPOKEN_TAIL.match(data, at + len(mark))
            if m:
                out.append(m.group(1))
            at = data.find(mark, at + len(mark))
        if out:
            break
    return b"\n".join(out)


def sketch(slug: str, sid: str, path: str, tree: Tree, focus: Focus) -> Sketch | None:
    """Read a transcript once, as bytes: no JSON, only what a person said is searched — grep's work, bounded."""
    data = tree.read_head(path, HEAD_LIMIT)
    if data is None:
        return None
    said = spoken(data)
    hits = _hits(said, (*focus.probes, *focus.anchors))
    others = {m for m in SESSION_ID_RE.findall(data, 0, SESSION_SCAN) if m.decode("utf-8", "replace") != sid}
    preds = tuple(o.decode("utf-8", "replace") for o in others)
    return Sketch(slug, sid, path, _sketch_anchors(said), preds, hits)


class TranscriptPartition:
    """Claude Code transcripts of sessions that have no deposit."""

    name = "transcripts"
    focused = True    # reads only what a recall reaches, when told what that is

    def __init__(self, config_dir, *, deposits_win: bool = True) -> None:
        self.root = os.path.join(str(config_dir), "projects")
        self.deposits_win = deposits_win
        self.tree = Tree(config_dir)
        self.sketches: dict[str, Sketch] = {}
        self.derived: set[str] = set()
        self.df_hint: dict[bytes, int] = {}
        self.focus: Focus | None = None

    @property
    def unread(self) -> int:
        """Transcripts scanned but not read in full (they still count in how rare a word is)."""
        return max(0, len(self.sketches) - len(self.derived))

    def _files(self, notes) -> Iterator[tuple[str, str, str]]:
        """(slug, sid, path) of every transcript of a session without a deposit (deposits win)."""
        if not os.path.isdir(self.root) or not self.tree.check_dir(self.root):
            return
        for slug in sorted(os.listdir(self.root)):
            if not printable_name(slug):
                if refused_name(slug) not in notes.refused:
                    notes.refused.append(refused_name(slug))
                continue
            slug_dir = os.path.join(self.root, slug)
            if not self.tree.check_dir(slug_dir):
                continue
            hyp = os.path.join(slug_dir, "hypomnesis")
            deposited = ({name for name in os.listdir(hyp) if formats.holds_an_index_file(os.path.join(hyp, name))}
                         if self.deposits_win and self.tree.check_dir(hyp) else set())
            for entry in sorted(os.scandir(slug_dir), key=lambda e: e.name):
                if not entry.name.endswith(".jsonl"):
                    continue
                sid = entry.name[:-6]
                if sid in deposited:
                    notes.deposit_won += 1
                elif not safe_id(sid):
                    notes.refused.append(f"{slug}/{entry.name}: session id {sid!r} is not a plain id; refused")
                else:
                    yield slug, sid, entry.path

    def _derive(self, sk: Sketch, notes) -> Deposit | None:
        if sk.sid in self.derived:
            return None
        self.derived.add(sk.sid)
        d = derive(sk.slug, sk.sid, sk.path, self.tree)
        if d is not None:
            notes.partitions[f"transcripts:{sk.slug}"] += 1
        return d

    def deposits(self, notes, focus: Focus | None = None) -> Iterator[Deposit]:
        """Every transcript derived (no focus), or only those a recall reaches (a focus).

        With a focus, every transcript is scanned as bytes (as grep would), and
        only those that hold a recall word or anchor are read in full; then, as
        traversal would, those that share an issue or ticket with them, or
        continue them, round by round. ``unread`` and ``df_hint`` let ranking
        weigh words by the whole partition, not by what was read.
        """
        if focus is None:
            for slug, sid, path in self._files(notes):
                d = self._derive(Sketch(slug, sid, path, frozenset(), (), frozenset()), notes)
                if d is not None:
                    yield d
        else:
            self.focus = focus
            for slug, sid, path in self._files(notes):
                sk = sketch(slug, sid, path, self.tree, focus)
                if sk is not None:
                    self.sketches[sid] = sk
                    notes.scanned += 1
            for sk in self.sketches.values():
                for probe in sk.hits:
                    self.df_hint[probe] = self.df_hint.get(probe, 0) + 1
            wanted = [sk for sk in self.sketches.values()
                      if sk.hits or any(sk.sid.startswith(p) for p in focus.sessions)]
            yield from self._read_outward(wanted, notes)
        notes.refused.extend(r for r in self.tree.refused if r not in notes.refused)

    def _read_outward(self, wanted: list[Sketch], notes) -> Iterator[Deposit]:
        """Read the wanted transcripts, then those tied to them by anchors or continuations, a few rounds out."""
        by_anchor: dict[bytes, list[Sketch]] = {}
        successors: dict[str, list[Sketch]] = {}
        for sk in self.sketches.values():
            for a in sk.anchors:
                by_anchor.setdefault(a, []).append(sk)
            for p in sk.predecessors:
                successors.setdefault(p, []).append(sk)
        for _ in range(EXPAND_ROUNDS):
            found = []
            for sk in wanted:
                if len(self.derived) >= EXPAND_LIMIT:
                    notes.refused.append(f"transcripts: more than {EXPAND_LIMIT} sessions match; the rest were "
                                         "not read (say more about what you recall)")
                    return
                d = self._derive(sk, notes)
                if d is not None:
                    found.append(d)
                    yield d
            wanted = []
            tickets = {a.ref.encode() for d in found for a in d.anchors if a.kind == "ticket"}
            if tickets:
                wanted += self._search(tickets)
            for d in found:
                keys = [a.key.encode() for a in d.anchors if a.kind in ("github_issue", "github_pr")]
                for k in keys:
                    if len(by_anchor.get(k, ())) <= 50:   # an anchor every session names links nothing
                        wanted += by_anchor.get(k, [])
                wanted += [self.sketches[p] for p in d.continues if p in self.sketches]
                wanted += successors.get(d.sid, [])
            unique: dict[str, Sketch] = {}
            for sk in wanted:
                if sk.sid not in self.derived:
                    unique.setdefault(sk.sid, sk)
            wanted = list(unique.values())
            if not wanted:
                return

    def _search(self, tokens: set[bytes]) -> list[Sketch]:
        """Transcripts not read yet whose bytes hold one of ``tokens`` (a second scan, only when needed)."""
        out = []
        for sk in self.sketches.values():
            if sk.sid in self.derived:
                continue
            fh = self.tree.open(sk.path)
            if fh is None:
                continue
            with fh:
                data = fh.read(HEAD_LIMIT)
            if any(t in spoken(data) for t in tokens):
                out.append(sk)
        return out

    def more(self, focus: Focus, notes) -> list[Deposit]:
        """Transcripts a new recall reaches that an earlier one did not (Reorient, Refine add:)."""
        if not self.sketches:
            return []
        wanted = []
        for sk in self.sketches.values():
            if sk.sid in self.derived:
                continue
            if any(sk.sid.startswith(p) for p in focus.sessions):
                wanted.append(sk)
                continue
            fh = self.tree.open(sk.path) if focus.probes or focus.anchors else None
            if fh is not None:
                with fh:
                    data = fh.read(HEAD_LIMIT)
                if _hits(spoken(data), (*focus.probes, *focus.anchors)):
                    wanted.append(sk)
        return list(self._read_outward(wanted, notes))

    def complete(self, deposit: Deposit, notes) -> None:
        return None
