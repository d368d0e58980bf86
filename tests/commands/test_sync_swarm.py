"""Four clones of one bare remote, ten wraps each, all pushing with sync at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flowgit.config import load_config
from flowgit.continuity.document import Document
from flowgit.continuity.patterns import pattern_map
from flowgit.episodes import make_episode, parse_store
from flowgit.evidence import assess
from flowgit.merge.markers import find_markers
from tests.commands import swarm_agent
from tests.conftest import git

AGENTS = 4
SEEDS = [make_episode({"type": "finding", "content": f"cache warmup must run first, seen in seed {n}",
                       "session": f"seed-{n}", "agent": f"seed-agent-{n}"}) for n in range(2)]
FOUNDATION = "".join(f"- rule {n}: keep the queue, the cache and the gadgets healthy in every wrap of the swarm\n"
                     for n in range(30))  # a file of realistic size: a merge note is small beside it
BASE = f"""# Continuity

## Current State
Focus: the swarm.

## Top of Mind
- the swarm

## Action Items
- watch the queue — seen: Nov 20, next: Nov 25

## Recent Context
The swarm started.

## Developing Knowledge
! shared_queue: the queue backlog must be watched | 1x
!! shared_cache: cache warmup must run first | 2x (CORE) [evidence: {SEEDS[0].id}, {SEEDS[1].id}]

## Proven Knowledge

## Foundation
Write the episode before the pattern.
{FOUNDATION}"""


@pytest.mark.slow
def test_four_agents_wrap_and_sync_in_parallel(tmp_path: Path, run):
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q")
    (seed / "CONTINUITY.md").write_text(BASE)
    (seed / ".flow").mkdir()
    (seed / ".flow" / "episodes.jsonl").write_text("".join(e.to_json() + "\n" for e in SEEDS))
    assert run(seed, "init", "--commit").code == 0
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(remote))
    clones = []
    for k in range(AGENTS):
        git(tmp_path, "clone", "-q", str(remote), f"agent{k}")
        clones.append(tmp_path / f"agent{k}")
        # no local hooks: sync's own gate judges every commit before it is pushed (and keeps the test fast)
        assert run(clones[-1], "init", "--no-hooks").code == 0
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    agents = [subprocess.Popen([sys.executable, swarm_agent.__file__, str(c), str(k), str(k + 7)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE) for k, c in enumerate(clones)]
    for agent in agents:
        _, err = agent.communicate(timeout=240)
        assert agent.returncode == 0, err.decode()
    logs = [json.loads((tmp_path / f"agent{k}.log.json").read_text()) for k in range(AGENTS)]
    assert all("errors" not in log for log in logs), [log.get("errors") for log in logs]
    # a wrap --push may only fail because others kept pushing first (its commit goes out with a later sync);
    # never a conflict, never a gate refusal
    failures = [f for log in logs for f in log.get("failed", [])]
    assert all("the push was rejected" in f for f in failures), failures
    for c in clones:  # whatever a last rejected push left behind goes out now, then everyone catches up
        assert run(c, "sync").code == 0
    for c in clones:
        assert run(c, "sync").code == 0
    tip = git(remote, "rev-parse", "main").strip()
    for c in clones:
        assert git(c, "rev-parse", "HEAD").strip() == tip and git(c, "status", "--porcelain") == ""

    store = (clones[0] / ".flow" / "episodes.jsonl").read_bytes()
    ids = [json.loads(line)["id"] for line in store.splitlines()]
    expected = {e for log in logs for e in log["episodes"]} | {e.id for e in SEEDS}
    assert len(ids) == len(set(ids)) and set(ids) == expected  # every episode of every agent exactly once

    doc = Document.parse((clones[0] / "CONTINUITY.md").read_text())
    pats = pattern_map(doc)
    episodes = parse_store(store)[0]
    cfg = load_config(clones[0])
    wanted = {**{swarm_agent.own(k): 3 for k in range(AGENTS)}, "shared_cache": 3, "shared_queue": 2}
    for name, level in wanted.items():
        at = pats[name]
        assert at.pattern.level == level and (at.section == "Proven Knowledge") == (level == 3), at
        verdict = assess(name, at.pattern.text, level, at.pattern.evidence, episodes, cfg.thresholds,
                         in_proven=level == 3)
        assert verdict.ok, verdict.problems()
    queue_agents = {episodes[i].agent for i in pats["shared_queue"].pattern.evidence}
    assert queue_agents == {f"agent-{k}" for k in range(AGENTS)}  # every agent's raise survived the merges

    fresh = tmp_path / "auditor"
    git(tmp_path, "clone", "-q", str(remote), str(fresh))
    audit = run(fresh, "audit", "--json")
    assert audit.code == 0 and json.loads(audit.out)["findings"] == [], audit.out
    for sha in git(remote, "rev-list", "--all").split():  # no version of either file ever held markers
        for path in ("CONTINUITY.md", ".flow/episodes.jsonl"):
            blob = subprocess.run(["git", "show", f"{sha}:{path}"], cwd=remote, capture_output=True).stdout
            assert find_markers(blob) is None, (sha, path)
