"""G811: ``.gitattributes`` lines that change how git stores, converts or merges the memory.

The rules judge the blobs git records, so an attribute cannot smuggle a bad
edit past them; it can still take the memory away from every clone without
touching a judged file: ``working-tree-encoding`` checks it out in another
encoding (every session starts without it), a ``filter`` runs a program on
it at checkout and commit, and a ``merge`` other than flowgit's driver
(``union``, ``-merge`` as ``binary`` sets it, or the line removed) merges two
agents' wraps without the section semantics. So a change that makes git read
one of these for the continuity file or the store otherwise is refused.
Harmless attributes (``diff``, ``linguist-*``, ``export-ignore``, line
endings, which the gate already reads through) are not judged.

The attributes are asked of git itself (``git check-attr``), with the
``.gitattributes`` files of one side (the top one and one in every directory
on the way to a judged file) in a temporary index: the same answer every
clone gets, without parsing git's patterns here. git is asked in a private,
empty repository that borrows the real one's objects, so the clone's own
``info/attributes`` (which would override the committed files, and which a
server may fill from its default branch) plays no part; a global file is read
on both sides alike and cancels out: only what the change commits is judged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, Mapping

from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding

ATTRIBUTES = ".gitattributes"
DRIVER = "flowgit"
# attribute -> the value that keeps the memory as flowgit keeps it (None: no value at all)
JUDGED = {"merge": DRIVER, "filter": None, "working-tree-encoding": None}
WHY = {"merge": "two agents' wraps would merge without flowgit's driver (patterns by identity, the store kept "
                "whole)",
       "filter": "git would run a program on it at every checkout and commit, so what clones read is not what "
                 "is judged",
       "working-tree-encoding": "every clone checks it out re-encoded, so no session, wrap or status can read it"}


def attribute_files(paths: list[str]) -> list[str]:
    """The ``.gitattributes`` files that can give ``paths`` attributes: the top one and one in each directory on
    their way (deeper ones after, as git weighs them)."""
    dirs = dict.fromkeys([""])
    for path in paths:
        parts = path.split("/")[:-1]
        dirs.update(dict.fromkeys("/".join(parts[:n]) for n in range(1, len(parts) + 1)))
    return [f"{d}/{ATTRIBUTES}" if d else ATTRIBUTES for d in dirs]


def resolved(root: Path, files: Mapping[str, str | None], paths: list[str]) -> dict[str, dict[str, str]]:
    """{path: {judged attribute: value}} as git reads it with ``files`` (``.gitattributes`` path -> blob id, None
    where there is none) as the committed attributes files; an attribute not listed is unspecified."""
    import tempfile

    from flowgit.git import git

    with tempfile.TemporaryDirectory(prefix="flowgit-attr-") as tmp:
        oids = [oid for oid in files.values() if oid]
        env = _private_repository(root, Path(tmp), sha256=any(len(oid) == 64 for oid in oids))
        listed = "".join(f"100644 {oid}\t{name}\n" for name, oid in files.items() if oid)
        git(tmp, "update-index", "--index-info", input=listed.encode(), env=env)
        out = git(tmp, "check-attr", "--cached", "-z", *JUDGED, "--", *paths, env=env).split(b"\0")
    found: dict[str, dict[str, str]] = {path: {} for path in paths}
    for i in range(0, len(out) - 2, 3):
        path, name, value = (part.decode("utf-8", "surrogateescape") for part in out[i:i + 3])
        if value != "unspecified":
            found.setdefault(path, {})[name] = value
    return found


def _private_repository(root: Path, tmp: Path, *, sha256: bool) -> dict[str, str]:
    """The environment that points git at an empty repository in ``tmp`` reading ``root``'s objects (and,
    in a server's pre-receive, the quarantined ones git names in the environment, which it inherits)."""
    from flowgit.git import git_path

    objects = git_path(root, "objects")
    private = tmp / "private.git"
    (private / "refs").mkdir(parents=True)
    (private / "objects" / "info").mkdir(parents=True)
    (private / "HEAD").write_text("ref: refs/heads/main\n")
    (private / "objects" / "info" / "alternates").write_text(f"{objects}\n")
    if sha256:
        (private / "config").write_text("[core]\n\trepositoryformatversion = 1\n[extensions]\n"
                                        "\tobjectformat = sha256\n")
    return {"GIT_DIR": str(private), "GIT_INDEX_FILE": str(tmp / "index"), "GIT_WORK_TREE": str(tmp),
            "GIT_OBJECT_DIRECTORY": str(private / "objects"), "GIT_COMMON_DIR": str(private)}


def side_attributes(root: Path, files: Mapping[str, str | None], paths: list[str],
                    texts: Mapping[str, bytes] | None = None) -> dict:
    """What a Side carries for :func:`attribute_changes` (``Side.extra["attributes"]``): the judged attributes of
    ``paths`` and the text of the attributes files (for the line a finding names)."""
    return {"resolved": resolved(root, files, paths), "texts": dict(texts or {})}


def attribute_changes(ctx: CheckContext) -> Iterator[Finding]:
    """G811 where the change makes git read a judged attribute of the continuity file or the store otherwise,
    and not as flowgit keeps it. Asked only when the caller found the attributes files changed (both sides
    carry their reading)."""
    old, new = ctx.attributes or (None, None)
    if old is None or new is None:
        return
    for path in dict.fromkeys([ctx.path, ctx.store_path]):
        was, now = old["resolved"].get(path, {}), new["resolved"].get(path, {})
        for name, keeps in JUDGED.items():
            value = now.get(name)
            if value == was.get(name) or value == keeps or (value is None and keeps is None):
                continue
            where, line = _line_naming(new["texts"], name, path)
            shown = _shown(name, value)
            yield Finding("G811", "attributes", "error", where, line,
                          f"the attributes files now make git read {path} as `{shown}`: {WHY[name]}",
                          f"remove `{shown}` for {path} from {where}" + (
                              f" and keep `{path} merge={DRIVER}` (what `flowgit init` writes)" if name == "merge"
                              else "") + ", or make the change with FLOWGIT_OVERRIDE=\"why\"")


def _shown(name: str, value: str | None) -> str:
    if value is None or value == "unspecified":
        return f"{name} unspecified (no `{name}=` line)"
    return {"set": name, "unset": f"-{name}"}.get(value, f"{name}={value}")


def _line_naming(texts: Mapping[str, bytes], name: str, path: str) -> tuple[str, int | None]:
    """The changed attributes file and line most likely to have set ``name`` for ``path``: the last line naming
    it (``binary`` unsets merge) in the deepest file that has one, a line whose pattern matches ``path``
    first; the top file without a line when none does."""
    from fnmatch import fnmatchcase

    naming = []
    for file in reversed(list(texts)):
        lines = texts[file].decode("utf-8", "replace").splitlines()
        for n in range(len(lines), 0, -1):
            words = lines[n - 1].split()
            if len(words) > 1 and any(w.lstrip("-!").split("=")[0] == name or (name == "merge" and w == "binary")
                                      for w in words[1:]):
                pattern = words[0].lstrip("/")
                matches = fnmatchcase(path, pattern) or fnmatchcase(path.rsplit("/", 1)[-1], pattern)
                naming.append((not matches, file, n))
    if naming:
        _, file, n = min(naming, key=lambda found: found[0])
        return file, n
    return (next(reversed(list(texts)), ATTRIBUTES) if texts else ATTRIBUTES), None
