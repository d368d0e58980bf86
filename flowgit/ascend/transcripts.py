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

import json
import os
import re
from collections import Counter
from typing import Iterator

from flowgit.ascend.model import Anchor, Coinage, Deposit, safe_id
from flowgit.ascend.safeio import Tree
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


def person_text(obj: dict) -> str | None:
    """The text of a person's turn, or None: a ``user`` line whose content is text, not a tool result or meta."""
    if obj.get("type") != "user" or obj.get("isMeta") or obj.get("isCompactSummary"):
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
    text = text.strip()
    if not text or text.startswith(SYSTEM_PREFIXES):
        return None
    return text


def anchors_in(text: str) -> list[Anchor]:
    """Issue, PR and ticket ids and file paths a person named, in the deposits' anchor kinds."""
    found: dict[tuple[str, str], Anchor] = {}
    for n in PR_RE.findall(text):
        found[("github_pr", n)] = Anchor("github_pr", f"PR #{n}", "transcript")
    for n in ISSUE_RE.findall(text):
        if ("github_pr", n) not in found:
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
                obj = json.loads(line)
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
        for line in fh:
            read += len(line)
            if read > HEAD_LIMIT:
                break
            if len(line) > LINE_LIMIT:
                continue
            head = not started or not cwd
            if not head and b'"user"' not in line and b'"summary"' not in line:
                continue
            if not head and (b'"tool_result"' in line or len(turns) >= MAX_TURNS and b'"summary"' not in line):
                continue
            try:
                obj = json.loads(line)
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
            cwd = cwd or str(obj.get("cwd") or "")
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


class TranscriptPartition:
    """Claude Code transcripts of sessions that have no deposit."""

    name = "transcripts"

    def __init__(self, config_dir, *, deposits_win: bool = True) -> None:
        self.root = os.path.join(str(config_dir), "projects")
        self.deposits_win = deposits_win
        self.tree = Tree(config_dir)

    def deposits(self, notes) -> Iterator[Deposit]:
        if not os.path.isdir(self.root) or not self.tree.check_dir(self.root):
            return
        for slug in sorted(os.listdir(self.root)):
            slug_dir = os.path.join(self.root, slug)
            if not self.tree.check_dir(slug_dir):
                continue
            hyp = os.path.join(slug_dir, "hypomnesis")
            deposited = set(os.listdir(hyp)) if self.deposits_win and self.tree.check_dir(hyp) else set()
            for entry in sorted(os.scandir(slug_dir), key=lambda e: e.name):
                if not entry.name.endswith(".jsonl"):
                    continue
                sid = entry.name[:-6]
                if sid in deposited:
                    notes.deposit_won += 1
                    continue
                if not safe_id(sid):
                    notes.refused.append(f"{slug}/{entry.name}: session id {sid!r} is not a plain id; refused")
                    continue
                deposit = derive(slug, sid, entry.path, self.tree)
                if deposit is not None:
                    notes.partitions[f"transcripts:{slug}"] += 1
                    yield deposit
        notes.refused.extend(r for r in self.tree.refused if r not in notes.refused)

    def complete(self, deposit: Deposit, notes) -> None:
        return None
