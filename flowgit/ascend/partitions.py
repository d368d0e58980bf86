"""Partitions: where deposits come from. Each is a plug-in producing one Deposit type.

* ``claude``: per-session deposits under ``{config_dir}/projects/*/hypomnesis/*/``,
  whose authoritative record is the transcript ``{slug}/{sid}.jsonl``;
* ``git``: every commit that changed the continuity file, whose authoritative
  record is the blob at that commit (read with the history walk's code);
* ``episodes``: the episodic store grouped by session, its own authority.

A partition is read, never written: no cache, no index, no lock file.
Registering a new one is one class and one line in :data:`PARTITIONS`.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

from flowgit.ascend import formats
from flowgit.ascend.model import Anchor, Deposit, safe_id
from flowgit.words import content_words

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

    def to_dict(self) -> dict:
        return {"partitions": dict(self.partitions), "refused": self.refused,
                "skipped_entries": self.skipped_entries, "missing_files": self.missing_files,
                "legacy_anchors": self.legacy_anchors, "tolerant_frontmatter": self.tolerant_frontmatter,
                "reindexed_narratives": self.reindexed_narratives}


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

    def deposits(self, notes: ScopeNotes) -> Iterator[Deposit]:
        from flowgit.output import Progress

        if not self.root.is_dir():
            return
        progress = Progress("reading session deposits", every=500)
        for slug_dir in sorted(p for p in self.root.iterdir() if p.is_dir()):
            hyp = slug_dir / "hypomnesis"
            if not hyp.is_dir():
                continue
            for item in sorted(os.scandir(hyp), key=lambda e: e.name):
                if item.name in SKIP_NAMES or item.name.startswith(SKIP_PREFIXES) or not item.is_dir():
                    notes.skipped_entries += 1
                    continue
                deposit = self._discover(slug_dir.name, item.path, notes)
                progress.step()
                if deposit is not None:
                    notes.partitions[f"claude:{slug_dir.name}"] += 1
                    yield deposit
        progress.done()

    def _discover(self, slug: str, entry: str, notes: ScopeNotes) -> Deposit | None:
        """The cheap pass: clue.md's frontmatter keys by one regular expression, coinage tokens."""
        sid = os.path.basename(entry)
        clue = formats.read_text(os.path.join(entry, "clue.md"))
        narrative = None
        if clue is None:
            notes.missing_files += 1
            narrative = formats.read_text(os.path.join(entry, "narrative.md"))
            if narrative is None:
                notes.missing_files += 1
                return None
        fm = formats.first_frontmatter(clue) if clue is not None else formats.split_blocks(narrative)[-1][0]
        data = formats.discover_fields(fm)
        claimed = formats.as_text(data.get("session_id"))
        if not safe_id(sid) or (claimed and not safe_id(claimed)):
            notes.refused.append(f"{slug}/{sid}: session id {claimed or sid!r} is not a plain id; refused")
            return None
        anchors, anchor_notes = formats.anchors_from(fm, data)
        notes.legacy_anchors += len(anchor_notes)
        cwd = formats.as_text(data.get("cwd")) or None
        deposit = Deposit(partition=self.name, slug=slug, sid=sid, cwd=cwd,
                          date=formats.day_of(data.get("date")) or formats.day_of(data.get("started_at")),
                          started_at=formats.as_text(data.get("started_at")),
                          last_turn_at=formats.as_text(data.get("last_turn_at")),
                          topics=formats.as_list(data.get("topics")), keywords=formats.as_list(data.get("keywords")),
                          anchors=anchors, initial_request=formats.as_text(data.get("initial_request")),
                          path=entry, source=os.path.join(os.path.dirname(os.path.dirname(entry)), f"{sid}.jsonl"),
                          notes=anchor_notes)
        coinage = formats.read_text(os.path.join(entry, "coinage.md"))
        if coinage:
            deposit.coined = formats.coinage_rows(coinage)
        return deposit

    def complete(self, deposit: Deposit, notes: ScopeNotes) -> None:
        """The full read of one deposit's index files (python-frontmatter), for deposits in a unit."""
        if deposit.full or deposit.path is None:
            return
        deposit.full = True
        entry = Path(deposit.path)
        clue = formats.read_text(entry / "clue.md")
        if clue is not None:
            fm, body = formats.split_blocks(clue)[0]
            data, was_yaml = formats.load_frontmatter(fm)
            notes.tolerant_frontmatter += not was_yaml
            deposit.key_utterances = formats.as_list(data.get("key_utterances"))
            if not deposit.key_utterances:
                deposit.key_utterances = _bullets_after(body, "Notable user statements")
        narrative = formats.read_text(entry / "narrative.md")
        if narrative is not None:
            blocks = formats.split_blocks(narrative)
            if len(blocks) > 1:
                notes.reindexed_narratives += 1
                deposit.notes.append(f"narrative re-indexed {len(blocks)} times; the latest block is used")
            fm, body = blocks[-1]
            data, was_yaml = formats.load_frontmatter(fm)
            if not was_yaml:
                notes.tolerant_frontmatter += 1
                deposit.notes.append("narrative frontmatter is not valid YAML; read line by line")
            sections = formats.narrative_sections(body)
            deposit.fingerprint = " ".join(x for x in (sections.get("origin"), sections.get("direction")) if x)
            deposit.outcome = sections.get("outcome", "")
            deposit.continuations = formats.as_list(data.get("continuations"))
            deposit.forks = formats.as_list(data.get("forks"))
            if not deposit.topics:
                deposit.topics = formats.as_list(data.get("topics"))
            if not deposit.cwd and "cwd" in data:
                deposit.cwd = formats.as_text(data.get("cwd")) or None
        vector = formats.read_text(entry / "vector.md")
        if vector is not None:
            fm, body = formats.split_blocks(vector)[0]
            data, _ = formats.load_frontmatter(fm) if fm else ({}, True)
            deposit.decisions = formats.vector_decisions(data, body)
        entropy = formats.read_text(entry / "entropy.md")
        if entropy is not None:
            deposit.identifiers = [r.get("literal", "").strip("`") for r in formats.parse_table(entropy)
                                   if r.get("literal")]
        markers = formats.read_text(entry / "markers.md")
        if markers is not None:
            known = {c.token.lower() for c in deposit.coined}
            for token in formats.marker_tokens(markers):
                if token.lower() not in known:
                    from flowgit.ascend.model import Coinage

                    deposit.coined.append(Coinage(token))
        for name in ("narrative.md", "vector.md", "entropy.md", "coinage.md", "markers.md"):
            if not (entry / name).exists():
                notes.missing_files += 1


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


class GitPartition:
    """Each commit that changed the continuity file is a deposit; the blob at that commit is its source."""

    name = "git"

    def __init__(self, cfg) -> None:
        self.cfg = cfg

    def deposits(self, notes: ScopeNotes) -> Iterator[Deposit]:
        from flowgit.history.walk import collect_commits, open_repo
        from flowgit.trailers import values

        root = self.cfg.root
        if not (root / ".git").exists():
            return
        repo = open_repo(root)
        commits, _ = collect_commits(self.cfg, repo)
        by_sha = {c.sha: c for c in commits}
        for commit in commits:
            if commit.blob is None:
                continue
            parents = [by_sha[p].blob for p in commit.parents if p in by_sha]
            if commit.blob in parents:
                continue
            text = repo.odb.read(commit.blob)[1].decode("utf-8", "replace")
            before = repo.odb.read(parents[0])[1].decode("utf-8", "replace") if parents and parents[0] else ""
            added = set(text.splitlines()) - set(before.splitlines())
            trailers = commit.trailers
            names = [v.split()[0] for key in ("Graduated", "Incremented", "Demoted", "Archived")
                     for v in values(trailers, key) if v.split()]
            anchors = [Anchor("episode", i.strip()) for v in values(trailers, "Episodes") for i in v.split(",")
                       if i.strip()]
            anchors += [Anchor("session", s) for s in values(trailers, "Flow-Session")]
            when = datetime.fromtimestamp(commit.time, tz=timezone.utc)
            words = sorted(content_words(" ".join(added)))[:60]
            notes.partitions[f"git:{root.name}"] += 1
            yield Deposit(partition=self.name, slug=f"git:{root.name}", sid=commit.sha, cwd=str(root),
                          date=when.date().isoformat(), started_at=when.isoformat(), last_turn_at=when.isoformat(),
                          topics=[commit.subject] + names, keywords=names + words, anchors=anchors,
                          initial_request=commit.subject, fingerprint=" ".join(sorted(added))[:2000],
                          source=root, source_ref=f"{commit.sha}:{commit.path}", full=True)

    def complete(self, deposit: Deposit, notes: ScopeNotes) -> None:
        return None


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
        for ep in episodes.values():
            if ep.session and safe_id(ep.session):
                sessions.setdefault(ep.session, []).append(ep)
        for sid, eps in sessions.items():
            eps.sort(key=lambda e: e.ts)
            tags = Counter(t for e in eps for t in e.tags)
            words = Counter(w for e in eps for w in content_words(e.content))
            notes.partitions["episodes"] += 1
            yield Deposit(partition=self.name, slug="episodes", sid=sid, cwd=str(self.cfg.root),
                          date=eps[0].ts[:10] or None, started_at=eps[0].ts, last_turn_at=eps[-1].ts,
                          topics=[t for t, _ in tags.most_common(3)],
                          keywords=[t for t, _ in tags.most_common()] + [w for w, _ in words.most_common(20)],
                          anchors=[Anchor("session", sid)], initial_request=eps[0].content,
                          key_utterances=[e.content for e in eps if e.type == "decision"],
                          fingerprint=" ".join(e.content for e in eps), outcome=eps[-1].content,
                          source=self.cfg.store, source_ref=sid, full=True)

    def complete(self, deposit: Deposit, notes: ScopeNotes) -> None:
        return None


PartitionFactory = Callable[..., object]
PARTITIONS: dict[str, PartitionFactory] = {
    "claude": lambda cfg, claude_dir: ClaudePartition(claude_dir),
    "git": lambda cfg, claude_dir: GitPartition(cfg),
    "episodes": lambda cfg, claude_dir: EpisodePartition(cfg),
}
