"""``flowgit demo``: the product in a temporary repository with the shipped sample data.

Each scene runs the real command (in-process, in the temporary repository) and
says in plain words what it shows. Nothing outside the temporary directory is
touched; it is removed at the end unless ``--keep``.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from flowgit.errors import FlowgitError
from flowgit.resources import sample_dir


@contextmanager
def _in_dir(path: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


# When the sample's sessions happened: the demo's history is dated as they were, so what the history shows
# (log, report, ascend's history partition) agrees with the episodes' own dates whatever day it runs.
CONTINUITY_BEGUN = "2026-11-27T18:00:00Z"  # after the last earlier session's fact
SATURDAY = "2026-11-28"  # the session the walk-through wraps (its plan's --date)


def _git(root: Path, *args: str, when: str | None = None) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "flowgit demo", "GIT_AUTHOR_EMAIL": "demo@flowgit.invalid",
           "GIT_COMMITTER_NAME": "flowgit demo", "GIT_COMMITTER_EMAIL": "demo@flowgit.invalid",
           **({"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when} if when else {})}
    proc = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise FlowgitError(f"demo: git {args[0]} failed: {proc.stderr.strip()}")


def _commit_past_sessions(root: Path) -> None:
    """Commit the sample's past as it happened, through the installed hooks (no --no-verify).

    Each earlier session's fact lands in a commit of its own (one agent's batch in one commit
    counts as one source), then the continuity file those facts ground, so the history the
    demo later audits is clean.
    """
    store = root / ".flow" / "episodes.jsonl"
    lines = store.read_bytes().splitlines(keepends=True)
    _git(root, "rm", "-q", "-f", "--cached", "--ignore-unmatch", "--", "CONTINUITY.md")  # unstage init's skeleton (the file stays)
    _git(root, "add", "--", ".gitattributes")
    for count in range(1, len(lines) + 1):
        store.write_bytes(b"".join(lines[:count]))
        episode = json.loads(lines[count - 1])
        _git(root, "add", "--", ".flow/episodes.jsonl")
        _git(root, "commit", "-q", "-m", f"Facts of session {episode.get('session', '?')}", when=episode.get("ts"))
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "Start continuity for the payments service", when=CONTINUITY_BEGUN)


@contextmanager
def _committing_at(when: str) -> Iterator[None]:
    """Commits made inside (the wrap's) dated ``when``: the environment git reads, restored after."""
    keys = ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE")
    saved = {key: os.environ.get(key) for key in keys}
    os.environ.update({key: when for key in keys})
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class Demo:
    """A scripted walk-through; each scene is a title, a sentence and a command."""

    def __init__(self, root: Path, as_json: bool) -> None:
        self.root, self.as_json = root, as_json
        self.record: list[dict] = []

    def scene(self, title: str, says: str, argv: list[str], *, expect: int = 0, stdin: str | None = None,
              stdin_from: str | None = None) -> int:
        """Run one command as the walk-through shows it; ``stdin_from`` names the file its input comes from."""
        from flowgit.cli import main

        if not self.as_json:
            fed = f" < {stdin_from}" if stdin_from else ""
            print(f"\n== {title}\n{says}\n$ flowgit {shlex.join(argv)}{fed}")
            if stdin_from and stdin:
                first = stdin.splitlines()[0]
                print(f"  ({len(stdin.splitlines())} JSON lines, the first: {first[:100]}"
                      f"{' …' if len(first) > 100 else ''})")
            sys.stdout.flush()
        old_stdin = sys.stdin
        if stdin is not None:
            import io
            sys.stdin = io.StringIO(stdin)
        try:
            with _in_dir(self.root):
                if self.as_json:
                    import contextlib
                    import io
                    buf = io.StringIO()
                    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
                        code = main(argv)
                else:  # the walkthrough is read as one text: a refusal a command writes to stderr shows in it
                    import contextlib

                    with contextlib.redirect_stderr(sys.stdout):
                        code = main(argv)
        finally:
            sys.stdin = old_stdin
        self.record.append({"scene": title, "command": ["flowgit", *argv], "exit": code, "expected": expect})
        if code != expect:
            raise FlowgitError(f"demo scene `{title}` exited {code}, expected {expect}")
        return code


SCENES: list[Callable[[Demo], None]] = []


def scene(fn: Callable[[Demo], None]) -> Callable[[Demo], None]:
    """Register a demo scene (later issues add theirs to the same list)."""
    SCENES.append(fn)
    return fn


@scene
def foundation(demo: Demo) -> None:
    samples = sample_dir()
    demo.scene("A fresh repository", "flowgit init writes the continuity skeleton and an empty episodic store "
               "(the gate comes a few steps on).", ["init", "--no-hooks"])
    shutil.copy(samples / "continuity.md", demo.root / "CONTINUITY.md")
    lines = (samples / "episodes.jsonl").read_text(encoding="utf-8")
    demo.scene("Facts first", "A session's facts go to the append-only episodic store before anything else.",
               ["episode", "add"], stdin=lines, stdin_from="episodes.jsonl")
    _commit_past_sessions(demo.root)
    demo.scene("What the store holds", "Episodes are searchable by text, type, tag, session and time.",
               ["episode", "search", "retries"])
    demo.scene("Patterns in the continuity file",
               "Each pattern has a level (1x, 2x, 3x) and, from 2x on, the episodes that ground it.",
               ["patterns"])
    demo.scene("FlowScript lint", "Markers like [parking(why, until)] and ><[axis] are checked.", ["lint"])


@scene
def gate_and_wrap(demo: Demo) -> None:
    from flowgit.resources import template

    demo.scene("Install the gate", "A pre-commit hook now checks every commit of the continuity file.",
               ["install-hook"])
    path = demo.root / "CONTINUITY.md"
    original = path.read_text(encoding="utf-8")
    path.write_text(original.replace("! cache_first: serve balances from cache before asking the provider | 1x",
                                     "!! cache_first: serve balances from cache before asking the provider | 2x"),
                    encoding="utf-8")
    _git(demo.root, "add", "CONTINUITY.md")
    demo.scene("The gate refuses a graduation without evidence",
               "A hand edit promotes cache_first to 2x with no [evidence: …]: the check that the hook runs "
               "rejects it.", ["check"], expect=1)
    path.write_text(original, encoding="utf-8")
    _git(demo.root, "add", "CONTINUITY.md")
    plan = json.loads(template("wrap-plan.example.json"))
    plan["patterns"].append({"op": "increment", "name": "cache_first", "evidence": ["ep-1c1e2cfab3cc"]})
    (demo.root.parent / f"{demo.root.name}-plan.json").write_text(json.dumps(plan, indent=2), encoding="utf-8")
    session_facts = "".join(json.dumps({**e, "session": plan["session"], "agent": plan["agent"],
                                        "ts": f"{SATURDAY}T{15 + i:02d}:00:00Z"}) + "\n"
                            for i, e in enumerate(plan["episodes"]))
    demo.scene("A new session's facts", "Saturday's session records what happened before deciding anything.",
               ["episode", "add"], stdin=session_facts, stdin_from="saturday.jsonl")
    demo.scene("What the session suggests", "Step 2 on its own: which patterns fired again, which are ready.",
               ["candidates", "--session", "sess-sat", "--date", SATURDAY])
    with _committing_at(f"{SATURDAY}T18:00:00Z"):
        demo.scene("The wrap",
                   "Episodes first, then every section with its own semantics. retry_budget graduates on three "
                   "independent episodes; cache_first has only one, so it stays at 1x and the wrap says why.",
                   ["wrap", "--plan", str(demo.root.parent / f"{demo.root.name}-plan.json"), "--date", SATURDAY])
    demo.scene("Audit with plain git",
               "The wrap's trailers make the history queryable without flowgit.",
               ["episode", "show", "ep-144546702c2f"])
    log = subprocess.run(["git", "log", "--format=%(trailers:key=Graduated,valueonly)"], cwd=demo.root,
                         capture_output=True, text=True).stdout.strip()
    if not demo.as_json:
        print(f"$ git log --format='%(trailers:key=Graduated,valueonly)'\n{log}")


@scene
def ascend_scene(demo: Demo) -> None:
    deposits = sample_dir() / "claude"
    demo.scene("Recall a whole line of work",
               "Scattered session deposits (the shipped sample, in the exact on-disk formats) already imply a "
               "chain: ascend infers the connections while it reads, checks each claim against the session's own "
               "record, and gives every session a way back in. It writes nothing.",
               ["ascend", "that whole line of work on the retry budget", "--claude-dir", str(deposits),
                "--partition", "claude", "--no-interactive"])
    demo.scene("A recall one session answers", "Not everything is bigger than a session; ascend says so.",
               ["ascend", "the session where we fixed the flaky login test", "--claude-dir", str(deposits),
                "--partition", "claude", "--no-interactive"])


def report_scene(demo: Demo, page: Path) -> None:
    """The last scene, after every registered one: the whole story drawn as one page that outlives the demo."""
    demo.scene("See it", "flowgit report draws what the history holds — each pattern's lane, its evidence by "
               "session and agent, the file's size against its budgets, the audit — as one HTML file that opens "
               "from disk.", ["report", "-o", str(page)])


def run_demo(*, keep: bool = False, as_json: bool = False) -> None:
    base = Path(tempfile.mkdtemp(prefix="flowgit-demo-"))
    root = base / "repo"
    root.mkdir()
    page = base / "report.html"
    done = False
    try:
        _git(root, "init", "-q")
        demo = Demo(root, as_json)
        for fn in SCENES:
            fn(demo)
        report_scene(demo, page)
        done = True
        if as_json:
            print(json.dumps({"repository": str(root) if keep else None, "report": str(page),
                              "scenes": demo.record}, indent=2))
        else:
            print(f"\nDone: {len(demo.record)} steps ran in a throwaway repository"
                  + (f" kept at {root}" if keep else " (removed)") + ".")
            print(f"The report is kept: {page}\nOpen it in a browser: {page.as_uri()}")
    finally:
        if not keep:
            if done:  # keep only the page the demo just pointed at
                for child in base.iterdir():
                    if child.is_dir():
                        shutil.rmtree(child, ignore_errors=True)
                    elif child != page:
                        child.unlink()
            else:
                shutil.rmtree(base, ignore_errors=True)
