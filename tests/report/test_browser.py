"""The page in a real headless Chromium (Debian's /usr/bin/chromium), driven over the DevTools protocol.

Each test renders a real repository's report, opens the file, and asserts on
the DOM: a lane per pattern, the evidence dots of every promotion, the links
to commits, the detail panel; no console error, no request but the page
itself. Screenshots go to the test's directory (and to $FLOWGIT_SCREENSHOTS
when set, for a person to look at).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from pathlib import Path

import pytest

from flowgit.config import load_config
from flowgit.report.build import build_report
from flowgit.report.html import LANE_LIMIT, LANES_PER_PAGE, render_html
from flowgit.report.model import Report
from tests.report import browser
from tests.report.conftest import HOSTILE
from tests.report.test_html import synthetic

if not browser.available():
    if os.environ.get("CI"):
        raise RuntimeError("CI needs /usr/bin/chromium: .ci/run installs it (apt-get install chromium)")
    pytest.skip("no /usr/bin/chromium here (apt-get install chromium)", allow_module_level=True)


def _open(report: Report, tmp_path: Path, name: str) -> tuple[browser.Browser, Path]:
    page = tmp_path / f"{name}.html"
    page.write_text(render_html(report), encoding="utf-8")
    b = browser.Browser().__enter__()
    b.open(page)
    return b, page


def _keep(shot: Path) -> None:
    target = os.environ.get("FLOWGIT_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(target) / shot.name)


def _check_clean(b: browser.Browser) -> None:
    assert b.console_errors() == []
    assert b.requests() == [b.url]  # the page itself, nothing else
    assert not [e for e in b.events if e.get("method") == "Page.javascriptDialogOpening"]
    assert b.evaluate("document.body.getAttribute('data-ready')") == "1"  # the script ran to its end


def _check_lanes(b: browser.Browser, report: Report) -> None:
    shown = b.evaluate("Array.from(document.querySelectorAll('article.lane')).map(a => a.dataset.pattern)")
    assert sorted(shown) == sorted(ln.name for ln in report.lanes)
    dots = b.evaluate("""(() => { const out = {};
        document.querySelectorAll('article.lane').forEach(a => {
          out[a.dataset.pattern] = Array.from(a.querySelectorAll('.dots')).map(
            g => [g.dataset.commit, Array.from(g.querySelectorAll('circle.ev')).map(c => c.dataset.ep)]);
        }); return out; })()""")
    for lane in report.lanes:
        drawn = {commit: ids for commit, ids in dots[lane.name]}
        for step in lane.graduations:
            if step.evidence:
                assert drawn.get(step.commit) == list(step.evidence), (lane.name, step.kind)
    commits = {s.commit for ln in report.lanes for s in ln.steps}
    missing = b.evaluate(f"{json.dumps(sorted(commits))}.filter(c => !document.getElementById('c-' + c))")
    assert missing == []


def test_demo_repository_report_in_chromium(demo_repo: Path, tmp_path: Path) -> None:
    report = build_report(load_config(demo_repo))
    assert report.lanes and any(ln.graduations for ln in report.lanes)
    b, _ = _open(report, tmp_path, "demo-report")
    try:
        _check_lanes(b, report)
        _check_clean(b)
        first = report.lanes[0].graduations[-1].evidence[0]
        b.evaluate(f"document.querySelector('circle.ev[data-ep=\"{first}\"]')"
                   ".dispatchEvent(new MouseEvent('click', {bubbles: true}))")
        assert report.episodes[first].content in b.evaluate("document.getElementById('detail').textContent")
        assert b.evaluate("document.getElementById('detail').hidden") is False
        _keep(b.screenshot(tmp_path / "demo-report.png"))
    finally:
        b.__exit__(None, None, None)
    assert (tmp_path / "demo-report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_forty_wrap_report_in_chromium(forty, tmp_path: Path) -> None:
    root, exp = forty
    report = build_report(load_config(root))
    b, _ = _open(report, tmp_path, "forty-wraps")
    try:
        _check_lanes(b, report)
        _check_clean(b)
        flagged = b.evaluate("Array.from(document.querySelectorAll('article.lane')).filter("
                             "a => a.querySelector('.step.flagged')).map(a => a.dataset.pattern)")
        assert {exp.weak, exp.ungrounded} <= set(flagged)
        assert b.evaluate(f"document.querySelector('.graph-svg .node.pattern.weak').dataset.node") == f"p:{exp.weak}"
        assert b.evaluate("document.querySelectorAll('.findings li.override').length") == 1
        assert b.evaluate("document.querySelectorAll('.size-svg').length") == 3
        assert b.evaluate("document.querySelectorAll('.size-svg .archival').length") == len(exp.archived)
        b.evaluate("const s = document.getElementById('table-search'); s.value = 'sess-solo';"
                   "s.dispatchEvent(new Event('input'))")
        b.evaluate("document.getElementById('table-search').value = 'token_refresh';"
                   "document.getElementById('table-search').dispatchEvent(new Event('input'))")
        visible = b.evaluate("Array.from(document.querySelectorAll('#patterns-table tbody tr'))"
                             ".filter(r => r.style.display !== 'none').map(r => r.dataset.pattern)")
        assert visible == [exp.ungrounded]
        b.evaluate("document.getElementById('table-search').value = '';"
                   "document.getElementById('table-search').dispatchEvent(new Event('input'))")
        step = report.lanes[0].graduations[-1]
        b.evaluate(f"document.querySelector('article.lane .step[data-commit=\"{step.commit}\"] path')"
                   ".dispatchEvent(new MouseEvent('click', {bubbles: true}))")
        assert b.evaluate("location.hash") == f"#c-{step.commit}"  # the mark links to its commit's row
        assert step.commit[:10] in b.evaluate("document.getElementById('detail').textContent")
        assert b.evaluate(f"document.getElementById('c-{step.commit}').classList.contains('target')")
        b.evaluate("document.getElementById('detail').hidden = true; window.scrollTo(0, 0)")
        _keep(b.screenshot(tmp_path / "forty-wraps.png"))
        _keep(b.screenshot(tmp_path / "forty-wraps-full.png", full=True))
        b.call("Emulation.setEmulatedMedia", media="print")  # printed: no controls, every lane of the page
        assert b.evaluate("getComputedStyle(document.querySelector('nav')).display") == "none"
        assert b.evaluate("getComputedStyle(document.querySelector('#tables .search')).display") == "none"
        pdf = base64.b64decode(b.call("Page.printToPDF", printBackground=True)["data"])
        assert pdf.startswith(b"%PDF") and len(pdf) > 20_000
    finally:
        b.__exit__(None, None, None)


def test_hostile_text_runs_nothing_and_loads_nothing(hostile_repo: Path, tmp_path: Path) -> None:
    report = build_report(load_config(hostile_repo))
    b, _ = _open(report, tmp_path, "hostile")
    try:
        _check_clean(b)
        assert b.evaluate("document.querySelectorAll('img').length") == 0
        assert b.evaluate("document.scripts.length") == 2
        assert HOSTILE.split(">")[0] in b.evaluate("document.getElementById('findings').textContent")
    finally:
        b.__exit__(None, None, None)


def test_hundreds_of_patterns_page_without_freezing(tmp_path: Path) -> None:
    report = synthetic(600, 10_000)
    b, _ = _open(report, tmp_path, "large")
    try:
        _check_clean(b)
        assert b.evaluate("document.querySelectorAll('article.lane').length") == LANE_LIMIT
        visible = "Array.from(document.querySelectorAll('article.lane')).filter(a => a.offsetParent !== null).length"
        assert b.evaluate(visible) == LANES_PER_PAGE
        b.evaluate("document.querySelector('#timeline .pager button:last-child').click()")
        assert b.evaluate("document.querySelector('#timeline .pager span').textContent") == \
            f"page 2 of {LANE_LIMIT // LANES_PER_PAGE}"
        assert b.evaluate(visible) == LANES_PER_PAGE
        target = report.sizes[-1].commit  # a link into a later page of the events table reveals its row
        b.evaluate(f"location.hash = '#c-{report.lanes[-1].steps[0].commit}'")
        assert b.evaluate(f"document.getElementById('c-{report.lanes[-1].steps[0].commit}').offsetParent !== null")
        assert target
    finally:
        b.__exit__(None, None, None)


def test_fresh_repository_page_is_a_helpful_empty_state(repo: Path, tmp_path: Path) -> None:
    report = build_report(load_config(repo))
    b, _ = _open(report, tmp_path, "empty")
    try:
        _check_clean(b)
        text = b.evaluate("document.getElementById('empty').textContent")
        assert "flowgit init" in text and "flowgit wrap" in text
        assert b.evaluate("document.querySelectorAll('article.lane, svg').length") == 0
    finally:
        b.__exit__(None, None, None)


def test_printing_shows_every_page_of_lanes_and_tables(tmp_path: Path) -> None:
    """Printed or saved as PDF, a paged report kept page 1 only (the pager hides the rest), and said nothing of
    it: in print every page shows."""
    report = synthetic(120, 1_000)
    b, _ = _open(report, tmp_path, "print")
    try:
        lanes = "Array.from(document.querySelectorAll('article.lane')).filter(a => a.offsetParent !== null).length"
        assert b.evaluate(lanes) == LANES_PER_PAGE  # on screen: one page at a time
        b.call("Emulation.setEmulatedMedia", media="print")
        assert b.evaluate(lanes) == 120
        hidden = "Array.from(document.querySelectorAll('.paged > .page')).filter(p => p.offsetParent === null).length"
        assert b.evaluate("document.querySelectorAll('#events-table > .page').length") > 1
        assert b.evaluate(hidden) == 0
        pdf = base64.b64decode(b.call("Page.printToPDF")["data"])
        assert pdf.startswith(b"%PDF") and len(pdf) > 10_000
    finally:
        b.__exit__(None, None, None)


def test_a_very_long_pattern_name_stays_inside_the_page(tmp_path: Path) -> None:
    """Names have no length limit: a 279-character one ran off the lane head and scrolled the page sideways."""
    report = synthetic(3, 20)
    report.lanes[0].name = "retry_budget_" + "x" * 266
    b, _ = _open(report, tmp_path, "long-name")
    try:
        _check_clean(b)
        assert b.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        right = b.evaluate("document.querySelector('.lane-name').getBoundingClientRect().right")
        assert right <= b.evaluate("document.querySelector('main').getBoundingClientRect().right")
    finally:
        b.__exit__(None, None, None)
