"""``flowgit wrap``: the six steps in order, as one transaction, ending in one generated commit.

With a plan, the plan says what happened; without one, the continuity file as
already edited in the working tree says it, and the edits are read back as
operations from the diff against HEAD. Either way the same immune system
validates every promotion, the same cleanup runs, and the commit message is
derived from the same facts — so the same change gives the same commit.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from flowgit.changes import ADDED, GRADUATED, INCREMENTED, RENAMED, PatternEvent, diff_patterns
from flowgit.checks.registry import override_reason
from flowgit.config import Config
from flowgit.continuity.document import Document, is_structural
from flowgit.continuity.patterns import iter_patterns, parse_pattern, pattern_map
from flowgit.continuity.sections import DEVELOPING, PROVEN, STATE
from flowgit.dates import parse_date, today as utc_today
from flowgit.episodes import Episode, EpisodeStore, lookup, make_episode, parse_store
from flowgit.errors import FlowgitError
from flowgit.evidence import assess
from flowgit.faults import checkpoint
from flowgit.fsio import atomic_write
from flowgit.git import blob_oid, blobs, git, git_dir, head_entries, head_sha, require_repo
from flowgit.repo import document_from_bytes, load_document
from flowgit.wrap.apply import Outcome, Refusal, apply_plan
from flowgit.wrap.candidates import Candidates, find_candidates
from flowgit.wrap.cleanup import Stale, archive, blame_dates, find_stale
from flowgit.wrap.message import message
from flowgit.wrap.plan import Plan
from flowgit.wrap.transaction import Journal, recover


class CommitRejected(FlowgitError):
    """git refused the commit (usually a hook: the gate)."""


class PromotionsRefused(FlowgitError):
    """--strict: a promotion failed validation, so the whole wrap was aborted."""


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

    def to_dict(self) -> dict:
        return {"committed": self.committed, "dry_run": self.dry_run, "nothing_to_do": self.nothing_to_do,
                "mode": self.mode, "recovered": self.recovered, "message": self.message,
                "events": [e.to_dict() for e in self.events], "refused": [r.to_dict() for r in self.refused],
                "notes": self.notes, "archived": [s.to_dict() for s in self.archived],
                "episodes_recorded": [e.id for e in self.new_episodes], "candidates": self.candidates.to_dict(),
                "summary": self.summary, "diff": self.diff}


@dataclass
class Inputs:
    """Everything the wrap reads, read once before it decides anything."""

    cfg: Config
    root: Path
    head_doc: Document | None
    head_store: tuple[str, int] | None  # HEAD's store blob: (id, size)
    doc: Document
    store_raw: bytes
    session: str
    agent: str
    day: date
    blamed: dict = field(default_factory=dict)

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


def read_inputs(cfg: Config, plan: Plan | None, session: str | None, day: str | None) -> Inputs:
    root = require_repo(cfg.root)
    (head_doc_raw,) = blobs(root, [f"HEAD:{cfg.continuity_rel}"])
    head_store = head_entries(root, [cfg.store_rel]).get(cfg.store_rel)
    chosen_session = (plan.session if plan else "") or session or os.environ.get("FLOWGIT_SESSION", "")
    if not chosen_session:
        raise FlowgitError("a wrap needs the session id", fix="pass --session, set plan.session, "
                                                             "or export FLOWGIT_SESSION")
    when_text = (plan.date if plan else "") or day or ""
    when = parse_date(when_text) if when_text else utc_today()
    if when is None:
        raise FlowgitError(f"`{when_text}` is not a date", path=plan.source if plan else None,
                           fix="use 2026-11-30")
    return Inputs(cfg=cfg, root=root,
                  head_doc=document_from_bytes(cfg, head_doc_raw, f"HEAD:{cfg.continuity_rel}"),
                  head_store=head_store, doc=load_document(cfg), store_raw=EpisodeStore(cfg.store).raw(),
                  session=chosen_session, agent=(plan.agent if plan else "") or os.environ.get("FLOWGIT_AGENT", ""),
                  day=when, blamed=blame_dates(root, cfg.continuity_rel) if head_doc_raw else {})


def plan_episodes(plan: Plan, inputs: Inputs) -> list[Episode]:
    return [make_episode(data, where=f"{plan.source}: field `plan.episodes[{i}]`", default_session=inputs.session,
                         default_agent=inputs.agent) for i, data in enumerate(plan.episodes)]


def validate_edits(inputs: Inputs, episodes: dict[str, Episode]) -> Outcome:
    """No-plan mode: validate every promotion the working-tree edit made; refused ones go back."""
    doc = inputs.doc
    outcome = Outcome(doc)
    before = pattern_map(inputs.head_doc) if inputs.head_doc else {}
    for event in diff_patterns(inputs.head_doc, doc):
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
        if old is not None and old.pattern.level == 1 and (p.level >= 3 or proven):
            problems.append("graduation goes 2x -> 3x; increment it to 2x first")
        verdict = assess(p.name, p.text, p.level, p.evidence, episodes, inputs.cfg.thresholds, in_proven=proven)
        problems += verdict.problems()
        if not problems:
            continue
        outcome.refused.append(Refusal(p.name, event.kind, old.pattern.level if old else 1, tuple(problems)))
        outcome.doc = _revert(outcome.doc, at.line, old)
    return outcome


def _revert(doc: Document, line: int, old) -> Document:
    """Put a refused pattern back as HEAD had it (or at 1x if it is new)."""
    if old is None:
        p = parse_pattern(doc.lines[line])
        restored, section = p.changed(level=1, evidence=(), category="", date=""), DEVELOPING
    else:
        restored, section = old.pattern, old.section
    return doc.move_line(line, section, restored.render())


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
        elif head.section_text(before) != final.section_text(sec):
            sections[sec.label] = {"replace": "replaced", "rewrite": "rewritten"}.get(sec.semantics.value, "updated")
    by_kind: dict[str, list[str]] = {}
    for e in events:
        by_kind.setdefault(e.kind, []).append(e.name)
    text = final.text
    return {"state_focus": focus, "sections_changed": sections, "patterns": by_kind,
            "lines": len(final.lines), "approx_tokens": len(text) // 4, "chars": len(text)}


def _unified(head: Document | None, final: Document, path: str, new_eps: list[Episode], store_rel: str) -> str:
    diff = "".join(difflib.unified_diff(head.lines if head else [], final.lines, f"a/{path}", f"b/{path}"))
    if new_eps:
        diff += f"--- a/{store_rel}\n+++ b/{store_rel}\n" + "".join(f"+{e.to_json()}\n" for e in new_eps)
    return diff


def commit(root: Path, text: str, paths: list[str]) -> str:
    """Commit through the git command line, so the user's hooks, identity and signing apply.

    git runs as a subprocess with the repository path as it is (no variable
    expansion). If this process is interrupted while git runs (SIGTERM during a
    slow hook), git is asked to stop too and waited for, so it removes its own
    ``index.lock`` and the rollback never races a commit that is still landing.
    """
    import signal
    import subprocess

    fd, msg_path = tempfile.mkstemp(prefix="flowgit-wrap-msg-", suffix=".txt")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        proc = subprocess.Popen(["git", "commit", "-q", "-F", msg_path, "--", *paths], cwd=os.fspath(root),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            out, err = proc.communicate()
        except BaseException:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                pass  # never SIGKILL git: it would leave index.lock behind
            raise
    finally:
        os.unlink(msg_path)
    if proc.returncode != 0:
        detail = "\n".join(x.decode("utf-8", "replace").strip() for x in (out, err) if x.strip())
        if "No space left on device" in detail or "File too large" in detail:
            raise FlowgitError("git could not write the commit (disk full); the wrap was rolled back\n" + detail,
                               path=root, fix="free disk space and run the wrap again")
        raise CommitRejected("git refused the wrap commit; nothing was changed\n" + detail)
    sha = head_sha(root)
    if sha is None:
        raise FlowgitError("git reported a commit but HEAD cannot be read", path=root)
    return sha


def run_wrap(cfg: Config, plan: Plan | None, *, session: str | None = None, day: str | None = None,
             strict: bool = False, dry_run: bool = False, cleanup: bool = True) -> WrapResult:
    require_repo(cfg.root)
    recovered = None if dry_run else recover(cfg)
    inputs = read_inputs(cfg, plan, session, day)
    recorded = plan_episodes(plan, inputs) if plan else []
    cited = {i for at in iter_patterns(inputs.doc) for i in at.pattern.evidence}
    cited |= {ref for op in (plan.patterns if plan else []) for ref in op.evidence}
    stored = lookup(inputs.store_raw, cited | {e.id for e in recorded})  # one pass over the store
    new_eps = [e for e in recorded if e.id not in stored]
    appended, _ = parse_store(inputs.appended_raw)
    session_eps = list({**appended, **{e.id: e for e in recorded}}.values())
    episodes = {**stored, **{e.id: e for e in recorded}}

    checkpoint("2-candidates")
    candidates = find_candidates(inputs.doc, session_eps, episodes, cfg.thresholds, inputs.day, inputs.blamed)

    checkpoint("3-validate")
    if plan:
        outcome = apply_plan(inputs.doc, plan, episodes, cfg.thresholds, date=inputs.day.isoformat(),
                             plan_ids=[e.id for e in recorded],
                             archived_before=lambda name: _archived_before(inputs, name))
    else:
        outcome = validate_edits(inputs, episodes)
    checkpoint("5-demotion")
    if strict and outcome.refused:
        raise PromotionsRefused("--strict: " + "; ".join(r.sentence() for r in outcome.refused),
                                fix="record the missing episodes, or drop the promotion from the plan")

    stale = find_stale(outcome.doc, episodes, inputs.blamed, inputs.day, cfg.thresholds) if cleanup else []
    final = archive(outcome.doc, stale)

    events = diff_patterns(inputs.head_doc, final)
    episode_ids = list(dict.fromkeys([*appended, *(e.id for e in new_eps)]))
    msg = message(events, inputs.day, inputs.session, episode_ids,
                  body=[r.sentence() for r in outcome.refused] or None, override=override_reason())
    result = WrapResult(message=msg, diff=_unified(inputs.head_doc, final, cfg.continuity_rel, new_eps,
                                                     cfg.store_rel),
                        events=events, refused=outcome.refused, notes=outcome.notes, archived=stale,
                        new_episodes=new_eps, candidates=candidates,
                        summary=_summary(inputs.head_doc, final, events), dry_run=dry_run, recovered=recovered,
                        mode="plan" if plan else "working tree")
    head_text = inputs.head_doc.text if inputs.head_doc else None
    if final.text == head_text and not episode_ids:
        result.nothing_to_do = True
        return result
    if dry_run:
        return result
    result.committed = _transaction(cfg, inputs, final, new_eps, msg)
    return result


def _archived_before(inputs: Inputs, name: str) -> bool:
    log = git(inputs.root, "log", "-n", "200", "--format=%B", "--", inputs.cfg.continuity_rel, check=False)
    return f"Archived: {name}\n".encode() in log


def _transaction(cfg: Config, inputs: Inputs, final: Document, new_eps: list[Episode], msg: str) -> str:
    """Append, write, stage and commit under the repository lock; undo exactly on any failure.

    Under the lock it first checks that nothing changed since the wrap read its
    inputs (another wrap may have committed meanwhile) and refuses before
    writing if anything did. See :mod:`flowgit.wrap.transaction` for the journal.
    """
    from flowgit.lock import RepoLock
    from flowgit.wrap.transaction import check_unchanged, sigterm_unwinds, undo_after

    gdir = git_dir(inputs.root)
    with RepoLock(gdir, "flowgit wrap"):
        check_unchanged(cfg, inputs)
        store = EpisodeStore(cfg.store)
        payload, _, _ = store.payload(new_eps)
        final_bytes = final.text.encode("utf-8") if final.text != inputs.doc.text else None
        journal = Journal.begin(cfg, final_bytes, payload, msg)
        with sigterm_unwinds():
            try:
                checkpoint("0-journal")
                store.append(new_eps)
                checkpoint("1-episodes")
                if final_bytes is not None:
                    atomic_write(cfg.continuity, final_bytes)
                checkpoint("4-sections")
                journal.committing(cfg)
                git(inputs.root, "add", "--", cfg.continuity_rel, cfg.store_rel)
                journal.staged()
                checkpoint("6-stage")
                sha = commit(inputs.root, msg, [cfg.continuity_rel, cfg.store_rel])
                checkpoint("7-committed")
            except BaseException as exc:
                undo_after(journal, exc)
                raise
        journal.finish()
    return sha
