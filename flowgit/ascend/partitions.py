"""Partitions: where deposits come from. Each is a plug-in producing one Deposit type.

* ``claude``: per-session deposits under ``{config_dir}/projects/*/hypomnesis/*/``,
  whose authoritative record is the transcript ``{slug}/{sid}.jsonl``;
* ``transcripts``: Claude Code's own transcripts of sessions without a deposit,
  read directly (:mod:`flowgit.ascend.transcripts`);
* ``git``: every commit that changed the continuity file, a deposit of its
  ``Flow-Session``, whose authoritative record is the blob at that commit
  (:mod:`flowgit.ascend.history`);
* ``episodes``: the episodic store grouped by session, its own authority.

A partition is read, never written: no cache, no index, no lock file.
Registering a new one is one class and one line in :data:`PARTITIONS`.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from flowgit.ascend import formats
from flowgit.ascend.history import HistoryPartition
from flowgit.ascend.model import Anchor, Deposit, printable_name, refused_name, safe_id, session_key
from flowgit.ascend.safeio import Tree
from flowgit.ascend.transcripts import TranscriptPartition
from flowgit.words import written_words

SKIP_PREFIXES = (".hyp-",)
SKIP_NAMES = {"subagent", ".outcomes"}


@dataclass
class ScopeNotes:
    """What reading the partitions ran into: counted and reported, never fatal."""

    partitions: Counter = field(default_factory=Counter)       # partition slug -> deposits read
    refused: list[str] = field(default_factory=list)
    skipped_entries: int = 0
    missing_files: int = 0
    legacy_anchors: int = 0
    tolerant_frontmatter: int = 0
    reindexed_narratives: int = 0
    deposit_won: int = 0          # transcripts not read because the session has a deposit
    scanned: int = 0              # transcripts searched as bytes (read in full only when the recall reached them)
    unsafe_frontmatter: int = 0   # YAML refused: aliases, or larger than the cap
    shallow_history: list[str] = field(default_factory=list)   # what a shallow clone's history cannot show

    def to_dict(self) -> dict:
        return {"partitions": dict(self.partitions), "refused": self.refused,
                "deposit_won": self.deposit_won, "scanned": self.scanned, "unsafe_frontmatter": self.unsafe_frontmatter,
                "skipped_entries": self.skipped_entries, "missing_files": self.missing_files,
                "legacy_anchors": self.legacy_anchors, "tolerant_frontmatter": self.tolerant_frontmatter,
                "reindexed_narratives": self.reindexed_narratives, "shallow_history": self.shallow_history}


def claude_config_dir(explicit: str | Path | None, configured: Path | None) -> Path:
    if explicit:
        return Path(explicit).expanduser()
    if os.environ.get("CLAUDE_CONFIG_DIR"):
        return Path(os.environ["CLAUDE_CONFIG_DIR"]).expanduser()
    if configured:
        return configured
    return Path.home() / ".claude"


class ClaudePartition:
    """Session deposits written by the recall hook, one partition per project directory."""

    name = "claude"

    def __init__(self, config_dir: Path) -> None:
        self.root = config_dir / "projects"
        self.tree = Tree(config_dir)

    def deposits(self, notes: ScopeNotes) -> Iterator[Deposit]:
        from flowgit.output import Progress

        if not self.root.is_dir() or not self.tree.check_dir(self.root):
            return
        progress = Progress("reading session deposits", every=500)
        for slug in sorted(os.listdir(self.root)):
            if not printable_name(slug):
                notes.refused.append(refused_name(slug))
                continue
            slug_dir = self.root / slug
            hyp = slug_dir / "hypomnesis"
            if not self.tree.check_dir(slug_dir) or not hyp.is_dir() or not self.tree.check_dir(hyp):
                continue
            for item in sorted(os.scandir(hyp), key=lambda e: e.name):
                if item.name in SKIP_NAMES or item.name.startswith(SKIP_PREFIXES) or not item.is_dir():
                    notes.skipped_entries += 1
                    continue
                if item.is_symlink() and not self.tree.check_dir(item.path):
                    continue
                deposit = self._discover(slug, item.path, notes)
                progress.step()
                if deposit is not None:
                    notes.partitions[f"claude:{slug}"] += 1
                    yield deposit
        progress.done()
        notes.refused.extend(r for r in self.tree.refused if r not in notes.refused)

    def _discover(self, slug: str, entry: str, notes: ScopeNotes) -> Deposit | None:
        """The cheap pass: clue.md's frontmatter keys by one regular expression, coinage tokens."""
        sid = os.path.basename(entry)
        clue = formats.read_text(os.path.join(entry, "clue.md"), self.tree)
        narrative = None
        if clue is None:
            notes.missing_files += 1
            narrative = formats.read_text(os.path.join(entry, "narrative.md"), self.tree)
            if narrative is None:
                notes.missing_files += 1
                notes.refused.append(f"{slug}/{sid}: a deposit with neither clue.md nor narrative.md readable; not "
                                     "read as a deposit (the transcripts partition reads the session's transcript)")
                return None
        fm = formats.first_frontmatter(clue) if clue is not None else formats.split_blocks(narrative)[-1][0]
        data = formats.discover_fields(fm)
        claimed = formats.as_text(data.get("session_id"))
        if not safe_id(sid) or (claimed and not safe_id(claimed)):
            notes.refused.append(f"{slug}/{sid}: session id {claimed or sid!r} is not a plain id; refused")
            return None
        if claimed and claimed != sid:  # a deposit lives at hypomnesis/{session_id}/: this is a copy or a move
            notes.refused.append(f"{slug}/{sid}: its clue.md names session {claimed!r}, and a deposit's directory "
                                 "is its session id (a copied or moved deposit?); not read, so no session counts twice")
            return None
        anchors, anchor_notes = formats.anchors_from(fm, data)
        notes.legacy_anchors += len(anchor_notes)
        cwd = formats.as_path(data.get("cwd"))
        deposit = Deposit(partition=self.name, slug=slug, sid=sid, cwd=cwd,
                          date=formats.day_of(data.get("date")) or formats.day_of(data.get("started_at")),
                          started_at=formats.as_text(data.get("started_at")),
                          last_turn_at=formats.as_text(data.get("last_turn_at")),
                          topics=formats.as_list(data.get("topics")), keywords=formats.as_list(data.get("keywords")),
                          anchors=anchors, initial_request=formats.as_text(data.get("initial_request")),
                          path=entry, source=os.path.join(os.path.dirname(os.path.dirname(entry)), f"{sid}.jsonl"),
                          notes=anchor_notes)
        coinage = formats.read_text(os.path.join(entry, "coinage.md"), self.tree)
        if coinage:
            deposit.coined = formats.coinage_rows(coinage)
        return deposit

    def complete(self, deposit: Deposit, notes: ScopeNotes) -> None:
        """The full read of one deposit's index files (python-frontmatter), for deposits in a unit."""
        if deposit.full or deposit.path is None:
            return
        deposit.full = True
        entry = Path(deposit.path)
        clue = formats.read_text(entry / "clue.md", self.tree)
        if clue is not None:
            fm, body = formats.split_blocks(clue)[0]
            data, how = formats.load_frontmatter(fm)
            self._note_yaml(deposit, "clue.md", how, notes)
            deposit.key_utterances = formats.as_list(data.get("key_utterances"))
            if not deposit.key_utterances:
                deposit.key_utterances = _bullets_after(body, "Notable user statements")
        narrative = formats.read_text(entry / "narrative.md", self.tree)
        if narrative is not None:
            blocks = formats.split_blocks(narrative)
            if len(blocks) > 1:
                notes.reindexed_narratives += 1
                deposit.notes.append(f"narrative re-indexed {len(blocks)} times; the latest block is used")
            fm, body = blocks[-1]
            data, how = formats.load_frontmatter(fm)
            self._note_yaml(deposit, "narrative.md", how, notes)
            sections = formats.narrative_sections(body)
            deposit.fingerprint = " ".join(x for x in (sections.get("origin"), sections.get("direction")) if x)
            deposit.outcome = sections.get("outcome", "")
            deposit.continuations = formats.as_list(data.get("continuations"))
            deposit.forks = formats.as_list(data.get("forks"))
            if not deposit.topics:
                deposit.topics = formats.as_list(data.get("topics"))
            if not deposit.cwd and "cwd" in data:
                deposit.cwd = formats.as_path(data.get("cwd"))
        vector = formats.read_text(entry / "vector.md", self.tree)
        if vector is not None:
            fm, body = formats.split_blocks(vector)[0]
            data, how = formats.load_frontmatter(fm) if fm else ({}, "yaml")
            self._note_yaml(deposit, "vector.md", how, notes)
            deposit.decisions = formats.vector_decisions(data, body)
        entropy = formats.read_text(entry / "entropy.md", self.tree)
        if entropy is not None:
            deposit.identifiers = [r.get("literal", "").strip("`") for r in formats.parse_table(entropy)
                                   if r.get("literal")]
        markers = formats.read_text(entry / "markers.md", self.tree)
        if markers is not None:
            known = {c.token.lower() for c in deposit.coined}
            for token in formats.marker_tokens(markers):
                if token.lower() not in known:
                    from flowgit.ascend.model import Coinage

                    deposit.coined.append(Coinage(token))
        for name in ("narrative.md", "vector.md", "entropy.md", "coinage.md", "markers.md"):
            if not (entry / name).exists():
                notes.missing_files += 1
        notes.refused.extend(r for r in self.tree.refused if r not in notes.refused)

    @staticmethod
    def _note_yaml(deposit: Deposit, name: str, how: str, notes: ScopeNotes) -> None:
        """Say how a front-matter block was read when it was not plain YAML."""
        if how == "tolerant":
            notes.tolerant_frontmatter += 1
            deposit.notes.append(f"{name} front matter is not valid YAML; read line by line")
        elif how in ("alias", "too_large"):
            notes.unsafe_frontmatter += 1
            why = "uses YAML aliases" if how == "alias" else "is larger than 64 KB"
            note = f"{deposit.slug}/{deposit.sid}/{name}: front matter {why}; not parsed as YAML, read line by line"
            deposit.notes.append(note)
            notes.refused.append(note)


def _bullets_after(body: str, heading: str) -> list[str]:
    out, inside = [], False
    for line in body.splitlines():
        if heading.lower() in line.lower():
            inside = True
            continue
        if inside:
            if line.strip().startswith(("-", "*")):
                out.append(line.strip()[1:].strip().strip("\"“”"))
            elif line.strip():
                break
    return out


class EpisodePartition:
    """The episodic store grouped by session: each session's episodes are one deposit."""

    name = "episodes"

    def __init__(self, cfg) -> None:
        self.cfg = cfg

    def deposits(self, notes: ScopeNotes) -> Iterator[Deposit]:
        from flowgit.episodes import EpisodeStore

        store = EpisodeStore(self.cfg.store)
        if not self.cfg.store.exists():
            return
        episodes, _ = store.read()
        sessions: dict[str, list] = {}
        spelled: dict[str, str] = {}  # one session however it is spelled, as the gate counts it (G103)
        unplain: dict[str, int] = {}  # session ids no resume command or answer state can carry as they are
        for ep in episodes.values():
            if ep.session and safe_id(ep.session):
                key = session_key(ep.session)
                sessions.setdefault(spelled.setdefault(key, ep.session), []).append(ep)
            elif ep.session:
                unplain[ep.session] = unplain.get(ep.session, 0) + 1
        for sid, count in list(unplain.items())[:20]:
            notes.refused.append(f"episodes/{sid[:60]!r}: session id is not a plain id (letters, digits, `_.:-`); "
                                 f"its {count} episode(s) were not read")
        if len(unplain) > 20:
            notes.refused.append(f"episodes: {len(unplain) - 20} more session id(s) that are not plain ids; not read")
        for sid, eps in sessions.items():
            eps.sort(key=lambda e: e.ts)
            tags = Counter(t for e in eps for t in e.tags)
            written = [written_words(e.content) for e in eps]
            shown = {stem: word for found in reversed(written) for stem, word in found.items()}  # first wins
            words = Counter(shown[w] for found in written for w in found)  # counted by stem, shown as written
            notes.partitions["episodes"] += 1
            yield Deposit(partition=self.name, slug="episodes", sid=sid, cwd=str(self.cfg.root),
                          date=eps[0].ts[:10] or None, started_at=eps[0].ts, last_turn_at=eps[-1].ts,
                          topics=[t for t, _ in tags.most_common(3)],
                          keywords=[t for t, _ in tags.most_common()] + [w for w, _ in words.most_common(20)],
                          anchors=[Anchor("session", sid)] + [Anchor("evidence", e.id) for e in eps],
                          initial_request=eps[0].content,
                          key_utterances=[e.content for e in eps if e.type == "decision"],
                          fingerprint=" ".join(e.content for e in eps), outcome=eps[-1].content,
                          source=self.cfg.store, source_ref=sid, full=True)

    def complete(self, deposit: Deposit, notes: ScopeNotes) -> None:
        return None


PartitionFactory = Callable[..., object]
PARTITIONS: dict[str, PartitionFactory] = {
    "claude": lambda cfg, claude_dir, chosen=(): ClaudePartition(claude_dir),
    "transcripts": lambda cfg, claude_dir, chosen=(): TranscriptPartition(claude_dir,
                                                                         deposits_win="claude" in chosen),
    "git": lambda cfg, claude_dir, chosen=(): HistoryPartition(cfg),
    "episodes": lambda cfg, claude_dir, chosen=(): EpisodePartition(cfg),
}
