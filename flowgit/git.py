"""All git plumbing that runs the git command line (cheap reads and the few writes).

History walks use pygit2 in-process (see ``flowgit.history``). Everything else,
including the wrap's commit (which must honour the user's hooks and signing), is
the git command line run as a subprocess with the repository path passed as it
is: nothing here goes through a shell or a library that expands ``$VARS`` or
``~`` in paths. SHA-1 and SHA-256 repositories both work: object ids are never
assumed to be 40 digits.
"""

from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path
from typing import BinaryIO, NamedTuple, Sequence

from flowgit.errors import FlowgitError


MAX_SAID_LINES = 20
MAX_SAID_CHARS = 2000
INDENT = "    "  # under the failure, deeper than its "  fix:" line


def run_until_done(argv: list[str], cwd: str | Path, *, env: dict[str, str] | None = None,
                   text: bool = False) -> subprocess.CompletedProcess:
    """Run a git command to its end; if this process is interrupted meanwhile (Ctrl-C, or a SIGTERM made an
    exception), git is asked to stop and waited for, never killed outright (it would leave ``index.lock``):
    a rollback that follows never races a commit or a merge still landing."""
    import signal

    proc = subprocess.Popen(argv, cwd=os.fspath(cwd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            text=text)
    try:
        out, err = proc.communicate()
    except BaseException:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pass
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def git_said(*outputs: str) -> str:
    """Everything git said, one indented line each: blank lines dropped, padding trimmed, bounded in length.

    Git's cause is rarely its last line: a missing remote ends with "and the
    repository exists.", and a push a server hook refused ends with "failed to
    push some refs" while the server's reason is a ``remote:`` line above it.
    So the whole message is kept; only a runaway one (a hook printing a log) is
    cut, saying so.
    """
    lines = [ln.rstrip() for text in outputs for ln in text.splitlines() if ln.strip()]
    said = "\n".join(INDENT + ln for ln in lines[:MAX_SAID_LINES]) or INDENT + "(git printed no message)"
    if len(said) > MAX_SAID_CHARS:
        said = said[:MAX_SAID_CHARS].rstrip() + " …"
    left = len(lines) - MAX_SAID_LINES
    return said + (f"\n{INDENT}… and {left} more line(s)" if left > 0 else "")


def literal(*paths: str) -> list[str]:
    """``paths`` as pathspecs git takes letter for letter: git reads a plain pathspec as a glob, so a configured
    ``mem[1].md`` would also name ``mem1.md`` (and a wrap would commit that file too)."""
    return [f":(literal){path}" for path in paths]


def git(root: str | Path, *args: str, check: bool = True, input: bytes | None = None,
        env: dict[str, str] | None = None) -> bytes:
    """Run ``git args`` in ``root`` and return stdout; a failure becomes a FlowgitError.

    ``env`` adds variables (e.g. ``GIT_INDEX_FILE``) to the inherited environment.
    """
    full_env = {**os.environ, **env} if env else None
    try:
        proc = subprocess.run(["git", *args], cwd=os.fspath(root), input=input, capture_output=True,
                              env=full_env)
    except FileNotFoundError:
        if not os.path.isdir(root):  # (subprocess reports a missing working directory as a missing program)
            raise FlowgitError("this directory no longer exists (moved or deleted?)", path=root,
                               fix="run flowgit from where the repository is now") from None
        raise FlowgitError("git is not installed or not on PATH") from None
    except NotADirectoryError:
        raise FlowgitError("is not a directory", path=root) from None
    if check and proc.returncode != 0:
        said = proc.stderr.decode("utf-8", "replace")
        raise FlowgitError(f"git {' '.join(args[:2])} failed (exit {proc.returncode}):\n{git_said(said)}", path=root)
    return proc.stdout


# The git operations that own HEAD while they run: (the file git keeps for it in its directory, what it is,
# how to finish it, how to abort it). A commit made meanwhile becomes part of it.
IN_PROGRESS = (("rebase-merge", "a rebase", "git rebase --continue", "git rebase --abort"),
               ("rebase-apply", "a rebase (or `git am`)", "git rebase --continue", "git rebase --abort"),
               ("MERGE_HEAD", "a merge", "git commit", "git merge --abort"),
               ("CHERRY_PICK_HEAD", "a cherry-pick", "git cherry-pick --continue", "git cherry-pick --abort"),
               ("REVERT_HEAD", "a revert", "git revert --continue", "git revert --abort"),
               ("sequencer", "a cherry-pick or revert sequence", "git cherry-pick --continue",
                "git cherry-pick --abort"),
               ("BISECT_LOG", "a bisect", "", "git bisect reset"))


def operation_in_progress(root: str | Path) -> tuple[str, str] | None:
    """(what, how to finish or abort it) of the git operation in the middle of which the repository at
    ``root`` stands, or None: the wrap and sync refuse to commit into one."""
    gdir = git_dir(root)
    for name, what, finish, abort in IN_PROGRESS:
        if (gdir / name).exists():
            return what, f"finish it (`{finish}`) or abort it (`{abort}`)" if finish else f"end it (`{abort}`)"
    return None


def blobs(root: str | Path, specs: Sequence[str]) -> list[bytes | None]:
    """Read several blobs (``HEAD:path``, ``:path``) with one ``git cat-file --batch``; None where there is none.

    ``cat-file --batch`` prints the contents of whatever a spec names (a tree
    too): :func:`read_batch_answer` steps over every found object's bytes, and
    only a blob's are kept.
    """
    if not specs:
        return []
    out = git(root, "cat-file", "--batch", input=("\n".join(specs) + "\n").encode("utf-8", "surrogateescape"),
              check=False)
    stream = io.BytesIO(out)
    results: list[bytes | None] = []
    for _ in specs:
        header, data = read_batch_answer(stream)
        results.append(data if data is not None and header[1] == b"blob" else None)
    return results


def read_batch_answer(stream: BinaryIO) -> tuple[list[bytes], bytes | None]:
    """One answer of ``git cat-file --batch``: its header's fields, and the object's bytes (None: not found).

    A found object (``<oid> <type> <size>``) is followed by its bytes and a
    newline, which are read whatever the type, so the next answer starts where
    it should; ``<spec> missing`` (or ``ambiguous``) has nothing after it. At
    the end of the stream the header is empty; when git stopped in the middle of
    an object the bytes come back short (the caller compares their length with
    the header's size if it must know).
    """
    header = stream.readline().split()
    if not batch_found(header):
        return header, None
    data = stream.read(int(header[2]))
    stream.read(1)  # the newline after the contents
    return header, data


def batch_found(header: list[bytes]) -> bool:
    """Whether a ``cat-file --batch`` header is ``<oid> <type> <size>`` (not ``<spec> missing``/``ambiguous``)."""
    return len(header) == 3 and header[2].isdigit() and len(header[0]) in (40, 64)


def has_head(root: str | Path) -> bool:
    return bool(git(root, "rev-parse", "--verify", "-q", "HEAD", check=False).strip())


def head_sha(root: str | Path) -> str | None:
    out = git(root, "rev-parse", "--verify", "-q", "HEAD", check=False).strip()
    return out.decode() if out else None


def is_staged(root: str | Path, path: str) -> bool:
    """Whether ``path`` differs between the index and HEAD."""
    out = git(root, "diff", "--cached", "--name-only", "--", *literal(path), check=False)
    return bool(out.strip())


def require_repo(root: Path | None) -> Path:
    if root is None or not (root / ".git").exists():
        if root is not None and inside_git_dir(root):
            raise FlowgitError("this is a bare repository (or a git directory): flowgit needs a working tree",
                               path=root, fix="run it in a clone with a working tree")
        if os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):  # (git finds one; `git init` would nest)
            raise FlowgitError("the repository is named by GIT_DIR/GIT_WORK_TREE, a layout flowgit does not "
                               "support: it keeps its memory in a working tree with its own .git", path=root,
                               fix="keep the memory in a repository cloned the usual way (with a .git in its "
                                   "working tree); do not run `git init` here")
        raise FlowgitError("not inside a git repository", fix="run `git init` first, or cd into your repository")
    refuse_foreign_git_environment(root)
    return root


def refuse_foreign_git_environment(root: Path) -> None:
    """Refuse when git's environment names another repository than the one flowgit found.

    flowgit takes its repository from the working directory, but every git it
    runs obeys ``GIT_DIR``, ``GIT_WORK_TREE`` and ``GIT_INDEX_FILE``. Git
    exports them to its hooks, so a hook of one project that runs flowgit in
    another repository would have flowgit edit that repository's files while
    git commits them on the project's branch. Nothing is guessed: the
    variables either name this repository (a hook of its own) or the command
    stops before it reads or writes anything.
    """
    own = own_git_dir(root)
    if own is None:
        return
    common = _common_dir(own)
    named = {name: Path(os.path.abspath(os.path.join(root, value))).resolve()
             for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE")
             if (value := os.environ.get(name))}
    foreign = [name for name, path in named.items() if not _names_this_repository(name, path, root, own, common)]
    if foreign:
        shown = ", ".join(f"{name}={os.environ[name]}" for name in foreign)
        raise FlowgitError(f"git's environment names another repository ({shown}) than the one flowgit works in "
                           f"({own}); git exports these variables to its hooks", path=root,
                           fix=f"unset them before running flowgit here, e.g. `env -u {' -u '.join(foreign)} "
                               "flowgit …` in the hook")


def _names_this_repository(name: str, path: Path, root: Path, own: Path, common: Path) -> bool:
    if name == "GIT_DIR":
        return path == own
    if name == "GIT_WORK_TREE":
        return path == root.resolve()
    if name == "GIT_COMMON_DIR":
        return path == common
    holder = inside_git_dir(path.parent)  # an index kept by some repository must be kept by this one
    return holder is None or holder.resolve() in (own, common)


def own_git_dir(root: Path) -> Path | None:
    """The git directory the checkout at ``root`` names by its ``.git`` (a directory, or a worktree's file),
    resolved, read without git and without the environment; None when it names none."""
    dot = root / ".git"
    if dot.is_dir():
        return dot.resolve()
    try:
        first = dot.read_text(encoding="utf-8", errors="surrogateescape").splitlines()[0]
    except (OSError, IndexError):
        return None
    if not first.startswith("gitdir:"):
        return None
    return Path(os.path.abspath(os.path.join(root, first[len("gitdir:"):].strip()))).resolve()


def _common_dir(own: Path) -> Path:
    try:
        named = (own / "commondir").read_text(encoding="utf-8", errors="surrogateescape").strip()
    except OSError:
        return own
    return Path(os.path.abspath(os.path.join(own, named))).resolve()


def _looks_like_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def inside_git_dir(path: str | Path) -> Path | None:
    """The git directory (a bare repository or a ``.git``) that contains ``path``, if any.

    flowgit never writes its files into one: a store or continuity file there
    would be written into git's own storage, not into a working tree.
    """
    here = Path(os.path.abspath(path))
    for candidate in (here, *here.parents):
        if _looks_like_git_dir(candidate):
            return candidate
    return None


def refuse_git_internals(path: str | Path) -> None:
    """Raise unless ``path`` may be written: never inside a bare repository or a git directory."""
    found = inside_git_dir(Path(path).parent)
    if found is not None:
        raise FlowgitError(f"is inside the git directory {found} (a bare repository?); flowgit writes only into "
                           "a working tree", path=path, fix="run flowgit in a clone with a working tree")


def git_dir(root: str | Path) -> Path:
    """The repository's git directory as an absolute path (a worktree's own, not the common one).

    A clone's own ``.git`` directory is taken as it stands, without a git
    process: the hook and the merge driver ask on every commit. A worktree's
    ``.git`` file, a ``GIT_DIR`` in the environment (git sets it for some
    hooks) and anything else are left to ``git rev-parse``.
    """
    dot = Path(root) / ".git"
    if "GIT_DIR" not in os.environ and dot.is_dir():
        return dot.absolute()
    return Path(git(root, "rev-parse", "--absolute-git-dir").decode("utf-8", "surrogateescape").strip())


def git_path(root: str | Path, name: str) -> Path:
    """``git rev-parse --git-path NAME`` (honours $GIT_INDEX_FILE for ``index``), made absolute."""
    out = Path(git(root, "rev-parse", "--git-path", name).decode("utf-8", "surrogateescape").strip())
    return out if out.is_absolute() else Path(root) / out


def object_format(root: str | Path) -> str:
    """``sha1`` or ``sha256``: the hash the repository names its objects with."""
    out = git(root, "rev-parse", "--show-object-format", check=False).decode().strip()
    return out or "sha1"


def hex_len(root: str | Path) -> int:
    return 64 if object_format(root) == "sha256" else 40


def write_tree(root: str | Path, index: str | Path | None = None) -> str | None:
    """The tree id of an index (the repository's, or ``index``); None when it has unmerged entries."""
    env = {"GIT_INDEX_FILE": os.fspath(index)} if index is not None else None
    out = git(root, "write-tree", check=False, env=env).strip()
    return out.decode() if out else None


def hash_for_path(root: str | Path, path: str, file: str | Path) -> str:
    """Store ``file`` as the blob ``git add path`` would make of it (attributes, clean filters) and return its id."""
    return git(root, "hash-object", "-w", f"--path={path}", "--", os.fspath(file)).decode().strip()


def busy(git_directory: Path) -> list[str]:
    """Lock files a running git process holds (``index.lock``, ``HEAD.lock``): git is still at work."""
    return [name for name in ("index.lock", "HEAD.lock") if (git_directory / name).exists()]


GIT_LOCK_WAIT_SECONDS = 5.0  # an editor's `git status` holds index.lock for milliseconds; a stale one stays


def git_lock_wait() -> float:
    """How long a writer waits for git's own lock files to go: ``$FLOWGIT_GIT_LOCK_WAIT`` seconds, else 5."""
    from flowgit.lock import env_seconds

    return env_seconds("FLOWGIT_GIT_LOCK_WAIT", GIT_LOCK_WAIT_SECONDS, "to wait for git's own lock files to go")


def wait_until_idle(git_directory: Path, seconds: float | None = None) -> list[str]:
    """:func:`busy`, after waiting up to ``seconds`` for git's lock files to go ([] once they have).

    Editors and shells poll ``git status``, which takes ``index.lock`` for a
    moment: a writer that met it once would fail, or refuse to roll back, over
    a lock that was about to vanish. A lock still there after the wait is a
    git command at work, or one killed that left it: the caller refuses then.
    """
    import time

    deadline = time.monotonic() + (git_lock_wait() if seconds is None else seconds)
    while True:
        held = busy(git_directory)
        if not held or time.monotonic() >= deadline:
            return held
        time.sleep(0.02)


def held_index_lock(detail: str) -> bool:
    """Whether git failed because another git process held its index lock (``Unable to create
    '….git/index.lock': File exists``): worth a retry once the lock is gone."""
    return "index.lock" in detail and "File exists" in detail


def stale_lock_fix(root: Path, gdir: Path, held: list[str], then: str) -> str:
    """The fix for git's lock files found in place: wait for git, or remove a stale lock as git itself advises."""
    shown = [_shown(root, gdir / name) for name in held]
    return (f"wait for the running git command to finish; if no git command is running, the lock is stale — "
            f"remove {' and '.join(shown)} (as git itself advises) and {then}")


def _shown(root: Path, path: Path) -> str:
    """``path`` as the user types it from the work tree's top (``.git/index.lock``), else absolute."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def outside_sparse_checkout(root: str | Path, paths: Sequence[str]) -> list[str]:
    """Which of ``paths`` git keeps out of this working tree (skip-worktree: a sparse checkout without them).
    There, a file that looks missing is not: writing one would replace what HEAD holds (a store of one line
    shows every earlier episode as deleted)."""
    out = git(root, "ls-files", "-t", "-z", "--", *literal(*paths), check=False).decode("utf-8", "surrogateescape")
    return [entry[2:] for entry in out.split("\0") if entry.startswith("S ")]


def refuse_outside_sparse_checkout(root: str | Path, paths: Sequence[str]) -> None:
    """Refuse (before anything is written) where the memory lies outside a sparse checkout."""
    hidden = outside_sparse_checkout(root, paths)
    if hidden:
        dirs = sorted({str(Path(p).parent) if str(Path(p).parent) != "." else p for p in hidden})
        raise FlowgitError(f"{', '.join(hidden)} {'lies' if len(hidden) == 1 else 'lie'} outside this sparse "
                           "checkout: in HEAD, only not here, and writing it would replace what HEAD holds; nothing "
                           "was written", path=root,
                           fix=f"bring it into the checkout (`git sparse-checkout add {' '.join(dirs)}`, or "
                               "`git sparse-checkout disable`), then run the command again")


def refuse_unstageable(root: str | Path, paths: Sequence[str]) -> None:
    """Refuse (before anything is written) where ``git add`` would refuse one of the memory's paths: outside a
    sparse checkout, or untracked in a directory git ignores. git stages the paths it can and refuses the rest,
    so a commit of the memory would hold its file without its store, or the other way round."""
    refuse_outside_sparse_checkout(root, paths)
    asked = {}  # each path, and each directory on its way as git reads one (`memory/` matches a directory only)
    for path in paths:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            asked.setdefault("/".join(parts[:depth]) + "/", path)
        asked.setdefault(path, path)
    query = "".join(f"{path}\0" for path in asked).encode("utf-8", "surrogateescape")  # (paths as given: no magic)
    out = git(root, "check-ignore", "-z", "--stdin", input=query, check=False).decode("utf-8", "surrogateescape")
    ignored = list(dict.fromkeys(asked[found] for found in out.split("\0") if found in asked))
    if ignored:
        shown = ", ".join(ignored)
        raise FlowgitError(f"{shown} {'is' if len(ignored) == 1 else 'are'} not tracked and git ignores "
                           f"{'it' if len(ignored) == 1 else 'them'} (.gitignore): `git add` refuses such a path, "
                           "so the memory could not be committed whole; nothing was written", path=root,
                           fix=f"`git check-ignore -v {' '.join(ignored)}` names the rule: take the path out of it "
                               f"(or add it once with `git add -f {' '.join(ignored)}`), then run the command again")


def as_recorded(root: str | Path, rel: str, data: bytes) -> bytes:
    """``data`` as ``git add`` records it at ``rel``: through the path's line-ending conversion
    (``core.autocrlf``, ``.gitattributes`` ``text``/``eol``) and clean filter. Judging what git will
    record means judging these bytes, not the working tree's (CRLF lines in a Windows checkout are LF
    in the repository). One ``hash-object`` tells whether anything applies; only then is the converted
    blob written (as ``git add`` would) and read back."""
    oid = git(root, "hash-object", f"--path={rel}", "--stdin", input=data).decode().strip()
    if oid == blob_oid(data, len(oid)):
        return data
    oid = git(root, "hash-object", "-w", f"--path={rel}", "--stdin", input=data).decode().strip()
    (recorded,) = blobs(root, [oid])
    if recorded is None:
        raise FlowgitError(f"git did not keep the blob it just wrote for {rel}", path=root)
    return recorded


def blob_oid(data: bytes | memoryview, hex_len: int = 40) -> str:
    """The id git gives ``data`` as a blob (SHA-1, or SHA-256 for 64-digit repositories)."""
    import hashlib

    h = hashlib.sha1() if hex_len == 40 else hashlib.sha256()
    h.update(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


class IndexEntry(NamedTuple):
    """A stage-0 index entry: blob id plus the stat data git cached for it."""

    oid: str
    mtime_ns: int | None = None
    size: int | None = None


def index_entries(root: str | Path, paths: Sequence[str]) -> dict[str, IndexEntry]:
    """Index entries of ``paths`` (one ``git ls-files -s --debug``)."""
    out = git(root, "ls-files", "-s", "--debug", "--", *literal(*paths), check=False).decode("utf-8", "replace")
    found: dict[str, IndexEntry] = {}
    current: tuple[str, str] | None = None
    stat: dict[str, int] = {}

    def flush() -> None:
        if current:
            found[current[0]] = IndexEntry(current[1], stat.get("mtime"), stat.get("size"))

    for line in out.splitlines():
        if not line.startswith((" ", "\t")):
            flush()
            meta, _, path = line.partition("\t")
            parts = meta.split()
            current = (path, parts[1]) if len(parts) == 3 and parts[2] == "0" else None
            stat = {}
            continue
        parts = line.split()
        if parts and parts[0] == "mtime:":
            sec, _, nsec = parts[1].partition(":")
            stat["mtime"] = int(sec) * 1_000_000_000 + int(nsec or 0)
        elif parts and parts[0] == "size:":
            stat["size"] = int(parts[1])
    flush()
    return found


def index_oids(root: str | Path, paths: Sequence[str]) -> dict[str, str]:
    return {path: entry.oid for path, entry in index_entries(root, paths).items()}


def index_file(root: Path) -> Path:
    """The index file, found without running git ($GIT_INDEX_FILE, a worktree's gitdir, or .git/index)."""
    if os.environ.get("GIT_INDEX_FILE"):
        return Path(os.environ["GIT_INDEX_FILE"])
    dot = root / ".git"
    if dot.is_file():
        text = dot.read_text(encoding="utf-8").strip()
        gitdir = Path(text.partition("gitdir:")[2].strip())
        return (gitdir if gitdir.is_absolute() else root / gitdir) / "index"
    return dot / "index"


def head_entries(root: str | Path, paths: Sequence[str]) -> dict[str, tuple[str, int]]:
    """Blob ids and sizes of ``paths`` at HEAD (empty before the first commit)."""
    out = git(root, "ls-tree", "-l", "-z", "HEAD", "--", *paths, check=False)
    found: dict[str, tuple[str, int]] = {}
    for record in out.split(b"\0"):
        if record:
            meta, _, path = record.partition(b"\t")
            parts = meta.split()
            if len(parts) == 4 and parts[1] == b"blob":
                found[path.decode()] = (parts[2].decode(), int(parts[3]))
    return found


def _mapped(file: Path):
    import mmap

    with file.open("rb") as fh:
        if fh.seek(0, 2) == 0:
            return b""
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)


def _clean_in_index(root: Path, entry: IndexEntry, file: Path) -> bool:
    """git's own racy-clean test: size and mtime match the index entry, and predate the index."""
    if entry.mtime_ns is None or entry.size is None:
        return False
    st = file.stat()
    if entry.size != st.st_size or entry.mtime_ns // 1000 != st.st_mtime_ns // 1000:
        return False
    try:
        return st.st_mtime_ns < index_file(root).stat().st_mtime_ns
    except OSError:
        return False


def read_blob(root: str | Path, path: str, entry: IndexEntry):
    """A staged blob's bytes: from the working tree when it is the staged content, else from git.

    Reading a 20 MB store from disk is several times cheaper than piping it out
    of ``git cat-file``. When the index's cached stat says the file is clean
    (git's racy-clean rule) it is mapped, not even copied (a read-only ``mmap``,
    which searches and slices like bytes); failing that it is read and used if
    it hashes to the staged blob id.
    """
    file = Path(root) / path
    try:
        if _clean_in_index(Path(root), entry, file):
            return _mapped(file)
        data = file.read_bytes()
        if blob_oid(data, len(entry.oid)) == entry.oid:
            return data
    except OSError:
        pass
    (blob,) = blobs(root, [entry.oid])
    return blob or b""


def enclosing_git_dir(path: str | Path) -> Path | None:
    """The git directory of the working tree containing ``path`` (found without running git)."""
    here = Path(os.path.abspath(path))
    for candidate in (here, *here.parents):
        dot = candidate / ".git"
        if dot.is_dir():
            return dot
        if dot.is_file():
            try:
                text = dot.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                return None
            target = Path(text.partition("gitdir:")[2].strip())
            return target if target.is_absolute() else candidate / target
    return None


def index_tree(root: str | Path, index: str | Path) -> str | None:
    """The tree an index file describes, computed from its entries in memory: the index is never rewritten
    (``git write-tree`` would store a cache-tree in it; a recovery must prove state without changing it) and
    nothing is written anywhere (a rollback on a full disk must still be able to prove what it undoes).
    None when the index has unmerged entries (git could not write a tree of it either)."""
    out = git(root, "ls-files", "--stage", "-z", env={"GIT_INDEX_FILE": os.fspath(index)})
    entries: list[tuple[str, str, bytes]] = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, oid, stage = meta.split(b" ")
        if stage != b"0":
            return None
        entries.append((mode.decode(), oid.decode(), path))
    if not entries:  # git reads a missing or empty index as the empty tree
        return git(root, "hash-object", "-t", "tree", "--stdin", input=b"").decode().strip()
    return tree_id(entries)


def tree_id(entries: list[tuple[str, str, bytes]]) -> str:
    """The id git gives the tree of ``entries`` (mode, object id, path), hashed as git hashes it (SHA-1 or
    SHA-256, by the length of the ids)."""
    import hashlib

    algorithm = "sha1" if len(entries[0][1]) == 40 else "sha256"
    top: dict = {}
    for mode, oid, path in entries:
        *dirs, name = path.split(b"/")
        node = top
        for part in dirs:
            node = node.setdefault(part + b"/", {})
        node[name] = (mode, oid)

    def hashed(node: dict) -> str:
        body = []
        for key in sorted(node):  # a directory sorts as its name followed by "/", as git sorts it
            value = node[key]
            if isinstance(value, dict):
                body.append(b"40000 " + key[:-1] + b"\0" + bytes.fromhex(hashed(value)))
            else:
                mode, oid = value
                body.append(mode.lstrip("0").encode() + b" " + key + b"\0" + bytes.fromhex(oid))
        data = b"".join(body)
        return hashlib.new(algorithm, b"tree %d\0" % len(data) + data).hexdigest()

    return hashed(top)
