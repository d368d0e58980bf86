"""flowgit log / audit / show-archived on a real history of 30 wraps, a rename, a merge and a bypass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import git

PATTERNS = {
    "alpha": "retries need a budget per request",
    "beta": "breakers open after consecutive failures",
    "gamma": "cache balances before calling the provider",
    "delta": "deploy schema migrations before the code",
    "epsilon": "size connection pools from measurements",
}

BASE = """# Continuity

## Current State
Focus: start.

## Top of Mind
- nothing yet

## Action Items
- keep going
- and going

## Recent Context
Nothing yet.

## Developing Knowledge

## Proven Knowledge

## Foundation
Write the episode first.
"""


class Story:
    """Drives a repository through wraps with the real CLI and remembers which commit did what."""

    def __init__(self, run, repo: Path, tmp: Path) -> None:
        self.run, self.repo, self.tmp = run, repo, tmp
        self.n = 0
        self.at: dict[str, str] = {}  # label -> commit sha
        self.ids: dict[tuple[str, int], str] = {}  # (pattern, wrap) -> episode id

    def wrap(self, label: str, *ops: dict, facts: tuple[str, ...] = (), extra: dict | None = None,
             state: bool = True) -> str:
        self.n += 1
        episodes = [{"type": "finding", "content": f"{name} {PATTERNS[name]} observed again in wrap {self.n}",
                     "tags": [name]} for name in facts]
        plan = {"session": f"s{self.n}", "agent": "agent-a", "episodes": episodes, "patterns": list(ops),
                **({"state": f"Focus: wrap {self.n}."} if state else {}), **(extra or {})}
        path = self.tmp / f"plan{self.n}.json"
        path.write_text(json.dumps(plan))
        res = self.run(self.repo, "wrap", "--plan", str(path), "--no-cleanup", "--json")
        assert res.code == 0, res.err
        data = json.loads(res.out)
        assert not data["refused"], data["refused"]
        for name, ep_id in zip(facts, data["episodes_recorded"]):
            self.ids[(name, self.n)] = ep_id
        sha = git(self.repo, "rev-parse", "HEAD").strip()
        self.at[label] = sha
        return sha

    def ev(self, name: str, *wraps: int) -> list[str]:
        return [self.ids[(name, w)] for w in wraps]


@pytest.fixture(scope="module")
def story(tmp_path_factory):
    """Build the history once for every test in this module (it is read-only afterwards)."""
    import os

    from tests.conftest import Result
    from flowgit.cli import main

    tmp = tmp_path_factory.mktemp("history")
    home = tmp / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Flow Tester\n\temail = t@example.com\n"
                                     "[init]\n\tdefaultBranch = main\n")
    old_env = {k: os.environ.get(k) for k in ("HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")}
    os.environ.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1")
    old_cwd = os.getcwd()

    def run(cwd: Path, *args: str, stdin: str | None = None) -> Result:
        import contextlib
        import io

        os.chdir(cwd)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
        return Result(code, out.getvalue(), err.getvalue())

    try:
        repo = tmp / "repo"
        repo.mkdir()
        git(repo, "init", "-q")
        run(repo, "init", "--no-hooks")
        (repo / "CONTINUITY.md").write_text(BASE)
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "start")
        run(repo, "install-hook")
        s = Story(run, repo, tmp)
        adds = [{"op": "add", "name": n, "text": t} for n, t in PATTERNS.items()]
        s.wrap("add", *adds, facts=tuple(PATTERNS))                                     # 1
        s.wrap("w2", facts=("alpha", "beta", "gamma"))                                 # 2
        s.wrap("alpha 2x", {"op": "increment", "name": "alpha", "evidence": s.ev("alpha", 1, 2)},
               facts=("alpha", "epsilon"))                                             # 3
        s.wrap("w4", facts=("beta",))                                                  # 4
        s.wrap("alpha 3x", {"op": "graduate", "name": "alpha", "evidence": s.ev("alpha", 3)})  # 5
        s.wrap("beta 2x", {"op": "increment", "name": "beta", "evidence": s.ev("beta", 1, 2)})  # 6
        s.wrap("w7", facts=("gamma",))                                                 # 7
        s.wrap("beta 3x", {"op": "graduate", "name": "beta", "evidence": s.ev("beta", 4)})    # 8
        s.wrap("gamma 2x", {"op": "increment", "name": "gamma", "evidence": s.ev("gamma", 2, 7)})  # 9
        s.wrap("w10")                                                                  # 10
        s.n += 1                                                                       # 11: demotion
        plan = {"session": "s11", "episodes": [{"type": "tension", "content": "alpha retries budget failed "
                                                "for batch requests", "tags": ["alpha"]}],
                "patterns": [{"op": "demote", "name": "alpha", "reason": "batch traffic broke it",
                              "evidence": ["#0"]}]}
        (tmp / "plan11.json").write_text(json.dumps(plan))
        assert run(repo, "wrap", "--plan", str(tmp / "plan11.json"), "--no-cleanup").code == 0
        s.at["alpha demoted"] = git(repo, "rev-parse", "HEAD").strip()
        s.wrap("delta archived", {"op": "archive", "name": "delta"})                  # 12
        # 13: the agent renames gamma in the file by hand; the wrap reads it back as a rename
        text = (repo / "CONTINUITY.md").read_text().replace("!! gamma:", "!! gamma_cache:")
        (repo / "CONTINUITY.md").write_text(text)
        assert run(repo, "wrap", "--session", "s13").code == 0
        s.n += 1
        s.at["gamma renamed"] = git(repo, "rev-parse", "HEAD").strip()
        for _ in range(14, 17):
            s.wrap(f"w{s.n + 1}")                                                      # 14-16
        # the file itself is renamed
        git(repo, "mv", "CONTINUITY.md", "MEMORY.md")
        (repo / ".flowgit.toml").write_text('continuity = "MEMORY.md"\n')
        git(repo, "add", "-A")
        os.environ["FLOWGIT_OVERRIDE"] = "move the continuity file to MEMORY.md"  # the gate stops a silent move
        try:
            git(repo, "commit", "-qm", "Rename the continuity file")
        finally:
            del os.environ["FLOWGIT_OVERRIDE"]
        s.at["file renamed"] = git(repo, "rev-parse", "HEAD").strip()
        s.wrap("epsilon 2x", {"op": "increment", "name": "epsilon", "evidence": s.ev("epsilon", 1, 3)})  # 17
        # a side branch and a merge
        git(repo, "checkout", "-q", "-b", "side")
        s.wrap("side", extra={"recent": "Side branch work on the breaker."}, facts=("beta",), state=False)  # 18
        git(repo, "checkout", "-q", "main")
        s.wrap("main after side", extra={"top_of_mind": ["main line"]}, state=False)  # 19
        git(repo, "merge", "-q", "--no-edit", "side")
        s.at["merge"] = git(repo, "rev-parse", "HEAD").strip()
        for _ in range(20, 29):
            s.wrap(f"w{s.n + 1}")                                                      # 20-28
        # the bypass: a hand edit graduating without evidence, committed with --no-verify
        text = (repo / "MEMORY.md").read_text()
        line = next(ln for ln in text.splitlines() if ln.startswith("!! epsilon:"))
        text = text.replace(line + "\n", "").replace("## Proven Knowledge\n",
                                                     "## Proven Knowledge\n!! epsilon: size connection pools from "
                                                     "measurements | 3x (GENERAL — 2026-11-30)\n")
        (repo / "MEMORY.md").write_text(text)
        git(repo, "commit", "-qam", "graduate epsilon by hand", "--no-verify")
        s.at["bypass"] = git(repo, "rev-parse", "HEAD").strip()
        for _ in range(29, 35):
            s.wrap(f"w{s.n + 1}")                                                      # 29-34
        git(repo, "checkout", "-q", "-b", "side2")                                     # a second merge
        s.wrap("side2", extra={"recent": "Side work on pools."}, facts=("epsilon",), state=False)  # 35
        git(repo, "checkout", "-q", "main")
        s.wrap("main after side2", extra={"top_of_mind": ["pools"]}, state=False)     # 36
        git(repo, "merge", "-q", "--no-edit", "side2")
        s.at["merge2"] = git(repo, "rev-parse", "HEAD").strip()
        for _ in range(37, 41):
            s.wrap(f"w{s.n + 1}")                                                      # 37-40
        s.run = run
        yield s
    finally:
        os.chdir(old_cwd)
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def timeline(story, *names):
    res = story.run(story.repo, "log", *names, "--json")
    assert res.code == 0, res.err
    return json.loads(res.out)["patterns"]


def kinds(events):
    return [(e["kind"], e["commit"]) for e in events]


def test_forty_wraps_were_made(story):
    wraps = git(story.repo, "log", "--format=%(trailers:key=Flow-Session,valueonly)").split()
    assert len(wraps) >= 40


def test_each_event_at_the_right_commit(story):
    t = timeline(story, "alpha", "beta", "delta")
    at = story.at
    assert kinds(t["alpha"]) == [("added", at["add"]), ("incremented", at["alpha 2x"]),
                                 ("graduated", at["alpha 3x"]), ("demoted", at["alpha demoted"])]
    assert t["alpha"][3]["section"] == "Developing Knowledge"
    assert "batch traffic broke it" in " ".join(t["alpha"][3]["notes"])
    assert kinds(t["beta"]) == [("added", at["add"]), ("incremented", at["beta 2x"]), ("graduated", at["beta 3x"])]
    assert t["beta"][2]["evidence"] == story.ev("beta", 1, 2, 4)
    assert kinds(t["delta"]) == [("added", at["add"]), ("archived", at["delta archived"])]
    assert t["alpha"][1]["session"] == "s3"


def test_pattern_rename_is_one_life(story):
    t = timeline(story, "gamma_cache")
    assert [e["kind"] for e in t["gamma_cache"]] == ["added", "incremented", "renamed"]
    assert t["gamma_cache"][2]["old_name"] == "gamma" and t["gamma_cache"][2]["commit"] == story.at["gamma renamed"]
    same = timeline(story, "gamma")
    assert list(same) == ["gamma_cache"]


def test_file_rename_is_followed(story):
    t = timeline(story, "epsilon")
    assert kinds(t["epsilon"])[:2] == [("added", story.at["add"]), ("incremented", story.at["epsilon 2x"])]
    assert t["epsilon"][1]["path"] == "MEMORY.md" and t["epsilon"][0]["path"] == "CONTINUITY.md"
    assert t["epsilon"][2]["kind"] == "graduated" and t["epsilon"][2]["commit"] == story.at["bypass"]


def test_merge_reports_nothing_twice(story):
    everything = timeline(story)
    commits = [e["commit"] for events in everything.values() for e in events]
    assert story.at["merge"] not in commits


def test_filters(story):
    graduated = timeline(story, "--graduated")
    assert set(graduated) == {"alpha", "beta", "epsilon"}
    proven = timeline(story, "--section", "Proven")
    assert all(e["section"] == "Proven Knowledge" for events in proven.values() for e in events)
    assert timeline(story, "--since", "2999-01-01") == {}
    human = story.run(story.repo, "log", "alpha")
    assert "graduated to Proven (3x)" in human.out and "demoted to Developing Knowledge" in human.out
    demoted = next(ln for ln in human.out.splitlines() if "demoted to Developing Knowledge" in ln)
    assert demoted.count("demoted") == 1, demoted  # the note's own "demoted" is not said twice


def test_audit_reports_exactly_the_bypass(story):
    res = story.run(story.repo, "audit", "--json")
    data = json.loads(res.out)
    assert res.code == 1
    errors = [f for f in data["findings"] if f["severity"] == "error"]
    assert [(f["code"], f["commit"]) for f in errors] == [("G101", story.at["bypass"])]
    assert "`epsilon`" in errors[0]["message"]
    notices = [(f["code"], f["commit"]) for f in data["findings"] if f["severity"] != "error"]
    assert notices == [("A301", story.at["file renamed"])]  # the file rename was made under a recorded override
    assert data["commits_judged"] >= 40 and data["unjudged"] == []


def test_forty_legitimate_wraps_merges_and_renames_audit_clean(story):
    """Everything but the one bypass: the wraps, both merges, the pattern rename and the file rename."""
    before = story.run(story.repo, "audit", "--json", "--range", f"{story.at['add']}~1..{story.at['bypass']}~1")
    after = story.run(story.repo, "audit", "--json", "--range", f"{story.at['bypass']}..HEAD")
    for res in (before, after):
        data = json.loads(res.out)
        errors = [f for f in data["findings"] if f["severity"] == "error"]
        assert res.code == 0 and data["ok"] and errors == [], errors
    assert json.loads(before.out)["commits_judged"] + json.loads(after.out)["commits_judged"] >= 40
    human = story.run(story.repo, "audit", "--range", f"{story.at['bypass']}..HEAD")
    assert "— clean" in human.out


def test_show_archived(story):
    res = story.run(story.repo, "show-archived", "delta", "--json")
    data = json.loads(res.out)
    assert res.code == 0 and data["commit"] == story.at["delta archived"]
    assert data["text"] == "! delta: deploy schema migrations before the code | 1x"
    missing = story.run(story.repo, "show-archived", "nope")
    assert missing.code == 2 and "no archival of `nope`" in missing.err and "live" not in missing.err
    live = json.loads(story.run(story.repo, "patterns", "--json").out)[0]["name"]
    said = story.run(story.repo, "show-archived", live)
    assert said.code == 2 and f"no archival of `{live}`" in said.err and "it is live, at line" in said.err


def test_shallow_clone_says_how_far_back_it_sees(story, tmp_path):
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "4", f"file://{story.repo}", str(clone))
    res = story.run(clone, "log", "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["shallow"] is True and data["commits_read"] == 4
    human = story.run(clone, "log")
    assert "shallow clone: history visible back to" in human.out


def test_shallow_clone_shows_the_patterns_standing_at_its_boundary(story, tmp_path):
    """A pattern whose events all lie beyond the boundary still stood in the file: log, `log NAME` and the
    mermaid chart show it as present since before the boundary, at its level, not as unknown."""
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "4", f"file://{story.repo}", str(clone))
    held = {p["name"]: p for p in json.loads(story.run(clone, "patterns", "--json").out)}
    assert held
    data = json.loads(story.run(clone, "log", "--json").out)
    assert set(data["patterns"]) == set(held)
    for name, events in data["patterns"].items():
        first = events[0]
        assert (first["kind"], first["commit"]) == ("present", data["oldest_visible"]), name
        assert first["level"] == held[name]["level"]
    name = sorted(held)[0]
    one = story.run(clone, "log", name)
    assert one.code == 0, one.err
    assert "its history begins before this shallow clone's boundary" in one.out
    chart = story.run(clone, "log", "--format", "mermaid").out
    assert all(f"section {n}" in chart for n in held)
