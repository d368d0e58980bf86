"""Read-time edge inference: no stored graph, no index file, rebuilt on every run.

Deposits are looked up by what they store (anchors, keywords and topics, coined
tokens, session ids, working directories) in in-memory maps built from this
read alone; the edges between them are inferred as traversal reaches them:

* a shared anchor (the same issue, PR or memory entry) — chain role, or
  concept role for memory entries;
* shared keywords and topics, weighted by rarity (a word most deposits share
  says little) — topic role;
* a shared coined token — concept role;
* session metadata: the same session seen in two partitions, a recorded
  continuation or fork, the same working directory within a few days — chain role.

An edge to a deposit that does not exist (a continuation to an unindexed
session, a commit's session with no record) is a broken link: noted as scope,
never an error.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from typing import Callable, Iterable

from flowgit.ascend.model import AGENT_PARTITIONS, CHAIN, CONCEPT, Anchor, Deposit, Edge
from flowgit.words import EVERYDAY_STEMS, PAIRED_RUN_RE, content_words, stem, tokens

ANCHOR_WEIGHT = 3.0
ELSEWHERE_FACTOR = 0.25  # a bare issue number shared across projects, on no shared subject: a weak hint
SESSION_WEIGHT = 4.0
CONTINUATION_WEIGHT = 3.0
COINED_WEIGHT = 2.5
CWD_DAYS = 3
CWD_WEIGHT = 0.75
COMMON_SHARE = 0.5   # a keyword in more than half of the deposits carries no signal
ALL_ROLES = frozenset({"chain", "topic", "concept"})
SESSION_PARTITIONS = AGENT_PARTITIONS   # where a working directory says which project a session was in
# anchor kind -> (edge role, weight, what connects them); issues, PRs, tickets and legacy strings are the default
MEMORY_TOPIC = "memory"  # the topic-role edge of a memory entry two sessions share (see clusters)
ANCHOR_ROLES = {
    "memory": (CONCEPT, ANCHOR_WEIGHT, "both refer to the memory entry {}"),
    "pattern": (CHAIN, ANCHOR_WEIGHT, "both changed the pattern {}"),
    "evidence": (CHAIN, 2.0, "both rest on the episode {}"),
    "path": (CHAIN, 0.75, "both worked on {}"),   # a file alone is weak: many sessions touch README.md
}


def deposit_terms(d: Deposit) -> frozenset[str]:
    """What a deposit is findable by: stemmed words of its topics, keywords, request and coined
    tokens, plus its compound keywords and coined tokens whole (``budget-first``)."""
    text = " ".join([*d.topics, *d.keywords, d.initial_request, *(c.token for c in d.coined)])
    whole = {k.lower() for k in d.keywords if "-" in k or "_" in k} | {c.token.lower() for c in d.coined}
    return content_words(text.replace("-", " ")) | whole


GENERATED_ID_RE = re.compile(r"[0-9a-f]{8}[0-9a-f-]*", re.IGNORECASE)  # a uuid or a commit id


def abbreviate(sid: str, ordered: list[str], minimum: int = 8) -> str:
    """The id's shortest unique prefix of at least ``minimum`` characters among ``ordered`` (sorted ids):
    only its neighbours in sorted order can share a longer prefix, as with git's abbreviations. Only
    generated ids are cut: a session name a person chose (``alice-monday``) is shown as written."""
    import bisect
    import os.path

    if not GENERATED_ID_RE.fullmatch(sid):
        return sid

    i = bisect.bisect_left(ordered, sid)
    need = minimum
    for j in (i - 1, i + 1 if i < len(ordered) and ordered[i] == sid else i):
        if 0 <= j < len(ordered) and ordered[j] != sid:
            need = max(need, len(os.path.commonprefix([sid, ordered[j]])) + 1)
    return sid[:need]


def abbreviations(sids: Iterable[str], minimum: int = 8) -> dict[str, str]:
    """Each id's shortest unique prefix of at least ``minimum`` characters."""
    ordered = sorted(set(sids))
    return {sid: abbreviate(sid, ordered, minimum) for sid in ordered}


def _day(d: Deposit) -> date | None:
    try:
        return date.fromisoformat(d.date) if d.date else None
    except ValueError:
        return None


@dataclass
class DepositIndex:
    """In-memory lookups over this read's deposits (discarded when the command ends)."""

    deposits: list[Deposit]
    by_key: dict[str, Deposit] = field(default_factory=dict)
    terms: dict[str, frozenset[str]] = field(default_factory=dict)
    by_term: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    by_anchor: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    by_sid: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    by_cwd: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    by_coined: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    broken: list[str] = field(default_factory=list)
    surface: dict[str, str] = field(default_factory=dict)   # stem -> a word as deposits write it
    completer: Callable[[Deposit], None] | None = None
    _prepared: set[str] = field(default_factory=set)
    _idf: dict[str, float] = field(default_factory=dict)
    _short: list[str] | None = None
    continued_by: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # sid -> its successors
    population: int = 0                 # deposits scanned, read in full or not (0: only those in this index)
    df_hint: dict[str, int] = field(default_factory=dict)   # a word's probe -> deposits scanned that hold it

    def short(self, sid: str) -> str:
        """The shortest prefix (at least 8 characters) that names this session uniquely, like git's abbreviations."""
        if self._short is None:
            self._short = sorted({d.sid for d in self.deposits})
        return abbreviate(sid, self._short)

    @classmethod
    def build(cls, deposits: Iterable[Deposit], completer: Callable[[Deposit], None] | None = None) -> "DepositIndex":
        index = cls(list(deposits), completer=completer)
        for d in index.deposits:
            index.by_key[d.key] = d
            index._add(d)
        return index

    def _add(self, d: Deposit) -> None:
        for phrase in (*d.topics, *d.keywords, d.initial_request, *(c.token for c in d.coined)):
            for token in tokens(phrase.replace("-", " ")):
                self.surface.setdefault(stem(token), token.lower())  # every word a term comes from
        terms = deposit_terms(d)
        self.terms[d.key] = terms
        for t in terms:
            self.by_term[t].append(d.key)
        for a in d.anchors:
            self.by_anchor[a.key].append(d.key)
            if (local := indexed_key(a, d)) != a.key:
                self.by_anchor[local].append(d.key)  # (and within its project, where it surely names one issue)
        self.by_sid[d.sid].append(d.key)
        self._register_links(d)
        if d.cwd:
            self.by_cwd[d.cwd].append(d.key)
        for c in d.coined:
            self.by_coined[c.token.lower()].append(d.key)

    def _register_links(self, d: Deposit) -> None:
        """Remember continuations from both ends, so the later session links back to the earlier one too."""
        for earlier in d.continues:
            if d.sid not in self.continued_by[earlier]:
                self.continued_by[earlier].append(d.sid)

    def prepare(self, key: str) -> Deposit:
        """Read a deposit in full the first time traversal reaches it (continuations, markers …)."""
        d = self.by_key[key]
        if key not in self._prepared:
            self._prepared.add(key)
            if self.completer is not None:
                known = {c.token.lower() for c in d.coined}
                self.completer(d)
                self._register_links(d)
                for c in d.coined:
                    if c.token.lower() not in known:
                        self.by_coined[c.token.lower()].append(key)
        return d

    def token_users(self, token: str) -> set[str]:
        """Deposits that coin a term or write it whole (``retry_budget``)."""
        token = token.lower()
        return set(self.by_coined.get(token, ())) | set(self.by_term.get(token, ()))

    def word_holders(self, token: str) -> set[str]:
        """Deposits that write every word of a term of two or more words (``retry budget`` for ``retry_budget``):
        sessions that worked on what it names, whatever they called it."""
        words = content_words(token.lower())
        if len(words) < 2:
            return set()
        return set.intersection(*(set(self.by_term.get(w, ())) for w in words))

    @property
    def size(self) -> int:
        return len(self.deposits)

    def add(self, d: Deposit) -> None:
        """A deposit read after the index was built (a later recall reached it): merged if its session is known."""
        from flowgit.ascend.merge import fold_into

        known = self.by_sid.get(d.sid)
        if known:
            fold_into(self.by_key[known[0]], d)
            return
        self.deposits.append(d)
        self.by_key[d.key] = d
        self._add(d)
        self._idf.clear()
        self._short = None

    def idf(self, term: str) -> float:
        """How rare a word is; over everything scanned when only part of a partition was read in full."""
        cached = self._idf.get(term)
        if cached is None:
            df = len(self.by_term.get(term, ()))
            size = max(self.size, self.population)
            if self.df_hint and df:
                df = max(df, max((n for p, n in self.df_hint.items() if term.startswith(p)), default=0))
            cached = 0.0 if df == 0 or df > max(2, COMMON_SHARE * size) else math.log((size + 1) / df)
            self._idf[term] = cached
        return cached

    def _share_a_subject(self, key: str, other: str) -> bool:
        """Whether two deposits share a telling word: one rare enough to say something (an everyday "fix" or
        "data" is in every project's sessions and says nothing about which issue a bare `#12` is)."""
        shared = self.terms.get(key, frozenset()) & self.terms.get(other, frozenset())
        return any(t not in EVERYDAY_STEMS and self.idf(t) > 0 for t in shared)

    def edges_from(self, key: str, roles: frozenset[str] = ALL_ROLES) -> list[Edge]:
        """The inferred edges of the given roles from one deposit to others in this read."""
        d = self.prepare(key)
        found: dict[tuple[str, str], Edge] = {}

        def add(other: str, role: str, weight: float, basis: str) -> None:
            if other == key:
                return
            current = found.get((other, role))
            if current is None:
                found[(other, role)] = Edge(key, other, role, weight, basis)
            else:
                found[(other, role)] = Edge(key, other, role, current.weight + weight, f"{current.basis}; {basis}")

        for a in d.anchors:
            if a.kind == "session":
                continue
            if a.kind == "memory" and MEMORY_TOPIC in roles:  # a memory entry is a topic too (Phase 1 §3)
                for other in self.by_anchor.get(a.key, ()):
                    add(other, MEMORY_TOPIC, ANCHOR_WEIGHT, f"both refer to the memory entry {a.ref}")
            role, weight, basis = ANCHOR_ROLES.get(a.kind, (CHAIN, ANCHOR_WEIGHT, "both refer to {}"))
            if role not in roles:
                continue
            if a.channel == "derived":   # a pattern line's [<- other]: this session built on it
                basis = "a new pattern derived from {} ([<- …])"
            near = self.by_anchor.get(indexed_key(a, d), ())
            for other in near:
                add(other, role, weight, basis.format(a.ref))
            for other in self.by_anchor.get(a.key, ()):
                if other not in near:  # a bare `#1` in another project: maybe the same issue, maybe its own `#1`
                    backed = self._share_a_subject(key, other)
                    add(other, role, weight if backed else weight * ELSEWHERE_FACTOR,
                        basis.format(a.ref) + (" in another project, on a shared subject" if backed else
                                               " (in another project, on another subject)"))
        if CHAIN in roles:
            self._session_edges(d, add)
        if CONCEPT in roles:
            for c in d.coined:
                for other in self.by_coined.get(c.token.lower(), ()):
                    add(other, CONCEPT, COINED_WEIGHT, f"both use the coined term “{c.token}”")
                for other in self.by_term.get(c.token.lower(), ()):
                    add(other, CONCEPT, COINED_WEIGHT / 2, f"mentions the term “{c.token}”")
        if "topic" in roles:
            self._topic_edges(key, add)
        return list(found.values())

    def _session_edges(self, d: Deposit, add) -> None:
        """The same session in two partitions, continuations and forks, the same directory days apart."""
        for a in d.anchors:
            if a.kind == "session":
                for other in self.by_sid.get(a.ref, ()):
                    add(other, CHAIN, SESSION_WEIGHT, f"the same session {self.short(a.ref)}")
                for other in self.by_anchor.get(f"session:{a.ref}", ()):
                    add(other, CHAIN, SESSION_WEIGHT, f"the same session {self.short(a.ref)}")
        for other in self.by_sid.get(d.sid, ()):
            add(other, CHAIN, SESSION_WEIGHT, f"the same session {self.short(d.sid)} seen in two places")
        for other in self.by_anchor.get(f"session:{d.sid}", ()):
            add(other, CHAIN, SESSION_WEIGHT, f"the same session {self.short(d.sid)} seen in two places")
        later = list(dict.fromkeys([*d.continuations, *self.continued_by.get(d.sid, ())]))
        links = [(sid, "{them} continues {me}") for sid in later]
        links += [(sid, "{me} continues {them}") for sid in d.continues]
        links += [(sid, "{me} forks into {them}") for sid in d.forks]
        for sid, wording in links:
            targets = self.by_sid.get(sid, ())
            words = wording.format(me=self.short(d.sid), them=self.short(sid))
            if not targets:
                note = f"{words}, but {self.short(sid)} has no deposit yet"
                if note not in self.broken:
                    self.broken.append(note)
            for other in targets:
                add(other, CHAIN, CONTINUATION_WEIGHT, words)
        day = _day(d)
        if d.cwd and day and d.partition in SESSION_PARTITIONS:
            mine = {t for t in self.terms[d.key] if self.idf(t) > 0}
            for other in self.by_cwd.get(d.cwd, ()):
                o_day = _day(self.by_key[other])
                if other != d.key and o_day and self.by_key[other].partition in SESSION_PARTITIONS and abs((o_day - day).days) <= CWD_DAYS and mine & self.terms[other]:
                    add(other, CHAIN, CWD_WEIGHT, f"same project directory within {CWD_DAYS} days")

    def _topic_edges(self, key: str, add) -> None:
        """Shared words, each weighted by how rare it is among this read's deposits."""
        shared: dict[str, list[str]] = defaultdict(list)
        for t in self.terms[key]:
            if self.idf(t) == 0.0:
                continue
            for other in self.by_term.get(t, ()):
                if other != key:
                    shared[other].append(t)
        phrases = [*self.by_key[key].keywords, *self.by_key[key].topics]
        for other, terms in shared.items():
            weight = sum(self.idf(t) for t in terms)
            words = sorted(dict.fromkeys(self._shown_term(t, phrases) for t in terms))
            add(other, "topic", weight, "both about " + ", ".join(words[:4]))

    def _shown_term(self, term: str, phrases: list[str]) -> str:
        """A shared term as a reader knows it: the word as deposits write it, or, for a pair of Chinese or
        Japanese characters (the model's unit, no word of anyone's), the keyword of the deposit that holds it
        (`商品キャッシュ`, not `キャ`)."""
        written = self.surface.get(term, term)
        if written.isascii() or not PAIRED_RUN_RE.fullmatch(written):
            return written
        return next((p for p in phrases if written in p), written)


BARE_REF_RE = re.compile(r"(?:pr\s*)?#\d+", re.IGNORECASE)


def indexed_key(anchor: Anchor, d: Deposit) -> str:
    """The key under which a reference surely names one thing: a bare issue or PR number (`#1`, `PR #7`) names
    one issue within one project (every repository has its `#1`), so it is read with the deposit's project (a
    legacy bare string `#1` as well); a qualified one (`owner/repo#1`, a URL) and every other kind are read as they are."""
    if anchor.kind in ("github_issue", "github_pr", "legacy") and BARE_REF_RE.fullmatch(anchor.ref.strip()):
        return f"{anchor.key}@{d.slug}"
    return anchor.key
