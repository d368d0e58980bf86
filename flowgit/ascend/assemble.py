"""Phase 1: traverse inferred edges outward from the entry deposits, assemble units, rank them.

Units are assembled by following edges from the deposits the recall touches,
never by a global join over everything: a chain follows chain-role edges (the
same issue, a continuation, the same session), a topic cluster follows edges
whose shared words include the topic, a concept node follows the coined term
from the deposit that coined it.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Callable

from flowgit.ascend.graph import MEMORY_TOPIC, DepositIndex
from flowgit.ascend.model import CHAIN, CLUSTER, CONCEPT, Deposit, Edge, Unit, time_key
from flowgit.ascend.trace import RecallTrace
from flowgit.words import EVERYDAY_STEMS, stem, tokens

MAX_MEMBERS = 40
MAX_ENTRIES = 3
CLUSTER_ROLES = frozenset({"topic", CHAIN, MEMORY_TOPIC})
MEMBER_SHARE = 0.5     # a fragment carries at least half the best match's weight of the recall's words
ATTACH_WEIGHT = 1.5    # a tie to a fragment that lets a deposit with some of the topic's words join:
                       # an anchor (an issue, a file, a continuation), not a shared directory
EDGE_FLOOR = 0.75      # weaker inferred edges join nothing
ROLES_OF = {CHAIN: {CHAIN}, CLUSTER: set(CLUSTER_ROLES), CONCEPT: {CONCEPT}}


@dataclass
class Scope:
    """What a traversal may reach; Refine and Rescope adjust it."""

    partitions: list[str] = field(default_factory=lambda: ["claude", "git", "episodes"])
    min_weight: float = 1.0
    hops: int = 3
    dropped: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    ignore_window: bool = False

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Scope":
        from flowgit.ascend.typed import checked

        return checked(cls, data)


@dataclass
class Traversal:
    units: list[Unit]
    followed: list[Edge]
    entries: list[Deposit]


def _bfs(index: DepositIndex, starts: list[Deposit], accept, scope: Scope,
         roles: frozenset[str]) -> tuple[list[Deposit], list[Edge]]:
    seen = {d.key for d in starts}
    order = list(starts)
    followed: list[Edge] = []
    queue = deque((d.key, 0) for d in starts)
    while queue and len(order) < MAX_MEMBERS:
        key, depth = queue.popleft()
        if depth >= scope.hops:
            continue
        for edge in sorted(index.edges_from(key, roles), key=lambda e: -e.weight):
            if edge.b in scope.dropped or not accept(edge):
                continue
            followed.append(edge)
            if edge.b not in seen:
                seen.add(edge.b)
                order.append(index.by_key[edge.b])
                queue.append((edge.b, depth + 1))
                if len(order) >= MAX_MEMBERS:
                    break
    return order, followed


def _internal_edges(index: DepositIndex, members: list[Deposit], roles: set[str]) -> list[Edge]:
    keys = {d.key for d in members}
    out, seen = [], set()
    for d in members:
        for e in index.edges_from(d.key, frozenset(roles)):
            pair = tuple(sorted((e.a, e.b))) + (e.role,)
            if e.b in keys and e.role in roles and pair not in seen:
                seen.add(pair)
                out.append(e)
    return out


def in_time_order(members: list[Deposit], when: Callable[[Deposit], datetime | None] = lambda d: d.when
                  ) -> list[Deposit]:
    """Members earliest first, by the instant ``when`` gives (the index's time while assembling; the session
    record's once a unit is shown); undated members after every dated one (see :attr:`Unit.timeline`)."""
    return sorted(members, key=lambda d: time_key(when(d), d.sid))


def chains(index: DepositIndex, entries: list[Deposit], trace: RecallTrace, scope: Scope) -> tuple[list[Unit], list[Edge]]:
    units, followed = [], []
    for entry in entries[:MAX_ENTRIES]:
        members, edges = _bfs(index, [entry], lambda e: e.role == CHAIN and e.weight >= scope.min_weight, scope,
                              frozenset({CHAIN}))
        followed += edges
        members = _on_the_recalled_line(index, entry, members, trace)
        if len(members) >= 2:
            internal = _internal_edges(index, members, {CHAIN})
            units.append(Unit(CHAIN, in_time_order(members), internal, _chain_label(members, trace, index.surface)))
    return units, followed


def _aligned_refs(members: list[Deposit], trace: RecallTrace) -> set[str]:
    """The anchors of the reached sessions that the recall names (`breaker_threshold` for "the breaker line
    of work"): the line the recall asks for, among others its sessions also touched."""
    words = set(trace.keywords)
    return {a.ref for d in members for a in d.anchors if a.kind not in UNNAMING_ANCHORS
            and words & {stem(t) for t in tokens(a.ref.replace("_", " ").replace("-", " "))}}


def _on_the_recalled_line(index: DepositIndex, entry: Deposit, members: list[Deposit],
                          trace: RecallTrace) -> list[Deposit]:
    """The reached sessions on the line the recall names, when it names one of their anchors: wraps touch
    several patterns at once, so the chain edges of the others (a retry budget, a pool size) reach every
    session; one that neither holds a named anchor nor says a word of the recall is on another line."""
    aligned = _aligned_refs(members, trace)
    if not aligned:
        return members
    words = set(trace.keywords)
    return [d for d in members if d is entry or aligned & {a.ref for a in d.anchors}
            or words & index.terms.get(d.key, frozenset())]


UNNAMING_ANCHORS = ("session", "evidence")  # ids that join deposits but say nothing of the topic


def _chain_label(members: list[Deposit], trace: RecallTrace, surface: dict[str, str]) -> str:
    """What the line of work is about: the anchor most of its sessions share (an issue, a pattern, a file),
    else the recall's own words as the deposits write them; never a session or episode id."""
    counts: dict[str, int] = {}
    for d in members:
        for a in {a.ref for a in d.anchors if a.kind not in UNNAMING_ANCHORS}:
            counts[a] = counts.get(a, 0) + 1
    shared = [ref for ref, n in sorted(counts.items(), key=lambda x: -x[1]) if n >= 2]
    named = _aligned_refs(members, trace)
    if shared:
        return next((ref for ref in shared if ref in named), shared[0])  # (the line the recall names first)
    return " ".join(surface.get(w, w) for w in trace.keywords[:3]) or members[0].topic


def clusters(index: DepositIndex, entries: list[Deposit], trace: RecallTrace, scope: Scope) -> tuple[list[Unit], list[Edge]]:
    """The fragments on the recall's topic, joined by inferred edges.

    A fragment is a deposit that carries enough of the recall's rarer words
    (at least half of the best match's weight: "feature flags" needs more than
    the everyday half "flag"; and two of them when the best match carries two:
    "signature" alone, of "webhook signatures", is PDF signature fields'
    topic), connected to another fragment by an edge. A
    deposit that carries less of the topic ("webhook" of "webhook signatures")
    joins when an anchor (the same issue, file or a continuation) ties it to a
    fragment; a deposit with none of the topic's words never does.
    """
    from flowgit.ascend.trace import candidate_scores

    own = candidate_scores(index, trace, dropped=set(scope.dropped), window=not scope.ignore_window)
    if not own:
        return [], []
    top = max(own.values())
    share = {k: v / top for k, v in own.items()}
    words = [t for t in trace.keywords if index.idf(t) > 0]
    covered = {k: sum(1 for t in words if t in index.terms.get(k, ())) for k in own}
    need = min(2, max(covered.values(), default=0))  # (one rare word of two is another topic: PDF signatures)
    core = {k for k, v in share.items() if v >= MEMBER_SHARE * scope.min_weight and covered[k] >= need}
    followed: list[Edge] = []
    links: dict[str, set[str]] = defaultdict(set)
    anchored: dict[str, set[str]] = defaultdict(set)
    for key in sorted(core, key=lambda k: -share[k])[:MAX_MEMBERS]:
        for e in index.edges_from(key, CLUSTER_ROLES):
            if e.b in scope.dropped or e.weight < EDGE_FLOOR * scope.min_weight:
                continue
            followed.append(e)
            if e.b in core:
                links[key].add(e.b)
                links[e.b].add(key)
            elif (e.role == CHAIN and e.weight >= ATTACH_WEIGHT
                  and share.get(e.b, 0.0) > 0.0) or e.role == MEMORY_TOPIC:
                anchored[e.b].add(key)  # (a memory entry the fragment shares: on its topic, in other words)
    members = [k for k in core if links.get(k)]
    members += [k for k, via in anchored.items() if via & set(members)]
    if len(members) > MAX_MEMBERS:
        members = sorted(members, key=lambda k: -share.get(k, 0.0))[:MAX_MEMBERS]
    if len(members) < 2:
        return [], followed
    deposits = in_time_order([index.by_key[k] for k in members])
    term = max((t for t in trace.keywords if index.idf(t) > 0),
               key=lambda t: sum(1 for d in deposits if t in index.terms[d.key]) * index.idf(t), default="")
    label = _display_term(deposits, term, index.surface) if term else deposits[0].topic
    unit = Unit(CLUSTER, deposits, _internal_edges(index, deposits, set(CLUSTER_ROLES)), label)
    return [unit], followed


def _display_term(members: list[Deposit], term: str, surface: dict[str, str]) -> str:
    """The recall's word as the deposits write it: a topic or keyword that holds it, else the word itself
    (never its stem: "balanc" is no headline)."""
    for d in members:
        for phrase in (*d.topics, *d.keywords):
            if term in phrase.lower():
                return phrase
    return surface.get(term, term)


def named_terms(index: DepositIndex, trace: RecallTrace) -> list[str]:
    """Coined terms the recall names outright (quoted, written as the term, or spelled apart)."""
    tokens = [q.lower() for q in trace.quoted if q.lower() in index.by_coined]
    return tokens + [w for w in trace.keywords if w in index.by_coined and w not in tokens]


def lone_coiner(index: DepositIndex, token: str) -> Deposit | None:
    """The one session that coined ``token`` when no other session uses it, by name or by its words (four
    sessions on the "retry budget" are a topic, whoever named ``retry_budget``): one session answers that."""
    coiners = set(index.by_coined.get(token, ()))
    users = index.token_users(token) | index.word_holders(token)
    return index.by_key[next(iter(coiners))] if len(coiners) == 1 and users == coiners else None


def concepts(index: DepositIndex, entries: list[Deposit], trace: RecallTrace, scope: Scope) -> tuple[list[Unit], list[Edge]]:
    tokens = named_terms(index, trace)
    for e in entries if not tokens else ():   # a term the recall names is the concept; others only when none is
        tokens += [c.token.lower() for c in e.coined if c.token.lower() not in tokens
                   and any(w in c.token.lower() for w in trace.keywords)]
    units, followed = [], []
    for token in tokens[:2]:
        coiners = [index.by_key[k] for k in index.by_coined[token] if k not in scope.dropped]
        if not coiners:
            continue
        node = min(coiners, key=lambda d: (time_key(d.when, "")[:2], -_precision(d, token), d.sid))
        members, edges = _bfs(index, [node], lambda e, t=token: e.role == CONCEPT and e.weight >= scope.min_weight
                              and (t in index.terms[e.b] or any(c.token.lower() == t for c in index.by_key[e.b].coined)),
                              scope, frozenset({CONCEPT}))
        followed += edges
        if len(members) >= 2:
            label = next((c.token for c in node.coined if c.token.lower() == token), token)
            units.append(Unit(CONCEPT, in_time_order(members), _internal_edges(index, members, {CONCEPT}), label, node=node))
    return units, followed


def _precision(d: Deposit, token: str) -> float:
    return max((c.precision for c in d.coined if c.token.lower() == token), default=0.0)


ASSEMBLERS = {CHAIN: chains, CLUSTER: clusters, CONCEPT: concepts}


def rank(index: DepositIndex, units: list[Unit], trace: RecallTrace) -> list[Unit]:
    """Order by recall alignment and connectivity, and label each unit's confidence."""
    weights = {w: max(index.idf(w), 0.1) for w in trace.keywords}
    total = sum(weights.values()) or 1.0
    unique: dict[frozenset, Unit] = {}
    for u in units:
        unique.setdefault(frozenset(d.key for d in u.members), u)
    ranked = list(unique.values())
    for u in ranked:
        covered = set().union(*(index.terms[d.key] for d in u.members))
        refs = {a.ref.lower() for d in u.members for a in d.anchors}
        u.alignment = min(1.0, (sum(w for t, w in weights.items() if t in covered)
                                + 2.0 * sum(1 for a in trace.anchors if a.lower() in refs)) / total)
        connected = {e.a for e in u.edges if e.weight >= 1.5} | {e.b for e in u.edges if e.weight >= 1.5}
        u.connectivity = len(connected & {d.key for d in u.members}) / len(u.members)
        u.score = u.alignment * (0.5 + 0.5 * u.connectivity) * (1 + 0.1 * min(len(u.members), 10))
    ranked.sort(key=lambda u: (-u.score, -len(u.members)))
    everyday = _everyday_only(trace)
    for i, u in enumerate(ranked):
        ahead = i == 0 and (len(ranked) == 1 or u.score >= 1.5 * ranked[1].score)
        if u.alignment >= 0.6 and u.connectivity >= 0.8 and ahead and not everyday:
            u.confidence = "high"
        elif u.alignment >= 0.3:
            u.confidence = "medium"
        else:
            u.confidence = "low"
    return ranked


def _everyday_only(trace: RecallTrace) -> bool:
    """Whether the recall named its subject in everyday words alone ("the problem with the data"), with no
    anchor nor quoted term: whatever those words gather is a guess to put to the person, never high."""
    return (bool(trace.keywords) and not trace.anchors and not trace.quoted
            and all(w in EVERYDAY_STEMS for w in trace.keywords))


def fold_subsets(units: list[Unit]) -> list[Unit]:
    """A candidate whose sessions all belong to a better or larger one is part of it, not a rival."""
    kept: list[Unit] = []
    for u in units:
        keys = {d.key for d in u.members}
        if any(keys <= {d.key for d in k.members} for k in kept):
            continue
        kept = [k for k in kept if not ({d.key for d in k.members} < keys and k.type == u.type)] + [u]
    return kept


def traverse(index: DepositIndex, trace: RecallTrace, unit_type: str, scope: Scope,
             entries: list[Deposit]) -> Traversal:
    units, followed = ASSEMBLERS[unit_type](index, entries, trace, scope)
    return Traversal(rank(index, units, trace), followed, entries)
