"""Judging a long history on every core: contiguous slices of commits in forked worker processes.

Each commit is judged against its own parents, read from the repository, so
the verdict on one commit never depends on which process judged the one
before it: slices can be judged anywhere and their findings joined in commit
order give exactly what one process gives (the tests compare the two).
Slices are contiguous because consecutive versions share almost every section,
and the structure caches pay off within a slice.

Workers are forked (POSIX): nothing is re-imported and no ``__main__`` guard is
needed. Where the platform cannot fork, or the history is short enough that
starting workers costs more than it saves, the caller judges in-process.
"""

from __future__ import annotations

import multiprocessing
import os
from dataclasses import dataclass
from typing import Mapping

from flowgit.config import Config
from flowgit.errors import FlowgitError
from flowgit.history.notes import VersionNotes

MIN_COMMITS_PER_JOB = 500  # fewer than this per worker: forking costs more than it saves
MAX_JOBS = 8
SLICES_PER_JOB = 4  # more slices than workers, so progress moves and a slow slice does not hold the others


@dataclass
class SliceResult:
    findings: list  # AuditFinding, in commit order
    judged: int
    unjudged: list[str]
    error: dict | None = None  # a FlowgitError raised while judging: message, path, line and fix
    notes: "VersionNotes | None" = None  # events and sizes noted for the report, when it asked


def jobs_for(commits: int, requested: int | None = None) -> int:
    """How many worker processes to judge ``commits`` with (1: judge in this process)."""
    if requested is not None:
        wanted = max(1, requested)
    else:
        wanted = min(MAX_JOBS, os.cpu_count() or 1, commits // MIN_COMMITS_PER_JOB)
    if wanted <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return min(wanted, max(1, commits))


def slices(shas: list[str], jobs: int) -> list[list[str]]:
    """``shas`` cut into contiguous slices, a few per worker (oldest first; they are judged newest first, see
    :func:`_judged_newest_first`)."""
    count = min(len(shas), jobs * SLICES_PER_JOB) or 1
    size, extra = divmod(len(shas), count)
    out, start = [], 0
    for n in range(count):
        stop = start + size + (1 if n < extra else 0)
        out.append(shas[start:stop])
        start = stop
    return [s for s in out if s]


def _judged_newest_first(pool, parts: list[list[str]]):
    """The workers' results for ``parts``, given to them newest slice first (``imap`` order: the last result
    is the oldest slice's).

    Later versions cost more to judge (the store they read has grown), so the
    slices that cost most are taken first and the cheapest ones fill in at the
    end: the workers finish closer together than in history order.
    """
    return pool.imap(_judge_slice, parts[::-1])


# Set in the parent just before forking; a forked worker inherits it: (config, overrides, aliases to note under,
# stand-in parents of commits without one: see flowgit.history.audit.replaced_roots).
_TASK: tuple[Config, dict | None, Mapping[str, str] | None, Mapping[str, str] | None] | None = None


def _judge_slice(shas: list[str]) -> SliceResult:
    """Runs in a worker: judge these commits with a repository and caches of its own."""
    from flowgit.history.audit import judge_commits, open_any

    assert _TASK is not None
    cfg, overrides, notes, stand_ins = _TASK
    try:
        repo = open_any(cfg.root)
        return judge_commits(cfg, repo, [repo[sha] for sha in shas], overrides, notes=notes,  # its own git reader
                             stand_ins=stand_ins)
    except FlowgitError as exc:
        return SliceResult([], 0, [], error={"message": exc.message, "path": exc.path, "line": exc.line,
                                             "fix": exc.fix})


def _joined(parts: list[SliceResult]) -> SliceResult:
    """The slices' results in commit order; a slice's FlowgitError is raised again here."""
    total = SliceResult([], 0, [])
    for part in parts:
        if part.notes is not None:
            if total.notes is None:
                total.notes = VersionNotes(part.notes.aliases)
            total.notes.add(part.notes)
        if part.error is not None:
            raise FlowgitError(part.error["message"], path=part.error["path"], line=part.error["line"],
                               fix=part.error["fix"])
        total.findings.extend(part.findings)
        total.judged += part.judged
        total.unjudged.extend(part.unjudged)
    return total


class PendingJudgement:
    """Workers judging ``shas`` while the parent does other work; :meth:`result` waits for them.

    The report reads the history in the parent meanwhile, so the two passes
    share the cores instead of taking turns. The workers are forked at once,
    before the caller starts any thread of its own.
    """

    def __init__(self, cfg: Config, overrides: dict | None, shas: list[str], jobs: int, *,
                 notes: Mapping[str, str] | None = None, stand_ins: Mapping[str, str] | None = None) -> None:
        global _TASK
        _TASK = (cfg, overrides, notes, stand_ins)  # inherited by the workers the pool forks (now, or on replacing one)
        self._pool = multiprocessing.get_context("fork").Pool(jobs)
        self._async = self._pool.map_async(_judge_slice, slices(shas, jobs)[::-1])  # (newest first, as below)

    def result(self) -> SliceResult:
        try:
            return _joined(self._async.get()[::-1])
        finally:
            self.close()

    def close(self) -> None:
        """Stop the workers (at once if they are still judging) and reap them."""
        global _TASK
        self._pool.terminate()
        self._pool.join()
        _TASK = None


def judge_in_workers(cfg: Config, overrides: dict | None, shas: list[str], jobs: int, progress, *,
                     stand_ins: Mapping[str, str] | None = None) -> SliceResult:
    """Judge ``shas`` (oldest first) in ``jobs`` forked workers; findings come back in commit order."""
    global _TASK
    _TASK = (cfg, overrides, None, stand_ins)
    results: list[SliceResult] = []
    try:
        parts = slices(shas, jobs)
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            for part, done in zip(_judged_newest_first(pool, parts), parts[::-1]):
                results.append(part)
                progress.step(len(done))
    finally:
        _TASK = None
    return _joined(results[::-1])  # in commit order: the oldest slice's error is the one raised, as in one process
