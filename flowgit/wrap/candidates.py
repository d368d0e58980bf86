"""Step 2 on its own: what this session's episodes suggest for the patterns.

For the agent before it writes a plan: 1x patterns that fired again, 2x
patterns ready to graduate (or what they still lack), near-duplicates,
Proven patterns a tension or outcome episode about them may contradict, stale
patterns (never one that fired this session) and overdue Action Items. A
pattern demoted earlier is proposed again only on evidence recorded after its
demotion.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any, Mapping

from flowgit.config import Config, Thresholds, judging_config_at
from flowgit.continuity.document import Document
from flowgit.continuity.patterns import PatternAt, iter_patterns
from flowgit.continuity.sections import DEVELOPING, PROVEN
from flowgit.episodes import Episode
from flowgit.evidence import Weight, assess, everyday_weight, post_demotion, records_it, store_weight
from flowgit.wrap.cleanup import Stale, find_stale
from flowgit.wrap.judgement import about, after_demotion, demoted_on, fired, overdue_actions
from flowgit.words import as_written, content_words, jaccard, overlap

DUPLICATE_JACCARD = 0.5
RESTATES_PROVEN = 0.6


@dataclass
class Candidates:
    session_episodes: list[Episode] = field(default_factory=list)
    fired_again: list[dict] = field(default_factory=list)
    ready_to_graduate: list[dict] = field(default_factory=list)
    not_yet: list[dict] = field(default_factory=list)
    near_duplicates: list[dict] = field(default_factory=list)
    demotion: list[dict] = field(default_factory=list)
    stale: list[Stale] = field(default_factory=list)
    overdue: list[dict] = field(default_factory=list)
    session: str | None = None  # whose episodes these are; None: the episodes recorded since HEAD, any session's

    def to_dict(self) -> dict:
        return {"session": self.session, "session_episodes": [e.id for e in self.session_episodes],
                "fired_again": self.fired_again,
                "ready_to_graduate": self.ready_to_graduate, "not_yet": self.not_yet,
                "near_duplicates": self.near_duplicates, "demotion": self.demotion,
                "stale": [s.to_dict() for s in self.stale], "overdue_actions": self.overdue}


def _related(at: PatternAt, episodes: list[Episode], thresholds: Thresholds,
             weight: Weight = everyday_weight) -> list[tuple[Episode, list[str]]]:
    """The episodes that record the pattern firing, with the words each shares with it (shown to the agent).

    Read as G104 reads evidence and as the cleanup reads "fired" (:func:`records_it`, by what an episode
    says, not by its tags): a pattern proposed as fired again is one the gate accepts the episode for, and
    one the cleanup keeps, never both "fired again" and "stale"."""
    p = at.pattern
    words = content_words(p.words)
    return [(ep, sorted(words & content_words(ep.content))) for ep in episodes
            if records_it(ep, p.name, p.text, thresholds, weight)]


def find_candidates(doc: Document, session_episodes: list[Episode], store: Mapping[str, Episode],
                    thresholds: Thresholds, today: date, blamed: Mapping,
                    batch: frozenset[str] = frozenset(), weight: Any = None) -> Candidates:
    """Step 2. ``batch``: the episodes the wrap's commit will append (the gate counts them as one source,
    G103), ``weight`` how rare each word is in the store (G104), and episodes dated after now count for
    nothing: nothing is called ready that the gate would then refuse."""
    from datetime import datetime, timezone

    now = datetime.now(timezone.utc)
    weighed = {"weight": weight} if weight else {}
    found = Candidates(session_episodes=session_episodes)
    patterns = list(iter_patterns(doc))
    for at in patterns:
        p = at.pattern
        related = _related(at, session_episodes, thresholds, **weighed)
        if demoted_on(p) is not None:  # only evidence recorded after the demotion may bring it back
            keep = set(after_demotion(p, [e.id for e, _ in related], store))
            related = [(e, w) for e, w in related if e.id in keep]
        if at.section == DEVELOPING and related:
            fresh = [e.id for e, _ in related if e.id not in p.evidence]
            if fresh and p.level == 1:
                found.fired_again.append({"name": p.name, "level": p.level, "line": at.lineno, "episodes": fresh,
                                          "shared_words": as_written(f"{p.name} {p.text}",
                                                                     {w for _, s in related for w in s})})
        if at.section == DEVELOPING and p.level == 2:
            evidence = tuple(dict.fromkeys(p.evidence + tuple(e.id for e, _ in related)))
            verdict = assess(p.name, p.text, 3, evidence, store, thresholds, in_proven=True, batch=batch, now=now,
                             **weighed)
            stray = set(verdict.unrelated) - set(p.evidence)  # related by a tag only, not by what it says:
            if stray:  # proposed without it, as the gate would judge the graduation
                evidence = tuple(i for i in evidence if i not in stray)
                verdict = assess(p.name, p.text, 3, evidence, store, thresholds, in_proven=True, batch=batch,
                                 now=now, **weighed)
            entry = {"name": p.name, "line": at.lineno, "evidence": list(evidence),
                     "independent": verdict.independent, "sources": verdict.sources}
            since = demoted_on(p)
            lacks = post_demotion(p, evidence, store, level=3, thresholds=thresholds, in_proven=True,
                                  batch=batch, now=now) if since is not None else []  # the gate's G208, as asked
            if lacks:
                found.not_yet.append({**entry, "lacks": lacks})
            elif len(evidence) == len(p.evidence):  # the gate's G202: a level is raised on new evidence
                found.not_yet.append({**entry, "lacks": ["new evidence: no episode of this session is about it "
                                                         "that the 2x line does not already cite (a level is "
                                                         "raised on evidence recorded since the last raise)"]})
            elif verdict.ok:
                found.ready_to_graduate.append(entry)
            else:
                found.not_yet.append({**entry, "lacks": verdict.problems()})
        if at.section == PROVEN:
            against = [e for e in session_episodes if e.type in ("tension", "outcome") and about(p, e)
                       and e.id not in p.evidence]
            if against:
                found.demotion.append({"name": p.name, "line": at.lineno, "episodes": [e.id for e in against],
                                       "why": "a tension or outcome episode this session touches it: "
                                              "re-examine its evidence chain"})
    found.near_duplicates = near_duplicates(patterns)
    found.stale = find_stale(doc, store, blamed, today, thresholds,
                             keep=fired(doc, session_episodes, thresholds, **weighed))
    found.overdue = overdue_actions(doc, today)
    return found


def near_duplicates(patterns: list[PatternAt]) -> list[dict]:
    """Pairs of patterns that say the same thing: two 1x patterns in Developing, or one restating a Proven one
    (Step 5: a pattern seen again is incremented, not added a second time)."""
    out = []
    words = {id(at): content_words(at.pattern.words) for at in patterns}
    developing = [at for at in patterns if at.section == DEVELOPING]
    proven = [at for at in patterns if at.section == PROVEN]
    ones = [at for at in developing if at.pattern.level == 1]
    for i, a in enumerate(ones):
        for b in ones[i + 1:]:
            score = jaccard(words[id(a)], words[id(b)])
            if score >= DUPLICATE_JACCARD:
                out.append({"kind": "two 1x patterns describe the same thing", "patterns": [a.pattern.name,
                            b.pattern.name], "similarity": round(score, 2)})
    for a in developing:
        for b in proven:
            score = overlap(words[id(a)], words[id(b)])
            if score >= RESTATES_PROVEN:
                out.append({"kind": "a developing pattern restates a Proven one",
                            "patterns": [a.pattern.name, b.pattern.name], "similarity": round(score, 2)})
    return out


def added_near_duplicates(doc: Document, added: set[str]) -> list[str]:
    """A warning per near-duplicate pair of :func:`near_duplicates` that a pattern this wrap adds makes: said
    before the commit, where `flowgit candidates` would say it only at the next wrap."""
    out = []
    for pair in near_duplicates(list(iter_patterns(doc))):
        new, other = pair["patterns"]
        if new not in added:
            new, other = other, new
        if new in added and other not in added:
            out.append(f"`{new}`, added now, is close to `{other}` (similarity {pair['similarity']}: "
                       f"{pair['kind']}): if it is the same pattern seen again, increment `{other}` instead "
                       f"(the protocol's Step 5)")
    return out


def gather_candidates(cfg: Config, session: str | None, when: date) -> Candidates:
    """Step 2 for the repository at ``cfg``: the session's episodes (or, without a session, those the
    working store appends to HEAD's) against the working continuity file."""
    from flowgit.episodes import EpisodeStore, lookup, parse_store
    from flowgit.git import blobs, head_sha, require_repo
    from flowgit.repo import load_document
    from flowgit.wrap.cleanup import blame_dates

    root = require_repo(cfg.root)
    doc = load_document(cfg)
    raw = EpisodeStore(cfg.store).raw()
    head_store, head_file = blobs(root, [f"HEAD:{cfg.store_rel}", f"HEAD:{cfg.continuity_rel}"])
    held = head_store is not None or head_file is not None  # HEAD holds the memory: the gate batches appends
    head_store = head_store or b""
    appended = parse_store(raw[len(head_store):] if raw.startswith(head_store) else b"")[0]
    if session:
        episodes, _ = EpisodeStore(cfg.store).search(session=session)
    else:
        episodes = list(appended.values())
    cited = {e.id for e in episodes} | {i for at in iter_patterns(doc) for i in at.pattern.evidence}
    store = {**lookup(raw, cited), **{e.id: e for e in episodes}}
    batch = frozenset(appended) if held else frozenset()  # not yet committed: the next commit's batch
    thresholds = judging_config_at(cfg, head_sha(root)).thresholds
    found = find_candidates(doc, episodes, store, thresholds, when, blame_dates(root, cfg.continuity_rel),
                            batch, store_weight(raw))
    found.session = session or None
    return found
