"""Where things are and the numbers the protocol runs on.

Configuration lives in ``[tool.flowgit]`` of the repository's ``pyproject.toml``
or in ``.flowgit.toml`` (whose keys sit at the top level). Everything has a
default, so a repository with neither works.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Any, NamedTuple

from flowgit.errors import FlowgitError

DEFAULT_CONTINUITY = "CONTINUITY.md"
DEFAULT_STORE = ".flow/episodes.jsonl"


class Budgets(NamedTuple):
    """Size budgets from the FLOW reference (targets warn, maxima fail).

    The configuration types are named tuples, not dataclasses: every hook run
    imports this module, and a dataclass costs about a millisecond to define.
    """

    state_chars_target: int = 3000
    state_chars_max: int = 4000
    developing_lines_target: int = 12
    developing_lines_max: int = 15
    file_chars_target: int = 117_000
    file_chars_max: int = 140_000
    file_lines_target: int = 500
    shrink_max: float = 0.43


class Thresholds(NamedTuple):
    """The immune system's numbers and the staleness windows."""

    evidence_2x: int = 2
    evidence_3x: int = 3
    sources_3x: int = 2
    restatement_overlap: float = 0.6
    relevance_min_shared: int = 1
    evidence_reuse_warn: int = 3
    stale_developing_days: int = 7
    stale_proven_days: int = 30


class Config(NamedTuple):
    """Resolved configuration for one repository (paths are absolute; never changed in place)."""

    root: Path
    continuity: Path
    store: Path
    aliases: dict[str, tuple[str, ...]] = {}  # shared, never mutated: a new Config replaces a setting
    budgets: Budgets = Budgets()
    thresholds: Thresholds = Thresholds()
    rules: dict[str, str] = {}
    claude_dir: Path | None = None
    source: str | None = None

    @property
    def continuity_rel(self) -> str:
        return _in_repository(self.continuity, self.root, "--file")

    @property
    def store_rel(self) -> str:
        return _in_repository(self.store, self.root, "--store")


def _in_repository(path: Path, root: Path, option: str) -> str:
    """``path`` relative to the repository, as git names it; a clear refusal for a file outside it (a
    command-line choice: what git records of it is what every git-reading command judges)."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        raise FlowgitError("is outside the repository, and this command reads what git records of it",
                           path=path, fix=f"point {option} at a file inside the repository ({root})") from None


def find_root(start: str | Path | None = None) -> Path | None:
    """The top of the git checkout (or worktree) containing ``start``, without running git; a bare repository
    when git runs a hook in it (``GIT_DIR`` naming the very directory: a server's pre-receive), even one kept
    inside another checkout, whose work tree is not the repository being judged."""
    here = Path(start or os.getcwd()).resolve()
    named = os.environ.get("GIT_DIR")
    if named and _a_bare_repository(here) and (here / named).resolve() == here:
        return here
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _a_bare_repository(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        import tomllib  # type: ignore[import-not-found]
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        with path.open("rb") as fh:
            if fh.read(3) == b"\xef\xbb\xbf":  # (editors on Windows add one; TOML does not allow it)
                raise FlowgitError("starts with a UTF-8 byte order mark, which TOML does not allow, so none of "
                                   "its settings would be read", path=path, line=1,
                                   fix="save the file as UTF-8 without a byte order mark (BOM)")
            fh.seek(0)
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None) or _toml_line(str(exc))
        raise FlowgitError(f"invalid TOML: {exc}", path=path, line=line,
                           fix="correct the TOML at that line (`key = \"value\"`, tables as `[name]`)") from None
    except UnicodeDecodeError as exc:
        raise FlowgitError(f"not valid UTF-8 (byte 0x{exc.object[exc.start]:02x})", path=path,
                           fix="re-save the file as UTF-8") from None
    except RecursionError:  # (Python's TOML reader recurses once per level of arrays or inline tables)
        raise FlowgitError("invalid TOML: arrays or inline tables nested hundreds of levels deep", path=path,
                           fix="flowgit's settings are a few flat keys: remove the nested value") from None


def _require_rule_names(rules: dict, where) -> None:
    """Refuse a ``[rules]`` key that names no gate rule (a finding code, a misspelling): the setting it meant
    would silently not be in force."""
    from flowgit.checks.registry import rules as registered
    from flowgit.suggest import close_matches

    names = [r.name for r in registered()]
    for key in rules:
        if key not in names:
            near = close_matches(str(key).lower().replace("_", "-"), names)
            raise FlowgitError(f"`rules.{key}` names no gate rule, so the setting would not be in force",
                               path=where, fix=("did you mean " + " or ".join(f"`{n}`" for n in near) + "?"
                                                if near else "rules are named as in the rules table of docs/rules.md: "
                                                + ", ".join(names)))


def _toml_line(message: str) -> int | None:
    """The line a TOML error's message names (``… (at line 3, column 12)``; Python before 3.14 gives no
    attribute for it), so the error names it as every other does."""
    found = re.search(r"\bline (\d+)", message)
    return int(found.group(1)) if found else None


# Where a pyproject.toml may hold flowgit's settings: a table header naming flowgit (or spelling a name with
# an escape), a `flowgit` or `tool.flowgit` key, or an inline `tool = {…}` table.
FLOWGIT_TABLE_RE = re.compile(rb"""^[ \t]*\[[^\]\n]*(?:flowgit|\\[uU])"""
                              rb"""|^[ \t]*(?:tool[ \t]*\.[ \t]*)?["']?flowgit["']?[ \t]*[.=]"""
                              rb"""|^[ \t]*["']?tool["']?[ \t]*=""", re.MULTILINE)


def _names_flowgit(pyproject: Path) -> bool:
    """Whether a ``pyproject.toml`` may hold flowgit's settings (see :data:`FLOWGIT_TABLE_RE`), asked of a file
    that does not parse (or is a link): one that cannot is the project's own business, so a syntax error in it
    (flowgit named only as a dependency, say) does not stop the gate, nor the commit that fixes it."""
    try:
        return FLOWGIT_TABLE_RE.search(pyproject.read_bytes().removeprefix(b"\xef\xbb\xbf")) is not None
    except OSError:
        return True  # unreadable: let the TOML reader say why


def _raw_settings(root: Path) -> tuple[dict[str, Any], str | None]:
    dot = root / ".flowgit.toml"
    for path in (dot, root / "pyproject.toml"):
        if path.is_symlink() and (path is dot or _names_flowgit(path)):  # git records the link's text only
            raise FlowgitError("is a symbolic link: flowgit reads its configuration as git records it, so the "
                               "file it points to would configure this command but not the gate", path=path,
                               fix="commit the configuration itself at this path (replace the link with the file)")
    for path in (dot, root / "pyproject.toml"):  # a FIFO would hang the read; taken as absent, configure nothing
        if path.exists() and not path.is_file() and (path is dot or not path.is_dir()):
            raise FlowgitError("is not a regular file (a FIFO, a socket, a device or a directory), so its "
                               "settings cannot be read", path=path,
                               fix="make it an ordinary TOML file (or remove it, if nothing is configured)")
    if dot.is_file():
        return _load_toml(dot), str(dot)
    py = root / "pyproject.toml"
    if py.is_file():
        try:
            tables = _load_toml(py)
        except FlowgitError:
            if _names_flowgit(py):
                raise
            return {}, None  # the project's own file, broken, and nowhere naming flowgit's table: not ours
        data = tables.get("tool", {}).get("flowgit")
        if isinstance(data, dict):
            return data, f"{py} [tool.flowgit]"
    return {}, None


TOP_LEVEL_KEYS = ("continuity", "store", "aliases", "rules", "budgets", "thresholds", "claude_dir")


def _line_of(where: str, key: str) -> int | None:
    """The line of ``where`` (a configuration file) that sets ``key``, for the error to name; None when
    ``where`` is no file here (a committed blob's label) or no line sets it plainly."""
    try:
        text = Path(where).read_text(encoding="utf-8", errors="replace")
    except (OSError, ValueError):
        return None
    spelt = "|".join(dict.fromkeys(re.escape(form) for form in (key, json.dumps(key)[1:-1])))  # (as TOML escapes it)
    pattern = re.compile(rf"^\s*(?:[\"']?(?:{spelt})[\"']?\s*=|\[\s*[\"']?(?:{spelt})[\"']?\s*[\].])")
    return next((n for n, line in enumerate(text.splitlines(), 1) if pattern.match(line)), None)


def _one_line(text: str) -> str:
    """A name from a configuration file as a message shows it: on one line, a control character or a line
    break escaped (a key quoted with a `\\n` in it would otherwise write lines of its own into the hooks'
    status the agent reads)."""
    return json.dumps(text, ensure_ascii=False)[1:-1] if LINE_BREAKING_RE.search(text) else text


LINE_BREAKING_RE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # control characters and line separators


def _unknown_setting(key: str, choices, where: str, fix: str | None = None) -> FlowgitError:
    """The error for a setting flowgit does not know: its line, and the nearest known names."""
    from flowgit.suggest import close_matches

    near = close_matches(key, list(choices))
    hint = ("did you mean " + " or ".join(f"`{n}`" for n in near) + "?") if near else None
    return FlowgitError(f"unknown setting `{_one_line(key)}`", path=where, line=_line_of(where, key),
                        fix=fix or hint or "one of: " + ", ".join(sorted(choices) if isinstance(choices, dict)
                                                                 else choices))


def _known_keys(raw: dict[str, Any], where: str) -> None:
    """Refuse a setting flowgit does not know: a threshold written above its table is otherwise silently
    not in force, while its author believes it is."""
    for key in raw:
        if key in TOP_LEVEL_KEYS:
            continue
        table = next((cls.__name__.lower() for cls in (Budgets, Thresholds) if key in cls._field_defaults), None)
        if key == "tool" and where.endswith(".flowgit.toml"):
            raise _unknown_setting(key, TOP_LEVEL_KEYS, where, ".flowgit.toml takes the settings at its top "
                                   "level: drop the `tool.flowgit.` prefix (`[thresholds]`, not "
                                   "`[tool.flowgit.thresholds]`); the prefixed tables are pyproject.toml's")
        raise _unknown_setting(key, TOP_LEVEL_KEYS, where, f"put it under [{table}]" if table else None)


def _coerce(cls: type, raw: Any, where: str) -> Any:
    if raw is None:
        return cls()
    if not isinstance(raw, dict):
        raise FlowgitError(f"`{cls.__name__.lower()}` must be a table", path=where,
                           fix=f"write it as a table: [{cls.__name__.lower()}] with one `name = number` per line")
    known: dict[str, Any] = cls._field_defaults
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in known:
            raise _unknown_setting(key, known, where)
        default = known[key]
        if isinstance(default, bool) or not isinstance(value, (int, float)) or isinstance(value, bool) or \
                not math.isfinite(value):  # (`nan` compares false with everything: no threshold at all)
            raise FlowgitError(f"`{key}` must be a finite number, got {value!r}", path=where,
                               fix=f"e.g. {key} = {default!r} (the default)")
        if value < 0:
            raise FlowgitError(f"`{key}` must not be negative, got {value!r}", path=where,
                               fix=f"e.g. {key} = {default!r} (the default)")
        values[key] = type(default)(value)
    return cls(**values)


def _aliases(raw: dict[str, Any], where: str) -> dict[str, tuple[str, ...]]:
    """``[aliases]``: a canonical section name (any letter case) -> the other names it goes by. A key naming
    no canonical section would be silently not in force (a misspelt `"Curent State"` aliases nothing the
    rules know), so it is refused with the nearest names, as any other unknown setting is."""
    from flowgit.continuity.sections import CANONICAL

    canonical = {name.casefold(): name for name in CANONICAL}
    out: dict[str, tuple[str, ...]] = {}
    for key, value in raw.items():
        if str(key).casefold() not in canonical:
            raise _unknown_setting(str(key), list(CANONICAL), where)  # (the nearest, or every section named)
        names = value if isinstance(value, list) else [value]
        if not names or not all(isinstance(name, str) and name.strip() for name in names):
            raise FlowgitError(f"the aliases of `{key}` must be section names as strings, got {value!r}",
                               path=where, line=_line_of(where, str(key)), fix=f'e.g. "{key}" = ["Now", "Status"]')
        out[str(key)] = tuple(names)
    return out


def load_config(start: str | Path | None = None, *, continuity: str | None = None,
                store: str | None = None) -> Config:
    """Resolve the configuration for the repository containing ``start``.

    Outside a git checkout the current directory stands in for the root, so
    read-only commands (lint, patterns) still work on loose files.
    """
    root = find_root(start) or Path(start or os.getcwd()).resolve()
    raw, source = _raw_settings(root)
    where = source or str(root)
    _known_keys(raw, where)
    aliases_raw = raw.get("aliases", {})
    if not isinstance(aliases_raw, dict):
        raise FlowgitError("`aliases` must be a table of canonical name -> list of names", path=where,
                           fix='e.g. [aliases] then "Current State" = ["Now", "Status"]')
    aliases = _aliases(aliases_raw, where)
    rules = raw.get("rules", {})
    if not isinstance(rules, dict) or any(v not in ("error", "warning", "off") for v in rules.values()):
        raise FlowgitError("`rules` maps rule names to \"error\", \"warning\" or \"off\"", path=where,
                           fix='e.g. [rules] then evidence-reuse = "warning"')
    if rules:
        _require_rule_names(rules, where)
    claude = raw.get("claude_dir")
    if claude is not None and (not isinstance(claude, str) or not claude.strip()):
        raise FlowgitError(f"`claude_dir` must be a folder's path as a string, got {claude!r}", path=where,
                           line=_line_of(where, "claude_dir"),
                           fix='e.g. claude_dir = "~/.claude" (or leave it out: the default is read)')
    cont_path = _typed_path(continuity) or contained(root, raw.get("continuity", DEFAULT_CONTINUITY), "continuity",
                                                     where)
    store_path = _typed_path(store) or contained(root, raw.get("store", DEFAULT_STORE), "store", where)
    _apart(root / cont_path, root / store_path, where if not (continuity or store) else "options",
           (str(continuity) if continuity else None, str(store) if store else None))
    _not_control_files(root, {"continuity": (root / cont_path, continuity), "store": (root / store_path, store)},
                       where)
    return Config(
        root=root,
        continuity=(root / cont_path) if not cont_path.is_absolute() else cont_path,
        store=(root / store_path) if not store_path.is_absolute() else store_path,
        aliases=aliases,
        budgets=_coerce(Budgets, raw.get("budgets"), where),
        thresholds=_coerce(Thresholds, raw.get("thresholds"), where),
        rules=dict(rules),
        claude_dir=Path(claude).expanduser() if claude else None,
        source=source,
    )


def load_judging_config(*, continuity: str | None = None, store: str | None = None,
                        start: Path | None = None) -> Config:
    """The configuration for a command that judges under *committed* configuration (check, check-msg, audit).

    The working tree's configuration judges nothing there, so an invalid one
    (committed past the gate, or being repaired) must not stop the hook from
    judging the commit that repairs it: the defaults stand in, with a warning
    on stderr. Paths given on the command line are the user's own: an error
    with them stands.
    """
    try:
        return load_config(start, continuity=continuity, store=store)
    except FlowgitError as exc:
        if continuity or store or exc.path is None:
            raise
        sys.stderr.write(f"flowgit: warning: {exc.render()} — the working tree's configuration is not read here "
                         "(the configuration committed at each commit judges it)\n")
        return default_config(find_root(start) or Path(start or os.getcwd()).resolve())


def _typed_path(value: str | Path | None) -> Path | None:
    """``--file``/``--store`` as typed: a path from the current directory, as every shell path is (from a
    package's directory, `--store .flow/x.jsonl` is that package's store, not the root's)."""
    if not value:
        return None
    return Path(os.path.abspath(Path(value).expanduser()))  # (`..` read off: git names files without it)


def contained(root: Path, value: Any, key: str, where: str) -> Path:
    """A path from repository configuration, refused unless it stays inside the repository.

    Configuration arrives with a clone: a `store = "../../home/me/.bashrc"` (or
    an absolute path, or a symlink out of the tree) must not make flowgit write
    outside the repository. Options given on the command line are the user's
    own choice and are not limited. The path must also stay out of ``.git``.
    """
    if not isinstance(value, str) or not value.strip() or LINE_BREAKING_RE.search(value):
        raise FlowgitError(f"`{key}` must be a non-empty path string on one line (no control character or line "
                           f"break), got {value!r}", path=where, line=_line_of(where, key),
                           fix=f"e.g. {key} = \"{DEFAULT_STORE if key == 'store' else DEFAULT_CONTINUITY}\"")
    rel = Path(value)
    target = rel if rel.is_absolute() else root / rel
    real_root = root.resolve()
    try:
        inside = target.resolve().relative_to(real_root)
    except ValueError:
        raise FlowgitError(f"`{key}` = {value!r} points outside the repository", path=where,
                           fix="configured paths must stay inside the repository (relative, no `..` or "
                               "symlinks out of it)") from None
    if not inside.parts or any(part.casefold() == ".git" for part in (*inside.parts, *rel.parts)):
        # (a `.git` anywhere: `sub/.git/x` made a directory git takes for a nested repository, and refused to add)
        raise FlowgitError(f"`{key}` = {value!r} points into git's own directory (or at the root)", path=where,
                           fix=f"use a path inside the working tree, e.g. {key} = "
                               f"\"{DEFAULT_STORE if key == 'store' else DEFAULT_CONTINUITY}\"")
    if ".." in rel.parts:  # `docs/../CONTINUITY.md` is the same file under a second name the gate would not know
        raise FlowgitError(f"`{key}` = {value!r} has a `..` in it", path=where,
                           fix="write the path from the repository root without `..`: "
                               f"{key} = \"{inside.as_posix()}\" names the same file")
    nested = nested_repository(real_root, inside)
    if nested is not None:
        raise FlowgitError(f"`{key}` = {value!r} is inside {nested}, another repository (a submodule or a clone "
                           "kept in this one): flowgit would write into its working tree, and git records nothing "
                           "there for this repository", path=where,
                           fix=f"keep the memory in this repository's own files, e.g. {key} = "
                               f"\"{DEFAULT_STORE if key == 'store' else DEFAULT_CONTINUITY}\"")
    return rel


def nested_repository(root: Path, inside: Path) -> str | None:
    """The directory on the way to ``inside`` (relative to ``root``) that is another repository: one holding a
    ``.git`` (a checked-out submodule, a nested clone) or a submodule's path in ``.gitmodules`` (one not checked
    out yet); None for none. A few stat calls, and ``.gitmodules`` read only where it exists."""
    dirs = [Path(*inside.parts[:n]) for n in range(1, len(inside.parts))]
    for d in dirs:
        if os.path.lexists(root / d / ".git"):
            return d.as_posix()
    if not dirs or not (root / ".gitmodules").is_file():
        return None
    try:
        text = (root / ".gitmodules").read_text(encoding="utf-8", errors="replace")[:1_000_000]
    except OSError:
        return None
    paths = {m.strip().strip('"').rstrip("/") for m in re.findall(r"(?m)^\s*path\s*=\s*(.+?)\s*$", text)}
    return next((d.as_posix() for d in dirs if d.as_posix() in paths), None)


def _apart(continuity: Path, store: Path, where: str, typed: tuple = (None, None)) -> None:
    """Refuse a continuity file and a store that are one file, or one inside the other: an episode appended
    to the continuity file (or a wrap's REPLACE of the store) would destroy what the other holds. ``typed``:
    ``--file``/``--store`` as the user typed them (named so in the error)."""
    a, b = Path(os.path.realpath(continuity)), Path(os.path.realpath(store))
    for name, path, example, given, option in (("continuity file", continuity, DEFAULT_CONTINUITY, typed[0], "--file"),
                                                ("episode store", store, DEFAULT_STORE, typed[1], "--store")):
        if path.is_dir():
            raise FlowgitError(f"the {name} ({given or path}) is a directory, not a file",
                               path=option if given else where, fix=f"name the file itself (e.g. {example})")
    if a == b or a in b.parents or b in a.parents:
        raise FlowgitError(f"the continuity file ({continuity}) and the episode store ({store}) are the same file, "
                           "or one is inside the other", path=where,
                           fix="give each its own file, e.g. continuity = \"CONTINUITY.md\", "
                               f"store = \"{DEFAULT_STORE}\"")


# Files that say how the memory is judged and merged: a continuity file or store that is one of them would be
# rewritten or appended to by a wrap or `episode add`, leaving the configuration unreadable (or the gate's
# own settings in the memory's hands).
CONTROL_FILES = (".flowgit.toml", "pyproject.toml", ".pre-commit-config.yaml", ".gitattributes",
                 ".flow/.gitattributes")


def _not_control_files(root: Path, paths: dict[str, tuple[Path, object]], where: str) -> None:
    """Refuse a configured (or typed) continuity file or store that is one of :data:`CONTROL_FILES`."""
    control = {os.path.realpath(root / name): name for name in CONTROL_FILES}
    for key, (path, typed) in paths.items():
        name = control.get(os.path.realpath(path))
        if name is not None:
            option = "--file" if key == "continuity" else "--store"
            raise FlowgitError(f"the {'continuity file' if key == 'continuity' else 'episode store'} would be "
                               f"{name}, a file that configures flowgit or git", path=option if typed else where,
                               fix=f"give it a file of its own, e.g. {key} = "
                                   f"\"{DEFAULT_CONTINUITY if key == 'continuity' else DEFAULT_STORE}\"")


def default_config(root: Path) -> Config:
    """The configuration in force where none is committed: the baseline a first commit is held to."""
    return Config(root=root, continuity=root / DEFAULT_CONTINUITY, store=root / DEFAULT_STORE)


def with_paths(cfg: Config, *, continuity: Path | None = None, store: Path | None = None) -> Config:
    """A copy of ``cfg`` pointing at other files (used by tests and the demo)."""
    return cfg._replace(continuity=continuity or cfg.continuity, store=store or cfg.store)


CONFIG_FILES = (".flowgit.toml", "pyproject.toml")


def load_config_from_blobs(root: Path, files: dict[str, bytes | None], label: str, *,
                           overrides: dict | None = None) -> Config:
    """The configuration that ``files`` (config file name -> bytes, None = absent) describe for ``root``.

    The gate must judge a commit by the configuration *committed* at its base,
    never by the working tree (an untracked or same-commit ``.flowgit.toml``
    must not weaken it). The hook, the wrap and the audit all read committed
    configuration here: the bytes are laid out in a private directory (marked
    as a repository root, so no enclosing checkout is searched) and read by
    :func:`load_config` itself, so every check that function makes applies to
    committed configuration too; paths are then re-rooted at ``root``.
    ``overrides`` are ``--file``/``--store`` given on the command line. Errors
    name ``label`` (e.g. ``HEAD:.flowgit.toml``).
    """
    overrides = overrides or {}
    if all(data is None for data in files.values()) and not overrides:  # the defaults: no files to lay out
        return default_config(root)
    import shutil
    import tempfile

    scratch = Path(tempfile.mkdtemp(prefix="flowgit-config-"))
    try:
        (scratch / ".git").mkdir()  # load_config takes the scratch directory as the root
        for name, data in files.items():
            if data is not None:
                (scratch / name).write_bytes(data)
        try:
            cfg = load_config(scratch, **overrides)
        except FlowgitError as exc:
            where = str(exc.path or "").replace(str(scratch) + os.sep, f"{label}:")
            raise FlowgitError(exc.message, path=where or label, line=exc.line, fix=exc.fix) from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    def rebase(path: Path) -> Path:
        try:
            return root / path.relative_to(scratch)
        except ValueError:
            return path

    source = cfg.source.replace(str(scratch) + os.sep, f"{label}:") if cfg.source else None
    return cfg._replace(root=root, continuity=rebase(cfg.continuity), store=rebase(cfg.store), source=source)


def load_config_at(root: Path, rev: str | None) -> Config:
    """The configuration as committed at ``rev`` (defaults when ``rev`` is None or has no config)."""
    if rev is None:
        return load_config_from_blobs(root, {}, "(none)")
    from flowgit.git import blobs

    found = blobs(root, [f"{rev}:{name}" for name in CONFIG_FILES])
    return load_config_from_blobs(root, dict(zip(CONFIG_FILES, found)), rev)


def judging_config_at(cfg: Config, rev: str | None) -> Config:
    """The configuration committed at ``rev`` that judges a change on top of it, at ``cfg``'s paths.

    What the gate applies (the wrap, its dry run and ``candidates`` must
    propose what the gate will accept): an uncommitted configuration never
    changes a threshold, and an invalid committed one gives the defaults, as
    the hook and the audit read it.
    """
    if rev is None:
        return cfg
    try:
        committed = load_config_at(cfg.root, rev)
    except FlowgitError:
        committed = default_config(cfg.root)
    return committed._replace(continuity=cfg.continuity, store=cfg.store)
