"""The pre-commit framework's hook list: a commit must not take flowgit's hooks out of what judges it.

The framework runs the hooks that ``.pre-commit-config.yaml`` lists *as
staged*: a commit that drops ``flowgit-check``, points its ``entry`` at
``true`` or moves it to a stage that never runs is judged by the list it
brings, so the violation it carries passes with no ``--no-verify``. As with
flowgit's own configuration (G801), the list the base commits is the one that
counts: every flowgit hook there must still run, as it ran, in the change.
A hook added, a ``rev`` moved to another release, or a hook's name or
description reworded take nothing away, in a commit of their own: with a
change of the memory, any change of a list that runs flowgit's hooks is
refused (the commit would pick the code that judges it). The gate (G810),
check-msg and the audit (A404) ask this one question.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Any

HOOK_CONFIG = ".pre-commit-config.yaml"
# What decides whether and how a hook runs (``name`` and ``description`` only label it; ``rev`` picks a release)
RUN_KEYS = ("entry", "args", "language", "language_version", "stages", "files", "exclude", "types", "types_or",
            "exclude_types", "always_run", "pass_filenames", "additional_dependencies", "require_serial")
MAX_BYTES = 1 << 20  # a hook list is a few kilobytes
MAX_NODES = 20_000  # values read into the comparison: YAML aliases can make a kilobyte billions of nodes


class _TooLarge(Exception):
    pass


def link_target(text: bytes | None) -> str | None:
    """The in-tree path that a symbolic link's text names (one hop), or None: not a link's text (a hook list
    is YAML over several lines, or one with a colon), or a path that leaves the tree.

    The framework follows a linked ``.pre-commit-config.yaml`` to the list it
    names: that list is the one judged, at the base and in the change alike.
    """
    if not text or len(text) > 4096 or b"\n" in text or b":" in text:
        return None
    path = posixpath.normpath(text.decode("utf-8", "replace"))
    if path.startswith(("/", "../")) or path in (".", ".."):
        return None
    return path


def runs_flowgit(data: bytes | None) -> bool:
    """Whether a hook list runs one of flowgit's hooks (only such a list has a say in a merge's verdict: a
    branch forked before the list existed vouches for no list)."""
    return bool(flowgit_hooks(data))


FRAMEWORK_INSTALL = ("pre-commit install --hook-type pre-commit --hook-type pre-merge-commit "
                     "--hook-type prepare-commit-msg --hook-type commit-msg --hook-type pre-push")


def framework_hook_ids(root: Path) -> list[str]:
    """The ids of flowgit's hooks the working tree's pre-commit framework list runs ([] for none, no list, or
    one that cannot be read): where it runs them, flowgit's own hooks would run the gate a second time."""
    path = root / HOOK_CONFIG
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_BYTES:
            return []
        data = path.read_bytes()
    except OSError:
        return []
    return sorted(flowgit_hooks(data) or {})


def merged_weakenings(new: bytes | None, parents: list[bytes | None], *, memory_changed: bool = False) -> list[str]:
    """How ``new`` runs flowgit's hooks less than every parent whose list runs one does ([] for a list as a
    parent holds it): a merge answers for what it takes from all of them, as it does for the memory.
    ``memory_changed``: the commit also changes the continuity file or the store (see
    :func:`changed_with_the_memory`)."""
    if new in parents:
        return []
    voters = [old for old in parents if runs_flowgit(old)]
    found = [hook_weakenings(old, new) for old in voters]
    kept = [problem for problem in found[0] if all(problem in other for other in found[1:])] if found else []
    return kept + (changed_with_the_memory() if voters and memory_changed and not kept else [])


def changed_with_the_memory() -> list[str]:
    """A hook list changed in the commit that changes the memory: the framework runs the list as staged, so
    a new ``rev`` (whose manifest may point flowgit's hooks at ``true``) or a hook added after
    ``flowgit-check`` (which may rewrite the index the gate judged) would choose the code that judges the
    very commit that brings it. Changed alone, the list is judged before it runs anything."""
    return [f"changes {HOOK_CONFIG} in the commit that also changes the memory (its `rev`, the hooks it adds "
            "and their order would choose the code that judges the commit): commit the hook list on its own "
            "first (`pre-commit autoupdate` alone passes)"]


def hook_weakenings(old: bytes | None, new: bytes | None) -> list[str]:
    """Every way the hook list ``new`` runs flowgit's hooks less than ``old`` does, one sentence each."""
    before = flowgit_hooks(old)
    if not before:
        return []  # no flowgit hook was listed (or the base's list cannot be read): nothing to take away
    if new is None:
        return [f"deletes {HOOK_CONFIG}, which runs flowgit's hooks ({', '.join(sorted(before))})"]
    after = flowgit_hooks(new)
    if after is None:
        return [f"leaves {HOOK_CONFIG} unreadable as a hook list (YAML with `repos:` of `hooks:`), so which of "
                "flowgit's hooks it runs cannot be told"]
    problems = []
    for hook_id, runs in sorted(before.items()):
        now = after.get(hook_id, [])
        if not now:
            problems.append(f"takes the `{hook_id}` hook out of {HOOK_CONFIG}")
            continue
        lost = next((how for how in runs if how not in now), None)
        if lost is not None:
            was, is_now = dict(lost), dict(now[0])
            keys = sorted(k for k in was.keys() | is_now.keys() if was.get(k) != is_now.get(k))
            problems.append(f"changes how the `{hook_id}` hook runs in {HOOK_CONFIG} ({', '.join(keys)})")
    return problems


def flowgit_hooks(data: bytes | None) -> dict[str, list[tuple]] | None:
    """flowgit's hooks in a hook list, by id: what decides how each entry runs (an id listed twice runs
    twice). ``{}`` when there is no list or it lists none of flowgit's; None when it cannot be read."""
    if data is None:
        return {}
    if len(data) > MAX_BYTES:
        return None
    import yaml

    try:
        text = data.decode("utf-8")
        if "\ufeff" in text[1:]:
            return None  # libyaml skips a byte-order mark at any line's start, the pure loader only at the first
        if not _expands_within(text, MAX_NODES):
            return None  # aliases that expand past any real hook list (a "billion laughs" key): unreadable
        read = [_listed(yaml.load(text, Loader=loader)) for loader in _loaders()]  # noqa: S506 (safe loaders)
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError, ValueError, TypeError, _TooLarge):
        return None
    return read[0] if all(other == read[0] for other in read[1:]) else None  # readers that disagree: unreadable


def _expands_within(text: str, limit: int) -> bool:
    """Whether the YAML's node graph, every alias expanded, has at most ``limit`` nodes (each document).

    Counted on the composed graph, where an alias is the node it names: a size per node, worked out once, so
    ten nested aliases of nine cost ten sums, not 9^10 nodes. Loading (which compares keys by their ``repr``)
    would expand them all.
    """
    import yaml

    base = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
    sizes: dict[int, int] = {}

    def size(node) -> int:  # noqa: ANN001
        key = id(node)
        if key in sizes:
            return sizes[key]
        sizes[key] = limit + 1  # (a node that holds itself expands without end)
        total = 1
        if isinstance(node, yaml.MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            total += sum(size(v) for v in node.value)
        sizes[key] = total = min(total, limit + 1)
        return total

    return all(size(doc) <= limit for doc in yaml.compose_all(text, Loader=base) if doc is not None)


_LOADERS: list | None = None


def _loaders() -> list:
    """The framework's YAML loader (libyaml's, where PyYAML has it) and the pure one, each refusing a key
    given twice in one mapping (both loaders keep the last silently: `entry` written twice runs the second).

    The list is judged as the framework reads it; read by both, a file the
    two scanners read apart is unreadable, not judged by the reading that
    suits the change.
    """
    global _LOADERS
    if _LOADERS is None:
        import yaml

        bases = [getattr(yaml, "CSafeLoader", None), yaml.SafeLoader]
        _LOADERS = [_refusing_repeats(base) for base in bases if base is not None]
    return _LOADERS


def _refusing_repeats(base):
    import yaml

    class Loader(base):  # type: ignore[misc, valid-type]
        def construct_mapping(self, node, deep=False):  # type: ignore[override]
            keys = [self.construct_object(k, deep=deep) for k, _ in node.value]
            if len(set(map(repr, keys))) != len(keys):
                raise yaml.constructor.ConstructorError(None, None, "a key given twice", node.start_mark)
            return super().construct_mapping(node, deep=deep)

    return Loader


def _listed(doc: Any) -> dict[str, list[tuple]] | None:
    if not isinstance(doc, dict) or not isinstance(doc.get("repos"), list):
        return None
    budget = [MAX_NODES]
    found: dict[str, list[tuple]] = {}
    for repo in doc["repos"]:
        if not isinstance(repo, dict) or not isinstance(repo.get("hooks"), list):
            continue
        source = _bounded(repo.get("repo"), budget)
        for hook in repo["hooks"]:
            if not isinstance(hook, dict) or not isinstance(hook.get("id"), str):
                continue
            if not _is_flowgits(hook["id"], hook.get("entry"), source):
                continue
            how = {k: _bounded(hook[k], budget) for k in RUN_KEYS if k in hook}
            how["repo"] = source
            if "stages" in how:
                how["stages"] = _stage_names(how["stages"])
            elif "default_stages" in doc:  # a hook without stages runs at these
                how["stages"] = _stage_names(_bounded(doc["default_stages"], budget))
            found.setdefault(hook["id"], []).append(tuple(sorted(how.items())))
    return found


# The framework's older stage names, which it still reads as the new ones (`pre-commit migrate-config` renames them)
OLD_STAGE_NAMES = {"commit": "pre-commit", "merge-commit": "pre-merge-commit", "push": "pre-push"}


def _stage_names(stages: Any) -> Any:
    """A stage list as the framework reads it: old names as the new ones, order and repeats ignored."""
    if isinstance(stages, tuple) and stages[:1] == ("[]",):
        return ("stages", tuple(sorted({OLD_STAGE_NAMES.get(s, s) if isinstance(s, str) else repr(s)
                                        for s in stages[1]})))
    return stages


def _is_flowgits(hook_id: str, entry: Any, source: Any) -> bool:
    """Whether a listed hook is one of flowgit's: by its id (the ids flowgit publishes all start so), by the
    command it runs (a `repo: local` hook of any id running `flowgit …`), or by the repository it comes from."""
    if hook_id.startswith("flowgit"):
        return True
    if isinstance(entry, str) and entry.split()[:1] and entry.split()[0].rsplit("/", 1)[-1].startswith("flowgit"):
        return True
    return isinstance(source, str) and "flowgit" in source.rsplit("/", 1)[-1].lower()


def _bounded(value: Any, budget: list[int]) -> Any:
    """``value`` as a comparable, hashable tree, counting its nodes against ``budget``."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooLarge
    if isinstance(value, dict):
        return ("{}", tuple(sorted((str(k), _bounded(v, budget)) for k, v in value.items())))
    if isinstance(value, list):
        return ("[]", tuple(_bounded(v, budget) for v in value))
    return value
