"""The immune system: does the cited evidence earn a pattern its level?

One implementation serves the gate (``flowgit check``), the wrap and the audit:

* every cited id must exist in the store as it stands;
* a cited episode must be about the pattern (shares a meaningful word with its
  name or description, tags included), otherwise it is ungrounded;
* restatements collapse: episodes of one session that say the same thing count
  once (content-word Jaccard at or above ``restatement_overlap``);
* 2x needs ``evidence_2x`` independent episodes; 3x (or anything in Proven)
  needs ``evidence_3x`` from at least ``sources_3x`` different sessions or agents.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from flowgit.config import Thresholds
from flowgit.episodes import Episode
from flowgit.words import content_words, jaccard


@dataclass(frozen=True)
class Requirement:
    independent: int
    sources: int


def requirement(level: int, thresholds: Thresholds) -> Requirement:
    if level >= 3:
        return Requirement(thresholds.evidence_3x, thresholds.sources_3x)
    if level == 2:
        return Requirement(thresholds.evidence_2x, 1)
    return Requirement(0, 0)


@dataclass
class Verdict:
    """What the evidence for one pattern at one level amounts to."""

    pattern: str
    level: int
    cited: list[str]
    unknown: list[str] = field(default_factory=list)
    unrelated: list[str] = field(default_factory=list)
    counted: list[list[str]] = field(default_factory=list)  # groups: each group counts once
    sessions: list[str] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    needed: Requirement = field(default_factory=lambda: Requirement(0, 0))

    @property
    def independent(self) -> int:
        return len(self.counted)

    @property
    def sources(self) -> int:
        return max(len(self.sessions), len(self.agents))

    @property
    def enough(self) -> bool:
        return self.independent >= self.needed.independent and self.sources >= self.needed.sources

    @property
    def ok(self) -> bool:
        return not self.unknown and not self.unrelated and self.enough

    def problems(self) -> list[str]:
        """Plain sentences naming exactly what is missing."""
        out = []
        if self.unknown:
            out.append(f"cites episode(s) not in the store: {', '.join(self.unknown)}")
        if self.unrelated:
            out.append(f"cites episode(s) not about `{self.pattern}` (no shared meaningful words): "
                       f"{', '.join(self.unrelated)}")
        if not self.enough:
            collapsed = [g for g in self.counted if len(g) > 1]
            note = ""
            if collapsed:
                note = "; restatements from one session count once: " + "; ".join("+".join(g) for g in collapsed)
            src = f" from {self.needed.sources} different sessions or agents" if self.needed.sources > 1 else ""
            out.append(f"{self.level}x needs {self.needed.independent} independent episodes{src}; "
                       f"has {self.independent} from {self.sources} source(s){note}")
        return out

    def to_dict(self) -> dict:
        return {"pattern": self.pattern, "level": self.level, "cited": self.cited, "unknown": self.unknown,
                "unrelated": self.unrelated, "independent": self.independent, "sources": self.sources,
                "needed_independent": self.needed.independent, "needed_sources": self.needed.sources,
                "ok": self.ok, "problems": self.problems()}


def is_relevant(episode: Episode, pattern_words: frozenset[str], thresholds: Thresholds) -> bool:
    words = content_words(episode.content + " " + " ".join(episode.tags))
    return len(words & pattern_words) >= thresholds.relevance_min_shared


def independent_groups(episodes: Sequence[Episode], thresholds: Thresholds) -> list[list[str]]:
    """Group episodes so that one session's restatements of one observation form one group."""
    groups: list[list[Episode]] = []
    for ep in episodes:
        words = content_words(ep.content)
        home = next((g for g in groups if g[0].source == ep.source and any(
            jaccard(words, content_words(o.content)) >= thresholds.restatement_overlap for o in g)), None)
        if home is None:
            groups.append([ep])
        else:
            home.append(ep)
    return [[e.id for e in g] for g in groups]


def assess(name: str, description: str, level: int, cited: Sequence[str], store: Mapping[str, Episode],
           thresholds: Thresholds, *, in_proven: bool = False) -> Verdict:
    """Judge the evidence ``cited`` for pattern ``name`` at ``level`` against ``store``."""
    effective = max(level, 3) if in_proven else level
    ids = list(dict.fromkeys(cited))
    verdict = Verdict(pattern=name, level=effective, cited=ids, needed=requirement(effective, thresholds))
    pattern_words = content_words(f"{name} {description}")
    usable: list[Episode] = []
    for ident in ids:
        ep = store.get(ident)
        if ep is None:
            verdict.unknown.append(ident)
        elif not is_relevant(ep, pattern_words, thresholds):
            verdict.unrelated.append(ident)
        else:
            usable.append(ep)
    verdict.counted = independent_groups(usable, thresholds)
    verdict.sessions = sorted({e.session or "(no session)" for e in usable})
    verdict.agents = sorted({e.agent for e in usable if e.agent})
    return verdict
