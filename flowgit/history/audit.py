"""``flowgit audit``: re-derive every graduation from the file's own history and check it as of its commit.

Trailers are read, never trusted: each promotion is found by diffing the file's
versions, and its evidence is checked against the episodic store *as that
commit had it* — so a commit made with ``--no-verify`` is caught, and so is
evidence that was only recorded after the fact.
"""

from __future__ import annotations

from dataclasses import dataclass

from flowgit.changes import ADDED, GRADUATED, INCREMENTED
from flowgit.config import Config
from flowgit.continuity.sections import PROVEN
from flowgit.episodes import Episode, locate, lookup
from flowgit.git import blob_oid
from flowgit.evidence import assess
from flowgit.history.walk import CommitInfo, History, HistoryEvent, open_repo, read_history
from flowgit.output import Progress
from flowgit.trailers import mismatches, values


@dataclass(frozen=True)
class AuditFinding:
    code: str
    commit: str
    date: str
    pattern: str
    message: str

    def to_dict(self) -> dict:
        return {"code": self.code, "commit": self.commit, "date": self.date, "pattern": self.pattern,
                "message": self.message}

    def format(self) -> str:
        who = f" `{self.pattern}`" if self.pattern else ""
        return f"{self.commit[:12]} {self.date} {self.code}{who}: {self.message}"


@dataclass
class AuditReport:
    findings: list[AuditFinding]
    commits: int
    graduations: int
    shallow: bool
    oldest_visible: str | None

    def to_dict(self) -> dict:
        return {"ok": not self.findings, "commits_read": self.commits, "graduations_checked": self.graduations,
                "shallow": self.shallow, "oldest_visible": self.oldest_visible,
                "findings": [f.to_dict() for f in self.findings]}


def is_promotion(item: HistoryEvent) -> bool:
    e = item.event
    return e.kind in (GRADUATED, INCREMENTED) or (e.kind == ADDED and (e.level >= 2 or e.section == PROVEN))


class StoreAt:
    """The episodic store as each commit had it, without reading every version.

    HEAD's store is read once and the cited ids located in it. A version at
    commit C that is an exact prefix of HEAD's store (checked by hashing that
    prefix against C's blob id, once per version) held exactly the episodes
    whose lines end within its size. Any other version (a store rewritten
    somewhere in history) is read and searched in full.
    """

    def __init__(self, repo, rel: str, cited: set[str]) -> None:
        self.repo, self.rel, self.cited = repo, rel, cited
        self._prefix: dict[str, bool] = {}
        self._head: bytes | None = None
        self._head_index: dict[str, tuple[Episode, int]] | None = None

    def head(self) -> bytes:
        if self._head is None:
            self._head = b""
            if not self.repo.head_is_unborn:
                entry = _entry(self.repo.head.peel().tree, self.rel)
                self._head = self.repo[entry.id].data if entry is not None else b""
        return self._head

    def head_index(self) -> dict[str, tuple[Episode, int]]:
        if self._head_index is None:
            self._head_index = locate(self.head(), self.cited)
        return self._head_index

    def episodes_at(self, sha: str, ids) -> dict[str, Episode]:
        entry = _entry(self.repo[sha].tree, self.rel)
        if entry is None:
            return {}
        oid = str(entry.id)
        _, size = self.repo.odb.read_header(entry.id)
        if oid not in self._prefix:
            head = self.head()
            self._prefix[oid] = size <= len(head) and blob_oid(memoryview(head)[:size], len(oid)) == oid
        if self._prefix[oid]:
            index = self.head_index()
            return {i: index[i][0] for i in ids if i in index and index[i][1] <= size}
        return lookup(self.repo[entry.id].data, ids)


def _entry(tree, path: str):
    try:
        return tree[path]
    except KeyError:
        return None


def audit_history(cfg: Config, history: History) -> AuditReport:
    repo = open_repo(cfg.root)
    promotions = [item for item in history.events if is_promotion(item)]
    store = StoreAt(repo, cfg.store_rel, {i for item in promotions for i in item.event.evidence})
    findings: list[AuditFinding] = []
    progress = Progress("auditing graduations", len(promotions))
    by_commit: dict[str, list[HistoryEvent]] = {}
    for item in history.events:
        by_commit.setdefault(item.commit.sha, []).append(item)
    for item in promotions:
        progress.step()
        findings.extend(_check_promotion(cfg, item, store))
    progress.done()
    for commit in history.commits:
        findings.extend(_check_commit(commit, [i.event for i in by_commit.get(commit.sha, [])],
                                      baseline=commit.sha in history.boundary))
    order = {c.sha: i for i, c in enumerate(history.commits)}
    findings.sort(key=lambda f: (order.get(f.commit, 0), f.code))
    return AuditReport(findings, len(history.commits), len(promotions), history.shallow, history.oldest_visible)


def _check_promotion(cfg: Config, item: HistoryEvent, store: StoreAt) -> list[AuditFinding]:
    e, c = item.event, item.commit
    where = "Proven" if e.section == PROVEN else f"{e.level}x"

    def finding(code: str, message: str) -> AuditFinding:
        return AuditFinding(code, c.sha, c.date, e.name, message)

    if not e.evidence:
        return [finding("A101", f"{e.kind} to {where} without [evidence: …] (committed past the gate?)")]
    at_commit: dict[str, Episode] = store.episodes_at(c.sha, e.evidence)
    verdict = assess(e.name, e.text, e.level, e.evidence, at_commit, cfg.thresholds, in_proven=e.section == PROVEN)
    out = []
    if verdict.unknown:
        later = {i for i in verdict.unknown if i in store.head_index()}
        added_later = [i for i in verdict.unknown if i in later]
        never = [i for i in verdict.unknown if i not in later]
        if added_later:
            out.append(finding("A103", f"cites {', '.join(added_later)}, recorded only after this {e.kind}"))
        if never:
            out.append(finding("A102", f"cites {', '.join(never)}, which never existed in the store"))
    if verdict.unrelated:
        out.append(finding("A105", f"cites {', '.join(verdict.unrelated)}, not about the pattern"))
    if not verdict.unknown and not verdict.enough:
        out.append(finding("A104", f"the evidence did not hold at {where}: {verdict.problems()[-1]}"))
    return out


def _check_commit(commit: CommitInfo, events, *, baseline: bool = False) -> list[AuditFinding]:
    """Overrides, and trailers against the change (not on a shallow boundary, whose change is not visible)."""
    out = []
    trailers = commit.trailers
    for reason in values(trailers, "Flow-Override"):
        out.append(AuditFinding("A301", commit.sha, commit.date, "", f"the gate was overridden: {reason}"))
    if values(trailers, "Flow-Session") and not baseline:
        for problem in mismatches(trailers, events):
            out.append(AuditFinding("A201", commit.sha, commit.date, "", problem))
    return out


def run_audit(cfg: Config) -> AuditReport:
    return audit_history(cfg, read_history(cfg))
