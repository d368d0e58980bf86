"""``flowgit install-hook``: the plain-git pre-commit, commit-msg and pre-push hooks, chaining existing ones."""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from flowgit.config import Config
from flowgit.errors import FlowgitError
from flowgit.fsio import atomic_write
from flowgit.git import git, require_repo

MARKER = "flowgit gate"
HOOKS = ("pre-commit", "commit-msg", "pre-push")


@dataclass
class InstallResult:
    installed: list[str] = field(default_factory=list)
    chained: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)


def hook_dir(root: Path) -> Path:
    """Where git runs hooks from (honours core.hooksPath and worktrees)."""
    rel = git(root, "rev-parse", "--git-path", "hooks").decode().strip()
    path = Path(rel)
    return path if path.is_absolute() else root / path


def hook_script(name: str) -> str:
    """The shipped hook with this interpreter baked in, so it works outside the virtualenv too."""
    text = resources.files("flowgit.hooks").joinpath(name).read_text(encoding="utf-8")
    command = f"{shlex.quote(sys.executable)} -m flowgit"
    return text.replace('FLOWGIT="${FLOWGIT:-flowgit}"', f'FLOWGIT="${{FLOWGIT:-{command}}}"')


def run_install(cfg: Config) -> InstallResult:
    root = require_repo(cfg.root)
    target = hook_dir(root)
    target.mkdir(parents=True, exist_ok=True)
    result = InstallResult()
    for name in HOOKS:
        path = target / name
        if path.exists():
            current = path.read_text(encoding="utf-8", errors="replace")
            if MARKER in current:
                result.updated.append(str(path))
            else:
                chained = path.with_name(f"{name}.flowgit-chained")
                if chained.exists():
                    raise FlowgitError(f"{chained} already exists; refusing to overwrite a chained hook",
                                       path=path, fix=f"merge {chained.name} into {name} by hand, then re-run")
                path.rename(chained)
                chained.chmod(chained.stat().st_mode | 0o111)
                result.chained.append(str(chained))
        else:
            result.installed.append(str(path))
        atomic_write(path, hook_script(name))
        path.chmod(0o755)
    return result


def render(result: InstallResult) -> str:
    lines = [f"installed {p}" for p in result.installed]
    lines += [f"updated   {p}" for p in result.updated]
    lines += [f"chained   {p} (runs first, then the flowgit gate)" for p in result.chained]
    return "\n".join(lines)
