"""Registering the merge driver in a repository: ``.gitattributes`` and the git config.

``.gitattributes`` is committed, so every clone routes the continuity file and
the store through ``merge=flowgit``; the driver command itself lives in each
clone's ``.git/config`` (git never takes commands from a cloned repository),
which is why ``flowgit init`` is run once per clone and is safe to repeat.
"""

from __future__ import annotations

import re

import shlex
import sys
from pathlib import Path

from flowgit.fsio import atomic_write
from flowgit.git import git

DRIVER = "flowgit"
DRIVER_NAME = "flowgit: continuity file and store merged by meaning"


def driver_command() -> str:
    """The driver with this interpreter baked in, so it runs outside the virtualenv too.

    git runs the command through the shell. Where the interpreter is gone (the virtualenv rebuilt elsewhere,
    the checkout moved), a bare command would fail before it starts and git would leave ours whole, without
    markers, for a `git add` to take silently; so the command says why, falls back to git's own text merge
    (markers where the sides differ) and reports a conflict."""
    py = shlex.quote(sys.executable)
    said = shlex.quote(f"flowgit merge-driver: cannot start: {sys.executable} is gone; merged as text (markers "
                       "where the sides differ) and left conflicted: run `flowgit init` in this clone")
    return (f"if [ -x {py} ]; then exec {py} -m flowgit.commands.merge_driver %O %A %B %P; fi; "
            f"echo {said} >&2; git merge-file -L ours -L base -L theirs %A %O %B; exit 1")


def read_attributes(root: Path) -> str:
    """The top ``.gitattributes`` as text ('' when there is none), refused with its line when it is not UTF-8
    text, refused when it is not a regular file (a FIFO would hang the read), and refused when it is a
    symbolic link (git does not follow one there)."""
    from flowgit.errors import FlowgitError
    from flowgit.fsio import read_text

    target = root / ".gitattributes"
    if target.is_symlink():  # git does not follow it: a driver set up through it would never be used
        raise FlowgitError("is a symbolic link, which git does not read as an attributes file: the merge driver "
                           "set up in it would never be used; nothing was written", path=target,
                           fix="replace the link with the file itself (`cp --remove-destination \"$(readlink "
                               ".gitattributes)\" .gitattributes`), then run it again")
    if not target.exists():
        return ""
    return read_text(target)


def ensure_attributes(root: Path, paths: list[str]) -> list[str]:
    """``<path> merge=flowgit`` for each path, anchored (:func:`anchored`; an old ``merge=union`` line for it, or
    one an older init wrote unanchored, is replaced); returns what changed.
    Every other line is kept as it was, its line ending (CRLF) included."""
    from flowgit.continuity.document import split_lines

    lines = split_lines(read_attributes(root))
    ending = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    changed: list[str] = []
    for path in paths:
        rule = f"{_quoted(attribute_pattern(path))} merge={DRIVER}"
        # (an older init wrote the path unanchored, or its glob characters unescaped)
        written = (_quoted(path), _quoted(anchored(path)), _quoted(attribute_pattern(path)))
        hits = [i for i, ln in enumerate(lines) if _split_rule(ln)[0] in written and "merge=" in ln]
        if any(_split_rule(lines[i]) == _split_rule(rule) for i in hits):
            continue
        if hits:
            lines[hits[0]] = rule + (ending if lines[hits[0]].endswith("\n") else "")
            for i in reversed(hits[1:]):
                del lines[i]
        else:
            if lines and not lines[-1].endswith("\n"):
                lines[-1] += ending
            lines.append(rule + ending)
        changed.append(path)
    if changed:
        text = "".join(lines)
        atomic_write(root / ".gitattributes", text if text.endswith("\n") else text + ending)
    return changed


def shadowed_attributes(root: Path, paths: list[str], *, overriding_only: bool = False) -> list[str]:
    """A warning per path whose merge attribute, as git reads it (``git check-attr``), is not flowgit's: a
    deeper ``.gitattributes`` (``*.jsonl binary``), ``info/attributes`` or an edited line overrides the driver,
    and a merge of it would conflict line by line (or union the lines) instead. ``overriding_only``: only an
    attribute that names another merge (``flowgit status``), not one left unspecified (no line: a project
    whose attributes flowgit never wrote)."""
    out = git(root, "check-attr", "-z", "merge", "--", *paths, check=False).split(b"\0")
    found = {out[i].decode("utf-8", "surrogateescape"): out[i + 2].decode("utf-8", "replace")
             for i in range(0, len(out) - 2, 3)}
    read = {"unset": "unset (`-merge`, as `binary` sets it)", "unspecified": "unspecified",
            "set": "set (git's own line merge)"}
    skipped = {DRIVER, "unspecified"} if overriding_only else {DRIVER}
    return [f"git reads the merge attribute of {path} as {read.get(found.get(path, 'unspecified'), found.get(path))}"
            f", not `merge={DRIVER}`: a .gitattributes line (a deeper file's, an edited one, or "
            ".git/info/attributes) overrides flowgit's, so two clones' wraps would not merge through its driver; "
            f"put back `merge={DRIVER}` on the line that matches {path} (`git check-attr merge -- "
            f"{path}` shows what git reads)"
            for path in paths if found.get(path, "unspecified") not in skipped]


def _split_rule(line: str) -> tuple[str, list[str]]:
    """(the pattern as written, quotes kept; the attributes) of a ``.gitattributes`` line: a pattern with a
    space in it is written in quotes (`"team notes/our memory.md" merge=flowgit`), one token to git."""
    text = line.strip()
    if text.startswith('"'):
        end = 1
        while end < len(text) and text[end] != '"':
            end += 2 if text[end] == "\\" else 1
        return text[:end + 1], text[end + 1:].split()
    words = text.split()
    return (words[0] if words else ""), words[1:]


def anchored(path: str) -> str:
    """``path`` as a ``.gitattributes`` pattern that matches it alone: a pattern without a slash matches that
    name in every directory (a package's own `pkg/CONTINUITY.md` would go through the driver too), so a path
    at the top gets a leading one; a path with a slash is read from the top already."""
    return path if "/" in path else "/" + path


# What git's patterns read as a glob, and what opens a line as a comment or a negation: escaped, the file's
# name is matched letter for letter (`mem[1].md` would otherwise name `mem1.md`)
_GLOB_RE = re.compile(r"[\\*?\[]|^[#!]")


def attribute_pattern(path: str) -> str:
    """``path`` as the ``.gitattributes`` pattern that matches that one file: :func:`anchored`, with git's glob
    characters escaped."""
    return _GLOB_RE.sub(lambda m: "\\" + m.group(), anchored(path))


def _quoted(pattern: str) -> str:
    """A pattern with a space in it, in quotes (git reads the quoted text as C does: a backslash doubled)."""
    if not any(c.isspace() for c in pattern):
        return pattern
    return '"' + pattern.replace("\\", "\\\\").replace('"', '\\"') + '"'


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


def driver_problem(root: Path) -> str | None:
    """Why the registered driver cannot start (its program is gone), or None where it can (or none is set).

    git runs whatever the config says; a program that no longer exists fails before the driver can leave a
    visible conflict, so a sync refuses to merge through it."""
    import os
    import re
    import shutil

    command = git(root, "config", "--get", f"merge.{DRIVER}.driver", check=False).decode().strip()
    if not command:
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return f"the registered merge driver `{command}` cannot be read as a command"
    found = re.search(r"\bexec\b", command)
    program = words[words.index("exec") + 1] if found and "exec" in words[:-1] else (words[0] if words else "")
    if not program:
        return None
    if os.sep in program:
        ok = os.path.isfile(program) and os.access(program, os.X_OK)
    else:
        ok = shutil.which(program) is not None
    return None if ok else (f"the registered merge driver's program `{program}` does not exist (its virtualenv "
                            "rebuilt or moved?): git could not merge the continuity file and the store")
