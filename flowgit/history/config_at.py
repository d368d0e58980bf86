"""The flowgit configuration as a commit recorded it, and whether a commit weakened it.

The gate is judged by the configuration committed at the *base* of a change,
so a commit can never soften the rules that judge it, and an untracked
``.flowgit.toml`` never counts. This module rebuilds that configuration from a
tree's bytes with :func:`flowgit.config.load_config_from_blobs`, the reader the
hook and the wrap use, so every validation the live configuration gets applies
to history too; results are cached per set of blob ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from flowgit.config import Config, load_config_from_blobs
from flowgit.errors import FlowgitError

CONFIG_FILES = (".flowgit.toml", "pyproject.toml")


@dataclass(frozen=True)
class ConfigAt:
    """One commit's configuration, or the problem that made it unreadable (then the defaults apply)."""

    cfg: Config
    key: tuple  # blob ids of the config files: equal keys, equal configurations
    problem: str | None = None


class ConfigReader:
    """Builds :class:`Config` objects from trees, once per distinct set of config blobs."""

    def __init__(self, root: Path, repo, overrides: dict | None = None) -> None:
        self.root, self.repo = root, repo
        self.overrides = overrides or {}  # --file / --store given on the command line
        self._cache: dict[tuple, ConfigAt] = {}

    def at(self, tree) -> ConfigAt:
        entries = [(name, _entry(tree, name)) for name in CONFIG_FILES]
        key = tuple((str(e.id), e.filemode) if e is not None else None for _, e in entries)
        if key not in self._cache:
            self._cache[key] = self._build(entries, key)
        return self._cache[key]

    def _build(self, entries, key: tuple) -> ConfigAt:
        linked = [name for name, entry in entries if entry is not None and entry.filemode == LINK_MODE]
        if linked:  # the gate refuses it (G806): the link's text is not the configuration a reader follows to
            return ConfigAt(load_config_from_blobs(self.root, {}, "commit", overrides=self.overrides), key,
                            f"{', '.join(linked)} is a symbolic link: its target is read by nothing that judges")
        files = {name: self.repo[entry.id].data if entry is not None else None for name, entry in entries}
        try:
            return ConfigAt(load_config_from_blobs(self.root, files, "commit", overrides=self.overrides), key)
        except FlowgitError as exc:  # an invalid committed configuration: the defaults judge, and it is reported
            return ConfigAt(load_config_from_blobs(self.root, {}, "commit", overrides=self.overrides), key,
                            exc.message)


LINK_MODE = 0o120000  # a symbolic link in a git tree
BLOB_MODES = (0o100644, 0o100755, LINK_MODE)


def _entry(tree, path: str):
    """The tree's entry at ``path`` when it is a file or a link; a directory or a submodule there holds no
    configuration (flowgit reads a regular file only), so it counts as absent."""
    try:
        entry = tree[path]
    except KeyError:
        return None
    return entry if entry.filemode in BLOB_MODES else None


