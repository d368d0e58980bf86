"""All git plumbing that runs the git command line (cheap reads and the few writes).

History walks use pygit2 in-process (see ``flowgit.history``); the commit that
must honour the user's hooks and signing goes through GitPython in
``flowgit.wrap.commit``. Everything else is one short ``git`` call here.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Sequence

from flowgit.errors import FlowgitError


def git(root: str | Path, *args: str, check: bool = True, input: bytes | None = None) -> bytes:
    """Run ``git args`` in ``root`` and return stdout; a failure becomes a FlowgitError."""
    try:
        proc = subprocess.run(["git", *args], cwd=root, input=input, capture_output=True)
    except FileNotFoundError:
        raise FlowgitError("git is not installed or not on PATH") from None
    if check and proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise FlowgitError(f"git {' '.join(args[:2])} failed: {msg[-1] if msg else proc.returncode}", path=root)
    return proc.stdout


def blobs(root: str | Path, specs: Sequence[str]) -> list[bytes | None]:
    """Read several blobs (``HEAD:path``, ``:path``) with one ``git cat-file --batch``."""
    if not specs:
        return []
    out = git(root, "cat-file", "--batch", input=("\n".join(specs) + "\n").encode(), check=False)
    results: list[bytes | None] = []
    pos = 0
    for _ in specs:
        eol = out.find(b"\n", pos)
        header = out[pos:eol].split()
        pos = eol + 1
        if len(header) == 3 and header[1] == b"blob":
            size = int(header[2])
            results.append(out[pos:pos + size])
            pos += size + 1
        else:
            results.append(None)
    return results


def has_head(root: str | Path) -> bool:
    return bool(git(root, "rev-parse", "--verify", "-q", "HEAD", check=False).strip())


def head_sha(root: str | Path) -> str | None:
    out = git(root, "rev-parse", "--verify", "-q", "HEAD", check=False).strip()
    return out.decode() if out else None


def is_staged(root: str | Path, path: str) -> bool:
    """Whether ``path`` differs between the index and HEAD."""
    out = git(root, "diff", "--cached", "--name-only", "--", path, check=False)
    return bool(out.strip())


def require_repo(root: Path | None) -> Path:
    if root is None or not (root / ".git").exists():
        raise FlowgitError("not inside a git repository", fix="run `git init` first, or cd into your repository")
    return root
