"""The documentation's snippets, tried as written: the test command, `flowgit setup claude`, the pre-commit config."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.checks.gate_fixtures import DEVELOPING, E_RETRY, base_text, committed_base, developing_lines
from tests.commands.agent_fixtures import BIN, hook_env
from tests.commands.readme import PROJECT, blocks
from tests.conftest import git


def promoted(evidence: str) -> str:
    """The gate fixtures' file with p01 promoted to 2x, with ``evidence`` written after it."""
    lines = developing_lines().splitlines()
    lines[0] = f"!! p01: {DEVELOPING[0][1]} | 2x (RELIABILITY){evidence}"
    return base_text(developing="\n".join(lines))


def version() -> str:
    return re.search(r'^version = "([^"]+)"', (PROJECT / "pyproject.toml").read_text(), re.M).group(1)


def test_the_readme_test_command_is_what_ci_runs():
    command = blocks("Two commands", "sh")[1]
    ci = (PROJECT / ".ci" / "run").read_text()
    extras = re.search(r"pip install -e '(\.\[[^\]]+\])'", command).group(1)
    assert f"pip install --quiet -e '{extras}'" in ci and "mcp" in extras
    assert ".venv/bin/python -m pytest" in command and ".venv/bin/python -m pytest" in ci


def test_use_it_with_claude_code_is_one_command_that_works(repo, tmp_path):
    (command,) = [b.strip() for b in blocks("Use it with Claude Code", "sh")]
    assert command == "flowgit setup claude"
    installed = tmp_path / "bin"  # flowgit as an installer puts it on PATH (pipx links its console script)
    installed.mkdir()
    (installed / "flowgit").symlink_to(BIN / "flowgit")
    env = hook_env()
    env["PATH"] = os.pathsep.join([str(installed)] + [p for p in env["PATH"].split(os.pathsep) if p != str(BIN)])
    res = subprocess.run(shlex.split(command), cwd=repo, env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert (repo / ".claude" / "skills" / "flowgit-wrap" / "SKILL.md").is_file()


def test_use_it_over_mcp_names_the_extra_and_a_config_that_starts_the_server():
    (install,) = blocks("Use it over MCP", "sh")
    # flowgit is installed from its repository (there is no package index release): a path, with the extra
    assert install.split("#")[0].strip() == "pip install '/path/to/flowgit[mcp]'"
    assert 'mcp = ["mcp' in (PROJECT / "pyproject.toml").read_text()
    (config,) = blocks("Use it over MCP", "json")
    server = json.loads(config)["mcpServers"]["flowgit"]
    assert shutil.which(server["command"], path=str(BIN)) and server["args"] == ["mcp"]
    # tests/mcp/test_server.py starts the server with exactly this command and these arguments


@pytest.mark.slow
def test_the_pre_commit_snippet_works_verbatim_against_a_tagged_release(repo, tmp_path):
    """docs/gate.md's config, only `repo:` pointed at a clone tagged like a release, through the real framework."""
    (snippet,) = blocks("With the pre-commit framework", "yaml")
    config = yaml.safe_load(snippet)
    (entry,) = config["repos"]
    assert entry["rev"] == f"v{version()}" and [h["id"] for h in entry["hooks"]] == [
        "flowgit-check", "flowgit-prepare-commit-msg", "flowgit-commit-msg", "flowgit-audit"]
    hosted = tmp_path / "hosted-flowgit"
    git(tmp_path, "clone", "-q", "--no-hardlinks", str(PROJECT), str(hosted))
    if not git(hosted, "tag", "--list", entry["rev"]).strip():
        git(hosted, "tag", entry["rev"])
    (repo / ".pre-commit-config.yaml").write_text(snippet.replace(entry["repo"], str(hosted)))

    committed_base(repo)
    install = re.search(r"`(pre-commit install [^`]+)`", blocks_text()).group(1)
    exe = shutil.which("pre-commit") or str(Path(sys.executable).with_name("pre-commit"))
    env = {**hook_env(), "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    done = subprocess.run([exe, *shlex.split(install)[1:]], cwd=repo, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    hooks = repo / ".git" / "hooks"
    assert all((hooks / name).is_file() for name in ("pre-commit", "pre-merge-commit", "prepare-commit-msg",
                                                       "commit-msg", "pre-push"))

    (repo / "CONTINUITY.md").write_text(promoted(""))  # no evidence: the gate refuses
    git(repo, "add", "-A")
    rejected = subprocess.run(["git", "commit", "-m", "hand edit"], cwd=repo, env=env, capture_output=True,
                              text=True, timeout=600)
    assert rejected.returncode != 0 and "G101" in rejected.stdout + rejected.stderr
    (repo / "CONTINUITY.md").write_text(promoted(f" [evidence: {E_RETRY[0].id}, {E_RETRY[1].id}]"))
    git(repo, "add", "-A")
    accepted = subprocess.run(["git", "commit", "-m", "Session wrap Nov 30\n\nFlow-Session: s9\nIncremented: p01"],
                              cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "flowgit check-msg" in accepted.stdout + accepted.stderr


def blocks_text() -> str:
    from tests.commands.readme import section

    return section("With the pre-commit framework")


def _emitted_codes() -> dict[str, str]:
    """Every gate finding code the package emits, with the rule name it is filed under."""
    found: dict[str, str] = {}
    for source in (PROJECT / "flowgit").rglob("*.py"):
        for code, rule in re.findall(r'Finding\(\s*"(G\d{3})",\s*"([a-z-]+)"', source.read_text(encoding="utf-8")):
            found[code] = rule
    return found


def _table_codes(text: str) -> list[str]:
    """The codes the rules table's rows open with, in order (a range ``G502–G505`` gives both ends)."""
    out = []
    for row in re.findall(r"^\| ([GEW]\d{3}(?:[–-][GEW]?\d{3})?)(?:, [^|]*)? \|", text, re.M):
        out.extend(re.findall(r"[GEW]?\d{3}", row))
    return [code if code[0] in "GEW" else "G" + code for code in out]


def test_the_rules_page_lists_every_code_the_gate_emits_in_order():
    text = (PROJECT / "docs" / "rules.md").read_text(encoding="utf-8")
    listed = _table_codes(text)
    gate = [code for code in listed if code.startswith("G")]
    assert gate == sorted(gate), "the rules table is in code order"
    ranges = re.findall(r"^\| G(\d{3})–G(\d{3}) \|", text, re.M)
    covered = set(gate) | {f"G{n:03d}" for low, high in ranges for n in range(int(low), int(high) + 1)}
    missing = sorted(set(_emitted_codes()) - covered)
    assert not missing, f"codes the gate emits that docs/rules.md does not list: {missing}"


def test_the_rules_page_names_every_finding_that_is_no_rule():
    from flowgit.checks.registry import rules

    registered = {rule.name for rule in rules()}
    not_rules = sorted(code for code, rule in _emitted_codes().items() if rule not in registered)
    intro = (PROJECT / "docs" / "rules.md").read_text(encoding="utf-8").split("| code |")[0]
    named = set()
    for low, high in re.findall(r"G(\d{3})(?:–G(\d{3}))?", intro):
        named.update(f"G{n:03d}" for n in range(int(low), int(high or low) + 1))
    assert not_rules and set(not_rules) <= named, f"not named as findings that are no rules: {sorted(set(not_rules) - named)}"
