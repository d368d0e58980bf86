"""``flowgit install-hook``: the plain-git hooks for every local path to a commit, and the push, chaining existing ones.

pre-commit and pre-merge-commit run the gate; commit-msg judges an amend against
the real parent, reconciles trailers and records an override; pre-push audits
the commits being pushed. prepare-commit-msg, which notes an amend for
commit-msg, is written only where ``/proc`` cannot show git's command line to
commit-msg itself: every hook is one more process on every commit.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from flowgit.config import Config
from flowgit.errors import FlowgitError
from flowgit.fsio import atomic_write
from flowgit.git import git, object_format, require_repo

MARKER = "flowgit gate"
HOOKS = ("pre-commit", "pre-merge-commit", "prepare-commit-msg", "commit-msg", "pre-push")
AMEND_NOTE_HOOK = "prepare-commit-msg"


def proc_shows_command_lines() -> bool:
    """Whether a hook can read its parent's command line from ``/proc`` (Linux, WSL)."""
    return Path("/proc/self/cmdline").is_file()


def hooks_to_write(target: Path, proc_visible: bool) -> list[str]:
    """The hooks to write: all of them, less the amend note where /proc tells commit-msg (unless already there)."""
    keep_note = not proc_visible or _is_flowgit_hook(target / AMEND_NOTE_HOOK)
    return [name for name in HOOKS if name != AMEND_NOTE_HOOK or keep_note]


def is_flowgit_hook_text(text: str, name: str) -> bool:
    """Whether ``text`` is one of flowgit's shipped ``name`` hooks (this release's or an earlier one's): it
    opens as every one of them does. A hook of the user's that merely mentions the gate (one that runs
    ``flowgit check`` by hand, then its linters) is theirs: kept and chained, never replaced."""
    lines = text.split("\n", 2)
    return len(lines) >= 2 and lines[0].rstrip("\r") == "#!/bin/sh" and lines[1].startswith(f"# {MARKER} ({name}")


def _is_flowgit_hook(path: Path) -> bool:
    try:
        return is_flowgit_hook_text(path.read_text(encoding="utf-8", errors="replace"), path.name)
    except OSError:
        return False


@dataclass
class InstallResult:
    installed: list[str] = field(default_factory=list)
    chained: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # a hook not written, and why


def hook_dir(root: Path) -> Path:
    """Where git runs hooks from (honours core.hooksPath and worktrees)."""
    rel = git(root, "rev-parse", "--git-path", "hooks").decode().strip()
    path = Path(rel)
    return path if path.is_absolute() else root / path


def hook_script(name: str) -> str:
    """The shipped hook with this interpreter baked in, quoted (a path may hold spaces).

    The environment cannot replace it (``FLOWGIT=true git commit`` must not
    switch the gate off), and it works outside the virtualenv too.
    """
    text = resources.files("flowgit.hooks").joinpath(name).read_text(encoding="utf-8")
    return text.replace("FLOWGIT_PYTHON=flowgit-python", f"FLOWGIT_PYTHON={shlex.quote(sys.executable)}")


def records_overrides(root: Path) -> bool:
    """Whether a commit-msg hook that records FLOWGIT_OVERRIDE as a trailer will run.

    Either flowgit's own hook, or the pre-commit framework's hook with the
    flowgit-commit-msg hook configured.
    """
    try:
        text = (hook_dir(root) / "commit-msg").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    if is_flowgit_hook_text(text, "commit-msg"):
        return True
    if "pre-commit" in text and "hook-impl" in text:
        try:
            config = (root / ".pre-commit-config.yaml").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
        return "flowgit-commit-msg" in config
    return False


def shared_hooks_dir(root: Path) -> str | None:
    """Why the hooks directory git runs from is not this repository's own (None when it is): a
    ``core.hooksPath`` set in the global or system configuration, or one that points outside the repository
    (hooks written there gate every repository that shares it, projects that never ran flowgit among them),
    or a directory of the working tree whose hooks are committed (the team's, shared by commit)."""
    from flowgit.git import git_dir

    said = git(root, "config", "--show-scope", "--show-origin", "--get", "core.hooksPath", check=False)
    said = said.decode("utf-8", "replace").strip()
    if not said:
        return None
    scope, origin, _ = (said.split("\t", 2) + ["", ""])[:3]
    target = hook_dir(root).resolve()
    inside = any(target == top or top in target.parents for top in (root.resolve(), git_dir(root).resolve()))
    if scope in ("global", "system"):
        return f"core.hooksPath is set in the {scope} configuration ({origin.removeprefix('file:')}) to {target}"
    if not inside:
        return f"core.hooksPath points outside this repository, to {target}"
    if root.resolve() in target.parents and git(root, "ls-files", "--", str(target), check=False).strip():
        return (f"core.hooksPath points to {target.relative_to(root.resolve()).as_posix()}, whose hooks are "
                "committed: the team shares them, and this machine's interpreter would be written into them")
    return None


def own_hooks_command(root: Path) -> str:
    """The command that gives this repository a hooks directory of its own: git's default one, named by its
    absolute path (a relative ``core.hooksPath`` is read from each worktree's top, and in a linked worktree
    ``.git`` is a file: ``.git/hooks`` would name nothing there, and no hook would run)."""
    common = Path(git(root, "rev-parse", "--git-common-dir").decode().strip())
    hooks = (common if common.is_absolute() else root / common).resolve() / "hooks"
    return f"git config --local core.hooksPath {shlex.quote(str(hooks))}"


def refuse_shared_hooks(root: Path, *, allowed: bool = False) -> None:
    """Refuse (before anything is written) to install hooks where every repository sharing them would run
    them, unless asked to (``--shared-hooks``), or where git can run no hook at all (the directory cannot
    exist)."""
    refuse_unreachable_hooks(root)
    why = None if allowed else shared_hooks_dir(root)
    if why is not None:
        raise FlowgitError(f"{why}: flowgit's hooks written there would gate every repository that uses it, "
                           "projects that never ran flowgit among them; nothing was written", path=root,
                           fix="run `flowgit init --no-hooks` and add the hooks through the pre-commit framework "
                               "(see docs/gate.md); or give this repository its own hooks directory "
                               f"(`{own_hooks_command(root)}`); or install into the shared directory anyway "
                               "with `--shared-hooks`")


def refuse_unreachable_hooks(root: Path) -> None:
    """Refuse when the hooks directory git reads here lies below a file (a relative ``core.hooksPath`` of
    ``.git/hooks`` read in a linked worktree, whose ``.git`` is a file): git runs no hook from it, so every
    commit here would pass ungated, and writing there would fail."""
    target = hook_dir(root)
    blocked = next((p for p in (target, *target.parents) if p.exists() and not p.is_dir()), None)
    if blocked is not None:
        raise FlowgitError(f"core.hooksPath names {target}, below {blocked}, which is a file: git runs no hook "
                           "from there, so no commit here is gated; nothing was written", path=root,
                           fix=f"name the hooks directory by its absolute path (`{own_hooks_command(root)}`), "
                               "then run it again")


def run_install(cfg: Config, *, proc_visible: bool | None = None, shared: bool = False) -> InstallResult:
    root = require_repo(cfg.root)
    refuse_shared_hooks(root, allowed=shared)
    target = hook_dir(root)
    target.mkdir(parents=True, exist_ok=True)
    result = InstallResult()
    visible = proc_shows_command_lines() if proc_visible is None else proc_visible
    names = hooks_to_write(target, visible)
    if "pre-push" in names and object_format(root) == "sha256":
        names.remove("pre-push")  # it runs the audit, which cannot read this repository: it would refuse every push
        result.skipped.append("pre-push (a SHA-256 repository: the audit's history reader, libgit2, cannot open "
                              "it, so the hook would refuse every push; judge pushes in CI or on the server once "
                              "it can)")
    refuse_unchainable(target, names)
    for name in names:
        _write_hook(target / name, hook_script(name), result)
    return result


def refuse_unchainable(target: Path, names: list[str]) -> None:
    """Refuse, before any hook (or any file of ``init``) is written, when a hook of the user's cannot be kept:
    its ``<name>.flowgit-chained`` place is taken already."""
    for name in names:
        path, chained = target / name, target / f"{name}.flowgit-chained"
        if path.exists() and chained.exists() and not _is_flowgit_hook(path):
            raise FlowgitError(f"{chained} already exists, so the hook {name} cannot be kept beside it; nothing "
                               "was written", path=path, fix=f"merge {chained.name} into {name} by hand (or move "
                                                         f"{chained.name} away), then re-run")


def refuse_unchainable_in(root: Path, proc_visible: bool | None = None) -> None:
    """:func:`refuse_unchainable` for the hooks :func:`run_install` would write in ``root``."""
    target = hook_dir(root)
    if target.is_dir():
        visible = proc_shows_command_lines() if proc_visible is None else proc_visible
        refuse_unchainable(target, hooks_to_write(target, visible))


SERVER_HOOK = "pre-receive"


def run_install_server(repository: Path) -> InstallResult:
    """The server-side ``pre-receive`` hook in a bare repository (or a clone's git directory), with this
    interpreter baked in: nothing a pusher's environment holds (a local or ``file://`` push passes it on)
    chooses what judges the push."""
    gdir = _git_dir_of(repository)
    target = hook_dir(gdir)  # where git runs them from: core.hooksPath when the server sets one
    target.mkdir(parents=True, exist_ok=True)
    result = InstallResult()
    refuse_unchainable(target, [SERVER_HOOK])
    _write_hook(target / SERVER_HOOK, hook_script(SERVER_HOOK), result)
    return result


def _git_dir_of(repository: Path) -> Path:
    """The git directory of ``repository``: a bare repository itself, or a clone's ``.git``."""
    for candidate in (repository, repository / ".git"):
        if (candidate / "objects").is_dir() and (candidate / "refs").is_dir() and (candidate / "HEAD").is_file():
            return candidate
    raise FlowgitError(f"{repository} is not a git repository", path=repository,
                       fix="name the server's bare repository (the directory holding HEAD, objects/ and refs/)")


def _write_hook(path: Path, script: str, result: InstallResult) -> None:
    """Write one hook; a hook of someone else's already there is kept beside it and run first."""
    name = path.name
    if path.exists():
        current = path.read_text(encoding="utf-8", errors="replace")
        if current == script and path.stat().st_mode & 0o111 == 0o111:
            result.unchanged.append(str(path))  # already this flowgit's hook: nothing to write
            return
        if is_flowgit_hook_text(current, name):
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
    atomic_write(path, script)
    path.chmod(0o755)


def render(result: InstallResult) -> str:
    lines = [f"installed {p}" for p in result.installed]
    lines += [f"updated   {p}" for p in result.updated]
    lines += [f"chained   {p} (runs first, then the flowgit gate)" for p in result.chained]
    lines += [f"unchanged {p} (already installed)" for p in result.unchanged]
    lines += [f"skipped   {p}" for p in result.skipped]
    return "\n".join(lines)
