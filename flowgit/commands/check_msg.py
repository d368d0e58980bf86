"""``flowgit check-msg``: a wrap commit's trailers must agree with the staged change.

Also where the one-commit override leaves its trace: with ``FLOWGIT_OVERRIDE``
set, a ``Flow-Override: <reason>`` trailer is added to the message, so the
history audit can report it later.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from flowgit.changes import diff_patterns
from flowgit.checks.override import Override, override_from_trailers, parse_override
from flowgit.checks.registry import override_reason
from flowgit.config import Config
from flowgit.errors import FlowgitError
from flowgit.git import git
from flowgit.trailers import (episode_ids, episode_mismatches, mismatches, parse_trailers, speaks_for_a_wrap,
                              values)


@dataclass
class MsgReport:
    problems: list[str] = field(default_factory=list)
    override_recorded: str | None = None

    def to_dict(self) -> dict:
        return {"ok": not self.problems, "problems": self.problems, "override_recorded": self.override_recorded}


def run_check_msg(cfg: Config, message_file: str) -> MsgReport:
    from flowgit.fsio import MAX_TEXT_BYTES, read_regular

    path = Path(message_file)
    fix = "name the message file git gives the commit-msg hook, e.g. flowgit check-msg .git/COMMIT_EDITMSG"
    try:
        data = read_regular(path)  # a regular file only, read as git wrote it: no newline translation
    except FlowgitError as exc:
        raise FlowgitError(f"cannot read the commit message ({exc.message})", path=path, fix=fix) from None
    if len(data) > MAX_TEXT_BYTES:
        raise FlowgitError(f"the commit message goes on past {MAX_TEXT_BYTES:,} bytes", path=path, fix=fix)
    try:
        message = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FlowgitError(f"cannot read the commit message ({exc})", path=path, fix=fix) from None
    report = MsgReport()
    reason = override_reason()
    comment_char = _remembered(lambda: _comment_char(cfg.root))
    ask = bool(reason) or _looks_like_a_wrap([message])  # the trailers matter: git's comment character too
    texts = as_git_may_record(message, comment_char, ask=ask)
    readings = [parse_trailers(text) for text in texts]
    trailers = readings[0]
    if _looks_like_a_wrap(texts):
        readings += _as_this_clone_reads(cfg.root, texts)
    judged = parse_override(reason)
    if judged is not None and values(trailers, "Flow-Override"):
        report.problems.extend(_recorded_otherwise(judged, values(trailers, "Flow-Override")))
    if reason and not values(trailers, "Flow-Override"):
        if data and not data.endswith(b"\n"):  # (`git merge --no-edit` writes no line end: git's
            with path.open("ab") as fh:  # interpret-trailers would then glue the trailer to the last paragraph,
                fh.write(b"\n")  # where git reads no trailer)
        git(cfg.root, "interpret-trailers", "--in-place", "--no-divider", "--trailer", f"Flow-Override: {reason}",
            str(path))  # (--no-divider: git commit records a `---` line as text, so the trailer goes at the end)
        report.override_recorded = reason
    if reason and (lost := _override_kept(path, comment_char)):
        report.problems.extend(lost)
        report.override_recorded = None  # written into the message, but not what git would record
    from flowgit.checks.staged import amend_in_progress, staged_change
    from flowgit.git import require_repo

    root = require_repo(cfg.root)
    amend = amend_in_progress(root)
    if amend:
        report.problems.extend(_amend_verdict(cfg))
    elif not (judged and judged.covers("G810")):
        report.problems.extend(_hook_list_verdict(root))
    readings = [t for t in readings if speaks_for_a_wrap(t) or values(t, "Episodes")]
    if not readings:
        return report  # not a wrap commit: nothing to reconcile
    ctx = _context(staged_change(root, amend=amend, verified=True))
    events = diff_patterns(ctx.old, ctx.new) if ctx else []
    for reading in readings:  # whichever cleanup git applies, the trailers it records must agree
        report.problems.extend(p for p in mismatches(reading, events, memory_changed=ctx is not None)
                               if p not in report.problems)
    if ctx is not None:
        report.problems.extend(episode_mismatches(episode_ids(readings), ctx.new_store, ctx.appended_store))
    elif ids := episode_ids(readings):  # the memory unchanged: the store stands as HEAD has it, nothing appended
        report.problems.extend(episode_mismatches(ids, _store_as_staged(root, cfg), b""))
    return report


def _store_as_staged(root: Path, cfg) -> bytes:
    """The store the commit records when the change leaves it alone: the index's blob at the path HEAD's
    committed configuration names (an uncommitted one could point at a store of its own), none: empty."""
    from flowgit.config import load_config_at

    try:
        store = load_config_at(root, "HEAD").store_rel
    except FlowgitError:
        store = cfg.store_rel  # (no HEAD, or a committed configuration the gate reads as the defaults)
    return git(root, "cat-file", "blob", f":{store}", check=False) or b""


def _context(change):
    """The rules' view of the change (None when nothing judged is staged)."""
    if change is None:
        return None
    from flowgit.checks.judge import context_for

    return context_for(change.cfg, change.old, change.new)


def _remembered(ask: Callable[[], str]) -> Callable[[], str]:
    """``ask``, called at most once."""
    found: list[str] = []

    def once() -> str:
        if not found:
            found.append(ask())
        return found[0]
    return once


def _recorded_otherwise(judged: Override, written: list[str]) -> list[str]:
    """A problem when the ``Flow-Override:`` trailers the message already carries (typed, or kept by an amend)
    read as another scope than the one the gate judged the commit under: the history would say a different
    set of errors was let through (the audit reads the trailers), so the two must agree."""
    recorded = override_from_trailers(written)
    if recorded is not None and (recorded.codes, recorded.unreadable) == (judged.codes, judged.unreadable):
        return []
    said = "; ".join(written)
    return [f"the message carries `Flow-Override: {said[:80]}`, which records an override of "
            f"{recorded.describe() if recorded else 'nothing'}, but the gate judged this commit under "
            f"FLOWGIT_OVERRIDE=\"{judged.reason[:80]}\" ({judged.describe()}): remove the Flow-Override line "
            "from the message (the hook records FLOWGIT_OVERRIDE itself), or make it name the same codes"]


def _override_kept(path: Path, comment_char: Callable[[], str]) -> list[str]:
    """A problem when some cleanup git may apply drops the ``Flow-Override`` trailer from the message: the
    errors would then be committed with no override on record (the audit would report them as errors)."""
    text = path.read_bytes().decode("utf-8", "replace")
    for reading in as_git_may_record(text, comment_char, ask=True):
        if not values(parse_trailers(reading), "Flow-Override"):
            char = comment_char()
            if char == "#":
                return ["git would record this message without its Flow-Override trailer (its last paragraph "
                        "is not a trailer block to git), so the override would not be on record: end the message "
                        "with a blank line, or put the trailer in a paragraph of trailers of its own"]
            return [f"git may record this message without its Flow-Override trailer (core.commentChar is "
                    f"{char!r}, and git's cleanup drops the lines starting with it), so the override "
                    "would not be on record: set another comment character (`git config core.commentChar "
                    "\"#\"`) for this commit"]
    return []


def _amend_verdict(cfg: Config) -> list[str]:
    """An amend replaces HEAD: the whole gate again, against HEAD's parent (pre-commit judged against HEAD)."""
    from flowgit.commands.check import run_check

    report = run_check(cfg, amend=True)
    return [f"amend judged against the parent: {f.format()}" for f in report.findings if f.is_error]


def _hook_list_verdict(root: Path) -> list[str]:
    """G810 where the pre-commit framework's staged hook list dropped the gate but kept this hook (the
    framework runs the list as staged: commit-msg may be the one flowgit hook left to say so)."""
    from flowgit.checks.paths import hook_list_finding
    from flowgit.checks.staged import staged_hooks_weakened

    problems = staged_hooks_weakened(root)
    return [hook_list_finding(problems).format()] if problems else []


# git's comment characters: `#` unless core.commentChar says otherwise; `auto` picks the first of these that
# starts no line of the message
COMMENT_CHOICES = "#;@!$%^&|:"
SCISSORS_RE = re.compile(r"^(\S) -{24} >8 -{24}$", re.MULTILINE)


def as_git_may_record(message: str, comment_char: Callable[[], str], *, ask: bool = False) -> list[str]:
    """The message as git may record it: the hook sees it before git's cleanup, which the hook cannot ask.

    The first reading drops ``#`` lines (git's default cleanup of an edited message). Others follow where
    the message shows another cleanup may apply: cut at a scissors line (``commit -v``: the staged diff
    below it would otherwise read as the last paragraph, hiding every trailer above it), and without the
    lines of another comment character (``core.commentChar``: any character, even a letter, so it is asked
    of git whenever ``ask`` says the trailers matter, else only when some line starts with one of ``auto``'s
    choices). Each reading's trailers are checked: whichever git applies, what it records must agree.
    """
    lines = message.split("\n")  # lines end at ``\n`` alone, as git's
    readings = [_without(lines, ("#",))]
    cut = SCISSORS_RE.search(message)
    if cut is not None:
        above = message[:cut.start()].split("\n")
        readings.append(_without(above, (cut.group(1), "#")))
    if ask or any(ln[:1] in COMMENT_CHOICES[1:] for ln in lines if ln):
        char = comment_char()
        prefixes = tuple(COMMENT_CHOICES) if char == "auto" else (char,)
        if char and char != "#":
            readings.append(_without(lines, prefixes))
    return list(dict.fromkeys(readings))


WRAP_KEY_RE = re.compile(r"^(?:flow-|graduated|incremented|demoted|archived|episodes)", re.IGNORECASE | re.MULTILINE)


def _looks_like_a_wrap(texts: list[str]) -> bool:
    """Whether any line starts with a wrap trailer's key, however it is separated from its value."""
    return any(WRAP_KEY_RE.search(text) for text in texts)


def _as_this_clone_reads(root, texts: list[str]) -> list:
    """The trailers as git reads them under this clone's own ``trailer.*`` configuration (other separators,
    keys that make a mostly-prose paragraph a trailer block): what ``git log %(trailers)`` here would
    report. Asked of git only when such configuration exists."""
    if not git(root, "config", "--get-regexp", r"^trailer\.", check=False).strip():
        return []
    out = []
    for text in texts:
        parsed = git(root, "interpret-trailers", "--parse", input=text.encode("utf-8"), check=False)
        if parsed.strip():
            out.append(parse_trailers("trailers as git reads them here\n\n" + parsed.decode("utf-8", "replace")))
    return out


def _without(lines: list[str], prefixes: tuple[str, ...]) -> str:
    """The lines that do not start with one of ``prefixes`` (git's comment lines), joined."""
    return "\n".join(ln for ln in lines if not ln.startswith(prefixes))


def _comment_char(root) -> str:
    """``core.commentChar`` (``#`` when unset; ``auto`` as it is; newer git takes a string of several)."""
    value = git(root, "config", "--get", "core.commentChar", check=False).decode("utf-8", "replace").strip("\n")
    return value or "#"


def render(report: MsgReport) -> str:
    lines = [f"commit message: {p}" for p in report.problems]
    if report.override_recorded:
        lines.append(f"recorded trailer Flow-Override: {report.override_recorded}")
    lines.append("flowgit check-msg: " + ("ok" if not report.problems else
                                          f"{len(report.problems)} problem(s) — commit rejected"))
    return "\n".join(lines)
