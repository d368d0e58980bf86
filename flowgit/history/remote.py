"""What a remote holds, as the remote says it: the commits a push of a new ref is judged above.

A clone's remote-tracking refs are only its belief about the remote: one
moved by hand (``git update-ref``) or left behind after the branch was deleted
there would hide, from the audit of a push, commits the remote never had and
no audit judged. So a new ref's range stops only at commits the remote names
itself (``git ls-remote``) that this clone has.
"""

from __future__ import annotations

from pathlib import Path

from flowgit.errors import FlowgitError
from flowgit.git import git


def commits_the_remote_holds(root: Path, remote: str) -> tuple[list[str], str | None]:
    """(the commits ``remote``'s refs point at that this clone has, the one its HEAD names, else the newest)."""
    held = _listed(root, remote)
    wanted = "".join(f"{sha}^{{commit}}\n" for sha in dict.fromkeys(held.values())).encode()
    answers = git(root, "cat-file", "--batch-check=%(objectname) %(objecttype)", input=wanted,
                  check=False).decode().splitlines() if held else []
    commits = list(dict.fromkeys(parts[0] for parts in map(str.split, answers)
                                 if len(parts) == 2 and parts[1] == "commit"))  # (tags peeled to theirs)
    head = held.get("HEAD")
    default = head if head in commits else _newest(root, commits)
    return commits, default


def _listed(root: Path, remote: str) -> dict[str, str]:
    """The remote's refs and the objects they name, asked of the remote; a remote that cannot answer stops
    the audit (a push to it would not get through either)."""
    import subprocess

    fix = "check the remote is reachable, then push again"
    try:
        proc = subprocess.run(["git", "ls-remote", "--", remote], cwd=root, capture_output=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FlowgitError(f"cannot ask {remote} which commits it holds ({exc})", fix=fix) from None
    if proc.returncode:
        said = (proc.stderr.decode("utf-8", "replace").strip().splitlines() or ["no answer"])[-1]
        raise FlowgitError(f"cannot ask {remote} which commits it holds, so what this push adds cannot be told "
                           f"apart ({said})", fix=fix)
    held: dict[str, str] = {}
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        sha, _, ref = line.partition("\t")
        held.setdefault(ref, sha)
    return held


def _newest(root: Path, commits: list[str]) -> str | None:
    if not commits:
        return None
    out = git(root, "rev-list", "--no-walk=sorted", "--max-count=1", *commits, check=False).decode().split()
    return out[0] if out else None
