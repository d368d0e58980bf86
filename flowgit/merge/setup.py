"""Registering the merge driver in a repository: ``.gitattributes`` and the git config.

``.gitattributes`` is committed, so every clone routes the continuity file and
the store through ``merge=flowgit``; the driver command itself lives in each
clone's ``.git/config`` (git never takes commands from a cloned repository),
which is why ``flowgit init`` is run once per clone and is safe to repeat.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from flowgit.fsio import atomic_write
from flowgit.git import git

DRIVER = "flowgit"
DRIVER_NAME = "flowgit: continuity file and store merged by meaning"


def driver_command() -> str:
    """The driver with this interpreter baked in, so it runs outside the virtualenv too."""
    return f"{shlex.quote(sys.executable)} -m flowgit.commands.merge_driver %O %A %B %P"


def ensure_attributes(root: Path, paths: list[str]) -> list[str]:
    """``<path> merge=flowgit`` for each path (an old ``merge=union`` for it is replaced); returns what changed."""
    target = root / ".gitattributes"
    text = target.read_text(encoding="utf-8") if target.exists() else ""
    lines = text.splitlines()
    changed: list[str] = []
    for path in paths:
        rule = f"{_quoted(path)} merge={DRIVER}"
        hits = [i for i, ln in enumerate(lines) if ln.split()[:1] == [_quoted(path)] and "merge=" in ln]
        if any(lines[i].split() == rule.split() for i in hits):
            continue
        if hits:
            lines[hits[0]] = rule
            for i in reversed(hits[1:]):
                del lines[i]
        else:
            lines.append(rule)
        changed.append(path)
    if changed:
        atomic_write(target, "\n".join(lines) + "\n")
    return changed


def _quoted(path: str) -> str:
    return f'"{path}"' if any(c.isspace() for c in path) else path


def ensure_config(root: Path) -> bool:
    """``merge.flowgit.driver`` and ``.name`` in the clone's git config; True if it changed."""
    wanted = {"name": DRIVER_NAME, "driver": driver_command()}
    changed = False
    for key, value in wanted.items():
        current = git(root, "config", "--local", "--get", f"merge.{DRIVER}.{key}", check=False).decode().strip()
        if current != value:
            git(root, "config", "--local", f"merge.{DRIVER}.{key}", value)
            changed = True
    return changed


def is_registered(root: Path) -> bool:
    return bool(git(root, "config", "--get", f"merge.{DRIVER}.driver", check=False).strip())
