"""What a gate rule sees: HEAD's document and store, the staged ones, and the config."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable

from flowgit.config import Config
from flowgit.continuity.document import Document
from flowgit.continuity.patterns import PatternAt, iter_patterns, pattern_map
from flowgit.continuity.sections import Semantics
from flowgit.episodes import Episode, lookup


@dataclass
class CheckContext:
    """Old (HEAD) and new (staged) continuity and store; ``old`` is None on a first commit."""

    cfg: Config
    new: Document
    old: Document | None
    new_store: bytes
    old_store: bytes
    path: str
    store_path: str
    _episodes: dict[str, Episode] = field(default_factory=dict)

    @cached_property
    def new_patterns(self) -> dict[str, PatternAt]:
        return pattern_map(self.new)

    @cached_property
    def old_patterns(self) -> dict[str, PatternAt]:
        return pattern_map(self.old) if self.old else {}

    @cached_property
    def all_new_patterns(self) -> list[PatternAt]:
        return list(iter_patterns(self.new))

    @cached_property
    def old_line_counts(self) -> Counter[str]:
        return Counter(ln.rstrip("\r\n") for ln in self.old.lines) if self.old else Counter()

    def line_is_new(self, index: int) -> bool:
        """Whether a staged line is new or changed compared with HEAD (a multiset comparison)."""
        return self.old is None or self.old_line_counts[self.new.lines[index].rstrip("\r\n")] == 0

    @cached_property
    def changed_patterns(self) -> list[PatternAt]:
        """Patterns whose line is new or changed, or that moved section, since HEAD."""
        out = []
        for at in self.all_new_patterns:
            before = self.old_patterns.get(at.pattern.name)
            if before is None or before.pattern.render() != at.pattern.render() or before.section != at.section:
                out.append(at)
        return out

    def episodes(self, ids: Iterable[str]) -> dict[str, Episode]:
        """Cited episodes from the staged store, looked up lazily and cached."""
        wanted = [i for i in ids if i not in self._episodes]
        if wanted:
            self._episodes.update(lookup(self.new_store, wanted))
        return self._episodes

    def sections(self, doc: Document | None, *semantics: Semantics):
        if doc is None:
            return []
        return [s for s in doc.sections if s.semantics in semantics]

    def old_section(self, label: str):
        return self.old.find(label) if self.old else None
