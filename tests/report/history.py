"""A scripted 40-wrap history of a continuity file, committed with real git.

Thirteen patterns go through every kind of life the report draws: added at
1x, incremented on two independent episodes, graduated to Proven on a third
from another session and agent, demoted with a reason, archived, renamed,
one promoted past the gate on a single source under a recorded override
(G103 + A301), one raised without evidence (G101). Each commit appends its
episodes to the store (ids derived from content, as flowgit writes them) and
carries the trailers a wrap would write.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from flowgit.episodes import make_episode

NAMES = ["retry_budget", "cache_first", "breaker_threshold", "idempotency_keys", "jitter_backoff", "queue_depth",
         "schema_guard", "ledger_replay", "token_refresh", "index_warmup", "deploy_freeze", "pool_sizing",
         "timeout_floor"]
START = date(2026, 10, 1)


@dataclass
class Pat:
    name: str
    level: int = 1
    proven: bool = False
    evidence: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    when: str = ""

    @property
    def text(self) -> str:
        return self.name.replace("_v2", "").replace("_", " ") + " holds under provider load"

    def line(self) -> str:
        ev = f" [evidence: {', '.join(self.evidence)}]" if self.evidence else ""
        notes = "".join(f" [{n}]" for n in self.notes)
        if self.proven:
            return f"!! {self.name}: {self.text} | 3x (RELIABILITY — {self.when}){ev}{notes}"
        if self.level >= 2:
            return f"!! {self.name}: {self.text} | 2x (RELIABILITY){ev}{notes}"
        return f"! {self.name}: {self.text} | 1x{notes}"


@dataclass
class Expected:
    names: set[str] = field(default_factory=set)          # final lane names
    graduations: dict[str, int] = field(default_factory=dict)  # lane -> promotions with evidence
    archived: set[str] = field(default_factory=set)
    demoted: set[str] = field(default_factory=set)
    weak: str = ""
    ungrounded: str = ""
    renamed: tuple[str, str] = ("", "")
    commits: int = 0


def _git(root: Path, *args: str, when: str | None = None) -> None:
    empty = root.parent / "empty.gitconfig"  # not /dev/null: a stray `git config --global` would replace it
    if not empty.exists():
        empty.write_text("")
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": str(empty), "GIT_AUTHOR_NAME": "Report Tester", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "Report Tester", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    if when:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when
    proc = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args[:2])} failed ({proc.returncode}): {proc.stderr.strip()}")


def build(root: Path, wraps: int = 40, *, hostile: str = "") -> Expected:
    """Write and commit ``wraps`` versions in ``root`` (a fresh directory); ``hostile`` text goes everywhere free text may."""
    _git(root, "init", "-q")
    (root / ".flow").mkdir()
    store = root / ".flow" / "episodes.jsonl"
    store.write_text("")
    live: dict[str, Pat] = {}
    exp = Expected(commits=wraps)
    counter = 0

    def episode(name: str, day: date, session: str, agent: str) -> str:
        nonlocal counter
        counter += 1
        words = name.replace("_v2", "").replace("_", " ")
        ep = make_episode({"type": "finding", "ts": f"{day.isoformat()}T08:00:00Z", "session": session,
                           "agent": agent, "tags": [name],
                           "content": f"{words} held under provider load again, observation {counter} {hostile}"})
        with store.open("a", encoding="utf-8") as fh:
            fh.write(ep.to_json() + "\n")
        return ep.id

    recorded: dict[str, str] = {}  # a pattern's first episode, committed a wrap before the one that cites it
    for n in range(wraps):
        day = START + timedelta(days=n)
        trailers: list[str] = []
        override = ""
        for i, base in enumerate(NAMES):
            t = 3 * i
            if n == t:
                live[base] = Pat(base)
                exp.names.add(base)
            p = live.get(base)
            if p is None:
                continue
            if n == t + 1 and i % 5 != 4 and i != 8:  # the first episode, in the session that saw it
                recorded[base] = episode(base, day, "sess-solo" if i == 6 else f"s{n}a",
                                         "agent-solo" if i == 6 else "agent-a")
            elif n == t + 2 and i == 8:  # raised without evidence, past the gate
                p.level = 2
                trailers.append(f"Incremented: {p.name}")
                exp.ungrounded = p.name
                exp.graduations[p.name] = exp.graduations.get(p.name, 0) + 1
            elif n == t + 2 and i % 5 != 4:
                if i == 6:  # one session, one agent: a single source
                    ids = [recorded[base], episode(base, day, "sess-solo", "agent-solo")]
                    exp.weak = p.name
                else:  # a second session and agent, recorded in the wrap that cites both
                    ids = [recorded[base], episode(base, day, f"s{n}b", "agent-b")]
                p.level, p.evidence = 2, ids
                trailers.append(f"Incremented: {p.name} [evidence: {', '.join(ids)}]")
                exp.graduations[p.name] = exp.graduations.get(p.name, 0) + 1
            elif n == t + 4 and i % 5 == 4:
                live.pop(base)
                trailers.append(f"Archived: {p.name}")
                exp.archived.add(p.name)
            elif n == t + 5 and i % 4 != 3 and i != 8:
                if i == 6:
                    ids = [episode(base, day, "sess-solo", "agent-solo")]
                    override = f"ship it before the demo {hostile}".strip()
                else:
                    ids = [episode(base, day, f"s{n}c", "agent-c")]
                p.proven, p.level, p.when, p.evidence = True, 3, day.isoformat(), p.evidence + ids
                trailers.append(f"Graduated: {p.name} [evidence: {', '.join(p.evidence)}]")
                exp.graduations[p.name] = exp.graduations.get(p.name, 0) + 1
            elif n == t + 7 and i == 2 and p.proven:
                exp.names.discard(p.name)
                exp.renamed = (p.name, p.name + "_v2")
                p.name = p.name + "_v2"
                exp.names.add(p.name)
            elif n == t + 9 and i == 1 and p.proven:
                against = episode(base, day, f"s{n}d", "agent-d")
                p.proven, p.level = False, 2
                p.notes.append(f"demoted {day.isoformat()}: failed under a cold cache ({against})")
                trailers.append(f"Demoted: {p.name}")
                exp.demoted.add(p.name)
        # REPLACED each wrap (fresh words, growing but within the State budget), as the protocol says
        state = f"Focus: wrap {n}. " + " ".join(f"w{n}s{i}" for i in range(min(n * 12, 420)))
        dev = [p.line() for p in live.values() if not p.proven]
        proven = [p.line() for p in live.values() if p.proven]
        text = "\n".join(["# Continuity — report test", "", "## Current State", state, "",
                          "## Developing Knowledge", *dev, "", "## Proven Knowledge", *proven, "",
                          "## Foundation", "Write the episode first.", ""])
        (root / "CONTINUITY.md").write_text(text, encoding="utf-8")
        message = f"Session wrap {day:%b} {day.day} {hostile}".rstrip() + f"\n\nFlow-Session: s{n}\n"
        message += "".join(t + "\n" for t in trailers)
        if override:
            message += f"Flow-Override: {override}\n"
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "--no-verify", "-m", message, when=f"{day.isoformat()}T12:00:00+0000")
    exp.names = {live_p.name for live_p in live.values()} | exp.archived
    old, new = exp.renamed
    if old in exp.graduations:
        exp.graduations[new] = exp.graduations.pop(old)
    return exp
