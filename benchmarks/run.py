"""Benchmark runner: generates large inputs, times whole processes, prints medians and ratios.

    python benchmarks/run.py [foundation|gate|wrap|history|audit|ascend|ascend-transcripts|ascend-history|ascend-recall|report|merge|agent|all] [--runs N]

Every figure is the median of N whole-process runs (default 5) next to the
baseline its issue names, so a regression shows up as a ratio, not a feeling.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks import generate  # noqa: E402

FLOWGIT = [sys.executable, "-m", "flowgit"]
BENCHES: dict[str, Callable[[Path, int], list[tuple[str, float, str | None]]]] = {}


def bench(name: str):
    def register(fn):
        BENCHES[name] = fn
        return fn
    return register


def median_time(argv: list[str], runs: int, *, cwd: Path | None = None, shell: bool = False,
                stdin: bytes | None = None, check: bool = True, out: Path | None = None) -> float:
    """Median wall time of ``runs`` whole processes; stdout goes to ``out`` when given (GNU grep stops at
    its first match when it sees stdout is /dev/null, so a grep floor must write somewhere real)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        sink = open(out, "wb") if out else subprocess.DEVNULL
        try:
            proc = subprocess.run(argv if not shell else " ".join(argv), cwd=cwd, shell=shell, input=stdin,
                                  stdout=sink, stderr=subprocess.PIPE)
        finally:
            if out:
                sink.close()
        times.append(time.perf_counter() - start)
        if check and proc.returncode not in (0, 1):
            raise SystemExit(f"benchmark command failed ({proc.returncode}): {argv}\n{proc.stderr.decode()}")
    return statistics.median(times)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def new_repo(base: Path, name: str) -> Path:
    root = base / name
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.name", "bench")
    git(root, "config", "user.email", "bench@example.com")
    git(root, "config", "commit.gpgsign", "false")
    return root


@bench("foundation")
def foundation(tmp: Path, runs: int) -> list[tuple[str, float, str | None]]:
    doc = tmp / "big.md"
    doc.write_text(generate.continuity(500, 140_000))
    store = tmp / "store.jsonl"
    generate.write_store(store, generate.episodes(100_000))
    parse_render = [sys.executable, "-c",
                    "import sys; from flowgit.continuity.document import Document; "
                    "t=open(sys.argv[1], encoding='utf-8').read(); d=Document.parse(t); assert d.text == t",
                    str(doc)]
    python_start = median_time([sys.executable, "-c", "pass"], runs)
    rows = [
        ("python -c pass (start-up floor)", python_start, None),
        (f"parse+render {len(doc.read_text()):,} chars (process)", median_time(parse_render, runs), "python -c pass"),
        ("flowgit patterns on it", median_time(FLOWGIT + ["patterns", str(doc)], runs), "python -c pass"),
        ("flowgit episode search over 100,000 (33,000 hits)", median_time(
            FLOWGIT + ["--store", str(store), "episode", "search", "retry", "--json"], runs, out=tmp / "out"),
         "grep -c"),
        ("flowgit episode search over 100,000 (1 hit)", median_time(
            FLOWGIT + ["--store", str(store), "episode", "search", "#4242", "--json"], runs, out=tmp / "out"),
         "grep -c"),
        ("grep -c retry store (floor)", median_time(["grep", "-c", "retry", str(store)], runs, out=tmp / "out"),
         None),
        ("flowgit --help start-up", median_time(FLOWGIT + ["--help"], runs), "python -c pass"),
    ]
    return rows


def gate_repo(tmp: Path, store_size: int = 100_000) -> tuple[Path, list[dict]]:
    """A repository with a 500-line, ~140,000-character continuity file and a large store, committed.

    It is 139,500 characters so the staged change below stays within the 140,000 budget.
    """
    root = new_repo(tmp, "gate")
    eps = generate.episodes(store_size)
    ids = [e["id"] for e in eps[:24]]
    for i, e in enumerate(eps[:24]):  # make the cited episodes about their patterns
        e["content"] = f"pattern_{i // 2} fired again: " + e["content"]
        e["session"] = f"s{i}"
    (root / "CONTINUITY.md").write_text(generate.continuity(500, 139_500, evidence_ids=ids))
    generate.write_store(root / ".flow" / "episodes.jsonl", eps)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root, eps


from benchmarks import gate as gate_bench  # noqa: E402  (the gate's own module)

bench("gate")(gate_bench.run)


@bench("wrap")
def wrap_bench(tmp: Path, runs: int) -> list[tuple[str, float, str | None]]:
    """A wrap with 20 pattern operations on a 500-line file against a 100,000-episode store."""
    import json

    root, _ = gate_repo(tmp)
    plan_eps, ops = [], []
    for i in range(4):  # graduate 4 of the 2x patterns: one new episode each from a new session
        plan_eps.append({"type": "outcome", "content": f"pattern_{i} fired once more in production"})
        ops.append({"op": "graduate", "name": f"pattern_{i}", "evidence": [f"#{len(plan_eps) - 1}"]})
    for i in range(4, 10):  # strengthen six more 2x patterns
        plan_eps.append({"type": "finding", "content": f"pattern_{i} fired again today"})
        ops.append({"op": "increment", "name": f"pattern_{i}", "evidence": [f"#{len(plan_eps) - 1}"]})
    for i in range(8):
        ops.append({"op": "add", "name": f"new_pattern_{i}", "text": f"a new observation number {i} about the queue"})
    ops += [{"op": "archive", "name": "pattern_10"}, {"op": "archive", "name": "pattern_11"}]
    plan = {"session": "bench-wrap", "agent": "bench", "episodes": plan_eps, "state": "Focus: benchmark.",
            "recent": "We measured the wrap.", "patterns": ops}
    assert len(ops) == 20
    plan_path = tmp / "plan.json"
    plan_path.write_text(json.dumps(plan))
    store = root / ".flow" / "episodes.jsonl"
    size = store.stat().st_size
    times = []
    for _ in range(runs):
        git(root, "reset", "-q", "--hard", "HEAD")
        start = time.perf_counter()
        proc = subprocess.run(FLOWGIT + ["wrap", "--plan", str(plan_path), "--no-cleanup", "--json"], cwd=root,
                              capture_output=True)
        times.append(time.perf_counter() - start)
        data = json.loads(proc.stdout or b"{}")
        if proc.returncode != 0 or not data.get("committed") or data.get("refused"):
            raise SystemExit(f"wrap benchmark failed: {proc.stderr.decode()} {data.get('refused')}")
        wrapped = {p: (root / p).read_bytes() for p in ("CONTINUITY.md", ".flow/episodes.jsonl")}
        git(root, "reset", "-q", "--hard", "HEAD~1")
        with store.open("r+b") as fh:
            fh.truncate(size)
    return [("git add + git commit of the same files (floor)", _commit_floor(root, runs, wrapped), None),
            ("flowgit wrap, 20 ops, 500 lines, 100,000 episodes", statistics.median(times), "git add + git commit")]


def _commit_floor(root: Path, runs: int, files: dict[str, bytes]) -> float:
    """Plain git committing the wrap's result: the store blob alone costs a hash and a compression."""
    times = []
    for _ in range(runs):
        for rel, data in files.items():
            (root / rel).write_bytes(data)
        start = time.perf_counter()
        git(root, "add", "--", *files)
        git(root, "commit", "-qm", "floor")
        times.append(time.perf_counter() - start)
        git(root, "reset", "-q", "--hard", "HEAD~1")
    return statistics.median(times)


def history_repo(tmp: Path, commits: int = 10_000, batch: int = 10) -> Path:
    """A repository whose 500-line continuity file went through ``commits`` clean wraps, built with fast-import.

    Each commit replaces State and does one pattern operation in rotation (add,
    increment on two episodes, graduate on a third, archive). Episodes are
    appended to the store every ``batch`` commits, ahead of the commits that
    cite them, with content-derived ids and one session each. Commits are six
    hours apart and only a Developing pattern, or a Proven one graduated more
    than 30 days earlier, is archived, so every rule passes on every commit: the
    audit's figure is the cost of judging, not of reporting. The result is
    repacked with a full delta search, as git's automatic gc leaves a
    repository built one commit at a time.
    """
    import json
    import random

    from flowgit.episodes import episode_id

    root = new_repo(tmp, "history")
    rng = random.Random(5)
    base = generate.continuity(500, 60_000).split("\n")
    dev_at = base.index("## Developing Knowledge") + 1
    proven_at = base.index("## Proven Knowledge") + 1
    start, step = 788_918_400, 6 * 3600  # 1995-01-01, four commits a day
    live: dict[str, list] = {}  # name -> [level, evidence ids, graduation commit]
    plans: list[tuple[str, list[dict], list[str]]] = []  # per commit: (patterns, episodes recorded, trailers)

    def day(n: int) -> str:
        return time.strftime("%Y-%m-%d", time.gmtime(start + n * step))

    def record(n: int, name: str, count: int) -> list[dict]:
        eps = []
        for k in range(count):
            content = f"{name} fired: {generate.sentence(rng, 6)}"
            session = f"s{n}-{k}"
            eps.append({"id": episode_id("finding", content, session), "type": "finding", "content": content,
                        "session": session, "agent": "bench", "tags": [name]})
        return eps

    for n in range(commits):  # decide every commit's change first
        ones = [k for k, v in live.items() if v[0] == 1]
        twos = [k for k, v in live.items() if v[0] == 2]
        recorded: list[dict] = []
        trailers: list[str] = []
        archivable = [k for k, v in live.items() if v[0] < 3 or (n - v[2]) * step > 31 * 86400]
        if n % 4 == 0 or not live:
            live[f"pat{n}"] = [1, [], None]
        elif n % 4 == 1 and ones:
            recorded = record(n, ones[0], 2)
            live[ones[0]] = [2, [e["id"] for e in recorded], None]
            trailers.append(f"Incremented: {ones[0]} 1x->2x [evidence: {', '.join(e['id'] for e in recorded)}]")
        elif n % 4 == 2 and twos:
            recorded = record(n, twos[0], 1)
            live[twos[0]] = [3, live[twos[0]][1] + [recorded[0]["id"]], n]
            trailers.append(f"Graduated: {twos[0]} [evidence: {', '.join(live[twos[0]][1])}]")
        elif len(live) > 10 and archivable:
            gone = archivable[0]
            live.pop(gone)
            trailers.append(f"Archived: {gone}")
        snapshot = {k: (v[0], list(v[1]), v[2]) for k, v in live.items()}
        plans.append((json.dumps(snapshot), recorded, trailers))

    proc = subprocess.Popen(["git", "fast-import", "--quiet"], cwd=root, stdin=subprocess.PIPE)
    out = proc.stdin
    store: list[bytes] = []

    def data(payload: bytes) -> None:
        out.write(b"data %d\n" % len(payload) + payload + b"\n")

    for n, (snap_json, _, trailers) in enumerate(plans):
        snapshot = json.loads(snap_json)
        if n % batch == 0:  # the store gains the episodes of the next `batch` commits, ahead of them
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start + n * step))
            for m in range(n, min(n + batch, commits)):
                store.extend(json.dumps({"id": e["id"], "ts": stamp, **{k: v for k, v in e.items() if k != "id"}})
                             .encode() + b"\n" for e in plans[m][1])
        dev = [f"! {k}: {k} pattern text about the queue | 1x" if v[0] == 1 else
               f"!! {k}: {k} pattern text about the queue | 2x (BENCH) [evidence: {', '.join(v[1])}]"
               for k, v in snapshot.items() if v[0] < 3]
        prov = [f"!! {k}: {k} pattern text about the queue | 3x (BENCH — {day(v[2])}) "
                f"[evidence: {', '.join(v[1])}]" for k, v in snapshot.items() if v[0] == 3]
        lines = base[:4] + [f"Focus: wrap {n}."] + base[5:dev_at] + dev + base[dev_at:proven_at] + prov + base[proven_at:]
        out.write(b"commit refs/heads/main\ncommitter bench <b@example.com> %d +0000\n" % (start + n * step))
        data(("\n".join([f"Session wrap {n}", "", f"Flow-Session: s{n}", *trailers]) + "\n").encode())
        out.write(b"M 100644 inline CONTINUITY.md\n")
        data("\n".join(lines).encode())
        if n % batch == 0:
            out.write(b"M 100644 inline .flow/episodes.jsonl\n")
            data(b"".join(store))
    out.close()
    if proc.wait() != 0:
        raise SystemExit("fast-import failed")
    git(root, "checkout", "-q", "-f", "main")
    # Packed as git's own housekeeping leaves a repository that grew commit by commit: auto-gc packs
    # loose objects with a fresh delta search, so each version is stored against its neighbour.
    # fast-import's pack keeps most store versions whole (146 MB for 10,000 commits, against 7 MB here),
    # and a plain `git gc` would keep that pack's choices.
    git(root, "repack", "-adfq", "--window=10", "--depth=50")
    git(root, "gc", "-q")
    return root


@bench("history")
def history_bench(tmp: Path, runs: int) -> list[tuple[str, float, str | None]]:
    root = history_repo(tmp)
    floor = median_time(["git", "log", "-p", "--", "CONTINUITY.md"], runs, cwd=root)
    return [
        ("git log -p -- CONTINUITY.md (floor), 10,000 commits", floor, None),
        ("flowgit log", median_time(FLOWGIT + ["log", "--json"], runs, cwd=root), "git log -p"),
    ]  # the audit, which now runs every gate rule on every commit, has its own benchmark: `audit`


@bench("audit")
def audit_bench(tmp: Path, runs: int) -> list[tuple[str, float, str | None]]:
    from benchmarks.audit import run_bench

    return run_bench(tmp, runs, history_repo, median_time, FLOWGIT)


def deposit_tree(tmp: Path, deposits: int = 10_000, partitions: int = 100) -> Path:
    """``deposits`` sessions over ``partitions`` project directories, in the exact on-disk formats."""
    import random

    from tests.ascend.corpus import Session, write_noise, write_session

    rng = random.Random(11)
    config = tmp / "claude"
    vocab = generate.WORDS
    for n in range(deposits):
        slug = f"-home-dev-project{n % partitions:03d}"
        chain = n // 5  # every five consecutive sessions share one issue: a line of work
        words = rng.sample(vocab, 4)
        refs = [{"kind": "github_issue", "ref": f"#{1000 + chain}", "channel": "user"}] if n % 5 else [f"#{1000 + chain}"]
        s = Session(slug, f"{n:08x}-b3c4-4d5e-8f90-{n:012x}", f"/home/dev/project{n % partitions:03d}",
                    f"2026-{(n // 900) % 12 + 1:02d}-{n % 28 + 1:02d}", f"Work on {' '.join(words)}",
                    [" ".join(words[:2])], words, utterances=[f"we should look at {words[0]}"], cross_refs=refs,
                    outcome=f"The {words[1]} is handled.", coined=[(f"{words[0]}-first", 0.5)] if n % 50 == 0 else [])
        write_session(config, s)
        if n % 1000 == 0:
            write_noise(config, slug)
    return config


@bench("ascend")
def ascend_bench(tmp: Path, runs: int) -> list[tuple[str, float, str | None]]:
    config = deposit_tree(tmp)
    repo = new_repo(tmp, "empty")
    recall = "that whole line of work on issue #1500"
    floor = median_time(["grep", "-rl", "#1500", str(config)], runs, check=False)
    argv = FLOWGIT + ["ascend", recall, "--claude-dir", str(config), "--partition", "claude", "--json"]
    wall = median_time(argv, runs, cwd=repo)
    peak = _peak_rss(argv, repo)
    return [("grep -rl over the same tree (floor)", floor, None),
            (f"flowgit ascend, 10,000 deposits in 100 partitions (peak {peak / 1024:.0f} MB)", wall, "grep -rl")]


@bench("merge")
def merge_bench(tmp: Path, runs: int) -> list[tuple[str, float, str | None]]:
    from benchmarks import merge

    return merge.run(tmp, runs, median_time, new_repo, git)


def _peak_rss(argv: list[str], cwd: Path) -> int:
    """Peak resident memory (KiB) of one run, from GNU time (the largest single process)."""
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], cwd=cwd, capture_output=True, text=True)
    return int(proc.stderr.strip().splitlines()[-1])


def _peak_tree_rss(argv: list[str], cwd: Path, every: float = 0.05) -> int:
    """Peak memory (KiB) of a run and all its worker processes together, sampled from /proc.

    Each process counts its proportional set size, so pages a forked worker
    still shares with its parent are counted once, not once per process.
    """
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while proc.poll() is None:
        total = 0
        for pid in [proc.pid, *_children(proc.pid)]:
            try:
                with open(f"/proc/{pid}/smaps_rollup") as fh:
                    total += next((int(ln.split()[1]) for ln in fh if ln.startswith("Pss:")), 0)
            except OSError:
                continue
        peak = max(peak, total)
        time.sleep(every)
    return peak


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


@bench("report")
def report_bench(tmp: Path, runs: int) -> list[tuple[str, float, str | None]]:
    from benchmarks.report import report_bench as run

    return run(tmp, runs)


from benchmarks import agent, ascend_recall, ascend_scale  # noqa: E402

BENCHES["agent"] = lambda tmp, runs: agent.prime_hook(tmp, runs, median_time, gate_repo)
BENCHES["ascend-transcripts"] = lambda tmp, runs: ascend_scale.bench(tmp, runs, median_time, _peak_rss)
BENCHES["ascend-recall"] = lambda tmp, runs: ascend_recall.bench(tmp, runs)
BENCHES["ascend-history"] = lambda tmp, runs: ascend_scale.history_bench(tmp, runs, median_time, history_repo)


def report(name: str, rows: list[tuple[str, float, str | None]]) -> None:
    print(f"\n[{name}]")
    by_label = {label.split(" (")[0]: t for label, t, _ in rows}
    for label, t, base in rows:
        ratio = ""
        if base:
            floor = next((v for k, v in by_label.items() if k.startswith(base)), None)
            if floor:
                ratio = f"  ({t / floor:.1f}x {base})"
        print(f"  {label:<52} {t * 1000:9.1f} ms{ratio}")


@bench("memory")
def memory(tmp: Path, runs: int) -> list[tuple[str, float, str | None]]:
    from benchmarks.memory import memory_bench

    return memory_bench(tmp, runs)


def byte_compile() -> None:
    """Compile flowgit's modules once, as installing a wheel does.

    Processes started with PYTHONDONTWRITEBYTECODE (or from a read-only or
    editable checkout) would otherwise recompile every module on every run,
    which measures the checkout rather than the tool.
    """
    import compileall

    compileall.compile_dir(str(Path(__file__).resolve().parent.parent / "flowgit"), quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("which", nargs="?", default="all", choices=["all", *BENCHES])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    byte_compile()
    for name, fn in BENCHES.items():
        if args.which not in ("all", name):
            continue
        tmp = Path(tempfile.mkdtemp(prefix=f"flowgit-bench-{name}-"))
        try:
            report(name, fn(tmp, args.runs))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
