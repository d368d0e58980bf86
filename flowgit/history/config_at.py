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
_STRICTER_WHEN_HIGHER = ("evidence_2x", "evidence_3x", "sources_3x", "relevance_min_shared")
_SEVERITY = {"off": 0, "warning": 1, "error": 2, "on": 2}


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
        key = tuple(str(e.id) if e is not None else None for _, e in entries)
        if key not in self._cache:
            self._cache[key] = self._build(entries, key)
        return self._cache[key]

    def _build(self, entries, key: tuple) -> ConfigAt:
        files = {name: self.repo[entry.id].data if entry is not None else None for name, entry in entries}
        try:
            return ConfigAt(load_config_from_blobs(self.root, files, "commit", overrides=self.overrides), key)
        except FlowgitError as exc:  # an invalid committed configuration: the defaults judge, and it is reported
            return ConfigAt(load_config_from_blobs(self.root, {}, "commit", overrides=self.overrides), key,
                            exc.message)


def _entry(tree, path: str):
    try:
        return tree[path]
    except KeyError:
        return None


def weakenings(before: Config, after: Config) -> list[str]:
    """How ``after`` is more lenient than ``before`` (each as a sentence); [] when it is not."""
    out: list[str] = []
    for name in sorted(set(before.rules) | set(after.rules)):
        old, new = before.rules.get(name, "on"), after.rules.get(name, "on")
        if _SEVERITY.get(new, 2) < _SEVERITY.get(old, 2):
            out.append(f"rule `{name}` went from {old} to {new}")
    for name in before.thresholds._fields:
        old, new = getattr(before.thresholds, name), getattr(after.thresholds, name)
        if name in _STRICTER_WHEN_HIGHER and new < old:
            out.append(f"threshold `{name}` lowered from {old} to {new}")
        if name == "restatement_overlap" and new > old:
            out.append(f"threshold `restatement_overlap` raised from {old} to {new} (fewer restatements collapse)")
    for name in before.budgets._fields:
        old, new = getattr(before.budgets, name), getattr(after.budgets, name)
        if new > old:
            out.append(f"budget `{name}` raised from {old} to {new}")
    return out  # a moved continuity file or store is no weakening: the audit judges it at its new path
