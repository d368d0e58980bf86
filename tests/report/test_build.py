"""The report's data, built from real git histories, and the command around it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from flowgit.checks.size import developing_lines, state_chars
from flowgit.cli import main
from flowgit.config import load_config
from flowgit.continuity.document import Document
from flowgit.history.audit import run_audit
from flowgit.report.build import build_report
from flowgit.report.html import render_html
from flowgit.report.model import ARCHIVED, DEMOTED, GROUND_WEAK, PROVEN


def test_lanes_follow_every_life_in_forty_wraps(forty) -> None:
    root, exp = forty
    report = build_report(load_config(root))
    lanes = {ln.name: ln for ln in report.lanes}
    assert set(lanes) == exp.names
    assert report.commits == report.commits_total == 40
    for name, count in exp.graduations.items():
        assert len(lanes[name].graduations) == count, name
    assert {n for n, ln in lanes.items() if ln.status == ARCHIVED} == exp.archived
    assert {n for n, ln in lanes.items() if ln.status == DEMOTED} == exp.demoted
    old, new = exp.renamed
    assert lanes[new].status == PROVEN and any(s.name == old for s in lanes[new].steps)
    assert lanes[exp.weak].grounding == GROUND_WEAK
    assert lanes[exp.weak].sessions == ("sess-solo",) and lanes[exp.weak].agents == ("agent-solo",)
    cited = {i for ln in report.lanes for s in ln.steps for i in s.evidence}
    assert set(report.episodes) == cited and all(e.present for e in report.episodes.values())


def test_audit_findings_are_the_audits_and_sit_on_their_steps(forty) -> None:
    root, exp = forty
    cfg = load_config(root)
    report = build_report(cfg)
    audit = run_audit(cfg)
    assert sorted((f.code, f.commit, f.pattern) for f in report.findings) == \
        sorted((f.code, f.commit, f.pattern) for f in audit.findings)
    assert {"G101", "G103", "A301"} <= {f.code for f in report.findings}  # the gate's codes, as the audit gives them
    # what fails the audit is told from what an override put on record, as `flowgit audit` counts them
    assert sorted(f.code for f in report.findings if f.is_error) == sorted(f.code for f in audit.errors)
    assert any(not f.is_error and f.code != "A301" for f in report.findings)  # the G103 the override let through
    lanes = {ln.name: ln for ln in report.lanes}
    weak_codes = {c for s in lanes[exp.weak].steps for c in s.findings}
    assert {"G103", "A301"} <= weak_codes
    assert any("G101" in s.findings for s in lanes[exp.ungrounded].steps)
    assert not any(s.findings for s in lanes["retry_budget"].steps)


def test_sizes_per_wrap_are_the_gates_measures(forty) -> None:
    root, _ = forty
    report = build_report(load_config(root))
    assert len(report.sizes) == 40
    for point in report.sizes[::7]:
        text = subprocess.run(["git", "show", f"{point.commit}:CONTINUITY.md"], cwd=root, capture_output=True,
                              check=True).stdout.decode()
        doc = Document.parse(text)
        assert (point.size.chars, point.size.state_chars, point.size.developing_lines) == \
            (len(text), state_chars(doc), developing_lines(doc))
    drops = [p for p in report.sizes if p.archived]
    assert sorted(n for p in drops for n in p.archived) == sorted(
        ln.name for ln in report.lanes if ln.status == ARCHIVED)


def test_since_until_and_pattern_narrow_the_report(forty) -> None:
    root, exp = forty
    cfg = load_config(root)
    narrow = build_report(cfg, since="2026-10-10", until="2026-10-19")
    assert narrow.commits == 10 and len(narrow.sizes) == 10
    assert all("2026-10-10" <= s.date <= "2026-10-19" for ln in narrow.lanes for s in ln.steps)
    assert all(0 <= s.index < 10 for ln in narrow.lanes for s in ln.steps)
    old, new = exp.renamed
    one = build_report(cfg, patterns=[old])  # the old name finds the renamed life
    assert [ln.name for ln in one.lanes] == [new]
    assert all(f.pattern in ("", new) for f in one.findings)


def test_fresh_repository_is_an_empty_report(repo: Path) -> None:
    report = build_report(load_config(repo))
    assert report.empty and report.commits_total == 0 and not report.findings


def test_command_writes_the_page_and_reports_json(forty, tmp_path: Path, capsys, monkeypatch) -> None:
    root, exp = forty
    monkeypatch.chdir(root)
    out = tmp_path / "r.html"
    assert main(["report", "-o", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["path"] == str(out.resolve()) and data["bytes"] == out.stat().st_size
    assert {p["name"] for p in data["patterns"]} == exp.names
    assert {"G101", "G103", "A301"} <= {f["code"] for f in data["findings"]}
    assert main(["report", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert str(out.resolve()) in text and "13 pattern(s)" in text


@pytest.mark.parametrize("argv, words", [
    (["report", "--since", "last tuesdayish"], "--since: 'last tuesdayish' is not a date (fix: use 2026-11-30)"),
    (["report", "--since", "2026-11-30T15:00:00Z"], "--since: '2026-11-30T15:00:00Z' holds a time of day"),
    (["report", "--until", "2026-11-30T99:99:99"], "--until takes a day"),
    (["report", "-o", "."], "is a directory"),
    (["report", "-o", "no/such/dir/r.html"], "no such directory"),
])
def test_command_refuses_bad_input_with_exit_2(forty, argv, words, capsys, monkeypatch) -> None:
    root, _ = forty
    monkeypatch.chdir(root)
    before = sorted(p.name for p in root.iterdir())
    assert main(argv) == 2
    assert words in capsys.readouterr().err
    assert sorted(p.name for p in root.iterdir()) == before


def test_command_outside_a_repository_is_exit_2(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["report", "-o", str(tmp_path / "r.html")]) == 2
    assert "git repository" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_sizes_come_from_the_walks_reads_and_a_version_it_never_read_is_read_for_them(repo: Path, tmp_path: Path):
    """In a shallow clone whose boundary's child left the file alone, the walk reads no version: sizes still hold."""
    from tests.checks.gate_fixtures import base_text, committed_base
    from tests.conftest import git

    committed_base(repo, base_text(recent="The first version."))
    for n in range(2):
        (repo / "other.txt").write_text(f"unrelated {n}\n")
        git(repo, "add", "other.txt")
        git(repo, "commit", "-qm", f"unrelated {n}", "--no-verify")
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "2", f"file://{repo}", str(clone)], check=True)
    report = build_report(load_config(clone))
    text = (clone / "CONTINUITY.md").read_text()
    assert [p.size.chars for p in report.sizes] == [len(text), len(text)]
    full = build_report(load_config(repo))  # the walk measures what it reads: the same figures as reading them
    assert [p.size for p in full.sizes][-2:] == [p.size for p in report.sizes]


def test_a_huge_cited_episode_is_cut_on_the_page() -> None:
    """Twelve 1 MB episodes cited by one pattern made a 12 MB page: each is carried up to a few thousand
    characters, with how much more the store holds."""
    from flowgit.report.build import EPISODE_SHOWN, shown_content

    assert shown_content("short") == "short"
    text = "x" * 1_000_000
    shown = shown_content(text)
    assert shown.startswith("x" * EPISODE_SHOWN) and len(shown) < EPISODE_SHOWN + 100
    assert f"{1_000_000 - EPISODE_SHOWN:,} more characters in the store" in shown


def _names_at(root: Path, commit: str) -> dict[str, int]:
    """The patterns (name -> level) the continuity file holds at ``commit``, read with git and the parser."""
    from flowgit.continuity.patterns import pattern_map

    text = subprocess.run(["git", "show", f"{commit}:CONTINUITY.md"], cwd=root, capture_output=True,
                          check=True).stdout.decode()
    return {n: at.pattern.level for n, at in pattern_map(Document.parse(text)).items()}


def test_since_gives_every_pattern_standing_when_the_window_opens_a_lane(forty) -> None:
    """A pattern alive as the window opens enters at the level it held, even with no event inside it, and
    counts among the proven and in the evidence graph."""
    from flowgit.report.graph import evidence_graph

    root, exp = forty
    report = build_report(load_config(root), since="2026-10-30")
    first = report.sizes[0].commit
    lanes = {ln.name: ln for ln in report.lanes}
    standing = _names_at(root, first)
    old, new = exp.renamed
    assert {new if n == old else n for n in standing} <= set(lanes)
    for name, level in standing.items():
        first_step = lanes[new if name == old else name].steps[0]
        assert first_step.index == 0
        if first_step.kind == "present":  # (one with an event at that commit starts with the event)
            assert (first_step.level, first_step.commit) == (level, first)
    quiet = [ln for ln in report.lanes if [s.kind for s in ln.steps] == ["present"]]
    assert quiet, "the window should hold a pattern with no event in it"
    assert any(ln.status == PROVEN for ln in quiet)
    graphed = {ln.name for ln in evidence_graph(report).patterns}
    assert {ln.name for ln in quiet if ln.evidence and ln.status != ARCHIVED} <= graphed
    html = render_html(report)
    proven = sum(1 for ln in report.lanes if ln.status == PROVEN)
    assert f'data-card="proven"><b>{proven}</b>' in html and proven >= 1
    one = build_report(load_config(root), since="2026-10-30", patterns=[quiet[0].name])
    assert [ln.name for ln in one.lanes] == [quiet[0].name]


def test_shallow_clone_report_draws_the_patterns_at_its_boundary(forty, tmp_path: Path) -> None:
    root, _ = forty
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "3", f"file://{root}", str(clone)], check=True)
    report = build_report(load_config(clone))
    assert report.shallow and report.commits == 3
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True,
                          check=True).stdout.strip()
    assert set(_names_at(clone, head)) <= {ln.name for ln in report.lanes}
    for ln in report.lanes:
        if ln.steps[0].index == 0 and ln.steps[0].kind == "present":
            assert ln.steps[0].commit == report.oldest_visible


def test_each_lane_carries_its_claim_and_the_claim_at_each_step_that_changed_it(repo: Path) -> None:
    """A reader of the memory's life must see what each pattern says (and what it said before a rewording):
    in the lane, in the patterns table, in the events table and in --json."""
    from tests.checks.gate_fixtures import DEVELOPING, base_text, committed_base, developing_lines
    from tests.conftest import git

    committed_base(repo)
    reworded = "retries get a per-request budget & no more <b>"
    (repo / "CONTINUITY.md").write_text(base_text(developing=developing_lines(overrides={"p01": reworded})))
    git(repo, "commit", "-qam", "reword p01", "--no-verify")
    report = build_report(load_config(repo))
    lanes = {ln.name: ln for ln in report.lanes}
    original = dict(DEVELOPING)["p01"]
    assert lanes["retry_budget"].text == "cap retries per request so an outage cannot multiply load"
    assert lanes["p01"].text == reworded
    assert [(s.kind, s.text, s.text_changed) for s in lanes["p01"].steps] == [
        ("added", original, True), ("reworded", reworded, True)]
    assert [ln["text"] for ln in report.to_dict()["patterns"] if ln["name"] == "p01"] == [reworded]
    page = render_html(report)
    lane = page[page.index('data-pattern="p01"'):]
    lane = lane[:lane.index("</article>")]
    assert '<p class="claim">' in lane and "retries get a per-request budget &amp; no more &lt;b&gt;" in lane
    assert f"says: {original}" in lane  # the first step's tooltip: the claim it stood on then
    table = page[page.index('id="patterns-table"'):]
    assert "<td>retries get a per-request budget &amp; no more &lt;b&gt;</td>" in table
    events = page[page.index('id="events-table"'):]
    assert f'<q class="claim">{original}</q>' in events


def test_a_raised_pattern_without_evidence_is_the_weakest_grounding_not_none_needed(forty) -> None:
    """'none' is what a fresh 1x pattern gets (it needs no evidence); one raised to 2x or put in Proven with
    none is grounded on nothing: counted as weakly grounded, badged and drawn in the graph."""
    from flowgit.report.graph import evidence_graph
    from flowgit.report.model import GROUND_NONE, GROUND_NONE_GIVEN, WEAK_GROUNDINGS

    root, exp = forty
    report = build_report(load_config(root))
    lanes = {ln.name: ln for ln in report.lanes}
    bare = lanes[exp.ungrounded]
    assert bare.level >= 2 and not bare.evidence and bare.grounding == GROUND_NONE_GIVEN
    assert all(ln.grounding == GROUND_NONE for ln in report.lanes if ln.level == 1 and ln.status != PROVEN
               and not ln.evidence)
    weak = sum(1 for ln in report.lanes if ln.grounding in WEAK_GROUNDINGS and ln.status != ARCHIVED)
    assert weak >= 2  # the single-source pattern and the bare one
    page = render_html(report)
    assert f'data-card="weakly grounded"><b>{weak}</b>' in page
    assert f'data-grounding="{GROUND_NONE_GIVEN}"' in page and "none given: raised without evidence" in page
    assert exp.ungrounded in {ln.name for ln in evidence_graph(report).patterns}
    assert f'class="node pattern missing none-given" data-node="p:{exp.ungrounded}"' in page


def test_a_file_taken_away_and_restored_keeps_its_history_and_the_deletion_is_on_the_page(repo: Path) -> None:
    """The walk stopped at the commit that deleted the file: the page lost the pattern's first appearance,
    and the audit's G803 on the deletion (a commit that holds no file) was left off."""
    from flowgit.config import load_config
    from flowgit.report.build import build_report
    from tests.checks.gate_fixtures import base_text
    from tests.conftest import git

    for key, value in (("user.name", "t"), ("user.email", "t@example.com")):
        git(repo, "config", key, value)
    (repo / ".flow").mkdir()
    (repo / ".flow" / "episodes.jsonl").write_text("")
    (repo / "CONTINUITY.md").write_text(base_text())
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one", "--no-verify")
    first = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "rm", "-q", "CONTINUITY.md")
    git(repo, "commit", "-qm", "delete the memory", "--no-verify")
    gone = git(repo, "rev-parse", "HEAD").strip()
    (repo / "CONTINUITY.md").write_text(base_text())
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "restore", "--no-verify")
    report = build_report(load_config(repo))
    assert report.commits == 2
    assert any(s.commit == first for lane in report.lanes for s in lane.steps)
    assert ("G803", gone) in {(f.code, f.commit) for f in report.findings}


def test_grounding_counts_sessions_and_agents_as_the_gate_does() -> None:
    """`sess-sat`, `SESS_SAT` and `sess sat.` are one session to G103: the page called three spellings of one
    session and one agent "broad"."""
    from flowgit.report.build import _ground
    from flowgit.report.model import GROUND_WEAK, EpisodeInfo, Lane

    spellings = [("sess-sat", "agent-a"), ("SESS_SAT", "Agent A"), ("sess sat.", "agent_a")]
    episodes = {f"ep-{n}": EpisodeInfo(f"ep-{n}", "2026-11-30T00:00:00Z", "finding", "fired", s, a)
                for n, (s, a) in enumerate(spellings)}
    lane = Lane("p", [], level=3, evidence=tuple(episodes))
    _ground(lane, episodes)
    assert lane.grounding == GROUND_WEAK and lane.sessions == ("sess-sat",) and lane.agents == ("agent-a",)


def test_a_lanes_badge_counts_the_episodes_naming_no_agent_the_graph_draws_as_one() -> None:
    """The graph draws an episode without an agent under "(no agent)"; the badge said "1 agent(s)" beside it."""
    from flowgit.report.build import _ground
    from flowgit.report.html import _lane_head
    from flowgit.report.model import GROUND_NARROW, EpisodeInfo, Lane, Report

    episodes = {"ep-1": EpisodeInfo("ep-1", session="s1", agent="bob"), "ep-2": EpisodeInfo("ep-2", session="s2"),
                "ep-3": EpisodeInfo("ep-3", session="s3")}
    lane = Lane("p", [], level=3, evidence=tuple(episodes))
    _ground(lane, episodes)
    assert lane.grounding == GROUND_NARROW and lane.agents == ("bob",) and lane.unattributed == 2
    report = Report(title="t", continuity="CONTINUITY.md", lanes=[lane], episodes=episodes, sizes=[], findings=[],
                    budgets={}, commits=0, commits_total=0)
    assert "3 session(s) · 1 agent(s) (+2 episode(s) naming none)" in _lane_head(lane, report)
    assert lane.to_dict()["unattributed"] == 2


def test_a_name_a_rename_freed_and_a_new_pattern_took_is_a_lane_of_its_own(repo: Path, capsys, monkeypatch) -> None:
    """alpha renamed beta, then a new, unrelated alpha: two lanes (report, log, mermaid), not the new claim
    folded into beta's."""
    from tests.conftest import git

    def version(developing: str, message: str) -> None:
        (repo / "CONTINUITY.md").write_text(f"# C\n\n## Current State\nFocus: x\n\n## Developing Knowledge\n"
                                            f"{developing}\n## Proven Knowledge\n\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", message, "--no-verify")

    version("! alpha: cache the balances first | 1x\n", "one")
    version("! beta: cache the balances first | 1x\n", "rename alpha to beta")
    version("! beta: cache the balances first | 1x\n! alpha: an entirely different idea about retries | 1x\n",
            "a new alpha")
    lanes = {ln.name: ln for ln in build_report(load_config(repo)).lanes}
    assert {n: (ln.text, [s.kind for s in ln.steps]) for n, ln in lanes.items()} == {
        "beta": ("cache the balances first", ["added", "renamed"]),
        "alpha": ("an entirely different idea about retries", ["added"])}
    monkeypatch.chdir(repo)
    assert main(["log", "--json"]) == 0
    logged = json.loads(capsys.readouterr().out)["patterns"]
    assert {n: [e["kind"] for e in events] for n, events in logged.items()} == {
        "beta": ["added", "renamed"], "alpha": ["added"]}
    assert main(["log", "--format", "mermaid"]) == 0
    chart = capsys.readouterr().out
    assert "section alpha" in chart and "section beta" in chart


def test_a_merge_in_the_window_brings_what_its_branch_changed_before_it(repo: Path, capsys, monkeypatch) -> None:
    """A branch raised `a` before --since and was merged inside it: the lane ends at the level the file holds,
    the raise shown at the merge (it showed nowhere: the branch commit lies outside, the merge lacks it against
    no parent)."""
    from tests.conftest import git

    def version(developing: str, proven: str, when: str, message: str) -> None:
        (repo / "CONTINUITY.md").write_text(f"# C\n\n## Current State\nFocus: x\n\n## Developing Knowledge\n"
                                            f"{developing}\n## Proven Knowledge\n{proven}\n")
        git(repo, "add", "-A")
        monkeypatch.setenv("GIT_AUTHOR_DATE", when)
        monkeypatch.setenv("GIT_COMMITTER_DATE", when)
        git(repo, "commit", "-qm", message, "--no-verify")

    version("! a: x | 1x\n", "\nfoo\n", "2026-10-25T10:00Z", "base")
    git(repo, "checkout", "-qb", "feat")
    version("!! a: x | 2x (X) [evidence: ep-1, ep-2]\n", "\nfoo\n", "2026-11-01T10:00Z", "raise a")
    git(repo, "checkout", "-q", "-")
    version("! a: x | 1x\n", "\nfoo\n!! b: y | 3x (Y) [evidence: ep-3, ep-4, ep-5]\n", "2026-11-10T10:00Z", "add b")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-11-12T10:00Z")
    git(repo, "merge", "-q", "--no-ff", "--no-verify", "feat", "-m", "merge feat")
    merge = git(repo, "rev-parse", "HEAD").strip()
    lane = next(ln for ln in build_report(load_config(repo), since="2026-11-05").lanes if ln.name == "a")
    assert lane.level == 2 and [(s.kind, s.level) for s in lane.steps] == [("present", 1), ("incremented", 2)]
    assert lane.steps[-1].commit == merge
    whole = next(ln for ln in build_report(load_config(repo)).lanes if ln.name == "a")
    assert [(s.kind, s.subject) for s in whole.steps] == [("added", "base"), ("incremented", "raise a")]
    monkeypatch.chdir(repo)
    assert main(["log", "a", "--since", "2026-11-05", "--json"]) == 0
    assert [(e["kind"], e["commit"]) for e in json.loads(capsys.readouterr().out)["patterns"]["a"]] == [
        ("present", git(repo, "rev-parse", "HEAD^1").strip()), ("incremented", merge)]


def test_a_demotion_row_names_its_kind_once_then_its_date_and_reason(forty) -> None:
    """The demotion's note opens with "demoted"; the table's cell shows the kind, then the note without it."""
    root, exp = forty
    page = render_html(build_report(load_config(root)))
    assert exp.demoted
    assert "demoted: demoted" not in page
    assert "demoted: 20" in page and "failed under a cold cache" in page
