"""Writes deposit trees in the exact on-disk formats (for tests, the benchmark and the shipped sample).

``{config}/projects/{slug}/hypomnesis/{sid}/{clue,narrative,vector,entropy,coinage,markers}.md`` and
the transcript ``{config}/projects/{slug}/{sid}.jsonl``, quirks included when asked for.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ALL_FILES = ("clue.md", "narrative.md", "vector.md", "entropy.md", "coinage.md", "markers.md")


@dataclass
class Session:
    slug: str
    sid: str
    cwd: str | None                      # None: the field is absent (an old deposit)
    date: str
    request: str                         # what the index says the session began with
    topics: list[str]
    keywords: list[str]
    utterances: list[str] = field(default_factory=list)
    cross_refs: list = field(default_factory=list)    # dicts, or bare legacy strings like "#309"
    origin: str = ""
    direction: str = ""
    outcome: str = ""
    continuations: list[str] = field(default_factory=list)
    forks: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    coined: list[tuple[str, float]] = field(default_factory=list)
    marker_coinage: list[str] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)
    files: tuple[str, ...] = ALL_FILES
    unquoted_topics: bool = True
    reindexed: bool = False
    transcript: list[tuple[str, str]] | None = None   # (role, text); None: no transcript on disk
    first_request: str | None = None     # what the transcript's first request says (default: request)
    start_hour: int = 9


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _cross_refs(refs: list) -> str:
    if not refs:
        return "cross_refs: []\n"
    lines = ["cross_refs:"]
    for r in refs:
        if isinstance(r, dict):
            lines.append(f"  - {{kind: {r['kind']}, ref: {_q(r['ref'])}, channel: {r.get('channel', 'user')}}}")
        else:
            lines.append(f"  - {r}")  # legacy bare string: YAML reads '#…' as a comment (null)
    return "\n".join(lines) + "\n"


def clue(s: Session) -> str:
    cwd = "" if s.cwd is None else f"cwd: {_q(s.cwd)}\n"
    utter = "".join(f"  - {_q(u)}\n" for u in s.utterances)
    return (f"---\nsession_id: {_q(s.sid)}\n{cwd}date: {s.date}\nstarted_at: \"{s.date}T{s.start_hour:02d}:00:00Z\"\n"
            f"last_turn_at: \"{s.date}T{s.start_hour + 2:02d}:30:00Z\"\n"
            f"topics: [{', '.join(_q(t) for t in s.topics)}]\nkeywords: [{', '.join(_q(k) for k in s.keywords)}]\n"
            f"initial_request: {_q(s.request)}\n"
            + (f"key_utterances:\n{utter}" if utter else "key_utterances: []\n")
            + _cross_refs(s.cross_refs)
            + f"evidence_modes: {{topics: transcript, keywords: transcript}}\nderived_from: ssot:{s.sid}\n---\n"
            f"Session started with: {s.request}\nMain topics: {', '.join(s.topics)}\n\nNotable user statements:\n"
            + "".join(f"- \"{u}\"\n" for u in s.utterances))


def _narrative_block(s: Session, outcome: str) -> str:
    topics = ", ".join(s.topics) if s.unquoted_topics else ", ".join(_q(t) for t in s.topics)
    cwd = "" if s.cwd is None else f"cwd: {s.cwd}\n"
    return (f"---\nsession_id: {s.sid}\n{cwd}started_at: {s.date}T{s.start_hour:02d}:00:00Z\n"
            f"last_turn_at: {s.date}T{s.start_hour + 2:02d}:30:00Z\ndate: {s.date}\ntopics: [{topics}]\n"
            f"protocols_used: []\ncontinuations: [{', '.join(s.continuations)}]\nforks: [{', '.join(s.forks)}]\n"
            f"evidence_mode: transcript\nderived_from: ssot:{s.sid}\n---\n"
            f"## {s.date}T{s.start_hour:02d}:00:00Z — Initial Narrative\n\n### Origin\n{s.origin or s.request}\n\n"
            f"### Direction\n{s.direction or 'We worked through it.'}\n\n### Outcome\n{outcome}\n")


def narrative(s: Session) -> str:
    text = _narrative_block(s, "(first pass)" if s.reindexed else s.outcome or "Open.")
    if s.reindexed:
        text += "\n" + _narrative_block(s, s.outcome or "Open.")
    return text


def vector(s: Session) -> str:
    labels = ", ".join(_q(d) for d in s.decisions)
    return f"---\ndecisions: [{labels}]\n---\n## Decisions\n\n" + "".join(
        f"### {d}\nDecided during the session.\n\n" for d in s.decisions)


def entropy(s: Session) -> str:
    rows = "".join(f"| {i} | code | identifier | 1 |\n" for i in s.identifiers)
    return "| literal | source | source_namespace | session_count |\n|---|---|---|---|\n" + rows


def coinage(s: Session) -> str:
    rows = "".join(f"| {t} | {p:.2f} | 2 | 3 |\n" for t, p in s.coined)
    return "| token | precision | session_occ | corpus_occ |\n|---|---|---|---|\n" + rows


def markers(s: Session) -> str:
    items = "".join(f"- {t}\n" for t in s.marker_coinage)
    return (f"## MarkerProfile\n\n### coinage ({len(s.marker_coinage)})\n{items}\n### actor (1)\n- user\n\n"
            "### temporal (0)\n\n### emotional (0)\n\n### cognitive (1)\n- deciding\n\n### singularity (0)\n")


WRITERS = {"clue.md": clue, "narrative.md": narrative, "vector.md": vector, "entropy.md": entropy,
           "coinage.md": coinage, "markers.md": markers}


def transcript_lines(s: Session) -> list[str]:
    turns = s.transcript
    if turns is None:
        turns = [("user", s.first_request or s.request), ("assistant", f"Let's look at {', '.join(s.topics)}.")]
        turns += [("user", u) for u in s.utterances]
        turns += [("assistant", s.outcome or "Done.")]
    out, parent = [], None
    base = {"sessionId": s.sid, "cwd": s.cwd or "", "gitBranch": "main", "version": "2.0.0"}
    meta = {"type": "user", "isMeta": True, "timestamp": f"{s.date}T{s.start_hour:02d}:00:00Z", "uuid": str(uuid.uuid4()),
            "parentUuid": None, "message": {"role": "user", "content": "<command-name>/clear</command-name>"}, **base}
    out.append(json.dumps(meta))
    for i, (role, text) in enumerate(turns):
        ident = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{s.sid}/{i}"))
        ts = f"{s.date}T{s.start_hour:02d}:{min(59, 1 + i * 3):02d}:00Z"
        if role == "user":
            message = {"role": "user", "content": text}
        else:
            message = {"role": "assistant", "content": [{"type": "thinking", "thinking": "…"},
                                                        {"type": "text", "text": text}]}
        out.append(json.dumps({"type": role, "timestamp": ts, "uuid": ident, "parentUuid": parent,
                               "message": message, **base}, ensure_ascii=False))
        parent = ident
        if role == "assistant" and i == 1:
            out.append(json.dumps({"type": "user", "timestamp": ts, "uuid": str(uuid.uuid4()), "parentUuid": parent,
                                   "message": {"role": "user", "content": [
                                       {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}, **base}))
    out.append(json.dumps({"type": "summary", "summary": ", ".join(s.topics), "leafUuid": parent}))
    return out


def resume_from(config: Path, cwd: str, sid: str) -> str:
    """The resume command printed for a session read from ``config``: a tree the agent does not read by
    default (``$CLAUDE_CONFIG_DIR`` is unset in the tests), so the command names it."""
    import shlex

    return f"cd {cwd} && CLAUDE_CONFIG_DIR={shlex.quote(str(config.absolute()))} claude --resume {sid}"


def write_session(config: Path, s: Session, *, with_transcript: bool = True) -> Path:
    deposit = config / "projects" / s.slug / "hypomnesis" / s.sid
    deposit.mkdir(parents=True, exist_ok=True)
    for name in s.files:
        (deposit / name).write_text(WRITERS[name](s), encoding="utf-8")
    if with_transcript:
        (config / "projects" / s.slug / f"{s.sid}.jsonl").write_text("\n".join(transcript_lines(s)) + "\n",
                                                                     encoding="utf-8")
    return deposit


def write_noise(config: Path, slug: str) -> None:
    """Entries under hypomnesis/ that are not deposits."""
    hyp = config / "projects" / slug / "hypomnesis"
    (hyp / ".hyp-tmp4f2a").mkdir(parents=True, exist_ok=True)
    (hyp / ".hyp-tmp4f2a" / "clue.md").write_text("---\nsession_id: half-written\n", encoding="utf-8")
    (hyp / "subagent" / "x").mkdir(parents=True, exist_ok=True)
    (hyp / "subagent" / "x" / "clue.md").write_text("---\nsession_id: sub\n---\n", encoding="utf-8")
    (hyp / ".outcomes").mkdir(parents=True, exist_ok=True)
    (hyp / ".outcomes" / "log.md").write_text("outcomes\n", encoding="utf-8")


A = "-home-dev-payments"
B = "-home-dev-infra"
ISSUE = {"kind": "github_issue", "ref": "#412", "channel": "user"}


def story() -> list[Session]:
    """The payments story: a retry chain over two projects, a cache cluster, a coined concept, noise."""
    sid = lambda n: f"{n:08x}-5e55-4a1d-9c0f-{n:012x}"  # noqa: E731
    return [
        Session(A, sid(1), "/home/dev/payments", "2026-11-02", "Why do payment retries storm the provider?",
                ["retry storms", "payment client"], ["retry", "storm", "provider", "outage"],
                utterances=["we need a limit per request, not per client"], cross_refs=[ISSUE],
                origin="Payment retries multiplied load during the provider outage.",
                outcome="We measured the storm: five retries per failed request.",
                decisions=["measure before capping"], identifiers=["MAX_RETRIES"]),
        Session(A, sid(2), "/home/dev/payments", "2026-11-04", "Design a retry budget for the payment client",
                ["retry budget"], ["retry", "budget", "budget-first", "payment"], cross_refs=["#412"],
                utterances=["budget-first: decide the retry budget before the timeouts"],
                coined=[("budget-first", 0.92)], marker_coinage=["budget-first"], continuations=[sid(3)],
                outcome="A budget of three retries per request, shared across calls.",
                decisions=["cap retries per request"]),
        Session(B, sid(3), None, "2026-11-06", "Roll the retry budget out to the infra gateway",
                ["retry budget rollout"], ["retry", "budget", "gateway", "budget-first"], cross_refs=[ISSUE],
                marker_coinage=["budget-first"], outcome="The gateway enforces the budget in staging."),
        Session(B, sid(4), "/home/dev/infra", "2026-11-09", "Did the retry budget hold in production?",
                ["retry budget: production", "outage review"], ["retry", "budget", "production", "outage"],
                cross_refs=[ISSUE], reindexed=True, forks=[sid(99)],
                outcome="The retry budget held through the Saturday outage; load stayed flat.",
                utterances=["the budget held, load stayed flat"]),
        Session(A, sid(5), "/home/dev/payments", "2026-11-10", "Should we cache balances?",
                ["balance cache"], ["cache", "balances", "staleness"],
                first_request="How long can we cache account balances before they go stale?",
                outcome="Balances may be cached for thirty seconds."),
        Session(A, sid(6), "", "2026-11-12", "Cache invalidation for balances",
                ["cache invalidation"], ["cache", "invalidation", "balances"],
                utterances=["cache invalidation is the real problem here"],
                transcript=[("user", "Cache invalidation for balances"), ("assistant", "We can invalidate on write."),
                            ("user", "then invalidate on every ledger write"),
                            ("assistant", "Invalidation on ledger writes is in place.")],
                outcome="Invalidation on ledger writes is in place."),
        Session(B, sid(7), "/home/dev/infra", "2026-11-14", "Put a cache in front of the provider",
                ["provider cache"], ["cache", "provider", "ttl"], files=("clue.md",),
                outcome="A shared cache with a thirty second TTL."),
        Session(A, sid(8), "/home/dev/payments", "2026-11-15", "Fix the flaky login test",
                ["flaky login test"], ["flaky", "login", "test", "selenium"],
                outcome="The login test waits for the session cookie now."),
        Session(B, sid(9), "/home/dev/infra", "2026-11-16", "Speed up the deploy pipeline",
                ["deploy pipeline"], ["deploy", "pipeline", "docker"], outcome="Deploys take four minutes."),
        Session(A, sid(10), "/home/dev/payments", "2026-11-17", "Write the onboarding docs",
                ["onboarding docs"], ["onboarding", "docs", "readme"], outcome="The docs are drafted."),
    ]


def write_story(config: Path) -> list[Session]:
    sessions = story()
    for s in sessions:
        write_session(config, s)
    write_noise(config, A)
    return sessions


def write_transcript(config: Path, s: Session, *, carried_from: str | None = None) -> Path:
    """Only the transcript, as Claude Code leaves it when no deposit is written (no hypomnesis/ at all).

    ``carried_from``: the session this one resumes; Claude Code copies the earlier
    session's last lines, with their own ``sessionId``, to the top of the new file.
    """
    path = config / "projects" / s.slug / f"{s.sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = transcript_lines(s)
    if carried_from:
        carried = json.loads(lines[1])
        carried.update(sessionId=carried_from, uuid=str(uuid.uuid4()))
        carried["message"] = {"role": "user", "content": "(carried over from the resumed session)"}
        lines.insert(0, json.dumps(carried))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@dataclass
class Wrap:
    """One wrap commit of the continuity file: its session, day, file text and trailers."""

    session: str | None
    day: str
    text: str
    subject: str
    trailers: list[str] = field(default_factory=list)


def write_wraps(repo: Path, wraps: list[Wrap], path: str = "CONTINUITY.md") -> list[str]:
    """Commit each wrap with its own date; returns the commit ids, oldest first."""
    import os
    import subprocess

    shas = []
    for w in wraps:
        (repo / path).write_text(w.text, encoding="utf-8")
        trailers = ([f"Flow-Session: {w.session}"] if w.session else []) + w.trailers
        message = w.subject + ("\n\n" + "\n".join(trailers) if trailers else "") + "\n"
        env = {**os.environ, "GIT_AUTHOR_DATE": f"{w.day}T12:00:00Z", "GIT_COMMITTER_DATE": f"{w.day}T12:00:00Z"}
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
        subprocess.run(["git", "commit", "-q", "--no-verify", "-m", message], cwd=repo, check=True, env=env)
        shas.append(subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True,
                                   text=True).stdout.strip())
    return shas


def continuity(state: str, developing: list[str], proven: list[str] = ()) -> str:
    """A small FLOW continuity file with the given pattern lines."""
    return ("# Continuity\n\n## Current State\n" + state + "\n\n## Recent Context\nWe worked.\n\n"
            "## Developing Knowledge\n" + "".join(f"{p}\n" for p in developing)
            + "\n## Proven Knowledge\n" + "".join(f"{p}\n" for p in proven))
