"""The change a local commit is about to record, as :class:`Side` values for :func:`judge_change`.

What is judged is what git will record: blobs in the index (never the working
tree, which ``core.autocrlf`` re-encodes and whose stat data anyone can forge)
against the base commit's blobs, under the configuration *committed* at the
base (an untracked or same-commit ``.flowgit.toml`` never weakens the gate).
The base is HEAD for an ordinary commit, HEAD's parent for an amend (recorded
by the prepare-commit-msg hook), and every parent for a merge.
"""

from __future__ import annotations

import hashlib
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flowgit.checks.attributes import attribute_files
from flowgit.checks.hooklist import HOOK_CONFIG
from flowgit.checks.judge import Side
from flowgit.checks.paths import case_variants_of
from flowgit.config import CONFIG_FILES, Config, load_config_from_blobs
from flowgit.dates import utc_from_timestamp
from flowgit.git import git, git_dir, literal
from flowgit.storeread import Reading, read_regular, take

if TYPE_CHECKING:
    from flowgit.errors import FlowgitError

AMEND_MARKER = "flowgit-amend"


class StagedChange:
    """Everything the gate needs to judge the index against its base(s).

    (A plain class: the hook imports this module on every commit, and a dataclass costs about a millisecond.)
    """

    def __init__(self, cfg: Config, new_cfg: Config, old: Side | None, new: Side, other_parents: list[Side] | None = None,
                 base: str | None = None, amend: bool = False, config_changed: bool = False,
                 merge_base: Side | None = None, config_problem: Any = None) -> None:
        self.cfg = cfg                  # the base's committed configuration (what judges)
        self.config_problem = config_problem  # the FlowgitError that says why the base's committed configuration
        #                                       could not be read (then
        #                                       the defaults judge, as the audit does)
        self.new_cfg = new_cfg          # the configuration as staged (compared, never applied)
        self.old = old                  # the first base; None for a root commit
        self.new = new
        self.other_parents: list[Side] = other_parents or []  # a merge's further parents
        self.base = base                # the base commit's id
        self.amend = amend
        self.config_changed = config_changed
        self.merge_base = merge_base    # a merge's merge base (None: none, or not a merge)

    @property
    def parents(self) -> list[Side]:
        return ([self.old] if self.old else []) + self.other_parents


def git_ancestor_pid() -> int | None:
    """The pid of the nearest ``git`` process above this one (hooks run under it), if /proc tells.

    git is known by what it runs, not by the name it was started under: a
    link to git named ``g`` (``./g commit --amend``) is git to the kernel's
    ``exe`` link, and a copy of it still runs a ``commit`` command line.
    """
    pid = os.getppid()
    for _ in range(8):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        if _is_git(pid, stat[stat.find("(") + 1:stat.rfind(")")]):
            return pid
        pid = int(stat[stat.rfind(")") + 2:].split()[1])
        if pid <= 1:
            return None
    return None


def _is_git(pid: int, name: str) -> bool:
    """Whether process ``pid`` (``name`` in /proc) is git: by its name (``git``, or a command run by its own
    name, ``$(git --exec-path)/git-commit``), by the binary it runs, or by a ``git … commit`` command line."""
    if _git_named(name):
        return True
    try:
        if _git_named(os.path.basename(os.readlink(f"/proc/{pid}/exe"))):
            return True
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    i = 1
    while i < len(args) and args[i].startswith(b"-"):
        i += 2 if args[i] in _GIT_VALUE_OPTIONS else 1
    return i < len(args) and args[i] == b"commit"


def _git_named(name: str) -> bool:
    return name == "git" or name.startswith("git-")


def _says_amend(pid: int | None) -> bool | None:
    """Whether git's own command line carries ``--amend`` (None where /proc does not tell)."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if pid else None
    except OSError:
        args = None
    return None if args is None else amends(args[:-1] if args and args[-1] == b"" else args)


# git's own options before the command that take a value as the next argument
_GIT_VALUE_OPTIONS = {b"-c", b"-C", b"--git-dir", b"--work-tree", b"--namespace", b"--config-env"}
# `git commit`'s long options, and whether each takes a value (given as the next argument or after `=`);
# git accepts any unambiguous prefix of one
_COMMIT_LONG = {"amend": False, "message": True, "file": True, "reuse-message": True, "reedit-message": True,
                "fixup": True, "squash": True, "author": True, "date": True, "template": True, "cleanup": True,
                "trailer": True, "pathspec-from-file": True, "all": False, "patch": False, "interactive": False,
                "include": False, "only": False, "no-verify": False, "verify": False, "dry-run": False,
                "signoff": False, "no-signoff": False, "edit": False, "no-edit": False, "allow-empty": False,
                "allow-empty-message": False, "reset-author": False, "quiet": False, "verbose": False,
                "status": False, "no-status": False, "no-post-rewrite": False, "untracked-files": False,
                "gpg-sign": False, "no-gpg-sign": False, "pathspec-file-nul": False, "short": False,
                "branch": False, "porcelain": False, "long": False, "null": False}
_COMMIT_SHORT_VALUES = b"mFcCt"  # short options whose value is the rest of the cluster, or the next argument


def amends(argv: list[bytes]) -> bool:
    """Whether a ``git … commit …`` command line amends, read as git parses it.

    A word that is an option's value (``-m --amend``, ``--message --amend``,
    ``-am --amend``) or a pathspec after ``--`` is not the option. Where the
    command is not ``commit`` (an alias), its options cannot be told apart:
    any word that abbreviates ``--amend`` counts (judging against the parent
    is the stricter reading).
    """
    if argv and argv[0].rsplit(b"/", 1)[-1] == b"git-commit":
        argv = [b"git", b"commit", *argv[1:]]  # the command run by its own name
    i = 1
    while i < len(argv) and argv[i].startswith(b"-"):
        i += 2 if argv[i] in _GIT_VALUE_OPTIONS else 1
    if i >= len(argv) or argv[i] != b"commit":
        return any(len(a) >= 4 and b"--amend".startswith(a) for a in argv)
    args = iter(argv[i + 1:])
    for arg in args:
        if arg == b"--":
            return False
        if arg.startswith(b"--"):
            name, has_value, _ = arg[2:].decode("utf-8", "replace").partition("=")
            known = [n for n in _COMMIT_LONG if n.startswith(name)] if name else []
            option = name if name in _COMMIT_LONG else (known[0] if len(known) == 1 else None)
            if option == "amend":
                return True
            if option is not None and _COMMIT_LONG[option] and not has_value:
                next(args, None)  # its value
        elif arg.startswith(b"-") and len(arg) > 1:
            for at in range(1, len(arg)):
                if arg[at:at + 1] in (b"S", b"u"):
                    break  # an optional value, only ever attached: the rest of the cluster
                if arg[at] in _COMMIT_SHORT_VALUES:
                    if at == len(arg) - 1:
                        next(args, None)  # the value is the next argument
                    break
    return False


def amend_in_progress(root: Path) -> bool:
    """Whether the running ``git commit`` is an amend.

    prepare-commit-msg records it (commit-msg reads that); pre-commit runs
    before it, so there git's own command line (``/proc``) tells. Where neither
    says so, the commit is judged against HEAD, and commit-msg still judges an
    amend against its real parent.
    """
    marker = git_dir(root) / AMEND_MARKER
    try:
        recorded = marker.read_text().split()
    except OSError:
        recorded = []
    pid = git_ancestor_pid()
    if recorded and recorded[0] == "amend" and (pid is None or len(recorded) < 2 or recorded[1] == str(pid)):
        return True  # the same `git commit` noted it
    return pid is not None and _says_amend(pid) is True


def record_amend(root: Path, source: str, sha: str) -> None:
    """prepare-commit-msg: remember (for commit-msg) that this commit replaces HEAD."""
    marker = git_dir(root) / AMEND_MARKER
    pid = git_ancestor_pid()
    says = _says_amend(pid)  # `--amend -m` says "message"; `-C HEAD` says "commit HEAD" without amending
    if (says is None and source == "commit" and sha == "HEAD") or (says and source not in ("merge", "squash")):
        marker.write_text(f"amend {pid or ''}\n")
    elif marker.exists():
        marker.unlink()


def tree_entries(root: Path, rev: str | None, paths: list[str]) -> dict[str, str]:
    """Blob ids of ``paths`` in commit ``rev`` (empty for None); sizes under ``path + "\0size"``."""
    from flowgit.checks.gitread import ProcessReads

    return ProcessReads(root).entries(rev, paths)


def index_blobs(root: Path, paths: list[str], links: set[str] | None = None, *,
                icase: tuple[str, ...] = (), gitlinks: set[str] | None = None) -> dict[str, str]:
    """Stage-0 blob ids of ``paths`` in the index; a conflicted path maps to "" (unmerged).

    Symbolic links among the entries are added to ``links`` when it is given,
    gitlinks (left out, see :func:`_index_records`) to ``gitlinks``.
    Paths that equal one of ``icase`` but for letter case are listed too (see
    :func:`flowgit.checks.paths.case_collisions`).
    """
    return _index_records(git(root, "ls-files", "-s", "-z", "--", *literal(*paths), *_icase(icase), check=False),
                          links, gitlinks)


def _icase(paths: tuple[str, ...]) -> list[str]:
    """Pathspecs that match ``paths`` whatever their letter case (git's ``:(icase)`` magic), letter for letter
    otherwise (no glob)."""
    return [f":(literal,icase){path}" for path in paths]


def _index_records(out: bytes, links: set[str] | None = None, gitlinks: set[str] | None = None) -> dict[str, str]:
    """``ls-files -s`` records by path. A gitlink (mode 160000) is not there: git records a submodule's commit
    id at that path, not a file, whatever object the id names (the file's own blob, say), so a judged path
    held as one is a file taken away (as the audit, which reads trees, sees it)."""
    found: dict[str, str] = {}
    for record in out.split(b"\0"):
        meta, _, path = record.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3:
            name = path.decode("utf-8", "replace")
            if parts[0] == b"160000":
                if gitlinks is not None:
                    gitlinks.add(name)
                continue
            found[name] = parts[1].decode() if parts[2] == b"0" else ""
            if links is not None and parts[0] == b"120000":
                links.add(name)
    return found


def _listed_twins(root: Path, judged: list[str]) -> dict[str, str]:
    """The index's files that :func:`~flowgit.checks.paths.path_fold` takes for a judged path (G809), found
    among the files as deep as the judged ones: git's ``:(icase)`` folds ASCII letters only, and a twin spelt
    with an accent decomposed, a code point HFS+ ignores or a non-ASCII capital is one file on macOS too.
    Asked only of a change the gate judges anyway (one git process, once a wrap)."""
    depths = sorted({path.count("/") + 1 for path in judged})
    specs = [":(glob)" + "/".join(["*"] * depth) for depth in depths]
    found = _index_records(git(root, "ls-files", "-s", "-z", "--", *specs, check=False))
    return case_variants_of(judged, {path: oid for path, oid in found.items() if oid})


def commit_time(root: Path | None = None, now: datetime | None = None) -> datetime:
    """When the commit being made will say it was made: where ``GIT_COMMITTER_DATE`` is set, the date git
    itself reads from it (``git var GIT_COMMITTER_IDENT``: every format git takes, local time as git reads
    it), as the audit judges a commit as of its committer date; never later than now (a date in the future
    is the audit's now too); the clock otherwise."""
    now = now or datetime.now(timezone.utc)
    if not os.environ.get("GIT_COMMITTER_DATE", "").strip():
        return now
    ident = git(root or Path.cwd(), "var", "GIT_COMMITTER_IDENT", check=False).decode("utf-8", "replace")
    stamp = re.search(r">\s+(\d+)\s+[+-]\d{4}\s*$", ident)
    if stamp is None:  # git could not read it either: the commit will not be made with it
        return now
    return min(utc_from_timestamp(int(stamp.group(1))), now)


def with_parents(paths: list[str]) -> list[str]:
    """``paths`` and every directory leading to them (``.flow/episodes.jsonl`` -> ``.flow`` too)."""
    out: list[str] = []
    for path in paths:
        parts = path.split("/")
        out.extend("/".join(parts[:n]) for n in range(1, len(parts) + 1))
    return list(dict.fromkeys(out))


class IndexQuery:
    """``git ls-files -s`` for some paths, started now and read when needed (it runs while git answers the rest)."""

    def __init__(self, root: Path, paths: list[str], *, icase: tuple[str, ...] = ()) -> None:
        import subprocess

        self.paths = list(paths)
        self.icase = icase
        self._proc = subprocess.Popen(["git", "ls-files", "-s", "-z", "--", *literal(*self.paths), *_icase(icase)],
                                      cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def result(self, links: set[str] | None = None, gitlinks: set[str] | None = None) -> dict[str, str]:
        out, _ = self._proc.communicate()
        return _index_records(out, links, gitlinks)

    def close(self) -> None:
        """Reap the process whether or not its answer was needed."""
        if self._proc.returncode is None:
            self._proc.communicate()


def read_objects(root: Path, oids: list[str]) -> dict[str, bytes]:
    """Blob contents by id, one ``git cat-file --batch`` for all of them."""
    from flowgit.checks.gitread import ProcessReads

    return ProcessReads(root).objects(oids)


def _oid_of(data: bytes, hex_len: int) -> str:
    h = hashlib.sha1() if hex_len == 40 else hashlib.sha256()
    h.update(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


class Proof:
    """Whether bytes taken from the working tree are the staged blob, decided by hashing them.

    The hash runs on a second thread (hashlib releases the GIL) while the rules
    run; :meth:`holds` waits for it. Bytes read from git need no proof. Bytes
    read at start-up (``early``) are hashed by the thread that read them.
    """

    def __init__(self, data: bytes | None, oid: str, *, early: Reading | None = None) -> None:
        from flowgit.background import Background

        self.oid = oid
        self._early = early if (early is not None and len(oid) == 40) else None  # SHA-1: its thread hashes it
        self._digest = (Background(_oid_of, data, len(oid)) if data is not None and self._early is None
                        else None)

    def holds(self) -> bool:
        if self._early is not None:
            return self._early.wait().sha1 == self.oid
        return self._digest is None or self._digest.result() == self.oid


def read_staged_blob(root: Path, path: str, oid: str, *, verified: bool = False, preread=None):
    """A staged blob's bytes and the :class:`Proof` they are the staged content.

    The working-tree copy is used only when its bytes hash to the staged blob
    id (content, not stat data, proves them identical: a forged mtime or a
    CRLF checkout fails the proof and the caller takes git's object); with
    ``verified`` the blob comes from git directly. ``preread`` is a
    :class:`~flowgit.background.Background` already reading the file (the
    bytes it returns are what the proof hashes, so it changes nothing but when).
    """
    if not verified:
        try:
            if isinstance(preread, Reading):  # read (and hashed) while the command started
                return preread.data, Proof(preread.data, oid, early=preread)
            data = preread.result() if preread is not None else _read_file(root / path)
            return data, Proof(data, oid)
        except OSError:
            pass
    return read_objects(root, [oid]).get(oid, b""), Proof(None, oid)


def _read_file(path: Path) -> bytes:
    """A regular file's bytes; anything else (a FIFO would block, a device never ends) is an OSError."""
    return read_regular(path)[0]


def _config_of(root: Path, entries: dict[str, str], texts: dict[str, bytes], label: str) -> Config:
    return load_config_from_blobs(root, {n: texts.get(entries[n]) if entries.get(n) else None
                                         for n in CONFIG_FILES}, label)


def staged_change(root: Path, *, amend: bool | None = None, continuity: str | None = None,
                  store: str | None = None, verified: bool = False) -> StagedChange | None:
    """The index against its base(s); None when nothing the gate judges differs from the base."""
    from flowgit.checks.gitread import Reads
    from flowgit.config import DEFAULT_CONTINUITY, DEFAULT_STORE

    amend = amend_in_progress(root) if amend is None else amend
    files = (continuity or DEFAULT_CONTINUITY, store or DEFAULT_STORE)
    guess = with_parents(list(files))  # parents: symlinked dirs
    index = IndexQuery(root, [*CONFIG_FILES, HOOK_CONFIG, *guess, *attribute_files(list(files))],
                       icase=files)  # answered while cat-file runs
    try:
        with Reads(root) as reads:
            return _staged_change(root, reads, index, amend=amend, continuity=continuity, store=store,
                                  verified=verified)
    finally:
        index.close()


def _staged_change(root: Path, reads, index: IndexQuery, *, amend: bool, continuity: str | None,
                   store: str | None, verified: bool) -> StagedChange | None:
    head = reads.commit("HEAD")
    if amend and head:  # the amended commit replaces HEAD: judged against HEAD's own parents (all of a merge's)
        parents = git(root, "rev-parse", "HEAD^@", check=False).decode().split()
        base, merge_heads = (parents[0] if parents else None), parents[1:]
    else:
        base, merge_heads = head, _merge_heads(root)
    cfg, problem = _committed_config_or_defaults(root, reads, base) if base else (None, None)
    names = list(CONFIG_FILES)
    if cfg is not None:
        cont = continuity or cfg.continuity_rel
        st = store or cfg.store_rel
        names += [cont, st]
    links: set[str] = set()
    gitlinks: set[str] = set()
    staged = index.result(links, gitlinks)
    attr_files = attribute_files(names[len(CONFIG_FILES):]) if cfg is not None else []
    more = [n for n in (names[:len(CONFIG_FILES)] + with_parents(names[len(CONFIG_FILES):]) + attr_files)
            if n not in index.paths]
    unasked = tuple(n for n in names[len(CONFIG_FILES):] if n not in index.icase)
    if more or unasked:
        staged.update(index_blobs(root, more, links, icase=unasked, gitlinks=gitlinks))
    bases = {base: reads.entries(base, [*names, HOOK_CONFIG, *attr_files])} if base else {}
    paths_at: dict[str, tuple[str, str]] = {}  # a merge's other parent: its memory where its own configuration puts it
    configs: dict[str, Config] = {}  # each parent's committed configuration, read once
    for parent in merge_heads:
        own = configs[parent] = _committed_config(root, reads, parent)
        paths_at[parent] = (continuity or own.continuity_rel, store or own.store_rel)
        bases[parent] = reads.entries(parent, list(dict.fromkeys([*names, *paths_at[parent], HOOK_CONFIG,
                                                                  *attr_files])))
    texts = reads.objects([staged.get(n, "") for n in CONFIG_FILES]
                          + [bases[base].get(n, "") for n in CONFIG_FILES] if base else
                          [staged.get(n, "") for n in CONFIG_FILES])
    base_entries = bases.get(base, {}) if base else {}
    new_cfg = _staged_config(root, staged, texts, problem, cfg)
    if cfg is None:  # a root commit: nothing was in force, the staged configuration judges
        cfg = new_cfg
        cont, st = continuity or cfg.continuity_rel, store or cfg.store_rel
        staged.update(index_blobs(root, with_parents([cont, st]), links, gitlinks=gitlinks))
    # The commit's memory is where its own configuration puts it, the base's where the base's does (as the
    # audit reads them): a configuration that starts judging a file the base held unjudged makes that file's
    # content the memory's first commit, not an unchanged file.
    new_cont, new_st = continuity or new_cfg.continuity_rel, store or new_cfg.store_rel
    if (new_cont, new_st) != (cont, st):
        staged.update(index_blobs(root, [n for n in with_parents([new_cont, new_st]) if n not in staged], links,
                                  icase=(new_cont, new_st), gitlinks=gitlinks))
    # A first commit's configuration is held to the defaults (an orphan root could otherwise set its own)
    config_changed = (any(staged.get(n) != base_entries.get(n) for n in CONFIG_FILES) if base
                      else new_cfg.source is not None)
    judged = [cont, st]
    symlinked = [p for p in [*with_parents(list(dict.fromkeys([*judged, new_cont, new_st]))), *CONFIG_FILES]
                 if p in links]  # a linked config too
    variants = case_variants_of([cont, st, new_cont, new_st], staged)
    held_variants = ({k: v for k, v in reads.entries(base, list(variants)).items() if "\0" not in k}
                     if variants and base else {})
    memory_changed = bool(symlinked) or any(staged.get(p) != base_entries.get(p) for p in judged)
    hooks_weakened = _hooks_weakened(root, reads, staged.get(HOOK_CONFIG),
                                     {rev: b.get(HOOK_CONFIG) for rev, b in bases.items()},
                                     linked=HOOK_CONFIG in links, memory_changed=memory_changed)
    attributes = _attributes_read(root, reads, staged, base_entries, attr_files, judged)
    if (not config_changed and not merge_heads and not symlinked and variants == held_variants and not hooks_weakened
            and attributes is None and all(staged.get(p) == base_entries.get(p) for p in judged)):
        return None
    # judged now: every twin a case-insensitive filesystem would take for a judged file, not only ASCII ones
    variants = {**variants, **_listed_twins(root, [cont, st, new_cont, new_st])}
    if variants and base and set(variants) - set(held_variants):
        held_variants = {k: v for k, v in reads.entries(base, list(variants)).items() if "\0" not in k}
    from flowgit.background import Background

    preread = None
    if staged.get(new_st) and not verified:
        preread = take(root / new_st) or Background(_read_file, root / new_st)
    when = commit_time(root)
    cont_texts = reads.objects([staged.get(new_cont, "")] + [b.get(paths_at.get(rev, (cont, st))[0], "")
                                                              for rev, b in bases.items()])
    old_ref = (base_entries[st], int(base_entries[st + "\0size"])) if base_entries.get(st) else None
    new_store, proof = (read_staged_blob(root, new_st, staged[new_st], verified=verified, preread=preread)
                        if staged.get(new_st) else (None, Proof(None, "")))
    appended = None
    if new_store is not None and old_ref and not merge_heads:
        from flowgit.checks.context import is_prefix

        appended = Background(is_prefix, new_store, old_ref)  # hashed while the rules run
    new = Side(continuity=cont_texts.get(staged[new_cont]) if staged.get(new_cont) else None, store=new_store,
               continuity_path=new_cont, store_path=new_st, when=when,
               extra={"renamed_to": (_renamed_to(root, base, cont) if base and not staged.get(new_cont)
                                     else None),
                      "unmerged": [p for p in dict.fromkeys([*judged, new_cont, new_st]) if staged.get(p) == ""],
                      "gitlinked": [p for p in with_parents([new_cont, new_st]) if p in gitlinks],
                      "appended_check": appended,
                      "symlinked": symlinked, "case_variants": variants, "hooks_weakened": hooks_weakened,
                      "base": base, "proof": proof, "attributes": attributes[1] if attributes else None})
    def side_at(rev: str, entries: dict[str, str], texts: dict[str, bytes], config: Config | None = None) -> Side:
        c, s = paths_at.get(rev, (cont, st))
        oid = entries.get(s)
        return Side(continuity=texts.get(entries[c]) if entries.get(c) else None,
                    store=None, continuity_path=c, store_path=s, commit=rev,
                    store_ref=(oid, int(entries[s + "\0size"])) if oid else None,
                    store_loader=(lambda oid=oid: read_objects(root, [oid])[oid]) if oid else None, config=config)

    sides = [side_at(rev, entries, cont_texts, (configs.get(rev) or _committed_config(root, reads, rev))
                     if merge_heads else None) for rev, entries in bases.items()]
    if sides:
        sides[0].extra["case_variants"] = held_variants
        sides[0].extra["attributes"] = attributes[0] if attributes else None
        for rev, side in zip(list(bases)[1:], sides[1:]):  # a merge: each other parent's reading too, so an
            read = (_attributes_read(root, reads, staged, bases[rev], attr_files, judged)  # attributes change
                    if attributes else None)  # the merge makes itself shows against every parent and stands
            side.extra["attributes"] = read[0] if read else None
    holding = [rev for rev, side in zip(bases, sides) if side.continuity is not None]  # (dict order: base first)
    def base_side(rev: str) -> Side:  # a merge base: its memory where its own configuration puts it
        own = _committed_config(root, reads, rev)
        paths_at[rev] = (continuity or own.continuity_rel, store or own.store_rel)
        entries = reads.entries(rev, list(dict.fromkeys([*names, *paths_at[rev]])))
        return side_at(rev, entries, reads.objects([entries.get(n, "") for n in paths_at[rev] if entries.get(n)]))

    merge_base = (_merge_base_side(root, holding if len(holding) > 1 else [base, *merge_heads], base_side)
                  if merge_heads and base else None)
    return StagedChange(cfg=cfg, new_cfg=new_cfg, old=sides[0] if sides else None, new=new,
                        other_parents=sides[1:], base=base, amend=amend, config_changed=config_changed,
                        merge_base=merge_base, config_problem=problem)


def _attributes_read(root: Path, reads, staged: dict[str, str], held: dict[str, str], files: list[str],
                     judged: list[str]) -> tuple[dict, dict] | None:
    """(the base's, the index's) reading of the judged files' attributes when a ``.gitattributes`` that can give
    them any is staged otherwise (G811's question); None when none is (git is not asked)."""
    if all(staged.get(f) == held.get(f) for f in files):
        return None
    from flowgit.checks.attributes import side_attributes

    changed = [f for f in files if staged.get(f) and staged.get(f) != held.get(f)]
    texts = reads.objects([staged[f] for f in changed])
    return (side_attributes(root, {f: held.get(f) for f in files}, judged),
            side_attributes(root, {f: staged.get(f) for f in files}, judged,
                            {f: texts.get(staged[f], b"") for f in changed}))


def staged_hooks_weakened(root: Path) -> list[str]:
    """G810's question alone (for commit-msg): how the staged hook list runs flowgit's hooks less than HEAD's
    (and, in a merge, every other parent's) does."""
    from flowgit.checks.gitread import Reads

    index = IndexQuery(root, [HOOK_CONFIG])
    try:
        with Reads(root) as reads:
            links: set[str] = set()
            staged = index.result(links).get(HOOK_CONFIG)
            revs = [rev for rev in (reads.commit("HEAD"), *_merge_heads(root)) if rev]
            return _hooks_weakened(root, reads, staged, {rev: reads.entries(rev, [HOOK_CONFIG]).get(HOOK_CONFIG)
                                                         for rev in revs}, linked=HOOK_CONFIG in links)
    finally:
        index.close()


def _hooks_weakened(root: Path, reads, staged: str | None, held: dict[str, str | None], *,
                    linked: bool = False, memory_changed: bool = False) -> list[str]:
    """How the staged hook list runs flowgit's hooks less than the parents' (``held``: each parent's blob id
    of it) do (G810; see :func:`flowgit.checks.hooklist.merged_weakenings`). A list staged as a symbolic
    link (``linked``) is judged by the list it names, in the index and in each parent."""
    if not held or (staged in held.values() and not linked):
        return []  # a first commit, or the list as a parent has it
    from flowgit.checks.hooklist import link_target, merged_weakenings

    texts = reads.objects([staged or "", *(oid or "" for oid in held.values())])

    def followed(oid: str | None, find) -> bytes | None:
        text = texts.get(oid) if oid else None
        target = link_target(text)
        if target is None:
            return text
        found = find(target)
        return reads.objects([found])[found] if found else None

    new = followed(staged, lambda path: index_blobs(root, [path]).get(path))
    olds = [followed(oid, lambda path, rev=rev: reads.entries(rev, [path]).get(path)) for rev, oid in held.items()]
    return merged_weakenings(new, olds, memory_changed=memory_changed)


def _staged_config(root: Path, staged: dict[str, str], texts: dict[str, bytes], problem: "FlowgitError | None",
                   defaults: Config) -> Config:
    """The configuration as staged. Invalid, it is refused (exit 2), unless it is invalid for the very reason
    the base's is (``problem``: the file committed past the gate, still staged as it was, whatever else
    changed, a ``pyproject.toml`` version bump say): then the defaults, as for the base."""
    from flowgit.errors import FlowgitError

    try:
        return _config_of(root, staged, texts, "index")
    except FlowgitError as exc:
        if problem is None or _problem_key(problem) != _problem_key(exc):
            raise
        return defaults


def _problem_key(exc) -> tuple:
    """An invalid configuration's file (whichever revision or the index it was read from), line and message."""
    return (str(exc.path or "").split(":", 1)[-1], exc.line, exc.message)


def _committed_config(root: Path, reads, rev: str) -> Config:
    """The configuration committed at ``rev``: each parent of a merge judges under its own."""
    return _committed_config_or_defaults(root, reads, rev)[0]


def _committed_config_or_defaults(root: Path, reads, rev: str) -> tuple[Config, "FlowgitError | None"]:
    """(the configuration committed at ``rev``, None), or (the defaults, the error that says why it cannot
    be read).

    An invalid configuration can only have been committed past the gate; the
    audit reports it at that commit (A402) and judges under the defaults from
    then on. The hook does the same, so a later commit, the one that repairs
    the configuration included, is judged rather than refused for what it did
    not write (the strictest settings apply meanwhile).
    """
    from flowgit.errors import FlowgitError

    files = dict(zip(CONFIG_FILES, reads.specs([f"{rev}:{n}" for n in CONFIG_FILES])))
    try:
        return load_config_from_blobs(root, files, rev), None
    except FlowgitError as exc:
        return load_config_from_blobs(root, {}, rev), exc


def _merge_base_side(root: Path, heads: list[str], side) -> Side | None:
    """The merge base of ``heads`` as a Side (None when they share no history): a merge is judged against
    it too, to tell what a branch did (judged on that branch) from what the merge itself does."""
    found = git(root, "merge-base", "--octopus", *heads, check=False).decode().strip()
    if not found:
        return None
    primary = side(found)
    if len(heads) == 2:  # a criss-cross merge has several best bases: each is where a branch may have begun
        others = git(root, "merge-base", "--all", *heads, check=False).decode().split()
        primary.extra["other_bases"] = [side(rev) for rev in others if rev != found]
    return primary


GITHEAD_RE = re.compile(r"GITHEAD_([0-9a-f]{40}|[0-9a-f]{64})")


def _merge_heads(root: Path) -> list[str]:
    """The other parents of the commit being made: MERGE_HEAD, or, in the pre-merge-commit hook of a
    clean merge (git writes MERGE_HEAD only afterwards), the GITHEAD_<id> variables git sets for it."""
    try:
        text = (git_dir(root) / "MERGE_HEAD").read_text()
    except OSError:
        text = ""
    heads = [line.strip() for line in text.splitlines() if line.strip()]
    in_merge = os.environ.get("FLOWGIT_HOOK") == "pre-merge-commit" or "GIT_REFLOG_ACTION" in os.environ
    if not heads and in_merge and _run_by_git_merge():  # GIT_REFLOG_ACTION: git merge (or pull) started us
        heads = [m.group(1) for key in sorted(os.environ) if (m := GITHEAD_RE.fullmatch(key))]
    return heads


def _run_by_git_merge() -> bool:
    """Whether the git process this hook runs under is a ``git merge`` (where /proc tells; elsewhere the
    environment is all there is). Variables alone are anyone's to set: `GIT_REFLOG_ACTION` and a
    `GITHEAD_<id>` on a plain `git commit` made the gate judge it as a merge with a commit of the
    committer's choosing, which then had no say over what the commit adds. (git runs an alias's command,
    `git mg other`, as a git process of its own: the hook's nearest git is then that `git merge`.)"""
    pid = git_ancestor_pid()
    if pid is None:
        return True
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
    except OSError:
        return True
    return git_command(argv) == b"merge"


def git_command(argv: list[bytes]) -> bytes | None:
    """The command of a ``git …`` command line (``merge`` of ``git -c x=y merge other``, and of a
    ``…/git-merge`` run by its own name), or None when it names none."""
    own = argv[0].rsplit(b"/", 1)[-1] if argv else b""
    if own.startswith(b"git-"):
        return own[4:]
    i = 1
    while i < len(argv) and argv[i].startswith(b"-"):
        i += 2 if argv[i] in _GIT_VALUE_OPTIONS else 1
    return argv[i] if i < len(argv) else None


def _renamed_to(root: Path, base: str, path: str) -> str | None:
    """Where git sees ``path`` going in the index (a rename), if anywhere."""
    out = git(root, "diff", "--cached", "-M", "--name-status", "-z", base, check=False).split(b"\0")
    for i, part in enumerate(out):
        if part.startswith(b"R") and i + 2 < len(out) and out[i + 1].decode("utf-8", "replace") == path:
            return out[i + 2].decode("utf-8", "replace")
    return None
