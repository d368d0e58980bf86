"""One agent of the swarm test: ten wraps in its own clone, each pushed with `flowgit wrap --push`.

Run as ``python swarm_agent.py CLONE K SEED``; writes ``CLONE.log.json`` with the
episode ids it recorded and the exit code of every wrap.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

from flowgit.episodes import episode_id

WORDS = ["lima", "mike", "november", "oscar", "papa", "quebec"]


def own(k: int) -> str:
    return f"own_{k}"


def contents(k: int, i: int) -> list[tuple[str, str]]:
    return [("finding", f"the {WORDS[k]} gadget fired again in wrap {i} of agent {k}"),
            ("observation", f"the queue backlog grew again during wrap {i} of agent {k}"),
            ("outcome", f"cache warmup ran first in wrap {i} of agent {k}")]


def ep(k: int, i: int, n: int) -> str:
    type_, content = contents(k, i)[n]
    return episode_id(type_, content, f"sess-{k}-{i}")


def plan(k: int, i: int) -> dict:
    ops: list[dict] = []
    if i == 0:
        ops.append({"op": "add", "name": own(k), "text": f"the {WORDS[k]} gadget needs care"})
    if i == 1:
        ops.append({"op": "increment", "name": "shared_queue", "evidence": [ep(k, 0, 1), "#1"], "category": "OPS"})
    if i == 2:
        ops.append({"op": "increment", "name": own(k), "evidence": [ep(k, 0, 0), ep(k, 1, 0), "#0"],
                    "category": "GADGET"})
    if i == 3:
        ops.append({"op": "graduate", "name": "shared_cache", "evidence": [ep(k, 1, 2), ep(k, 2, 2), "#2"]})
    if i == 4:
        ops.append({"op": "graduate", "name": own(k), "evidence": [ep(k, 3, 0), "#0"]})
    return {"session": f"sess-{k}-{i}", "agent": f"agent-{k}", "state": f"Focus: agent {k}, wrap {i}.",
            "episodes": [{"type": t, "content": c, "tags": ["swarm"]} for t, c in contents(k, i)],
            "patterns": ops}


def _why(out: str) -> str:
    """The sync's own account of a failed push, from the JSON documents the wrap printed."""
    decoder, pos, found = json.JSONDecoder(), 0, []
    while pos < len(out):
        while pos < len(out) and out[pos].isspace():
            pos += 1
        try:
            data, pos = decoder.raw_decode(out, pos)
        except ValueError:
            break
        sync = data.get("sync") if isinstance(data, dict) else None
        for part in (sync, data.get("error") if isinstance(data, dict) else None):
            if isinstance(part, dict) and isinstance(part.get("error"), dict):
                part = part["error"]  # {"ok": false, "error": {"message", "fix", …}}
            if isinstance(part, dict) and part.get("message"):
                found.append(str(part["message"]))
        if isinstance(data, dict):  # a wrap the gate refused: its findings, by code (what a failure must name)
            wrap = data.get("wrap") if isinstance(data.get("wrap"), dict) else data
            found += [f"{f.get('code')} {f.get('message')}" for f in wrap.get("gate") or []
                      if isinstance(f, dict) and f.get("severity") == "error"]
    return "\n".join(found)


def main() -> None:
    clone, k, seed = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    log = {"episodes": [], "codes": []}
    for i in range(10):
        time.sleep(rng.uniform(0, 0.4))
        plan_file = clone.parent / f"plan-{k}-{i}.json"
        plan_file.write_text(json.dumps(plan(k, i)))
        proc = subprocess.run([sys.executable, "-m", "flowgit", "wrap", "--plan", str(plan_file), "--no-cleanup",
                               "--push", "--json"], cwd=clone, capture_output=True, text=True)
        log["codes"].append(proc.returncode)
        if proc.returncode not in (0, 1):
            log.setdefault("errors", []).append(proc.stderr[-2000:])
        elif proc.returncode == 1:
            log.setdefault("failed", []).append(_why(proc.stdout) or (proc.stdout + proc.stderr)[-3000:])
        log["episodes"] += [ep(k, i, n) for n in range(3)]
    (clone.parent / f"{clone.name}.log.json").write_text(json.dumps(log))


if __name__ == "__main__":
    main()
