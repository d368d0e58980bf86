"""``flowgit setup claude``: the skills, slash commands and hooks Claude Code loads, installed and removed exactly.

What is written (under ``<project>/.claude`` or the user's ``$CLAUDE_CONFIG_DIR``/``~/.claude``):

- ``skills/<name>/SKILL.md`` for the wrap and ascend skills (frontmatter ``name`` and ``description``);
- ``commands/wrap.md`` and ``commands/ascend.md``: the ``/wrap`` and ``/ascend`` slash commands;
- in ``settings.json``: a ``SessionStart`` hook running ``flowgit prime --hook`` and ``PreCompact``/``Stop``
  hooks running ``flowgit remind --hook``, merged into whatever hooks are there;
- ``.flowgit-setup.json``: the manifest of exactly what was added, so ``--remove`` can undo it.

Undoing is exact: when the settings file is still as setup left it, its original bytes come back
(or it is deleted if setup created it); when someone edited it since, only flowgit's hook entries are
taken out. A file flowgit did not write is never overwritten, and a file it wrote that was edited
since is kept on removal.
"""

from __future__ import annotations

import base64
import copy
import difflib
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from flowgit.errors import FlowgitError
from flowgit.fsio import atomic_write
from flowgit.jsonkeys import RepeatedKey, unique_object

MANIFEST = ".flowgit-setup.json"
FILES = {  # path under the .claude directory -> shipped template
    "skills/flowgit-wrap/SKILL.md": "claude/skills/flowgit-wrap/SKILL.md",
    "skills/flowgit-ascend/SKILL.md": "claude/skills/flowgit-ascend/SKILL.md",
    "commands/wrap.md": "claude/commands/wrap.md",
    "commands/ascend.md": "claude/commands/ascend.md",
}
HOOK_TIMEOUT = 30  # seconds: prime reads git and the store; far under this on any real repository


def hook_commands(exe: str) -> list[tuple[str, str]]:
    """(event, command) for every hook flowgit installs; ``exe`` is how Claude Code finds flowgit."""
    return [("SessionStart", f"{exe} prime --hook"), ("PreCompact", f"{exe} remind --hook"),
            ("Stop", f"{exe} remind --hook")]


def claude_dir(scope: str, project_root: Path | None) -> Path:
    """Where Claude Code looks: ``<project>/.claude``, or ``$CLAUDE_CONFIG_DIR`` / ``~/.claude`` for the user."""
    if scope == "user":
        configured = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
        return Path(configured).expanduser() if configured else Path.home() / ".claude"
    if project_root is None:
        from flowgit.git import inside_git_dir, require_repo

        bare = inside_git_dir(Path.cwd())
        if bare is not None:  # a bare repository has no project tree to set up: say so, as every command does
            require_repo(bare)
        raise FlowgitError("not inside a git repository", fix="run it in your project, or use --user")
    return project_root / ".claude"


@dataclass
class Change:
    path: str
    action: str  # create | update | delete | restore | unchanged | kept
    diff: str = ""
    note: str = ""

    def to_dict(self) -> dict:
        return {"path": self.path, "action": self.action, "diff": self.diff, "note": self.note}


@dataclass
class SetupReport:
    scope: str
    base: str
    dry_run: bool
    removed: bool = False
    changes: list[Change] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # a hook that could not run: the real run writes nothing
    advice: list[str] = field(default_factory=list)  # said, never stopping anything (a path a teammate lacks)

    @property
    def changed(self) -> bool:
        return any(c.action not in ("unchanged", "kept") for c in self.changes)

    def to_dict(self) -> dict:
        return {"scope": self.scope, "claude_dir": self.base, "dry_run": self.dry_run, "removed": self.removed,
                "changed": self.changed, "changes": [c.to_dict() for c in self.changes], "warnings": self.warnings,
                "advice": self.advice}


def _sha(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest() if data is not None else None


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise FlowgitError("is a directory, not a file", path=path) from None
    except NotADirectoryError:
        blocking = next((p for p in reversed(path.parents) if p.exists() and not p.is_dir()), path.parent)
        raise FlowgitError(f"is a file where setup needs a directory (for {path.name}); nothing was written",
                           path=blocking, fix="move the file away (or point setup at another directory), "
                                              "then run setup again") from None


def _diff(rel: str, old: bytes | None, new: bytes | None) -> str:
    a = (old or b"").decode("utf-8", "replace").splitlines(keepends=True)
    b = (new or b"").decode("utf-8", "replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, fromfile=f"a/{rel}" if old is not None else "/dev/null",
                                        tofile=f"b/{rel}" if new is not None else "/dev/null"))


def _deep_line(data: bytes, depth: int = 100) -> int | None:
    """The line where the JSON's brackets first nest ``depth`` deep (outside strings): where a settings file
    that only the parser's stack refused goes wrong. Asked only on that error path."""
    level, line, in_string, escaped = 0, 1, False, False
    for byte in data:
        if byte == 0x0A:
            line += 1
        elif in_string:
            escaped, in_string = (not escaped and byte == 0x5C), in_string and (escaped or byte != 0x22)
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            level += 1
            if level >= depth:
                return line
        elif byte in (0x5D, 0x7D):
            level -= 1
    return None


class _Unfaithful(ValueError):
    """A settings value that reading and writing back would change: setup refuses rather than alter it."""

    def __init__(self, what: str, needle: str, fix: str, occurrence: int = 1) -> None:
        super().__init__(what)
        self.what, self.needle, self.fix, self.occurrence = what, needle, fix, occurrence

    def line(self, text: str) -> int | None:
        """The line of the ``occurrence``-th place ``needle`` (a regular expression) matches."""
        found = list(re.finditer(self.needle, text))
        if len(found) < self.occurrence:
            return None
        return text.count("\n", 0, found[self.occurrence - 1].start()) + 1


def _finite(number: str) -> float:
    """A JSON number as a float, refusing one beyond a double (it would be written back as ``Infinity``)."""
    value = float(number)
    if value in (float("inf"), float("-inf")):
        raise _Unfaithful(f"holds the number {number}, too large for any JSON reader to keep",
                          re.escape(number), "write a number within ±1.7e308, then run setup again")
    return value


def _no_constant(name: str) -> float:
    """``NaN``/``Infinity``: Python's reader takes them, JSON has no such values."""
    raise _Unfaithful(f"holds {name}, which is not JSON", rf"(?<![\w\"]){name}",
                      "write a number or null instead, then run setup again")


# An escaped high surrogate not followed by an escaped low one, or a low one not after a high one.
_LONE_SURROGATE = re.compile(r"(?<!\\)(?:\\\\)*\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
                             r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})(?<!\\)(?:\\\\)*\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def parse_settings(path: Path, data: bytes | None) -> dict:
    """The settings object, refusing what Claude Code would not read either (with file and line)."""
    if data is None or not data.strip():
        return {}
    try:
        text = data.decode("utf-8")
        value = json.loads(text, object_pairs_hook=unique_object, parse_float=_finite, parse_constant=_no_constant)
    except RepeatedKey as exc:
        shown = json.dumps(exc.key, ensure_ascii=False)
        twice = _Unfaithful(f"gives the key {shown} twice in one object", re.escape(shown) + r"\s*:",
                            "keep one of the two (the second is the one a reader takes), then run setup again",
                            occurrence=2)
        raise FlowgitError(f"{twice.what}: setup would write it back altered", path=path, line=twice.line(text),
                           fix=twice.fix) from None
    except _Unfaithful as exc:
        raise FlowgitError(f"{exc.what}: setup would write it back altered", path=path, line=exc.line(text),
                           fix=exc.fix) from None
    except UnicodeDecodeError:
        raise FlowgitError("is not UTF-8 text", path=path, fix="save it as UTF-8 JSON") from None
    except json.JSONDecodeError as exc:
        raise FlowgitError(f"is not valid JSON: {exc.msg} (column {exc.colno})", path=path, line=exc.lineno,
                           fix="repair the JSON, then run setup again") from None
    except RecursionError:
        raise FlowgitError("is nested too deeply to read as settings", path=path, line=_deep_line(data),
                           fix="repair the JSON (settings are a few levels deep), then run setup again") from None
    if not isinstance(value, dict):
        raise FlowgitError("must hold a JSON object", path=path, line=1, fix='start it with "{"')
    lone = _LONE_SURROGATE.search(text)
    if lone is not None:
        raise FlowgitError(f"holds {lone.group(0)}, half of a surrogate pair: setup would write it back altered",
                           path=path, line=text.count("\n", 0, lone.start()) + 1,
                           fix="write the character itself, or both halves of its pair, then run setup again")
    hooks = value.get("hooks", {})
    if not isinstance(hooks, dict) or not all(isinstance(v, list) for v in hooks.values()):
        raise FlowgitError('"hooks" must map each event name to a list of matcher groups', path=path,
                           fix='e.g. "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "…"}]}]}')
    return value


def _indent(data: bytes | None) -> int | str:
    """Keep the file's own indentation when re-writing it (two spaces for a new file)."""
    m = re.search(rb"\n([ \t]+)\S", data or b"")
    if not m:
        return 2
    return "\t" if m.group(1).startswith(b"\t") else len(m.group(1))


def _serialise(value: dict, like: bytes | None) -> bytes:
    return (json.dumps(value, indent=_indent(like), ensure_ascii=False) + "\n").encode("utf-8")


def _has_hook(settings: dict, event: str, command: str) -> bool:
    return any(isinstance(h, dict) and h.get("command") == command
               for group in settings.get("hooks", {}).get(event, []) if isinstance(group, dict)
               for h in group.get("hooks", []) or [])


def add_hooks(settings: dict, wanted: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Append each missing hook as its own matcher group; returns those added."""
    added = []
    for event, command in wanted:
        if _has_hook(settings, event, command):
            continue
        hook = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT}
        settings.setdefault("hooks", {}).setdefault(event, []).append({"hooks": [hook]})
        added.append((event, command))
    return added


def drop_hooks(settings: dict, ours: list[tuple[str, str]], made: dict | None = None) -> None:
    """Take out exactly flowgit's hook entries, and any group left empty by that; an event list or the
    ``hooks`` key left empty goes too when setup made it (``made``, as :func:`structure_made` recorded it;
    None for a manifest older than that record: every one left empty). A list the user kept empty stays."""
    hooks = settings.get("hooks", {})
    made_events = None if made is None else set(made.get("events", []))
    for event, command in ours:
        groups = hooks.get(event, [])
        for group in list(groups):
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            kept = [h for h in group["hooks"] if not (isinstance(h, dict) and h.get("command") == command)]
            if len(kept) != len(group["hooks"]):
                if kept:
                    group["hooks"] = kept
                else:
                    groups.remove(group)
        if event in hooks and not hooks[event] and (made_events is None or event in made_events):
            del hooks[event]
    if "hooks" in settings and not settings["hooks"] and (made is None or made.get("hooks")):
        del settings["hooks"]


def structure_made(before: dict, after: dict, made: dict | None) -> dict:
    """What of the ``hooks`` structure adding flowgit's hooks created (the ``hooks`` key, event lists),
    added to what an earlier setup recorded: removal takes out those when empty, and nothing the user had."""
    had = before.get("hooks") if isinstance(before.get("hooks"), dict) else None
    events = [event for event in after.get("hooks", {}) if had is None or event not in had]
    earlier = made or {"hooks": False, "events": []}
    return {"hooks": bool(earlier.get("hooks")) or had is None,
            "events": sorted(set(earlier.get("events", [])) | set(events))}


def _load_manifest(path: Path) -> dict | None:
    """The manifest of what setup added, held to what setup can add.

    It lives in ``.claude/``, which a project may commit: a manifest someone
    else wrote must not make ``--remove`` delete a file outside what setup
    writes (``../../x``, an absolute path), take down a directory it did not
    make, or drop a hook of the user's own. Anything else is refused, whole.
    """
    data = _read(path)
    if data is None:
        return None
    try:
        value = json.loads(data)
        assert isinstance(value, dict) and value.get("version") == 1
    except (ValueError, AssertionError, RecursionError):
        raise FlowgitError("is not a flowgit setup manifest", path=path,
                           fix="restore it from version control, or delete it and remove the hooks by hand") from None
    problem = _manifest_problem(value, path.parent.name)
    if problem:
        raise FlowgitError(f"names what flowgit setup never adds ({problem}): nothing was changed", path=path,
                           fix="delete it (and remove flowgit's files and hooks by hand), then run setup again")
    return value


def _manifest_problem(value: dict, base_name: str) -> str | None:
    """What in a manifest setup could not have written (None: nothing)."""
    value.setdefault("files", {})
    value.setdefault("dirs", [])
    value.setdefault("hooks", [])
    files, dirs, hooks = value["files"], value["dirs"], value["hooks"]
    if not isinstance(files, dict) or not isinstance(dirs, list) or not isinstance(hooks, list):
        return "`files`, `dirs` or `hooks` of the wrong kind"
    for rel in files:
        if rel not in FILES:
            return f"the file {rel!r}"
    made = {base_name} | {f"{base_name}/{parent}" for rel in FILES for parent in _parents(rel)}
    for d in dirs:
        if d not in made:
            return f"the directory {d!r}"
    for pair in hooks:
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) for x in pair)
                and _is_flowgit_hook(pair[0], pair[1])):
            return f"the hook {pair!r}"
    return _made_problem(value.get("made")) or _settings_record_problem(value.setdefault("settings", None))


def _made_problem(made: object) -> str | None:
    """What in the record of the structure setup made it could not have written (None: nothing)."""
    if made is None:
        return None
    ours = {event for event, _ in hook_commands("flowgit")}
    if not (isinstance(made, dict) and isinstance(made.get("hooks"), bool) and isinstance(made.get("events"), list)
            and all(isinstance(e, str) and e in ours for e in made["events"])):
        return f"a `made` record {made!r}"
    return None


def _settings_record_problem(record: object) -> str | None:
    """What in the manifest's record of settings.json setup could not have written (None: nothing): it
    decides what ``--remove`` writes back, so it is held to the shape setup gives it."""
    if record is None:
        return None
    if not isinstance(record, dict):
        return "a `settings` record that is not an object"
    kinds = {"existed": bool, "restore": bool, "original": (str, type(None)), "written_sha": (str, type(None))}
    for key, kind in kinds.items():
        if key in record and not isinstance(record[key], kind):
            return f"a `settings` record whose `{key}` is {type(record[key]).__name__}"
    original = record.get("original")
    if original is not None:
        try:
            base64.b64decode(original, validate=True)
        except ValueError:
            return "a `settings` record whose `original` is not base64"
    return None


def _parents(rel: str) -> list[str]:
    """``a/b/c.md`` -> ``["a", "a/b"]``: the directories writing it may create."""
    parts = rel.split("/")[:-1]
    return ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]


def _is_flowgit_hook(event: str, command: str) -> bool:
    """Whether (event, command) is one of the hooks setup installs, with any executable (``--exe``)."""
    return any(event == e and command.endswith(" " + tail) and command[:-len(tail) - 1].strip()
               for e, tail in (("SessionStart", "prime --hook"), ("PreCompact", "remind --hook"),
                               ("Stop", "remind --hook")))


def _missing_dirs(base: Path, rels: list[str]) -> list[str]:
    """Directories (relative to ``base``'s parent) that writing ``rels`` would create, parents first."""
    out: list[str] = []
    for rel in rels:
        path = (base / rel).parent
        chain = []
        while not path.exists() and path != path.parent:
            chain.append(path)
            path = path.parent
        for p in reversed(chain):
            name = str(p.relative_to(base.parent))
            if name not in out:
                out.append(name)
    return out


def unreachable(exe: str, explicit: bool = True) -> list[str]:
    """Why hooks that run ``exe`` by name would not find it ([] when they would): the agent runs them with
    its own PATH, and a flowgit installed in a project's virtualenv is not on it. The default ``flowgit``
    found in a virtualenv this shell activated is that case too (``explicit``: the user named it)."""
    import shlex
    import shutil
    import sys

    try:
        program = shlex.split(exe)[0]
    except (ValueError, IndexError):
        return [f"`--exe {exe}` is not a command line"]
    here = Path(sys.executable).parent / "flowgit"
    fix = f"--exe {shlex.quote(str(here))}" if here.exists() else "--exe /path/to/flowgit"
    if "/" in program and not Path(program).is_absolute():  # the agent runs hooks from another directory
        return [f"`{program}` is a relative path, found from here only: the hooks run in other directories "
                f"and would not find it; give its full path ({fix})"]
    found = shutil.which(program)
    if found is None:
        return [f"`{program}` is not on PATH, so the hooks written would not run: give its full path ({fix})"]
    venv = Path(found).parent.parent
    if not explicit and "/" not in program and (venv / "pyvenv.cfg").is_file():
        return [f"`{program}` is found in the virtualenv {venv}, on this shell's PATH (activated here): the agent "
                f"runs hooks with its own PATH, which holds it only when the agent starts from an activated "
                f"shell; give its full path (--exe {shlex.quote(found)}), or `--exe {program}` to keep the name"]
    return _not_flowgit(exe, fix)


def _not_flowgit(exe: str, fix: str) -> list[str]:
    """Why ``exe`` is not flowgit ([] when ``exe --version`` says it is): a hook running another program
    (`--exe /usr/bin/true`) would prime no session and remind nobody, and say nothing about it."""
    import shlex
    import subprocess

    try:
        said = subprocess.run([*shlex.split(exe), "--version"], capture_output=True, text=True, timeout=30,
                              errors="replace").stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return [f"`{exe} --version` could not run ({exc}): the hooks written would not run: {fix}"]
    if said.strip().lower().startswith("flowgit"):
        return []
    return [f"`{exe}` is not flowgit (`{exe} --version` said {said.strip()[:60]!r}): the hooks would run another "
            f"program; give flowgit's path ({fix})"]


def command_of(exe: str) -> str:
    """``--exe`` as the hooks' command line: a path to a file as it stands, quoted (`…/my venv/bin/flowgit`
    is one program, not `…/my` with an argument); anything else is a command line already."""
    import shlex

    return shlex.quote(exe) if exe.strip() == exe and Path(exe).is_file() else exe


def render(name: str, exe: str) -> bytes:
    """The shipped skill or command ``name`` as installed: every ``flowgit COMMAND`` its body tells the agent to
    run, and the ``Bash(flowgit:*)`` its frontmatter allows, name ``exe``, the program the hooks run (the reason
    for ``--exe`` is a flowgit the agent's PATH does not hold, so a bare ``flowgit`` there would not be found).
    With the default ``flowgit`` it is the template byte for byte. The manifest records the hash of this text,
    so ``--remove`` and a second setup judge the files as they were written."""
    from flowgit.resources import template

    text = template(name)
    if exe != "flowgit":
        head, body = _frontmatter(text)
        body = _command_pattern().sub(lambda _: exe, body)
        text = head.replace("Bash(flowgit:*)", f"Bash({exe}:*)") + body
    return text.encode("utf-8")


def _frontmatter(text: str) -> tuple[str, str]:
    """``text`` split after its ``---`` frontmatter (its description is prose, left as written)."""
    end = text.find("\n---\n", 4) if text.startswith("---\n") else -1
    return (text[:end + 5], text[end + 5:]) if end >= 0 else ("", text)


def _command_pattern() -> re.Pattern[str]:
    """``flowgit`` where it starts a command line (followed by one of its commands), not in prose ("flowgit
    performs") or a name (``flowgit-wrap``, ``…/bin/flowgit``)."""
    from flowgit.cli import cli

    names = sorted(cli.commands, key=len, reverse=True)
    return re.compile(r"(?<![\w./-])flowgit(?= (?:%s)\b)" % "|".join(map(re.escape, names)))


def setup(base: Path, scope: str, exe: str, *, dry_run: bool = False, explicit_exe: bool = True) -> SetupReport:
    """Install (or bring up to date) flowgit's skills, commands and hooks under ``base``."""
    exe = command_of(exe)

    report = SetupReport(scope, str(base), dry_run)
    manifest_path, settings_path = base / MANIFEST, base / "settings.json"
    manifest = _load_manifest(manifest_path) or {"version": 1, "settings": None, "hooks": [], "files": {},
                                                 "dirs": []}
    refuse_links(base, [*FILES, "settings.json", MANIFEST], scope)
    writes: dict[Path, bytes] = {}
    for rel, name in FILES.items():
        want = render(name, exe)
        have = _read(base / rel)
        if have == want:
            report.changes.append(Change(rel, "unchanged"))
            continue
        if have is not None and _sha(have) != manifest["files"].get(rel):
            raise FlowgitError("exists and was not written by flowgit (or was edited since)", path=base / rel,
                               fix="move it away (or merge your edits elsewhere), then run setup again")
        report.changes.append(Change(rel, "create" if have is None else "update", _diff(rel, have, want)))
        writes[base / rel] = want
        manifest["files"][rel] = _sha(want)
    report.warnings += unreachable(exe, explicit_exe)
    if report.warnings and not dry_run:  # hooks that cannot run would fail at every session start: write none
        raise refusal(report)
    report.advice += machine_path_in_shared_settings(exe, scope)
    before = _read(settings_path)
    settings = parse_settings(settings_path, before)
    wanted = hook_commands(exe)
    replaced = [tuple(pair) for pair in manifest["hooks"] if tuple(pair) not in wanted]
    recorded = manifest.get("made") is not None or not manifest["hooks"]  # (an older setup's manifest: no record)
    if replaced:  # flowgit's own hooks of an earlier setup with another --exe: replaced, never doubled
        drop_hooks(settings, replaced, manifest.get("made"))
        manifest["hooks"] = [pair for pair in manifest["hooks"] if tuple(pair) in wanted]
    unadded = copy.deepcopy(settings)
    added = add_hooks(settings, wanted)
    if added or replaced:
        after = _serialise(settings, before)
        report.changes.append(Change("settings.json", "create" if before is None else "update",
                                     _diff("settings.json", before, after)))
        writes[settings_path] = after
        record = manifest["settings"]
        if record is None:
            record = manifest["settings"] = {"existed": before is not None, "original": (
                base64.b64encode(before).decode() if before is not None else None)}
        elif _sha(before) != record.get("written_sha") and before != _original(record):  # (a setup killed
            # after its record and before the settings leaves them as they were: still the file to come back)
            # edited (or deleted) since setup last wrote it: the bytes from before the first setup are no
            # longer the file to come back; removal takes out flowgit's hooks only, keeping what the user wrote
            record["restore"] = False
            if before is None:
                record["existed"] = False
        record["written_sha"] = _sha(after)
        manifest["hooks"] += [list(pair) for pair in added if list(pair) not in manifest["hooks"]]
        if added and recorded:
            manifest["made"] = structure_made(unadded, settings, manifest.get("made"))
    else:
        report.changes.append(Change("settings.json", "unchanged"))
    if not writes:
        return report
    new_dirs = _missing_dirs(base, [str(p.relative_to(base)) for p in writes] + [MANIFEST])
    manifest["dirs"] += [d for d in new_dirs if d not in manifest["dirs"]]
    if not dry_run:
        _refuse_read_only(writes)
        _sweep_temporaries(base)
        _write_all(base, new_dirs, {manifest_path: (json.dumps(manifest, indent=2) + "\n").encode(), **writes})
    return report


def refusal(report: SetupReport) -> FlowgitError:
    """Why the real run writes nothing (its first warning: hooks that could not run), as it refuses (exit 2);
    a dry run reports the same error beside what it would have written."""
    return FlowgitError(report.warnings[0] + "; nothing was written", path="--exe",  # (what to change)
                        fix="run it again with the full path, or with flowgit on the PATH the agent runs "
                            "hooks with (`--dry-run` shows what would be written)")


def machine_path_in_shared_settings(exe: str, scope: str) -> list[str]:
    """Advice when a project's settings.json, a file a team commits, would name a path on this machine: a
    teammate's clone runs the hooks with a path it does not have (each session start then fails)."""
    import shlex

    if scope != "project":
        return []
    try:
        program = shlex.split(exe)[0]
    except (ValueError, IndexError):
        program = exe
    if os.sep not in program and "/" not in program:
        return []  # found on each machine's PATH
    return [f"the hooks in settings.json run `{program}`, a path on this machine, and a project's settings.json "
            "is shared through git: a teammate's clone would run a path it does not have; put flowgit on the "
            "PATH the agent runs hooks with and run setup again without --exe, or use --user for this machine only"]


def refuse_links(base: Path, rels: list[str], scope: str) -> None:
    """Refuse, before anything is written, a symbolic link on the way to a file setup writes, when it names
    nothing (setup would create its target, and the directories to it, wherever it points) or, in a project,
    leads out of the project (a cloned project's link would have setup merge hooks into another settings file,
    and copy that file's bytes into the record it asks to commit). A link in the user's own directory that
    names a file there is the user's choice, and is written through."""
    project = base.parent.resolve()
    for rel in rels:
        path = base / rel
        on_the_way = [path, *(p for p in path.parents if p == base or base in p.parents)]
        for link in (p for p in on_the_way if p.is_symlink()):
            target = link.resolve()
            if not link.exists():
                why = f"is a symbolic link to {target}, which does not exist: setup would create it there"
            elif scope != "user" and target != project and project not in target.parents:
                why = f"is a symbolic link out of the project, to {target}: setup would write there"
            else:
                continue
            raise FlowgitError(f"{why}; nothing was written", path=link,
                               fix="remove the link (or replace it with the file or directory itself), then run "
                                   "setup again")


def _sweep_temporaries(base: Path) -> None:
    """Remove what a setup killed mid-write left of its own files: ``.<name>.<random>.tmp`` beside each one
    it writes (a file of that shape is written only by flowgit's atomic writes)."""
    import glob

    for rel in (*FILES, "settings.json", MANIFEST):
        target = base / rel
        for left in target.parent.glob(f".{glob.escape(target.name)}.*.tmp"):
            if left.is_file() and not left.is_symlink():
                left.unlink(missing_ok=True)


def _original(record: dict) -> bytes | None:
    """The settings file's bytes from before the first setup, as its record keeps them (None: there was none)."""
    kept = record.get("original")
    return base64.b64decode(kept) if kept else (b"" if record.get("existed") else None)


def _write_all(base: Path, new_dirs: list[str], writes: dict[Path, bytes]) -> None:
    """Write every file (the record first) or none: a write that fails (a full disk, a file-size limit) puts
    back each file written before it and removes the directories made for them, and a kill between two writes
    leaves a record of everything it was about to write, so no hook or skill is left that no record knows of
    (a later setup would call it set up, and ``--remove`` would leave it)."""
    made: list[Path] = []
    done: list[tuple[Path, bytes | None]] = []  # (path, what it held before: None for a file it created)
    current = base
    try:
        for d in new_dirs:
            current = base.parent / d
            current.mkdir(exist_ok=True)
            made.append(current)
        for current, data in writes.items():
            before = _read(current)
            atomic_write(current, data)
            done.append((current, before))
    except (OSError, FlowgitError) as exc:
        left = _put_back(done, made)
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        failed = current
        raise FlowgitError(f"could not be written ({why}); " + (
            "everything setup had written was put back, nothing changed" if not left else
            "and these could not be put back: " + ", ".join(map(str, left))), path=failed,
            fix="free space (or raise the file-size limit), then run setup again") from None


def _put_back(done: list[tuple[Path, bytes | None]], made: list[Path]) -> list[Path]:
    """Undo :func:`_write_all`'s writes, newest first; returns the paths it could not put back."""
    left = []
    for path, before in reversed(done):
        try:
            if before is None:
                path.unlink(missing_ok=True)
            else:
                atomic_write(path, before)
        except (OSError, FlowgitError):
            left.append(path)
    for d in reversed(made):
        try:
            d.rmdir()
        except OSError:
            pass  # not empty: something else lives there
    return left


def _refuse_read_only(paths) -> None:
    """A file the user made read-only is not replaced: writing a new file and renaming it over the old one
    needs only a writable directory, so the file's own mode would otherwise be ignored (root ignores it
    too). Refused before anything is written."""
    import stat

    for path in paths:
        try:
            mode = path.lstat().st_mode
        except FileNotFoundError:
            continue
        if stat.S_ISREG(mode) and not mode & 0o222:
            raise FlowgitError(f"is read-only (mode {stat.S_IMODE(mode):o}): flowgit does not replace a file you "
                               "made read-only; nothing was written", path=path,
                               fix="make it writable (`chmod u+w`) and run setup again, or add flowgit's hooks "
                                   "by hand (`--dry-run` shows them)")


def remove(base: Path, scope: str, *, dry_run: bool = False) -> SetupReport:
    """Undo exactly what :func:`setup` added under ``base``."""
    report = SetupReport(scope, str(base), dry_run, removed=True)
    manifest_path = base / MANIFEST
    manifest = _load_manifest(manifest_path)
    if manifest is None:  # never set up here, or removed already: nothing of flowgit's is left (exit 0)
        report.warnings.append(f"no {MANIFEST} in {base}: flowgit's set-up is not here (removed already, or "
                               "made with the other of --user/--project)")
        return report
    actions: list[tuple[str, Path, bytes | None]] = []  # ("write" | "delete", path, data)
    for rel, sha in manifest["files"].items():
        if (base / rel).is_symlink():  # setup writes files, never links: a link there is someone else's
            report.changes.append(Change(rel, "kept", note="a symbolic link setup did not make: left in place"))
            continue
        have = _read(base / rel)
        if have is None:
            continue
        if _sha(have) == sha:
            report.changes.append(Change(rel, "delete", _diff(rel, have, None)))
            actions.append(("delete", base / rel, None))
        else:
            report.changes.append(Change(rel, "kept", note="edited since setup: left in place"))
    _undo_settings(base / "settings.json", manifest, report, actions)
    if not dry_run:
        _refuse_read_only([path for kind, path, _ in actions if kind == "write"])
        _sweep_temporaries(base)
        for kind, path, data in actions:
            if kind == "delete":
                path.unlink()
            else:
                atomic_write(path, data or b"")
        manifest_path.unlink()
        for d in sorted(manifest["dirs"], key=lambda x: x.count("/"), reverse=True):
            try:
                (base.parent / d).rmdir()
            except OSError:
                pass  # not empty: something else lives there now
    return report


def _undo_settings(path: Path, manifest: dict, report: SetupReport, actions: list) -> None:
    record = manifest.get("settings")
    have = _read(path)
    if record is None or have is None:
        return
    if _sha(have) == record.get("written_sha") and record.get("restore", True):
        if record["existed"]:
            original = base64.b64decode(record["original"])
            report.changes.append(Change("settings.json", "restore", _diff("settings.json", have, original)))
            actions.append(("write", path, original))
        else:
            report.changes.append(Change("settings.json", "delete", _diff("settings.json", have, None)))
            actions.append(("delete", path, None))
        return
    settings = parse_settings(path, have)
    drop_hooks(settings, [tuple(pair) for pair in manifest["hooks"]], manifest.get("made"))
    if not settings and not record["existed"]:
        report.changes.append(Change("settings.json", "delete", _diff("settings.json", have, None)))
        actions.append(("delete", path, None))
        return
    after = _serialise(settings, have)
    if after != have:
        report.changes.append(Change("settings.json", "update", _diff("settings.json", have, after),
                                     note="edited since setup: only flowgit's hooks taken out"))
        actions.append(("write", path, after))
