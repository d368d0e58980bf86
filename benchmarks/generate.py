"""Realistic large inputs for the benchmarks: continuity files and episode stores."""

from __future__ import annotations

import json
import random
from pathlib import Path

WORDS = ("retry budget cache breaker provider outage latency queue worker deploy schema index "
         "migration payment ledger invoice token session agent review gate archive evidence pattern "
         "compression narrative state action backoff jitter idempotency storm load timeout pool").split()
TYPES = ("finding", "decision", "observation", "connection", "outcome", "tension")


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def continuity(lines: int = 500, chars: int = 140_000, seed: int = 1, *, evidence_ids: list[str] | None = None) -> str:
    """A FLOW-shaped continuity file of about ``lines`` lines and ``chars`` characters."""
    rng = random.Random(seed)
    per_line = max(20, chars // lines + 40)
    out = ["# Continuity (benchmark)", "", "<activation>", "## Current State"]
    out += [sentence(rng, 6)[:per_line] for _ in range(8)]
    out += ["", "## Top of Mind"] + [f"- {sentence(rng, 5)}" for _ in range(5)]
    out += ["", "## Action Items"] + [f"- {sentence(rng, 6)} — seen: Nov 2{i % 9}, next: Dec {i % 9 + 1}"
                                      for i in range(20)]
    out += ["</activation>", "", "## Recent Context", sentence(rng, 40), ""]
    out += ["## Developing Knowledge"]
    ids = evidence_ids or []
    for i in range(12):
        ev = f" [evidence: {ids[2 * i]}, {ids[2 * i + 1]}]" if len(ids) > 2 * i + 1 else ""
        level = "2x (BENCH)" + ev if ev else "1x"
        bang = "!!" if ev else "!"
        out.append(f"{bang} pattern_{i}: {sentence(rng, 10)} | {level}")
    out += ["", "## Proven Knowledge"]
    body_lines = lines - len(out) - 6
    for i in range(body_lines):
        text = sentence(rng, 200)[: per_line - 40]
        out.append(f"- fact {i}: {text}")
    out += ["", "## Foundation", "Write the episode first.", "", "## Partnership", "We decide in writing."]
    text = "\n".join(out) + "\n"
    delta = chars - len(text)  # spread the difference over the long Proven lines
    facts = [i for i, ln in enumerate(out) if ln.startswith("- fact ")]
    for n, i in enumerate(facts):
        share = delta // len(facts) + (1 if n < delta % len(facts) else 0) if delta > 0 else -((-delta) // len(facts) + 1)
        out[i] = out[i] + (" " + sentence(rng, 80))[: share] if share > 0 else out[i][: len(out[i]) + share]
    return "\n".join(out) + "\n"


def episodes(count: int, seed: int = 2, sessions: int = 500) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        out.append({
            "id": f"ep-{i:012x}", "ts": f"2026-{(i % 11) + 1:02d}-{(i % 27) + 1:02d}T10:00:00Z",
            "type": TYPES[i % 6], "content": f"{sentence(rng, 12)} #{i}", "session": f"s{i % sessions}",
            "agent": f"agent-{i % 3}", "tags": [rng.choice(WORDS), rng.choice(WORDS)],
        })
    return out


def write_store(path: Path, eps: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for e in eps:
            fh.write(json.dumps(e, ensure_ascii=False) + "\n")
