"""The hook's start-up: `flowgit check` judges a staged wrap without loading what only other commands need.

Speed is measured in benchmarks/; this holds the structure that speed rests on.
A dataclass costs about a millisecond to define and `dataclasses` pulls in
`inspect` (several more): the gate's modules define value types as named tuples
and :class:`flowgit.record.Record` classes, and the click command tree is skipped.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.checks.gate_fixtures import E_RETRY, committed_base
from tests.commands.test_hooks import grounded_text
from tests.conftest import git

PROBE = """
import json, os, sys
sys.argv = ["flowgit", "check", "--json"]
os._exit = lambda code: None  # keep the interpreter to look at what it loaded
from flowgit.entry import main
code = main()
sys.stderr.write(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def test_the_gate_judges_a_staged_wrap_without_dataclasses_inspect_or_click(repo: Path):
    committed_base(repo, episodes=list(E_RETRY))
    (repo / "CONTINUITY.md").write_text(grounded_text())
    git(repo, "add", "-A")
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=repo, capture_output=True, text=True)
    report = json.loads(done.stdout)
    assert report["checked"] and report["ok"], done.stdout  # a real judgement ran, with its evidence rules
    loaded = set(json.loads(done.stderr[done.stderr.index("{"):])["modules"])
    assert "flowgit.checks.evidence_rules" in loaded and "flowgit.episodes" in loaded
    assert not loaded & {"dataclasses", "inspect", "click", "flowgit.cli", "markdown_it", "pygit2", "flowgit.lock"}, \
        sorted(loaded & {"dataclasses", "inspect", "click", "flowgit.cli", "markdown_it", "pygit2", "flowgit.lock"})


def test_a_command_started_in_a_directory_since_deleted_says_so_with_exit_2(tmp_path: Path):
    """`os.getcwd()` fails there: every command ended in a traceback (exit 1, no JSON under --json)."""
    gone = tmp_path / "gone"
    gone.mkdir()
    script = ("import os, sys\nos.chdir(sys.argv[1]); os.rmdir(sys.argv[1])\nfrom flowgit.entry import main\n"
              "sys.argv = ['flowgit', *sys.argv[2:]]\nsys.exit(main())\n")
    for args in (["status", "--json"], ["episode", "list", "--json"], ["prime", "--json"]):
        proc = subprocess.run([sys.executable, "-c", script, str(gone), *args], capture_output=True, text=True)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert "current directory no longer exists" in json.loads(proc.stdout)["error"]["message"]
        gone.mkdir()
    proc = subprocess.run([sys.executable, "-c", script, str(gone), "status"], capture_output=True, text=True)
    assert proc.returncode == 2 and "fix: cd into the repository" in proc.stderr
