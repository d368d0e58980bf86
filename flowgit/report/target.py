"""Where ``flowgit report -o`` may write: a new file, or a page flowgit wrote before, and nothing else.

The report is a rendering anyone can draw again; what ``-o`` could replace may
not be. A slip of tab completion (``-o C<TAB>``) must not turn the continuity
file, the episodic store (uncommitted episodes and all) or ``.git/HEAD`` into a
web page, so the target is checked before the history is read, and again just
before the page replaces anything: never inside git's own storage, never the
memory or the store's directory, never a directory, and never an existing file
unless it carries the marker every page flowgit draws carries.
"""

from __future__ import annotations

import os
from pathlib import Path

from flowgit.config import Config
from flowgit.errors import FlowgitError

STDOUT = "-"  # by convention, ``-o -`` writes the page to standard output
HEAD_BYTES = 8192  # the marker sits in the page's first line; an old page's title within its first kilobyte
ELSEWHERE = "write the report elsewhere, e.g. -o report.html"


LEGACY_TITLE = "<title>flowgit report — "  # pages drawn before the generator marker


def check_target(cfg: Config, output: str) -> Path:
    """The file the page may be written to; otherwise a FlowgitError naming it and the fix (nothing written)."""
    target = Path(output).expanduser()
    real = Path(os.path.realpath(target))  # the page is written through a symbolic link, so judge where it leads
    _refuse_git_storage(target, real)
    _refuse_memory(cfg, target, real)
    if target.is_dir():
        raise FlowgitError("is a directory", path=target, fix="give a file name, e.g. -o report.html")
    for where in dict.fromkeys((target.parent, real.parent)):  # (a link is written through: where it leads too)
        blocking = next((p for p in reversed([where, *where.parents]) if p.exists() and not p.is_dir()), None)
        if blocking is not None:
            raise FlowgitError("is a file, not a directory the report can be written into", path=blocking,
                               fix="write elsewhere with -o")
        if not where.exists():
            raise FlowgitError("no such directory", path=where, fix="create it first, or write elsewhere with -o")
    if target.exists():
        _refuse_foreign_file(target)
    return target


def _refuse_git_storage(target: Path, real: Path) -> None:
    """Never ``.git`` itself (a linked worktree's is a file) nor anything inside a git directory."""
    from flowgit.git import inside_git_dir

    if ".git" in (target.name, real.name):
        raise FlowgitError("is a repository's .git, which the report would replace", path=target, fix=ELSEWHERE)
    found = inside_git_dir(real.parent) or inside_git_dir(target.parent)
    if found is not None:
        raise FlowgitError(f"is inside the git directory {found}: the report would replace git's own files",
                           path=target, fix=ELSEWHERE)


def _refuse_memory(cfg: Config, target: Path, real: Path) -> None:
    """Never the configured continuity file or store, nor anything in the store's own directory (``.flow/``)."""
    for path, what in ((cfg.continuity, "the continuity file"), (cfg.store, "the episodic store")):
        if _same(real, path):
            raise FlowgitError(f"is {what}: the report would replace it", path=target, fix=ELSEWHERE)
    for directory in dict.fromkeys((cfg.store.parent, cfg.root / ".flow")):
        if not _same(Path(directory), cfg.root) and _within(real, directory):
            raise FlowgitError(f"is inside {directory}, where flowgit keeps the episodic store", path=target,
                               fix=ELSEWHERE)


def _same(real: Path, path: Path) -> bool:
    """Whether ``real`` (resolved) is ``path``: by name, or as the same file (a hard link, another letter case)."""
    if str(real) == os.path.realpath(path):
        return True
    try:
        return os.path.samefile(real, path)
    except OSError:  # one of them does not exist
        return False


def _within(real: Path, directory: Path) -> bool:
    """Whether ``real`` (resolved) lies inside ``directory``."""
    return any(_same(parent, directory) for parent in real.parents)


def _refuse_foreign_file(target: Path) -> None:
    """An existing file is replaced only when flowgit drew it: anything else may be someone's work."""
    from flowgit.fsio import read_regular

    head = read_regular(target, max_bytes=HEAD_BYTES)[:HEAD_BYTES]
    if not written_by_flowgit(head):
        raise FlowgitError("exists and is not a report flowgit wrote, so flowgit will not replace it", path=target,
                           fix="choose another name with -o (e.g. -o report.html), or remove the file first "
                               "if it is yours to replace")


def written_by_flowgit(head: bytes) -> bool:
    """Whether a file's first bytes are a page flowgit drew: its first bytes exactly, then the marker (or, on
    a page drawn before the marker, its title). The marker found anywhere is not enough: a note quoting it, or
    flowgit's own source, is no page of ours."""
    from flowgit.report.html import GENERATOR_META, PAGE_START

    start = PAGE_START.encode("utf-8")
    if not head.startswith(start):
        return False
    return head[len(start):].startswith(GENERATOR_META.encode("utf-8")) or LEGACY_TITLE.encode("utf-8") in head
