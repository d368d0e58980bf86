"""`flowgit demo` ends by writing the report and printing its path; the page outlives the throwaway repository."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from flowgit.commands.demo import run_demo


def test_demo_ends_with_the_report(capsys) -> None:
    run_demo(as_json=True)
    data = json.loads(capsys.readouterr().out)
    page = Path(data["report"])
    try:
        assert data["scenes"][-1]["command"][:2] == ["flowgit", "report"] and data["scenes"][-1]["exit"] == 0
        assert page.is_file() and [p.name for p in page.parent.iterdir()] == ["report.html"]
        html = page.read_text(encoding="utf-8")
        for name in ("retry_budget", "idempotency_keys", "cache_first", "breaker_threshold"):
            assert f'data-pattern="{name}"' in html
    finally:
        shutil.rmtree(page.parent, ignore_errors=True)


def test_demo_prints_where_the_report_is(capsys) -> None:
    run_demo()
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("The report is kept: "))
    page = Path(line.removeprefix("The report is kept: "))
    try:
        assert page.is_file() and page.as_uri() in out
    finally:
        shutil.rmtree(page.parent, ignore_errors=True)
