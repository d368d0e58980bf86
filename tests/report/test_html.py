"""The page is one self-contained file, escapes everything from the repository, and stays small."""

from __future__ import annotations

import pytest

import json
import re
from pathlib import Path

from flowgit.config import load_config
from flowgit.report.build import build_report
from flowgit.report.html import LANE_LIMIT, render_html, script_safe
from flowgit.report.model import EpisodeInfo, Lane, Report, SizePoint, Step
from flowgit.report.sizes import Size
from tests.conftest import git
from tests.report.conftest import HOSTILE



def test_repository_text_is_escaped_everywhere(hostile_repo: Path) -> None:
    page = render_html(build_report(load_config(hostile_repo)))
    assert "<img" not in page and "alert(2)</script>" not in page and "<script>alert" not in page
    assert page.count("<script") == 2  # the data block and the page's own script, nothing else
    assert "&lt;img src=x onerror=alert(1)&gt;" in page  # shown as text: in titles, the table, the findings
    data = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S).group(1)
    assert "<" not in data and "&" not in data
    episodes = json.loads(data)["episodes"]
    assert any(HOSTILE in e["content"] for e in episodes.values())  # intact once parsed


def test_page_is_self_contained(forty) -> None:
    root, _ = forty
    page = render_html(build_report(load_config(root)))
    assert not re.search(r'(?:src|href|action|xlink:href)\s*=\s*"(?!#)', page)  # only in-page links
    assert "@import" not in page and "url(" not in page
    assert "default-src 'none'" in page  # and the browser forbids any request outright


def test_script_safe_json_round_trips() -> None:
    value = {"x": "</script><!-- & \u2028 <b>"}
    text = script_safe(value)
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == value


def synthetic(patterns: int, commits: int) -> Report:
    """A report of the size the issue names (10,000 commits, hundreds of patterns) without building the git."""
    lanes, episodes = [], {}
    for p in range(patterns):
        at = (p * commits) // patterns
        ids = (f"ep-{p:06x}a0000", f"ep-{p:06x}b0000")
        for n, i in enumerate(ids):
            episodes[i] = EpisodeInfo(i, "2026-11-01T00:00:00Z", "finding", f"pattern {p} fired " * 8,
                                      f"s{p % 40 + n}", f"agent-{n}")
        steps = [Step("added", 1, "Developing Knowledge", f"{at:040x}", at, "2026-11-01", "bench", f"s{at}", "wrap"),
                 Step("incremented", 2, "Developing Knowledge", f"{at + 1:040x}", at + 1, "2026-11-02", "bench",
                      f"s{at + 1}", "wrap", ids, ids)]
        lanes.append(Lane(f"pattern_{p}", steps, level=2, evidence=ids, grounding="broad",
                          sessions=("a", "b"), agents=("x", "y")))
    sizes = [SizePoint(f"{i:040x}", i, "2026-11-01", Size(60_000 + i, 500, 1_000 + i % 900, 12 + i % 5),
                       ("gone",) if i % 50 == 0 else ()) for i in range(commits)]
    return Report("synthetic", "CONTINUITY.md", lanes, episodes, sizes, [], {"file_chars_target": 117_000,
                  "file_chars_max": 140_000, "state_chars_target": 3000, "state_chars_max": 4000,
                  "developing_lines_target": 12, "developing_lines_max": 15}, commits, commits)


def test_large_history_is_aggregated_and_small() -> None:
    page = render_html(synthetic(2_500, 10_000))
    assert len(page.encode()) < 5_000_000
    assert page.count('<article class="lane') == LANE_LIMIT
    assert 'id="lanes-aggregated"' in page and "2,000 more pattern(s)" in page
    assert page.count('class="page"') > 10  # lanes and tables are paged
    series = re.findall(r'<polyline class="series" points="([^"]*)"', page)
    assert series and all(len(s.split()) <= 480 for s in series)  # 10,000 points bucketed per column


def test_uncut_fields_repeated_per_step_do_not_grow_the_page() -> None:
    """A commit's session and author are shown on every step it made, and an archived pattern's last text with
    its archival: one 20 KB trailer, author or line must not be copied into every mark and row (the page
    grew to 16 MB on 400 steps of one commit); --json keeps all of it."""
    report = synthetic(400, 400)
    huge = "s" * 20_000
    for lane in report.lanes:
        lane.steps = [Step(s.kind, s.level, s.section, s.commit, s.index, s.date, "A" * 20_000, huge, s.subject,
                           s.evidence, s.new_evidence, note="archived: " + "x" * 20_000) for s in lane.steps]
    page = render_html(report)
    assert len(page.encode()) < 5_000_000, len(page.encode())  # (uncut: about 100 MB)
    assert "s" * 200 not in page and "A" * 200 not in page and "x" * 700 not in page
    assert "s" * 100 in page  # cut, not dropped
    assert report.lanes[0].steps[0].to_dict()["session"] == huge


def test_empty_state_explains_what_to_do(repo: Path) -> None:
    page = render_html(build_report(load_config(repo)))
    assert 'id="empty"' in page and "flowgit wrap" in page and "flowgit init" in page
    assert '<article class="lane' not in page


def test_a_pattern_filter_that_matches_nothing_in_the_dates_says_so(forty) -> None:
    root, _ = forty
    cfg = load_config(root)
    whole = build_report(cfg)
    first_day = min(s.date for ln in whole.lanes for s in ln.steps)
    late = next(ln.name for ln in whole.lanes if min(s.date for s in ln.steps) > first_day)
    page = render_html(build_report(cfg, patterns=[late], until=first_day))
    assert 'id="no-lanes"' in page and late in page and '<article class="lane' not in page
    assert '<svg class="size-svg"' in page  # the file's sizes still draw


def test_a_mistyped_pattern_filter_is_answered_with_the_nearest_names(forty) -> None:
    from flowgit.errors import FlowgitError

    root, _ = forty
    cfg = load_config(root)
    real = build_report(cfg).lanes[0].name
    with pytest.raises(FlowgitError) as refused:
        build_report(cfg, patterns=[real[:-1] + "q"])
    assert f"did you mean `{real}`" in refused.value.render()


def _chain(n: int) -> tuple[str, ...]:
    return tuple(f"ep-{k:012x}" for k in range(n))


def test_a_long_evidence_chain_is_drawn_once_and_capped() -> None:
    """A pattern gaining one episode a wrap over 300 wraps drew its whole chain at every step (45,750 dots,
    15 MB): an evidence step draws what it added, a graduation at most DOTS_SHOWN, then how many more."""
    from flowgit.report.svg import DOTS_SHOWN

    report = synthetic(1, 400)
    lane = report.lanes[0]
    steps = [Step("added", 1, "Developing Knowledge", f"{0:040x}", 0, "2026-11-01", "bench", "s0", "wrap")]
    for k in range(1, 300):
        chain = _chain(k + 1)
        steps.append(Step("graduated" if k == 2 else "evidence", 3 if k >= 2 else 2,
                          "Proven Knowledge" if k >= 2 else "Developing Knowledge", f"{k:040x}", k, "2026-11-02",
                          "bench", f"s{k}", "wrap", chain, chain[-1:] if k != 2 else chain))
    lane.steps, lane.evidence = steps, _chain(300)
    page = render_html(report)
    assert len(page.encode()) < 600_000
    dots = page.count('<circle class="ev')
    assert dots == 1 + 3 + 297  # one new episode per evidence step, and the graduation's three
    report.lanes[0].steps[2] = Step("graduated", 3, "Proven Knowledge", f"{2:040x}", 2, "2026-11-02", "bench",
                                    "s2", "wrap", _chain(40), _chain(40))
    page = render_html(report)
    assert page.count('<circle class="ev') == 1 + DOTS_SHOWN + 297 and f"+{40 - DOTS_SHOWN}</text>" in page
    assert f"and {40 - DOTS_SHOWN} more (--json lists them all)" in page
    assert "(300 cited in all)" in page and "ep-00000000012b, " not in page  # rows list what each step added
    assert "and 240 more" in page  # the pattern's row lists 60 of its 300 ids


def test_a_long_name_is_shown_cut_and_lanes_stop_at_the_page_budget() -> None:
    report = synthetic(3, 30)
    report.lanes[0].name = "n" * 60_000
    page = render_html(report)
    assert "n" * 200 not in page and "n" * 100 in page
    many = synthetic(500, 4_000)
    for n, lane in enumerate(many.lanes):  # an ordinary long history: every lane with dozens of steps
        first = lane.steps[0]
        lane.steps = [Step("incremented" if k % 2 else "added", 1 + k % 2, first.section, f"{n * 100 + k:040x}",
                           n * 7 + k, "2026-11-02", "bench", f"s{k}", "wrap " * 10) for k in range(24)]
    page = render_html(many)
    assert len(page.encode()) < 5_000_000
    drawn = page.count('<article class="lane')
    assert 0 < drawn < 500 and f"{500 - drawn:,} more pattern(s)" in page


def test_a_memory_with_no_pattern_yet_says_how_the_first_one_enters(run, tmp_path: Path) -> None:
    """Just after `flowgit init --commit` one commit holds the skeleton and no pattern: the page said only that
    `flowgit log` lists names (there are none); it says how a pattern enters, and each lane spans its own life."""
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q")
    assert run(root, "init", "--commit", "--no-hooks").code == 0
    page = render_html(build_report(load_config(root)))
    assert 'id="no-lanes"' in page and "flowgit episode add" in page and "<code>flowgit wrap</code>" in page
    assert "lanes do not share a time axis" in page


def test_a_name_in_a_table_wraps_after_its_separators_never_mid_word() -> None:
    report = synthetic(2, 4)
    report.lanes[0].name = "retry_budget.v2"
    report.lanes[1].name = "x" * 60
    page = render_html(report)
    assert "<code>retry_<wbr>budget.<wbr>v2</code>" in page  # the patterns table: a break after each separator
    assert f"<code>{'x' * 24}<wbr>{'x' * 24}<wbr>{'x' * 12}</code>" in page  # a run with none: in long pieces
    assert 'data-pattern="retry_budget.v2"' in page  # attributes and lanes keep the name whole
    assert "overflow-wrap:anywhere" not in page.split("td code{", 1)[1].split("}", 1)[0]
