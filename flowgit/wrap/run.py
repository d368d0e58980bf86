"""``flowgit wrap``: the six steps in order, as one transaction, ending in one generated commit.

With a plan, the plan says what happened; without one, the continuity file as
already edited in the working tree says it, and the edits are read back as
operations from the diff against HEAD. Either way the same immune system
validates every promotion, the same cleanup runs, and the commit message is
derived from the same facts — so the same change gives the same commit.

Before anything is written, the exact tree and message about to be committed
are judged by the gate's own engine (:func:`flowgit.checks.judge.judge_change`,
under the configuration committed at HEAD): a change the hook would refuse is
refused here with the same codes, and nothing is touched — whether or not any
hook is installed.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, Callable

from flowgit.changes import ADDED, DEMOTED, GRADUATED, INCREMENTED, RENAMED, PatternEvent, diff_patterns
from flowgit.checks.registry import override_reason
from flowgit.config import Config, judging_config_at
from flowgit.continuity.document import Document, is_structural, strip_eol
from flowgit.continuity.patterns import document_patterns, iter_patterns, parse_pattern, pattern_map
from flowgit.continuity.sections import DEVELOPING, PROVEN, STATE
from flowgit.dates import parse_date, today as utc_today
from flowgit.episodes import Episode, EpisodeStore, lookup, make_episode, parse_store, search_bytes, whole_ids
from flowgit.errors import CommitRejected, FlowgitError  # noqa: F401 (CommitRejected: raised here, named by callers)
from flowgit.evidence import assess, same_source, store_weight
from flowgit.faults import checkpoint
from flowgit.fsio import atomic_write
from flowgit.git import as_recorded, blob_oid, blobs, git, git_dir, head_entries, head_sha, held_index_lock, \
    literal, refuse_unstageable, require_repo, run_until_done, wait_until_idle
from flowgit.repo import document_from_bytes, load_document
from flowgit.wrap.apply import (Outcome, Refusal, annotate_dependants, apply_plan, hand_edits_replaced, let_through,
                                verdict_codes)
from flowgit.wrap.candidates import Candidates, added_near_duplicates, find_candidates
from flowgit.wrap.cleanup import Stale, archive, blame_dates, find_stale
from flowgit.wrap.judgement import (EPISODE_REF_RE, action_date_warnings, fired, independent_contradiction,
                                    no_new_evidence, post_demotion, proven_touched, relaxed_rules, section_warnings,
                                    typo_renames, unfired_raises)
from flowgit.wrap.message import archival_reasons, message
from flowgit.wrap.plan import Plan
from flowgit.journal import WRAP_COMMIT_VARIABLE
from flowgit.lock import refuse_if_wrap_pending
from flowgit.wrap.transaction import Journal, recover, refuse_in_progress


class PromotionsRefused(FlowgitError):
    """--strict: a promotion failed validation, so the whole wrap was aborted."""


EXIT_NOTHING_COMMITTED = 3  # nothing was committed because every requested change was refused or ignored


@dataclass
class WrapResult:
    message: str
    diff: str
    events: list[PatternEvent]
    refused: list[Refusal]
    notes: list[str]
    archived: list[Stale]
    new_episodes: list[Episode]
    candidates: Candidates
    summary: dict
    committed: str | None = None
    dry_run: bool = False
    nothing_to_do: bool = False
    recovered: str | None = None
    mode: str = "plan"
    episode_ids: list[str] = field(default_factory=list)  # every episode this commit records, however added
    session_episodes: int = 0  # of those, the ones from this wrap's session
    ignored: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    attention: list[dict] = field(default_factory=list)  # Proven patterns a tension/outcome episode touches
    gate: list = field(default_factory=list)  # the gate's findings on the commit about to be made
    left_in_working_tree: list[str] = field(default_factory=list)  # refused hand edits kept in the working file

    @property
    def gate_refused(self) -> bool:
        return any(f.is_error for f in self.gate)

    @property
    def exit_code(self) -> int:
        """0 committed (or clean); 1 the gate refuses; 3 nothing committed because of refusals/ignored ops.

        A dry run answers with the code the wrap itself would give: a rehearsal
        whose every change is refused says 3, as the wrap will."""
        if self.gate_refused:
            return 1
        commits_nothing = self.nothing_to_do if self.dry_run else self.committed is None
        if commits_nothing and (self.refused or self.ignored):
            return EXIT_NOTHING_COMMITTED
        return 0

    def to_dict(self) -> dict:
        return {"committed": self.committed, "dry_run": self.dry_run, "nothing_to_do": self.nothing_to_do,
                "mode": self.mode, "recovered": self.recovered, "message": self.message,
                "events": [e.to_dict() for e in self.events], "refused": [r.to_dict() for r in self.refused],
                "ignored": self.ignored, "notes": self.notes, "warnings": self.warnings,
                "attention": self.attention, "gate": [f.to_dict() for f in self.gate],
                "gate_refused": self.gate_refused, "exit_code": self.exit_code,
                "left_in_working_tree": self.left_in_working_tree,
                "archived": [s.to_dict() for s in self.archived],
                "episodes_recorded": self.episode_ids, "session_episodes": self.session_episodes,
                "candidates": self.candidates.to_dict(), "summary": self.summary, "diff": self.diff}


@dataclass
class Inputs:
    """Everything the wrap reads, read once before it decides anything."""

    cfg: Config
    root: Path
    head_doc: Document | None
    head_doc_raw: bytes | None
    head_store: tuple[str, int] | None  # HEAD's store blob: (id, size)
    doc: Document
    store_raw: bytes
    session: str
    agent: str
    day: date
    judging: Config  # the configuration committed at HEAD: its thresholds decide, as the gate's do
    blamed: dict = field(default_factory=dict)
    # The file and store as the working tree holds them, where git records them with other line endings (CRLF
    # lines in a checkout with core.autocrlf or eol=crlf): ``doc`` and ``store_raw`` are then what git records,
    # which the wrap compares with HEAD and judges. None where the two are the same bytes.
    on_disk: "OnDisk | None" = None
    date_warning: str | None = None  # the date given (--date, plan.date) is before HEAD's commit or ahead of today
    head_sessions: tuple[str, ...] = ()  # the sessions HEAD's commit wraps (its Flow-Session trailers)

    @property
    def appended_raw(self) -> bytes:
        """Store lines added since HEAD: HEAD's store must be an exact prefix (checked by blob id).

        If it is not, the store was rewritten; nothing counts as appended and
        the gate rejects the commit.
        """
        if self.head_store is None:
            return self.store_raw
        oid, size = self.head_store
        prefix = memoryview(self.store_raw)[:size]
        return self.store_raw[size:] if blob_oid(prefix, len(oid)) == oid else b""


@dataclass(frozen=True)
class OnDisk:
    """The working tree's bytes of the file and store the wrap read (see ``Inputs.on_disk``)."""

    continuity: bytes
    store: bytes
    crlf: bool  # the file's lines end in CRLF there and LF in git: the wrap writes it back so


def _as_git_records(cfg: Config, root: Path) -> tuple[Document, bytes, OnDisk | None]:
    """The continuity file (parsed) and the store as ``git add`` would record them, and the working tree's
    bytes where those differ only in line endings (the wrap compares with HEAD what git records, not the
    checkout's CRLF). A filter that changes more (``tr a-z A-Z``) leaves the wrap working on the file as the
    user wrote it; the gate's verdict is on what git records either way (:func:`judge_wrap`)."""
    doc = load_document(cfg)
    store_raw = EpisodeStore(cfg.store).raw()
    doc_bytes = doc.text.encode("utf-8")
    doc_recorded = _endings_converted(root, cfg.continuity_rel, doc_bytes)
    store_recorded = _endings_converted(root, cfg.store_rel, store_raw) if store_raw else store_raw
    if doc_recorded == doc_bytes and store_recorded == store_raw:
        return doc, store_raw, None
    if doc_recorded != doc_bytes:
        doc = document_from_bytes(cfg, doc_recorded, cfg.continuity_rel)
        doc.require_sections()
    crlf = doc_bytes != doc_recorded and doc_bytes == doc_recorded.replace(b"\n", b"\r\n")
    return doc, store_recorded, OnDisk(doc_bytes, store_raw, crlf)


def _endings_converted(root: Path, rel: str, data: bytes) -> bytes:
    """``data`` as git records it where that differs only in line endings (CRLF read as LF), else ``data``."""
    if b"\r\n" not in data:
        return data
    recorded = as_recorded(root, rel, data)
    return recorded if recorded == data.replace(b"\r\n", b"\n") else data


def read_inputs(cfg: Config, plan: Plan | None, session: str | None, day: str | None) -> Inputs:
    root = require_repo(cfg.root)
    _refuse_links(root, cfg)
    (head_doc_raw,) = blobs(root, [f"HEAD:{cfg.continuity_rel}"])
    head_store = head_entries(root, [cfg.store_rel]).get(cfg.store_rel)
    from flowgit.session import AGENT_VARIABLES, SESSION_VARIABLES, require_plain, resolve_agent, resolve_session

    # the command line wins over the plan, the plan over the environment
    chosen_session = require_plain((session or "").strip() or (plan.session if plan else "") or resolve_session(None),
                                   "session id", "--session" if (session or "").strip() else
                                   plan.source if plan and plan.session else _variable_set(SESSION_VARIABLES))
    if not chosen_session:
        raise FlowgitError("a wrap needs the session id", fix="pass --session, set plan.session, "
                                                             "or export FLOWGIT_SESSION")
    # the command line wins over the plan here too; a bad date is named where it was written
    when_text, written = (day, "--date") if day else ((plan.date, plan.source) if plan and plan.date else ("", None))
    when = parse_date(when_text) if when_text else utc_today()
    if when is None:
        raise FlowgitError(f"`{when_text}` is not a date", path=written, fix="use 2026-11-30")
    doc, store_raw, on_disk = _as_git_records(cfg, root)
    return Inputs(cfg=cfg, root=root, date_warning=_date_given_warning(root, when, when_text) if when_text else None,
                  head_doc=document_from_bytes(cfg, head_doc_raw, f"HEAD:{cfg.continuity_rel}"),
                  head_doc_raw=head_doc_raw, on_disk=on_disk,
                  head_store=head_store, doc=doc, store_raw=store_raw,
                  session=chosen_session,
                  agent=require_plain((plan.agent if plan else "") or resolve_agent(None), "agent",
                                      plan.source if plan and plan.agent else _variable_set(AGENT_VARIABLES)),
                  day=when, judging=judging_config_at(cfg, head_sha(root)), head_sessions=_head_sessions(root),
                  blamed=blame_dates(root, cfg.continuity_rel) if head_doc_raw else {})


def _head_sessions(root: Path) -> tuple[str, ...]:
    """The sessions HEAD's commit says it wraps: a wrap on top of its own session's (a promotion refused and
    fixed, a second work unit) finds State already replaced by that session."""
    from flowgit.trailers import parse_trailers, values

    if not head_sha(root):
        return ()
    message = git(root, "log", "-1", "--format=%B", "HEAD", check=False).decode("utf-8", "replace")
    return tuple(values(parse_trailers(message), "Flow-Session"))


def _variable_set(names: tuple[str, ...]) -> str:
    """``$NAME`` of the first of ``names`` the environment sets: where an error names a value it gave."""
    import os

    return next((f"${name}" for name in names if os.environ.get(name, "").strip()), f"${names[0]}")


def _date_given_warning(root: Path, when: date, written: str) -> str | None:
    """What is odd about a wrap date given by hand: before the commit it wraps on top of (its graduations and
    demotions would read as older than the history they follow), or after today."""
    last = git(root, "log", "-1", "--format=%cs", "HEAD", check=False).decode("ascii", "replace").strip() \
        if head_sha(root) else ""
    head_day = parse_date(last) if last else None
    if head_day is not None and when < head_day:
        return (f"the wrap is dated {when.isoformat()} (`{written}`), before HEAD's commit of "
                f"{head_day.isoformat()}: the dates it writes (graduations, the subject; a demotion is dated no "
                f"earlier than the episodes about it) read as older than the history before them; leave the date "
                f"out to wrap as of today")
    if when > utc_today():
        return (f"the wrap is dated {when.isoformat()} (`{written}`), after today ({utc_today().isoformat()}): "
                f"the dates it writes lie ahead; leave the date out to wrap as of today")
    return None


def _refuse_links(root: Path, cfg: Config) -> None:
    """A continuity file or store reached through a symbolic link is refused before anything is read: git
    records the link's text, not the memory behind it, so the gate refuses to commit it (G806) and HEAD's
    version of the file is only a path (read as one, every section would look new)."""
    for rel in (cfg.continuity_rel, cfg.store_rel):
        parts = Path(rel).parts
        for n in range(1, len(parts) + 1):
            step = root.joinpath(*parts[:n])
            if step.is_symlink():
                shown = "/".join(parts[:n])
                raise FlowgitError(f"{shown} is a symbolic link (to {os.readlink(step)}): git records the link, "
                                   "not the memory behind it, so the gate refuses to commit it (G806)",
                                   path=step, fix=f"keep the file itself at {rel}, or point the configuration "
                                                  f"at where it really is (`continuity`/`store` in .flowgit.toml)")


def plan_episodes(plan: Plan, inputs: Inputs, notes: list[str] | None = None) -> list[Episode]:
    return [make_episode(data, where=f"{plan.source}: field `plan.episodes[{i}]`", default_session=inputs.session,
                         default_agent=inputs.agent, notes=notes) for i, data in enumerate(plan.episodes)]


def validate_edits(inputs: Inputs, episodes: dict[str, Episode], batch: frozenset[str] = frozenset(),
                   weight: Any = None) -> Outcome:
    """No-plan mode: validate every promotion the working-tree edit made; refused ones go back.

    ``batch``: the episodes this commit appends (one source per agent, as the gate counts them).
    """
    doc = inputs.doc
    outcome = Outcome(doc)
    where = inputs.cfg.continuity_rel
    before = pattern_map(inputs.head_doc) if inputs.head_doc else {}
    for event in diff_patterns(inputs.head_doc, doc):
        if event.kind == DEMOTED and before.get(event.name) is not None:
            _check_hand_demotion(outcome, before[event.name], event, episodes, inputs.head_doc, where)
            continue
        if event.kind not in (INCREMENTED, GRADUATED, ADDED, RENAMED):
            continue
        at = pattern_map(outcome.doc).get(event.name)
        if at is None:
            continue
        p, proven = at.pattern, at.section == PROVEN
        if p.level < 2 and not proven:
            continue
        old = before.get(event.old_name or event.name)
        problems: list[str] = []
        jump = old is not None and old.pattern.level == 1 and (p.level >= 3 or proven)
        if jump:
            problems.append("graduation goes 2x -> 3x; increment it to 2x first")
        if old is not None:
            problems += post_demotion(old.pattern, p.evidence, episodes, level=p.level,
                                      thresholds=inputs.judging.thresholds, in_proven=proven,
                                      now=datetime.now(timezone.utc), batch=batch)
        verdict = assess(p.name, p.text, p.level, p.evidence, episodes, inputs.judging.thresholds, in_proven=proven,
                         batch=batch, now=datetime.now(timezone.utc), **({"weight": weight} if weight else {}))
        codes = verdict_codes(verdict, demoted=len(problems) > int(jump), jump=jump)
        stale = no_new_evidence(old.pattern.evidence, p.evidence) if old is not None and not problems \
            and _raised(old, p, proven) else []
        problems += stale + verdict.problems()
        codes = ("G202", *codes) if stale else codes
        if verdict.unknown:  # a short id copied from a listing: a plan may name a start, a file cites it whole
            problems += [f"`{start}` is the start of `{whole}`: write it whole in the file"
                         for start, whole in _whole_or_none(inputs.store_raw, verdict.unknown).items()]
        if not problems:
            continue
        relaxed = relaxed_rules(inputs.judging.rules, codes)
        if relaxed:
            outcome.notes.append(let_through(p.name, AS_OPERATION.get(event.kind, event.kind), relaxed, problems))
            continue
        outcome.refused.append(Refusal(p.name, AS_OPERATION.get(event.kind, event.kind),
                                       old.pattern.level if old else 1, tuple(problems), codes,
                                       strip_eol(outcome.doc.lines[at.line]), where=f"{where}:{at.line + 1}"))
        outcome.doc = _revert(outcome.doc, at.line, old, inputs.head_doc)
    return outcome


def _raised(old, p, proven: bool) -> bool:
    """Whether the edit raised the pattern's level (anything in Proven stands at 3x, as the gate reads it)."""
    return (3 if proven else p.level) > (3 if old.section == PROVEN else old.pattern.level)


def _whole_or_none(store: bytes, starts) -> dict[str, str]:
    """:func:`flowgit.episodes.whole_ids`, or nothing where a start begins several ids."""
    try:
        return whole_ids(store, starts)
    except FlowgitError:
        return {}


def _check_hand_demotion(outcome: Outcome, old, event: PatternEvent, episodes: dict[str, Episode],
                         head: Document | None, where: str) -> None:
    """A demotion edited by hand needs what a planned one needs: an independent contradicting episode."""
    if old.section != PROVEN:
        return
    against = [i for n in event.notes if n.lower().startswith("demoted") for i in EPISODE_REF_RE.findall(n)]
    problems = independent_contradiction(old.pattern, against, episodes, now=datetime.now(timezone.utc))
    at = pattern_map(outcome.doc).get(event.name)
    if not problems or at is None:
        return
    outcome.refused.append(Refusal(event.name, "demote", old.pattern.level, tuple(problems),
                                   written=strip_eol(outcome.doc.lines[at.line]), where=f"{where}:{at.line + 1}"))
    outcome.doc = _revert(outcome.doc, at.line, old, head)


def _revert(doc: Document, line: int, old, head: Document | None = None) -> Document:
    """Put a refused pattern back at the level HEAD had it (or at 1x if it is new): in its place when it was
    refused where it stands (a refusal that moves a line commits a reordering nobody asked for). A Developing
    pattern keeps the name and words the edit gave it, with HEAD's level and evidence: a refused raise is no
    reason to lose a rewording written nowhere else. A Proven one comes back as HEAD had it, word for word
    (its claim is what the evidence stands behind)."""
    mine = parse_pattern(doc.lines[line])
    if old is None:
        text, section = mine.changed(level=1, evidence=(), category="", date="").render(), DEVELOPING
    elif old.section != PROVEN and mine is not None:
        section = old.section
        text = mine.changed(level=old.pattern.level, evidence=old.pattern.evidence, category=old.pattern.category,
                            date=old.pattern.date).render()
    else:
        section = old.section
        text = strip_eol(head.lines[old.line]) if head is not None else old.pattern.render()
    here = doc.section_at(line)
    if here is not None and here.label == section:
        return doc.splice(line, line + 1, [text])
    rest = doc.splice(line, line + 1, [])
    home = _home(rest, section, old, head)
    return rest.splice(home, home, [text]) if home is not None else doc.move_line(line, section, text)


def _home(doc: Document, section: str, old, head: Document | None) -> int | None:
    """Where a pattern moved out of ``section`` goes back in ``doc``: after the nearest pattern that stood above
    it there in HEAD and still does, else before the nearest that stood below it (None: at the section's end).
    A refused graduation returns to its place in Developing, not to the end of it."""
    if old is None or head is None:
        return None
    was = [at.pattern.name for at in document_patterns(head) if at.section == section]
    if old.pattern.name not in was:
        return None
    mine = was.index(old.pattern.name)
    now = {at.pattern.name: at.line for at in document_patterns(doc) if at.section == section}
    for name in reversed(was[:mine]):
        if name in now:
            return now[name] + 1
    for name in was[mine + 1:]:
        if name in now:
            return now[name]
    return None


def _summary(head: Document | None, final: Document, events: list[PatternEvent]) -> dict:
    state = final.find(STATE)
    focus = ""
    if state:
        focus = next((ln.strip() for ln in final.lines[state.body_start:state.body_end] if not is_structural(ln)), "")
    sections = {}
    for sec in final.sections:
        before = head.find(sec.label) if head else None
        if before is None:
            sections[sec.label] = "added"
        elif _lf(head.section_text(before)) != _lf(final.section_text(sec)):  # (a CRLF re-save replaces nothing)
            sections[sec.label] = {"replace": "replaced", "rewrite": "rewritten"}.get(sec.semantics.value, "updated")
    by_kind: dict[str, list[str]] = {}
    for e in events:
        by_kind.setdefault(e.kind, []).append(e.name)
    text = final.text
    return {"state_focus": focus, "sections_changed": sections, "patterns": by_kind,
            "lines": len(final.lines), "approx_tokens": len(text) // 4, "chars": len(text)}


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def _unified(head: Document | None, final: Document, path: str, new_eps: list[Episode], store_rel: str,
             appended: bytes = b"") -> str:
    """The diff against HEAD of what the wrap commits: the file, and the store's lines after HEAD's (those
    recorded since with ``episode add``, then the plan's own)."""
    diff = "".join(difflib.unified_diff(head.lines if head else [], final.lines, f"a/{path}", f"b/{path}"))
    recorded = [line + "\n" for line in appended.decode("utf-8", "replace").splitlines() if line.strip()]
    added = recorded + [f"{e.to_json()}\n" for e in new_eps]
    if added:
        diff += f"--- a/{store_rel}\n+++ b/{store_rel}\n" + "".join(f"+{line}" for line in added)
    return diff


LOCK_RETRIES = 3  # times git is run again after it met another git's index lock


def _staging(root: Path, gdir: Path, *paths: str) -> None:
    """``git add`` the wrap's files, run again (after the lock goes) when it met another git's index lock.

    ``--force``: git refuses even a tracked file in an ignored directory (it stages it, then exits 1), so a
    team that keeps its store under an ignored ``memory/`` could never wrap. An untracked ignored path never
    gets here: the wrap refuses it before writing anything (:func:`flowgit.git.refuse_unstageable`)."""
    for attempt in range(LOCK_RETRIES + 1):
        try:
            git(root, "add", "--force", "--", *literal(*paths))
            return
        except FlowgitError as exc:
            if attempt == LOCK_RETRIES or not held_index_lock(str(exc)):
                raise
            wait_until_idle(gdir)


def commit(root: Path, text: str, paths: list[str], message_path: Path | None = None) -> str:
    """Commit through the git command line, so the user's hooks, identity and signing apply.

    git runs as a subprocess with the repository path as it is (no variable
    expansion). If this process is interrupted while git runs (SIGTERM during a
    slow hook), git is asked to stop too and waited for, so it removes its own
    ``index.lock`` and the rollback never races a commit that is still landing.
    The message is written to ``message_path`` (the wrap gives one in the git
    directory, beside its journal, which removes it): a process killed outright
    cannot delete it, and the message (its trailers name the session's
    patterns) then stays with the repository until recovery, not in a
    temporary directory other users share.
    """
    if message_path is None:
        fd, msg_path = tempfile.mkstemp(prefix="flowgit-wrap-msg-", suffix=".txt")
    else:  # one wrap at a time holds the lock: a file of this name is a killed wrap's, replaced (never followed)
        msg_path = os.fspath(message_path)
        try:
            os.unlink(msg_path)
        except FileNotFoundError:
            pass
        fd = os.open(msg_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        env = {**os.environ, WRAP_COMMIT_VARIABLE: str(os.getpid())}  # the gate's G807: this commit is the wrap's
        for attempt in range(LOCK_RETRIES + 1):  # an editor's `git status` may hold the index lock a moment
            proc = run_until_done(["git", "commit", "-q", "-F", msg_path, "--", *literal(*paths)], root, env=env)
            out, err = proc.stdout, proc.stderr
            if proc.returncode == 0 or attempt == LOCK_RETRIES or not held_index_lock(err.decode("utf-8", "replace")):
                break
            wait_until_idle(git_dir(root))
    finally:
        os.unlink(msg_path)
    if proc.returncode != 0:
        detail = "\n".join(x.decode("utf-8", "replace").strip() for x in (out, err) if x.strip())
        unwritten = _GIT_COULD_NOT_WRITE_RE.search(detail)
        if unwritten is not None:
            full = _DISK_FULL_RE.search(unwritten[0]) is not None
            raise FlowgitError(f"git could not write the commit ({'disk full' if full else 'a write failed'}); "
                               "the wrap was rolled back\n" + detail, path=root,
                               fix="free disk space and run the wrap again" if full else
                               "make the repository's .git directory writable for you (its objects, refs, logs "
                               "and index: `ls -ld .git/refs/heads` shows who may write), then run the wrap again")
        raise CommitRejected("git refused the wrap commit; nothing was changed\n" + detail,
                             fix="read what the refusing hook said (above, or in the message), fix what it names "
                                 "and run the wrap again; `flowgit wrap --dry-run` shows the gate's own findings")
    _show_hooks_output(out + b"\n" + err)
    sha = head_sha(root)
    if sha is None:
        raise FlowgitError("git reported a commit but HEAD cannot be read", path=root)
    return sha


# git's own words for a write that failed (not a hook's refusal: the wrap exits 2 for these, not 1)
_DISK_FULL_RE = re.compile(r"No space left on device|File too large|Out of diskspace|Disk quota exceeded",
                           re.IGNORECASE)
_GIT_COULD_NOT_WRITE_RE = re.compile(
    r"^(?:fatal|error): .*?(?:No space left on device|File too large|Out of diskspace|Disk quota exceeded|"
    r"couldn't write|unable to write|unable to append|write error|short write|Read-only file system|"
    r"Permission denied).*$",
    re.IGNORECASE | re.MULTILINE)

# flowgit's own hooks on the wrap's commit: the wrap has judged the change in-process already
_GATE_LINE_RE = re.compile(r"^(?:flowgit check(?:-msg)?: |recorded trailer |\S.*?:\d*:? ?[GA]\d{3} "
                           r"(?:error|warning|notice) |\s+fix: )")


def _show_hooks_output(said: bytes) -> None:
    """What the project's own git hooks printed while the wrap committed, on stderr (a plain ``git commit``
    shows it too: a post-commit hook's failure would otherwise pass unseen), without flowgit's own gate
    lines, which repeat the verdict the wrap has reported."""
    lines = [ln for ln in said.decode("utf-8", "replace").splitlines() if ln.strip() and not _GATE_LINE_RE.match(ln)]
    if lines:
        from flowgit.output import terminal_safe

        sys.stderr.write("flowgit: git's hooks said, while the wrap committed:\n"
                         + "".join(f"  {terminal_safe(ln, sys.stderr)}\n" for ln in lines))


# A hand edit's event named as the plan operation that makes it: a refusal reads the same either way.
AS_OPERATION = {"incremented": "increment", "graduated": "graduate", "demoted": "demote", "added": "add"}


def settle_sync_first(root: Path) -> None:
    """Where a killed sync left its mark, settle it under the lock before reading anything (see
    :func:`flowgit.merge.sync.settle_interrupted_sync`): a hand edit's gate would otherwise judge the
    half-merged file as this wrap's edits and report the merge's lines instead of what happened."""
    from flowgit.lock import RepoLock
    from flowgit.merge.sync import PENDING, settle_interrupted_sync

    gdir = git_dir(root)
    if (gdir / PENDING).exists():
        with RepoLock(gdir, "flowgit wrap"):
            settle_interrupted_sync(root)


def _refuse_replacing_hand_edits(cfg: Config, inputs, plan: Plan) -> None:
    """Stop (nothing written) before a plan replaces a section the working tree edited by hand since HEAD:
    the edit would leave no trace, in the commit or on disk."""
    edits = hand_edits_replaced(inputs.doc, inputs.head_doc, plan)
    if not edits:
        return
    from flowgit.lock import RepoLock
    from flowgit.wrap.transaction import check_unchanged

    with RepoLock(git_dir(inputs.root), "flowgit wrap"):  # another wrap's file, read between its write and its
        check_unchanged(cfg, inputs)                      # commit, is no hand edit: that race is said as one
    label, line = edits[0]
    fields = {"Current State": "state", "Top of Mind": "top_of_mind", "Recent Context": "recent"}
    named = ", ".join(f"`{name}`" for name, _ in edits)
    raise FlowgitError(f"{named} in the working tree holds an uncommitted edit that the plan's "
                       f"`{fields.get(label, label)}` would replace, losing it", path=cfg.continuity_rel, line=line,
                       fix=f"commit or undo the edit first (`git diff {cfg.continuity_rel}` shows it), or write "
                           "its text into the plan")


def run_wrap(cfg: Config, plan: Plan | None, *, session: str | None = None, day: str | None = None,
             strict: bool = False, dry_run: bool = False, cleanup: bool = True) -> WrapResult:
    root = require_repo(cfg.root)
    refuse_in_progress(root)  # before anything is written, recovery included
    refuse_unstageable(root, [cfg.continuity_rel, cfg.store_rel])  # git would commit one without the other
    if dry_run:  # a half-applied file is no base for a diff, and a dry run recovers nothing
        refuse_if_wrap_pending(git_dir(root), probe=True)
    recovered = None if dry_run else recover(cfg)
    settle_sync_first(root)  # a killed sync's half-merged files: said as such, not judged as this wrap's edits
    inputs = read_inputs(cfg, plan, session, day)
    joined: list[str] = []  # plan episodes whose lines the store joins: said among the warnings
    recorded = plan_episodes(plan, inputs, joined) if plan else []
    cited = {i for at in iter_patterns(inputs.doc) for i in at.pattern.evidence}
    cited |= {i for at in iter_patterns(inputs.doc) for n in at.pattern.notes for i in EPISODE_REF_RE.findall(n)}
    cited |= {ref for op in (plan.patterns if plan else []) for ref in op.evidence}
    stored = lookup(inputs.store_raw, cited | {e.id for e in recorded})  # one pass over the store
    starts = whole_ids(inputs.store_raw, {ref for op in (plan.patterns if plan else []) for ref in op.evidence
                                          if ref not in stored and not ref.startswith("#")}, path=cfg.store)
    stored.update(lookup(inputs.store_raw, set(starts.values()) - stored.keys()))
    # one episode an id, and the store's line its record, as `episode add` keeps them: a plan that lists an
    # episode twice records it once, and one repeating a stored episode lends it no other agent or tags
    plan_eps: dict[str, Episode] = {}
    for e in recorded:
        plan_eps.setdefault(e.id, stored.get(e.id, e))
    new_eps = [e for e in plan_eps.values() if e.id not in stored]
    appended, _ = parse_store(inputs.appended_raw)
    session_eps = list({**appended, **plan_eps}.values())
    # what fired this session: its episodes since HEAD, and those its earlier wraps committed (a session may
    # wrap once per work unit), read as `flowgit candidates --session` reads them
    whole_session = list({**{e.id: e for e in search_bytes(inputs.store_raw, session=inputs.session)},
                          **{e.id: e for e in session_eps}}.values())
    # the store the commit will hold: what is cited, the plan's episodes, and every episode the working store
    # appends to HEAD's (the session's, which candidates weigh as new evidence, as `flowgit candidates` does)
    episodes = {**stored, **appended, **plan_eps}
    # The gate's batch (G103): episodes this commit appends count once per agent, when HEAD held a store.
    held = inputs.head_store is not None or inputs.head_doc_raw is not None  # (the gate's: see checks._batch)
    batch = frozenset(appended) | {e.id for e in new_eps} if held else frozenset()

    checkpoint("2-candidates")
    thresholds = inputs.judging.thresholds
    weight = store_weight(inputs.store_raw + b"".join((e.to_json() + "\n").encode("utf-8") for e in new_eps))
    candidates = find_candidates(inputs.doc, whole_session, {**{e.id: e for e in whole_session}, **episodes},
                                 thresholds, inputs.day, inputs.blamed, batch, weight)

    checkpoint("3-validate")
    if plan:
        _refuse_replacing_hand_edits(cfg, inputs, plan)
        outcome = apply_plan(inputs.doc, plan, episodes, thresholds, date=inputs.day.isoformat(),
                             plan_ids=[e.id for e in recorded],
                             archived_before=lambda name: _archived_before(inputs, name), batch=batch,
                             starts=starts, weight=weight,
                             stored=lambda: {**parse_store(inputs.store_raw)[0], **episodes},
                             rules=inputs.judging.rules)
    else:
        outcome = validate_edits(inputs, episodes, batch, weight)
    checkpoint("5-demotion")
    annotate_dependants(outcome, inputs.head_doc, inputs.day.isoformat())
    if strict and outcome.refused:
        raise PromotionsRefused("--strict: " + "; ".join(r.sentence() for r in outcome.refused),
                                fix="record the missing episodes, or drop the promotion from the plan")
    attention = proven_touched(outcome.doc, session_eps)
    contradicted = _contradicted(attention, session_eps)
    if strict and contradicted:
        raise PromotionsRefused("--strict: " + "; ".join(_attention(a) for a in contradicted),
                                fix="re-examine each pattern's evidence chain (Step 5): demote it with the "
                                    "contradicting episode, or drop --strict once you have judged it holds")

    named = [op.name for op in (plan.patterns if plan else []) if op.op != "archive"]  # the plan says it fired
    keep = fired(outcome.doc, whole_session, thresholds, weight, cited, [*named, *(r.name for r in outcome.refused)])
    stale = find_stale(outcome.doc, episodes, inputs.blamed, inputs.day, thresholds, keep) if cleanup else []
    final = archive(outcome.doc, stale)

    events = diff_patterns(inputs.head_doc, final)
    unfired = unfired_raises(events, {e.id for e in whole_session})
    if strict and unfired:
        raise PromotionsRefused("--strict: " + "; ".join(unfired),
                                fix="cite the episode of this session where the pattern fired again (record it "
                                    "first), or drop the promotion from the plan")
    episode_ids = list(dict.fromkeys([*appended, *(e.id for e in new_eps)]))
    summary = _summary(inputs.head_doc, final, events)
    body = [r.sentence(where=False) for r in outcome.refused] + archival_reasons(plan, events)
    msg = message(events, inputs.day, inputs.session, episode_ids, body=body or None, override=override_reason(),
                  sections=summary["sections_changed"])
    own = sum(1 for i in episode_ids if same_source(episodes[i].session, inputs.session))  # this commit's only
    rewrapped = any(same_source(s, inputs.session) for s in inputs.head_sessions)  # its sections replaced already
    warnings = joined + unfired + section_warnings(inputs.head_doc, final,
                                                   [e.name for e in events if e.kind == GRADUATED],
                                                   replaced_already=rewrapped)
    warnings += added_near_duplicates(final, {e.name for e in events if e.kind == ADDED}) + typo_renames(events)
    warnings += action_date_warnings(inputs.head_doc, final, inputs.day)
    if inputs.date_warning:
        warnings.append(inputs.date_warning)
    if own == 0 and len(whole_session) > 0:  # the session recorded its facts, and an earlier wrap took them
        warnings.append(f"no new episodes from session {inputs.session} since its last wrap: if anything "
                        f"happened since, record it first (`flowgit episode add`, Step 1: episodic extraction)")
    elif own == 0:
        warnings.append(f"no new episodes from session {inputs.session}: Step 1 (episodic extraction) was "
                        f"skipped — record what happened (`flowgit episode add`) before compressing it")
    from flowgit.merge.setup import is_registered

    warnings += _attributes_left_staged(inputs.root)
    if not is_registered(cfg.root):
        warnings.append("flowgit's merge driver is not registered in this clone: run `flowgit init` before "
                        "sharing this memory (two wraps of one base would otherwise conflict line by line)")
    result = WrapResult(message=msg, diff=_unified(inputs.head_doc, final, cfg.continuity_rel, new_eps,
                                                     cfg.store_rel, inputs.appended_raw),
                        events=events, refused=outcome.refused, notes=outcome.notes, archived=stale,
                        new_episodes=new_eps, candidates=candidates, summary=summary, dry_run=dry_run,
                        recovered=recovered, mode="plan" if plan else "working tree", episode_ids=episode_ids,
                        session_episodes=own, ignored=outcome.ignored, warnings=warnings, attention=attention)
    head_text = inputs.head_doc.text if inputs.head_doc else None
    if final.text == head_text and not episode_ids and _store_as_head_has_it(inputs):
        result.nothing_to_do = True
        result.warnings.extend(_staged_apart(cfg, inputs.root))
        return result
    _refuse_losing_staged_changes(cfg, inputs.root)
    result.gate = judge_wrap(cfg, inputs, final, new_eps, msg)
    if dry_run or result.gate_refused:
        return result  # refused: nothing was written, exactly as the hook would have left it
    result.committed = _transaction(
        cfg, inputs, final, new_eps, msg,
        after=lambda: result.left_in_working_tree.extend(_leave_refused_edits(cfg, inputs, final, outcome.refused)))
    return result


def _leave_refused_edits(cfg: Config, inputs: Inputs, final: Document, refused: list) -> list[str]:
    """Once the wrap has committed, put each refused hand-edited line back into the working file as it was
    written, where the commit holds its put-back version: a refusal sets an edit aside, it does not delete
    what the user typed (the next wrap judges it again; ``git restore`` of the file drops it)."""
    doc, left = final, []
    typed = pattern_map(inputs.doc)
    for refusal in refused:
        at = pattern_map(doc).get(refusal.name) if refusal.written else None
        mine = typed.get(refusal.name)
        # (only where the put-back line stands in the section it was typed in: a refused move between
        # sections, a graduation or a demotion, is not written where it was never asked to stand)
        if at is not None and mine is not None and mine.section == at.section \
                and strip_eol(doc.lines[at.line]) != refusal.written:
            doc = doc.splice(at.line, at.line + 1, [refusal.written])
            left.append(refusal.name)
    if not left:
        return []
    wrote, data = _as_checked_out(inputs, final.text), _as_checked_out(inputs, doc.text)
    checkpoint("8-working-file")
    try:  # only over the bytes the wrap wrote (an editor's save since is never written over), and a failure
        atomic_write(cfg.continuity, data,  # here leaves the working file as committed, the line shown
                     before_replace=lambda: _still_holds(cfg.continuity, wrote))
    except (OSError, FlowgitError):
        return []
    return left


def _as_checked_out(inputs: Inputs, text: str) -> bytes:
    data = text.encode("utf-8")
    if inputs.on_disk is not None and inputs.on_disk.crlf:
        data = data.replace(b"\n", b"\r\n")  # as the checkout holds it (git records LF)
    return data


def _still_holds(path: Path, data: bytes) -> None:
    """Raise unless ``path`` holds exactly ``data``."""
    if path.read_bytes() != data:
        raise FlowgitError("the continuity file changed after the wrap wrote it", path=path)


def _store_as_head_has_it(inputs: Inputs) -> bool:
    """Whether the working tree's store is HEAD's, byte for byte (one that is not HEAD's plus appended lines,
    a byte-order mark put at its start, say, is a change the gate judges: not "nothing to wrap")."""
    if inputs.head_store is None:
        return not inputs.store_raw
    oid, size = inputs.head_store
    return len(inputs.store_raw) == size and blob_oid(inputs.store_raw, len(oid)) == oid


def _refuse_losing_staged_changes(cfg: Config, root: Path) -> None:
    """Stop (nothing written) where the index holds a change to the continuity file or the store that the
    working tree does not: the wrap stages the working tree's files, and the staged change would be in no
    commit, no index and no file (a store staged short of the working one, lines still to come, loses none).

    A file HEAD lacks is staged by ``flowgit init`` and then edited: the working file is the later one.
    """
    paths = (cfg.continuity_rel, cfg.store_rel)
    staged = [p for p in git(root, "diff", "--cached", "--name-only", "-z", "--", *literal(*paths),
                             check=False).decode("utf-8", "replace").split("\0") if p]
    if not staged:
        return
    apart = [p for p in git(root, "diff", "--name-only", "-z", "--", *literal(*staged),
                            check=False).decode("utf-8", "replace").split("\0") if p]
    held = head_entries(root, apart) if apart else {}
    for path in apart:
        if path not in held:
            continue
        if path == cfg.store_rel and _index_store_leads_working_store(cfg, root):
            continue
        raise FlowgitError(f"the index holds a staged change to {path} that the working tree does not hold: the "
                           "wrap commits the working tree's file, and the staged change would be lost",
                           path=path, fix=f"keep it by committing the index first (`git commit`, with no path: "
                                          f"`git commit -- {path}` would commit the working file; see `git diff "
                                          f"--cached -- {path}`), or drop it from the index (`git "
                                          f"restore --staged -- {path}`), then wrap")


def _index_store_leads_working_store(cfg: Config, root: Path) -> bool:
    """Whether the working store begins with the staged store (episodes appended since it was staged)."""
    staged = git(root, "show", f":{cfg.store_rel}", check=False)
    try:
        return cfg.store.read_bytes().startswith(staged)
    except OSError:
        return False


def _attributes_left_staged(root: Path) -> list[str]:
    """A warning when `.gitattributes` (where `flowgit init` names the merge driver) is staged and not
    committed: the wrap commits only the memory, and until the attributes are committed no other clone
    merges it by meaning (`flowgit sync` refuses to share it so)."""
    staged = git(root, "diff", "--cached", "--name-only", "--", ":(top,literal).gitattributes",
                 check=False).strip()
    if not staged or b"merge=flowgit" not in git(root, "show", ":.gitattributes", check=False):
        return []
    return ["`.gitattributes`, which names flowgit's merge driver, is staged but not committed: this wrap "
            "commits only the memory; commit it too (`git commit -m \"flowgit: merge attributes\" "
            "-- .gitattributes`) so every clone merges the memory by meaning"]


def _staged_apart(cfg: Config, root: Path) -> list[str]:
    """Warnings for staged changes to the continuity file or the store that differ from the working tree the
    wrap read (a staged deletion, say): the wrap leaves them, and a plain `git commit` would record them."""
    out = git(root, "diff", "--cached", "--name-status", "-z", "--", *literal(cfg.continuity_rel, cfg.store_rel),
              check=False).decode("utf-8", "replace").split("\0")
    changes = {"D": "deleted", "A": "added", "M": "changed", "T": "changed in type"}
    return [f"the index holds a staged change to {path} ({changes.get(status[:1], status)}) that this wrap "
            f"leaves as it is: a plain `git commit` would record it (`git restore --staged {path}` drops it)"
            for status, path in zip(out[::2], out[1::2]) if status and path]


def _attention(a: dict) -> str:
    return (f"Proven `{a['name']}` is touched by tension/outcome episode(s) {', '.join(a['episodes'])} "
            f"of this session")


def _contradicted(attention: list[dict], session_eps: list[Episode]) -> list[dict]:
    """The Proven patterns a *tension* episode of this session touches: Step 5 asks whether anything
    contradicted a graduated pattern, and a tension is the recorded contradiction. An outcome may as well
    confirm the pattern ("the budget held again"), so it is said prominently but does not stop --strict."""
    tensions = {e.id for e in session_eps if e.type == "tension"}
    return [a for a in attention if tensions.intersection(a["episodes"])]


def judge_wrap(cfg: Config, inputs: Inputs, final: Document, new_eps: list[Episode], msg: str) -> list:
    """The gate's verdict on exactly the tree and message this wrap would commit.

    The continuity file and the store are given as the bytes ``git add`` will
    record; HEAD's side as HEAD has them; the rules under HEAD's committed
    configuration, as the hook applies them.
    """
    from datetime import datetime, timezone

    from flowgit.checks.judge import Side, judge_change

    root = inputs.root
    head_sha_ = git(root, "rev-parse", "--verify", "-q", "HEAD", check=False).decode().strip() or None
    head_store = _head_store_bytes(inputs) if head_sha_ else None
    old = None
    if head_sha_ and (inputs.head_doc_raw is not None or head_store is not None):
        old = Side(continuity=inputs.head_doc_raw, store=head_store, continuity_path=cfg.continuity_rel,
                   store_path=cfg.store_rel, commit=head_sha_)
    store = inputs.store_raw
    if new_eps:
        prefix = b"\n" if store and not store.endswith(b"\n") else b""
        store = store + prefix + b"".join(e.to_json().encode("utf-8") + b"\n" for e in new_eps)
    if store:
        store = as_recorded(root, cfg.store_rel, store)
    new = Side(continuity=as_recorded(root, cfg.continuity_rel, final.text.encode("utf-8")),
               store=store if (store or head_store is not None) else None,
               continuity_path=cfg.continuity_rel, store_path=cfg.store_rel, when=datetime.now(timezone.utc))
    return judge_change(inputs.judging, old, new, message=msg, override=override_reason())


def _head_store_bytes(inputs: Inputs) -> bytes | None:
    """HEAD's store: the working tree's prefix when its blob id proves it is HEAD's, else read from git."""
    if inputs.head_store is None:
        return None
    oid, size = inputs.head_store
    prefix = memoryview(inputs.store_raw)[:size]
    if len(prefix) == size and blob_oid(prefix, len(oid)) == oid:
        return inputs.store_raw[:size]
    (data,) = blobs(inputs.root, [oid])
    return data




def _archived_before(inputs: Inputs, name: str) -> bool:
    log = git(inputs.root, "log", "-n", "200", "--format=%B", "--", *literal(inputs.cfg.continuity_rel), check=False)
    return f"Archived: {name}\n".encode() in log


def _transaction(cfg: Config, inputs: Inputs, final: Document, new_eps: list[Episode], msg: str,
                 after: Callable[[], None] | None = None) -> str:
    """Append, write, stage and commit under the repository lock; undo exactly on any failure; then, still
    under the lock, ``after`` (what the working tree keeps beyond the commit).

    Under the lock it first checks that nothing changed since the wrap read its
    inputs (another wrap may have committed meanwhile) and refuses before
    writing if anything did. See :mod:`flowgit.wrap.transaction` for the journal.
    """
    from flowgit.lock import RepoLock
    from flowgit.wrap.transaction import MESSAGE, check_unchanged, refuse_if_edited, sigterm_unwinds, undo_after

    gdir = git_dir(inputs.root)
    with RepoLock(gdir, "flowgit wrap"):
        check_unchanged(cfg, inputs)
        store = EpisodeStore(cfg.store)
        payload, _, _ = store.payload(new_eps)
        final_bytes = _as_checked_out(inputs, final.text) if final.text != inputs.doc.text else None
        journal = Journal.begin(cfg, final_bytes, payload, msg)
        with sigterm_unwinds():
            try:
                checkpoint("0-journal")
                store.append(new_eps)
                checkpoint("1-episodes")
                if final_bytes is not None:
                    atomic_write(cfg.continuity, final_bytes,  # (an editor's save since the wrap read the file
                                 before_replace=lambda: refuse_if_edited(cfg, journal))  # is never written over)
                checkpoint("4-sections")
                journal.committing(cfg)
                _staging(inputs.root, gdir, cfg.continuity_rel, cfg.store_rel)
                journal.staged()
                checkpoint("6-stage")
                sha = commit(inputs.root, msg, [cfg.continuity_rel, cfg.store_rel], message_path=gdir / MESSAGE)
                checkpoint("7-committed")
            except BaseException as exc:
                landed = undo_after(journal, exc)
                if not landed or not isinstance(exc, KeyboardInterrupt):
                    raise
                # Stopped (Ctrl-C, SIGTERM) after git had made the commit: the wrap is done, and says so
                return git(inputs.root, "rev-parse", "HEAD").decode().strip()
        journal.finish()
        if after is not None:
            after()
    return sha
