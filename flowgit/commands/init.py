"""``flowgit init``: a team-safe repository — continuity file, store, merge driver, hooks. Safe to repeat.

Each step reports whether it created something or found it in place, so a
second run changes nothing and exits 0. An existing FLOW ``continuity.md`` is
adopted (recorded in ``.flowgit.toml``, or in ``[tool.flowgit]`` when that is
where the configuration lives) rather than joined by a second file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from flowgit.config import DEFAULT_CONTINUITY, Config, load_config
from flowgit.errors import CommitRejected, FlowgitError
from flowgit.fsio import atomic_write
from flowgit.git import git, literal, require_repo
from flowgit.merge import setup
from flowgit.resources import template

ADOPTABLE = ("continuity.md", "CONTINUITY.md")
COMMIT_MESSAGE = "Set up flowgit: continuity file, episodic store, merge driver"


@dataclass
class InitResult:
    continuity: str
    store: str
    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    adopted: str | None = None
    staged: list[str] = field(default_factory=list)
    root: str = ""  # the repository set up (the top of the checkout, wherever init was run from)
    hooks: list[str] = field(default_factory=list)
    committed: str | None = None
    warnings: list[str] = field(default_factory=list)


def run_init(cfg: Config, *, hooks: bool = True, commit: bool = False, explicit: bool = False,
             shared_hooks: bool = False) -> InitResult:
    """Set the repository up; every step is skipped, and reported as kept, when already done. Whatever it
    refuses (a shared hooks directory, an unreadable ``.gitattributes``) is refused before anything is written."""
    root = require_repo(cfg.root)  # a bare repository is named as one, not as "not a repository"
    _refuse_in_progress(root)
    if commit:
        _require_committed_paths(cfg, root)
    _require_not_ignored(root, [_adoptable(cfg, root, explicit) or cfg.continuity_rel, cfg.store_rel])
    framework = _framework_runs_the_hooks(root) if hooks else None
    hooks = hooks and framework is None
    if hooks:
        from flowgit.commands.install_hook import refuse_shared_hooks, refuse_unchainable_in

        refuse_shared_hooks(root, allowed=shared_hooks)
        refuse_unchainable_in(root)
    setup.read_attributes(root)  # refused here, not after the files below exist
    cfg, adopted, config_file = _adopt(cfg, root, explicit)
    _require_room(root, [cfg.continuity, cfg.store])
    if not (cfg.continuity.exists() and cfg.store.exists() and (root / ".gitattributes").exists()):
        from flowgit.git import refuse_outside_sparse_checkout

        refuse_outside_sparse_checkout(root, [cfg.continuity_rel, cfg.store_rel, ".gitattributes"])
    result = InitResult(cfg.continuity_rel, cfg.store_rel, adopted=adopted, root=str(root))
    if framework is not None:
        result.hooks.append(framework)
    if config_file:
        result.created.append(f"{config_file} (continuity = {cfg.continuity_rel!r})")
    for path, rel, content in ((cfg.continuity, cfg.continuity_rel, template("continuity.md")),
                               (cfg.store, cfg.store_rel, b"")):
        if path.exists():
            result.kept.append(rel)
        else:
            atomic_write(path, content)
            result.created.append(rel)
    changed = setup.ensure_attributes(root, [cfg.continuity_rel, cfg.store_rel])
    (result.created if changed else result.kept).append(".gitattributes (merge=flowgit)")
    (result.created if setup.ensure_config(root) else result.kept).append("git config merge.flowgit")
    result.warnings += setup.shadowed_attributes(root, [cfg.continuity_rel, cfg.store_rel])
    if hooks:
        from flowgit.commands.install_hook import run_install

        installed = run_install(cfg, shared=shared_hooks)
        result.hooks = ([f"installed {p}" for p in installed.installed] + [f"updated {p}" for p in installed.updated]
                        + [f"chained {p} (runs first)" for p in installed.chained]
                        + [f"unchanged {p}" for p in installed.unchanged]
                        + [f"skipped {p}" for p in installed.skipped])
    # what the set-up commits: its own files, and the memory's and configuration's when HEAD lacks them (an
    # earlier run refused by the gate left them staged, and a retry must commit them too)
    remembered = [".flowgit.toml"] if _remembered(cfg) else []
    paths = list(dict.fromkeys([".gitattributes", *([config_file] if config_file else []),
                                *(p for p in (*remembered, cfg.continuity_rel, cfg.store_rel)
                                  if not _committed(root, p))]))
    git(root, "add", "--", *literal(*paths))
    # a memory HEAD holds goes in with what its owner staged of it (grounded after a refusal, say)
    result.staged = _staged(root, list(dict.fromkeys([*paths, cfg.continuity_rel, cfg.store_rel])))
    if commit and result.staged:
        _commit(root, result.staged, adopted=adopted)
        result.committed = git(root, "rev-parse", "HEAD").decode().strip()
    return result


def _framework_runs_the_hooks(root: Path) -> str | None:
    """What to say instead of installing flowgit's hooks, when the pre-commit framework's list runs them (None:
    it does not): with both, the gate would run twice on every commit and print its verdict twice."""
    from flowgit.checks.hooklist import FRAMEWORK_INSTALL, HOOK_CONFIG, framework_hook_ids

    ids = framework_hook_ids(root)
    if not ids:
        return None
    return (f"not installed: {HOOK_CONFIG} runs flowgit's hooks ({', '.join(ids)}) through the pre-commit "
            f"framework; install its hooks with `{FRAMEWORK_INSTALL}` (`flowgit install-hook` installs "
            "flowgit's own as well)")


def _refuse_in_progress(root: Path) -> None:
    """Refuse (before any write) in the middle of a merge, rebase, cherry-pick or revert: the set-up stages
    its files, so they would become part of that operation, and aborting it (``git merge --abort``) deletes
    a staged file that HEAD does not hold, an adopted continuity file with it. Likewise while git's lock is
    held: the set-up's `git add` would fail after its files and hooks were written."""
    from flowgit.git import busy, git_dir, operation_in_progress, stale_lock_fix

    found = operation_in_progress(root)
    if found is not None:
        what, how = found
        raise FlowgitError(f"{what} is in progress in this repository; the set-up would be staged into it (and "
                           "aborting it would delete what was staged), so nothing was written", path=root,
                           fix=f"{how}, then run `flowgit init` again")
    held = busy(git_dir(root))
    if held:  # its `git add` would fail halfway, after the files and hooks were written
        raise FlowgitError(f"git's lock is held here ({', '.join(held)}): a git command is running, or a killed one "
                           "left it behind; nothing was written", path=root,
                           fix=stale_lock_fix(root, git_dir(root), held, "run `flowgit init` again"))


def _require_room(root: Path, paths: list[Path]) -> None:
    """Refuse, before anything is written, where a file could not be made: a file in the place of one of its
    directories (`.flow` a file). (A directory in the place of the file itself is refused with the paths.)"""
    for path in paths:
        for parent in reversed(path.parents):
            if parent == root or root not in parent.parents:
                continue
            if parent.exists() and not parent.is_dir():
                raise FlowgitError(f"is a file where a directory must be (to hold {path.relative_to(root)}); "
                                   "nothing was written", path=parent,
                                   fix="move it away, or name other paths (`continuity`, `store`) in .flowgit.toml")


def _require_committed_paths(cfg: Config, root: Path) -> None:
    """Refuse, before writing anything, to commit a memory at paths no committed configuration names.

    The hooks and the audit judge each commit by the configuration committed
    at its base, so files at paths only the working tree (or the command line)
    names would be committed and then never judged.
    """
    from flowgit.config import CONFIG_FILES, load_config_from_blobs
    from flowgit.git import blobs, has_head

    head = has_head(root)
    found = blobs(root, [f"HEAD:{name}" for name in CONFIG_FILES]) if head else [None] * len(CONFIG_FILES)
    committed = load_config_from_blobs(root, dict(zip(CONFIG_FILES, found)), "HEAD")
    if (committed.continuity_rel, committed.store_rel) == (cfg.continuity_rel, cfg.store_rel):
        return
    if _remembered(cfg):  # the .flowgit.toml an earlier run wrote to adopt a file: committed with the memory,
        held = blobs(root, [f"HEAD:{committed.continuity_rel}", f"HEAD:{committed.store_rel}"]) if head else []
        if not any(held):  # where HEAD holds no memory to move away from, it judges that commit as the
            return  # memory's first (see G801)
    where = Path(cfg.source).name if cfg.source else "the command line"
    raise FlowgitError(f"{where} names {cfg.continuity_rel} and {cfg.store_rel}, but the committed configuration "
                       f"names {committed.continuity_rel} and {committed.store_rel}: the hooks and the audit judge "
                       "by what is committed, so these files would go unjudged", path=Path(cfg.source or root),
                       fix="commit the configuration first (it moves the judged files: see G801), then run "
                           "`flowgit init --commit`")


ADOPTION_FIX = ("an adopted file is the memory's first commit, judged like any other: ground what it names "
                "(record the episodes a 2x or 3x pattern rests on and cite them, or lower it to 1x), then run "
                "`flowgit init --commit` again; or adopt it as it stands, on the record: "
                "`FLOWGIT_OVERRIDE=\"adopting an existing memory\" flowgit init --commit` (the commit carries "
                "a Flow-Override trailer and `flowgit audit` lists what it let through)")


def _commit(root: Path, staged: list[str], *, adopted: str | None = None) -> None:
    """Commit the set-up; when a hook refuses it, say what the hook said (the files stay staged)."""
    import subprocess

    proc = subprocess.run(["git", "commit", "-q", "-m", COMMIT_MESSAGE, "--", *literal(*staged)], cwd=root,
                          capture_output=True, text=True, errors="replace")
    if proc.returncode != 0:
        said = (proc.stderr.strip() or proc.stdout.strip() or f"git exited {proc.returncode}")
        listed = ", ".join(sorted(staged)[:8]) + (f" and {len(staged) - 8} more" if len(staged) > 8 else "")
        raise CommitRejected(f"the set-up is staged but not committed (staged: {listed}); "
                             f"the commit was refused:\n{said}", path=root,
                           fix=ADOPTION_FIX if adopted else
                           "fix what it names (`flowgit check` shows it again), then `git commit`")


def _require_not_ignored(root: Path, rels: list[str]) -> None:
    """Refuse, before writing anything, paths a .gitignore rule excludes: the memory is committed to be
    judged and shared, and `git add` would refuse it halfway through the set-up."""
    out = git(root, "check-ignore", "-v", "--no-index", "--", *rels, check=False).decode("utf-8", "replace")
    for line in out.splitlines():
        source, _, path = line.partition("\t")
        if not path or _tracked(root, path):
            continue
        where, _, rule = source.rpartition(":")  # <source>:<line>:<pattern>
        ignore_file, _, number = where.rpartition(":")
        raise FlowgitError(f"{path} is ignored by git (rule `{rule}`), so the memory could not be committed, "
                           "judged or shared; nothing was written", path=root / ignore_file if ignore_file else root,
                           line=int(number) if number.isdigit() else None,
                           fix=f"take `{rule}` out of {ignore_file or '.gitignore'} (a file under an ignored "
                               "directory cannot be re-included), then run `flowgit init` again")


def _remembered(cfg: Config) -> bool:
    """Whether the configuration in force is a ``.flowgit.toml`` (init writes one to remember an adopted
    file, and commits it with the memory)."""
    return bool(cfg.source) and Path(cfg.source).name == ".flowgit.toml"


def _committed(root: Path, rel: str) -> bool:
    """Whether HEAD holds ``rel`` (False before a first commit)."""
    return bool(git(root, "ls-tree", "--name-only", "HEAD", "--", rel, check=False).strip())


def _tracked(root: Path, rel: str) -> bool:
    return bool(git(root, "ls-files", "--", *literal(rel), check=False).strip())


def _staged(root: Path, paths: list[str]) -> list[str]:
    """Which of ``paths`` the index holds differently from HEAD (all of them before a first commit)."""
    out = git(root, "diff", "--cached", "--name-only", "-z", "--", *literal(*paths), check=False)  # -z: paths unquoted
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def _adopt(cfg: Config, root: Path, explicit: bool) -> tuple[Config, str | None, str | None]:
    """Adopt a FLOW continuity file found at the root when none is configured.

    Returns the configuration to use, the adopted path and the configuration
    file written to remember it (None when nothing was adopted).
    """
    found = _adoptable(cfg, root, explicit)
    if found is None:
        return cfg, None, None
    config_file = _remember(root, found)
    adopted = load_config(root)
    if adopted.continuity_rel != found:
        raise FlowgitError(f"recorded continuity = {found!r} but the configuration does not resolve to it",
                           path=config_file, fix=f"set `continuity = \"{found}\"` there by hand")
    return adopted, found, config_file


def _adoptable(cfg: Config, root: Path, explicit: bool) -> str | None:
    """The FLOW continuity file at the root that init would adopt (None: none, or one is configured)."""
    if explicit or cfg.continuity.exists() or cfg.continuity_rel != DEFAULT_CONTINUITY:
        return None
    found = next((name for name in ADOPTABLE if (root / name).is_file()), None)
    return None if found is None or found == cfg.continuity_rel else found


def _remember(root: Path, rel: str) -> str:
    """Record ``continuity = rel`` where this repository's flowgit configuration lives."""
    line = f'continuity = "{rel}"\n'
    dot, py = root / ".flowgit.toml", root / "pyproject.toml"
    if dot.is_file():
        atomic_write(dot, line + dot.read_text(encoding="utf-8"))
        return dot.name
    if py.is_file():
        text = py.read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        at = next((i for i, ln in enumerate(lines) if ln.strip() == "[tool.flowgit]"), None)
        if at is not None:
            lines.insert(at + 1, line)
            atomic_write(py, "".join(lines))
            return py.name
    atomic_write(dot, line)
    return dot.name


def render(result: InitResult) -> str:
    lines = [f"flowgit init: {result.root}"] if result.root else []  # (run from a subdirectory: the top is set up)
    lines += [f"adopted {result.adopted} as the continuity file"] if result.adopted else []
    lines += [f"created {c}" for c in result.created]
    lines += [f"kept    {k} (already there)" for k in result.kept]
    lines += [f"hook    {h}" for h in result.hooks]
    lines += [f"warning: {w}" for w in result.warnings]
    if result.staged:
        lines.append(f"staged  {', '.join(result.staged)}")
    if result.committed:
        lines.append(f"committed {result.committed[:12]}: {COMMIT_MESSAGE}")
    elif result.staged:
        lines.append("next: commit the set-up (`flowgit init --commit` does it), so every clone merges by meaning")
    lines.append(f"then: edit {result.continuity}, record episodes with `flowgit episode add`, wrap with "
                 "`flowgit wrap`, share with `flowgit sync`")
    return "\n".join(lines)
