"""The continuity file's history as a partition: each wrap commit is a deposit of its session.

A wrap commit records what a session learned, in the strongest links a
memory has: the patterns it added, incremented, graduated or demoted (by
name, the pattern's identity across history), the episode ids it cited as
evidence, and the ``[<- other]`` derivations between patterns. The commit is
a deposit of its ``Flow-Session`` (so it merges with that session's
transcript or deposit into one node); a commit without one is a deposit of its
own. Its anchors are those pattern names and evidence ids, which is what
joins four wraps on ``retry_budget`` into one line of work; its authoritative
record is the blob at that commit.

History is read with pygit2, one commit at a time (newest first, each version
compared with its first parent's), keeping only the deposits.
"""

from __future__ import annotations

import unicodedata
from typing import Iterator

from flowgit.ascend.model import Anchor, Coinage, Deposit, safe_id
from flowgit.continuity.patterns import Pattern
from flowgit.continuity.scan import scan_patterns
from flowgit.dates import utc_from_timestamp
from flowgit.trailers import parse_trailers, values
from flowgit.words import written_words

PATTERN_TRAILERS = ("Graduated", "Incremented", "Demoted", "Archived")


def _blob_text(repo, tree, path: str) -> str | None:
    try:
        entry = tree[path]
    except KeyError:
        return None
    return repo[entry.id].data.decode("utf-8", "replace")


def _renamed_from(repo, parent, commit, path: str) -> str | None:
    """The path ``path`` had in ``parent`` when the commit renamed it (None: it did not exist there)."""
    diff = repo.diff(parent, commit)
    diff.find_similar()
    for delta in diff.deltas:
        if delta.new_file.path == path and delta.status_char() == "R":
            return delta.old_file.path
    return None


def _patterns(text: str | None) -> dict[str, Pattern]:
    if not text:
        return {}
    return {name: at.pattern for name, at in scan_patterns(text).items()}


def _norm(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold()


def _derived_from(p: Pattern) -> list[str]:
    """Pattern names in ``[<- a, b]`` derivation links."""
    out = []
    for link in p.links:
        if link.startswith("<-") and not link.startswith("<->"):
            out += [x.strip() for x in link[2:].split(",") if x.strip()]
    return out


def changed_patterns(before: dict[str, Pattern], after: dict[str, Pattern]) -> tuple[list[Pattern], list[str]]:
    """(patterns added or changed in ``after``, names that disappeared)."""
    changed = [p for name, p in after.items() if name not in before or before[name].render() != p.render()]
    gone = [name for name in before if name not in after]
    return changed, gone


def trailer_names(trailers: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    """(pattern names in Graduated/Incremented/Demoted/Archived/Renamed trailers, evidence ids they cite)."""
    names, evidence = [], []
    for key in PATTERN_TRAILERS:
        for v in values(trailers, key):
            if v.split():
                names.append(v.split()[0])
            if "[evidence:" in v:
                evidence += [x.strip(" ]") for x in v.split("[evidence:", 1)[1].split(",") if x.strip(" ]")]
    for v in values(trailers, "Renamed"):
        names += [x.strip() for x in v.split("->") if x.strip()]
    for v in values(trailers, "Episodes"):
        evidence += [x.strip() for x in v.split(",") if x.strip()]
    return names, evidence


def wrap_deposit(commit, path: str, text: str, before_text: str | None, root, slug: str) -> Deposit:
    """One commit's deposit: its session, its pattern names, evidence ids and derivations as anchors."""
    trailers = parse_trailers(commit.message)
    session = next((s for s in values(trailers, "Flow-Session") if safe_id(s) and s != "unknown"), None)
    before, after = _patterns(before_text), _patterns(text)
    changed, gone = changed_patterns(before, after)
    names, evidence = trailer_names(trailers)
    names = list(dict.fromkeys([*names, *(p.name for p in changed), *gone]))
    derived = [x for p in changed for x in _derived_from(p)]
    for p in changed:
        new_ids = set(p.evidence) - set(before[p.name].evidence if p.name in before else ())
        evidence += sorted(new_ids)
    evidence = list(dict.fromkeys(evidence))
    anchors = [Anchor("pattern", n) for n in names]
    anchors += [Anchor("pattern", n, "derived") for n in dict.fromkeys(derived) if n not in names]
    anchors += [Anchor("evidence", e) for e in evidence]
    sha = str(commit.id)
    if session:
        anchors.append(Anchor("session", session))
    when = utc_from_timestamp(commit.commit_time)
    subject = commit.message.splitlines()[0] if commit.message else ""
    described = " ".join(p.words for p in changed)
    written = written_words(described + " " + subject)
    words = [written[w] for w in sorted(written)][:60]  # as written: keywords are shown, terms are stemmed
    coined = [Coinage(p.name, 1.0) for p in changed if p.name not in before]
    return Deposit(partition="git", slug=slug, sid=session or sha, cwd=str(root),
                   date=when.date().isoformat(), started_at=when.isoformat(), last_turn_at=when.isoformat(),
                   topics=[subject, *names], keywords=[*names, *words], anchors=anchors, initial_request=subject,
                   fingerprint=" | ".join(p.render() for p in changed)[:2000], coined=coined,
                   outcome="; ".join(f"{p.name} at {p.level}x" for p in changed)[:300],
                   source=root, source_ref=f"{sha}:{path}", full=True)


def _surely_unborn(git_dir) -> bool:
    """True only when a plain ``.git`` directory's HEAD names a branch with no commit (loose or packed)."""
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except (OSError, NotADirectoryError):
        return False   # a worktree's .git file, or something unusual: let pygit2 decide
    if not head.startswith("ref: "):
        return False
    ref = head[5:].strip()
    if (git_dir / ref).exists():
        return False
    try:
        packed = (git_dir / "packed-refs").read_text(encoding="utf-8")
    except OSError:
        return True
    return not any(line.endswith(" " + ref) for line in packed.splitlines())


class HistoryPartition:
    """Every commit that changed the continuity file, newest first, one deposit each."""

    name = "git"

    def __init__(self, cfg) -> None:
        self.cfg = cfg

    def deposits(self, notes) -> Iterator[Deposit]:
        root = self.cfg.root
        if not (root / ".git").exists() or _surely_unborn(root / ".git"):
            return   # no history: pygit2 is not even loaded (it costs more than reading ten thousand files)
        import pygit2

        try:
            repo = pygit2.Repository(str(root))
        except pygit2.GitError:
            notes.refused.append(f"{root}: not a readable git repository; its history was not read")
            return
        if repo.head_is_unborn:
            return
        slug = f"git:{root.name}"
        paths = {str(repo.head.target): self.cfg.continuity_rel}   # the file's path at each commit
        for commit in repo.walk(repo.head.target, pygit2.GIT_SORT_TOPOLOGICAL | pygit2.GIT_SORT_TIME):
            path = paths.pop(str(commit.id), None)
            if path is None:
                continue
            for parent in commit.parents:   # followed through renames, as git log --follow would
                before = path if _blob_text(repo, parent.tree, path) is not None else \
                    _renamed_from(repo, parent, commit, path)
                if before:
                    paths.setdefault(str(parent.id), before)
            if len(commit.parents) > 1:
                continue  # a merge joins two sessions' deposits: it is no session of its own
            text = _blob_text(repo, commit.tree, path)
            if text is None:
                continue
            first = commit.parents[0] if commit.parents else None
            parent_path = paths.get(str(first.id), path) if first is not None else path
            parent_text = _blob_text(repo, first.tree, parent_path) if first is not None else None
            if parent_text == text:
                continue
            notes.partitions[slug] += 1
            yield wrap_deposit(commit, path, text, parent_text, root, slug)

    def complete(self, deposit: Deposit, notes) -> None:
        return None
