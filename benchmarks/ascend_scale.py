"""Scale benchmark for ``flowgit ascend`` on Claude Code transcripts alone (no deposits anywhere).

Ten thousand sessions over a hundred projects, each transcript shaped like a
real one: a meta line, the person's request, assistant turns with thinking
and tool calls, tool results carrying file contents (most of the bytes), a
few more person turns, a summary. Every fifth session resumes the one before
and names the same issue, so lines of work exist to be found. The baseline is
``grep -rl`` for the recall's issue id over the same tree, measured in the
same run; memory is the peak resident size of the whole process.
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path

WORDS = ("retry budget cache breaker provider outage latency queue worker deploy schema index migration payment "
         "ledger invoice token session webhook signature search flag tracing span sampling quota tenant export "
         "import render template font archive backfill replica cutover rotation secret gateway").split()


def _line(kind: str, sid: str, cwd: str, ts: str, content, **extra) -> str:
    body = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": sid,
            "version": "2.0.14", "gitBranch": "main", "type": kind, "timestamp": ts, "uuid": str(uuid.uuid4()),
            "message": {"role": "user" if kind == "user" else "assistant", "content": content}, **extra}
    return json.dumps(body, separators=(",", ":"))


def transcript(rng: random.Random, sid: str, cwd: str, day: str, issue: int, resumes: str | None) -> str:
    topic = rng.sample(WORDS, 3)
    ts = lambda m: f"{day}T10:{m:02d}:00.000Z"  # noqa: E731
    file_body = "\n".join(f"def {rng.choice(WORDS)}_{i}(x):\n    return x  # " + " ".join(rng.sample(WORDS, 6))
                          for i in range(rng.randrange(40, 90)))
    lines = []
    if resumes:
        lines.append(_line("user", resumes, cwd, ts(0), "carried over from the previous session"))
    lines.append(_line("user", sid, cwd, ts(0), "<command-name>/clear</command-name>", isMeta=True))
    lines.append(_line("user", sid, cwd, ts(1), f"Work on the {topic[0]} {topic[1]} for #{issue}: "
                                                f"the {topic[2]} keeps failing in src/{topic[0]}/{topic[1]}.py"))
    lines.append(_line("assistant", sid, cwd, ts(2), [
        {"type": "thinking", "thinking": " ".join(rng.choice(WORDS) for _ in range(80)), "signature": "x" * 200},
        {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": f"{cwd}/src/{topic[0]}.py"}}]))
    lines.append(_line("user", sid, cwd, ts(3), [{"type": "tool_result", "tool_use_id": "toolu_1",
                                                  "content": file_body}]))
    lines.append(_line("assistant", sid, cwd, ts(4), [{"type": "text", "text": f"The {topic[2]} path retries "
                                                                             "without a limit."}]))
    for m in range(rng.randrange(2, 5)):
        lines.append(_line("user", sid, cwd, ts(5 + m * 3), f"let's make the {rng.choice(topic)} "
                                                           f"{rng.choice(WORDS)} explicit and test it"))
        lines.append(_line("assistant", sid, cwd, ts(6 + m * 3), [
            {"type": "tool_use", "id": f"toolu_{m + 2}", "name": "Edit",
             "input": {"file_path": f"{cwd}/src/{topic[0]}.py", "old_string": file_body[:400],
                       "new_string": file_body[:420]}}]))
        lines.append(_line("user", sid, cwd, ts(7 + m * 3), [{"type": "tool_result", "tool_use_id": f"toolu_{m + 2}",
                                                              "content": "The file has been updated."}]))
    lines.append(json.dumps({"type": "summary", "summary": f"{topic[0]} {topic[1]} fix", "leafUuid": str(uuid.uuid4())}))
    return "\n".join(lines) + "\n"


def transcript_tree(root: Path, sessions: int = 10_000, projects: int = 100) -> Path:
    rng = random.Random(17)
    config = root / "claude"
    previous: dict[int, str] = {}
    for n in range(sessions):
        slug = f"-home-dev-project{n % projects:03d}"
        folder = config / "projects" / slug
        folder.mkdir(parents=True, exist_ok=True)
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        line = n // 5
        resumes = previous.get(line) if n % 5 else None
        day = f"2026-{(n // 900) % 12 + 1:02d}-{n % 28 + 1:02d}"
        (folder / f"{sid}.jsonl").write_text(transcript(rng, sid, f"/home/dev/project{n % projects:03d}", day,
                                                        1000 + line, resumes))
        previous[line] = sid
    return config


def bench(tmp: Path, runs: int, median_time, peak_rss) -> list[tuple[str, float, str | None]]:
    """``flowgit ascend`` over 10,000 transcripts against ``grep -rl`` over the same tree, same run."""
    import subprocess
    import sys

    config = transcript_tree(tmp)
    repo = tmp / "empty"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    floor = median_time(["grep", "-rl", "#1500", str(config)], runs, check=False)
    argv = [sys.executable, "-m", "flowgit", "ascend", "that whole line of work on issue #1500", "--claude-dir",
            str(config), "--json"]
    out = json.loads(subprocess.run(argv, cwd=repo, capture_output=True, text=True, check=True).stdout)
    found = len(out["unit"]["members"]) if out.get("unit") else 0
    wall = median_time(argv, runs, cwd=repo)
    peak = peak_rss(argv, repo)
    return [("grep -rl over 10,000 transcripts (floor)", floor, None),
            (f"flowgit ascend, 10,000 transcripts, no deposits (peak {peak / 1024:.0f} MB, {found} sessions found)",
             wall, "grep -rl")]


def history_bench(tmp: Path, runs: int, median_time, history_repo, commits: int = 5_000
                  ) -> list[tuple[str, float, str | None]]:
    """``flowgit ascend`` reading only the continuity file's history (the git partition), a first answer and
    one ``--state`` answer, against ``git log -p`` and ``flowgit log`` over the same repository, same run."""
    import subprocess
    import sys

    root = history_repo(tmp, commits=commits)
    empty = tmp / "no-deposits"
    empty.mkdir()
    floor = median_time(["git", "log", "-p", "--", "CONTINUITY.md"], runs, cwd=root)
    log = median_time([sys.executable, "-m", "flowgit", "log", "--json"], runs, cwd=root)
    first = [sys.executable, "-m", "flowgit", "ascend", "that whole line of work on the retry budget",
             "--claude-dir", str(empty), "--partition", "git", "--json"]
    out = json.loads(subprocess.run(first, cwd=root, capture_output=True, text=True, check=True).stdout)
    state = tmp / "state.json"
    state.write_text(json.dumps(out["state"]))
    answer = [sys.executable, "-m", "flowgit", "ascend", "--state", str(state),
              "--refine" if out["status"] in ("gate", "inline") else "--rescope", "widen", "--json"]
    return [(f"git log -p -- CONTINUITY.md (floor), {commits:,} commits", floor, None),
            ("flowgit log (the same history walk)", log, "git log -p"),
            (f"flowgit ascend --partition git, first answer ({out['status']})", median_time(first, runs, cwd=root),
             "git log -p"),
            ("flowgit ascend --partition git, one --state answer", median_time(answer, runs, cwd=root),
             "git log -p")]
