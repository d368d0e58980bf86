"""Trees that git would check out otherwise than a reader of their entries sees them.

git's own tools never write such a tree, but a pushed object can be made by
hand, and a server takes it unless ``receive.fsckObjects`` is set. Three forms
let a change of the memory pass an audit that reads trees as libgit2 does,
while every clone checks out something else:

- a name twice in one tree (libgit2 finds the first entry, a checkout writes
  the last);
- a name holding ``/`` (``.flow/episodes.jsonl`` as one entry beside the
  ``.flow`` directory: a checkout writes it over the file the directory holds);
- a mode git does not write (``120755``: git reads a link, libgit2 a file).

The audit reads each tree on the way to the files it judges once, by its id,
from the raw object, and reports what it finds there (A405).
"""

from __future__ import annotations

from collections import OrderedDict

# (with the two legacy spellings old tools wrote, which git and libgit2 both read as what they say)
CANONICAL_MODES = frozenset({b"100644", b"100755", b"120000", b"40000", b"160000", b"040000", b"100664"})
NAMES_GIT_REFUSES = frozenset({b"", b".", b"..", b".git"})


def tree_problems(raw: bytes, id_length: int) -> list[str]:
    """What in a tree object's raw content git would read otherwise than its entries say ([]: nothing)."""
    problems: list[str] = []
    seen: set[bytes] = set()
    at = 0
    while at < len(raw):
        space = raw.find(b" ", at)
        nul = raw.find(b"\x00", space + 1) if space != -1 else -1
        if space == -1 or nul == -1 or nul + 1 + id_length > len(raw):
            return problems + ["an entry that does not parse"]
        mode, name = raw[at:space], raw[space + 1:nul]
        shown = name.decode("utf-8", "backslashreplace")
        if mode not in CANONICAL_MODES:
            problems.append(f"`{shown}` has mode {mode.decode('ascii', 'backslashreplace')}, which git does not "
                            "write (git and the audit's reader read it as different kinds of entry)")
        if b"/" in name or name.lower() in NAMES_GIT_REFUSES:
            problems.append(f"an entry is named `{shown}` (a checkout writes it as a path of its own, over what "
                            "the directories hold)")
        if name in seen:
            problems.append(f"`{shown}` is listed twice (the audit reads the first entry, a checkout writes the "
                            "last)")
        seen.add(name)
        at = nul + 1 + id_length
    return problems


class TreeForms:
    """:func:`tree_problems` of the trees on the way to the judged paths, remembered by tree id."""

    def __init__(self, repo, keep: int = 64) -> None:
        self.repo = repo
        self._known: OrderedDict = OrderedDict()
        self._keep = keep

    def problems(self, tree, paths: tuple[str, ...]) -> tuple[str, ...]:
        """Every problem of the root tree and of each directory tree leading to ``paths``, each naming its
        directory."""
        out: list[str] = []
        for where, at in self._trees_on_the_way(tree, paths):
            out += [f"{where or 'the root tree'}: {problem}" for problem in self._of(at)]
        return tuple(dict.fromkeys(out))

    def _trees_on_the_way(self, tree, paths: tuple[str, ...]):
        yield "", tree
        seen = {""}
        for path in paths:
            parts = path.split("/")[:-1]
            at = tree
            for depth, part in enumerate(parts):
                try:
                    entry = at[part]
                except KeyError:
                    break
                if entry.type_str != "tree":
                    break
                at = self.repo[entry.id]
                where = "/".join(parts[:depth + 1])
                if where not in seen:
                    seen.add(where)
                    yield where, at

    def _of(self, tree) -> list[str]:
        found = self._known.get(tree.id)
        if found is None:
            found = self._known[tree.id] = tree_problems(tree.read_raw(), len(tree.id.raw))
            if len(self._known) > self._keep:
                self._known.popitem(last=False)
        return found
