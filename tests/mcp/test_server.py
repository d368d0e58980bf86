"""`flowgit mcp` as a subprocess, driven by the MCP SDK's own stdio client."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402  (installed with the SDK)
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client  # noqa: E402

from tests.ascend.corpus import write_story  # noqa: E402
from tests.commands.agent_fixtures import A2, BIN, committed_project, hook_env  # noqa: E402
from tests.commands.readme import blocks  # noqa: E402
from tests.conftest import git  # noqa: E402

TOOLS = {"episode_add", "episode_search", "candidates", "wrap", "check", "log", "audit", "ascend", "status"}


def payload(result) -> dict | list:
    """The JSON a tool returned (its text content, which is the CLI's --json text)."""
    assert len(result.content) == 1 and result.content[0].type == "text"
    return json.loads(result.content[0].text)


def cli_json(project: Path, *args: str, env: dict) -> dict | list:
    res = subprocess.run([str(BIN / "flowgit"), *args, "--json"], cwd=project, env=env, capture_output=True,
                         text=True, timeout=60)
    return json.loads(res.stdout)


async def drive(project: Path, env: dict) -> dict:
    """One whole agent session over MCP; returns what the assertions need."""
    seen: dict = {}
    server = json.loads(blocks("Use it over MCP", "json")[0])["mcpServers"]["flowgit"]  # the docs' config, as written
    params = StdioServerParameters(command=shutil.which(server["command"], path=str(BIN)), args=server["args"],
                                   cwd=project, env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            seen["server"] = init.server_info.name
            tools = (await session.list_tools()).tools
            seen["tools"] = {t.name: t for t in tools}
            seen["added"] = [payload(await session.call_tool("episode_add", {
                "text": text, "type": "outcome", "tags": ["retries"], "session": "sess-c"}))
                for text in ("a retry budget kept provider load flat in the third outage",
                             "retry budget again held provider load during the fourth outage")]
            seen["bad_type"] = await session.call_tool("episode_add", {"text": "x", "type": "findng"})
            seen["by_content"] = payload(await session.call_tool("episode_add", {
                "content": "the breaker opened after five failures", "type": "observation", "session": "sess-c"}))
            seen["unknown_search"] = await session.call_tool("episode_search", {"query": "zzz"})
            seen["missing_type"] = await session.call_tool("episode_add", {"content": "x"})
            seen["mistyped_tags"] = await session.call_tool("episode_add", {"type": "finding", "content": "x",
                                                                             "tags": "retries"})
            head = git(project, "rev-parse", "HEAD").strip()
            seen["unknown_wrap"] = await session.call_tool("wrap", {"plan": {"session": "sess-c"}, "dryrun": True})
            seen["head_unmoved"] = git(project, "rev-parse", "HEAD").strip() == head
            seen["search"] = payload(await session.call_tool("episode_search", {"text": "third outage"}))
            seen["negative_limit"] = await session.call_tool("episode_search", {"text": "outage", "limit": -1})
            seen["candidates"] = payload(await session.call_tool("candidates", {"date": "2026-11-26"}))
            plan = {"session": "sess-c", "recent": "Three outages; the retry budget held each time.",
                    "patterns": [{"op": "graduate", "name": "retry_budget", "evidence": [A2.id]}]}
            seen["dry"] = payload(await session.call_tool("wrap", {"plan": plan, "dry_run": True,
                                                                   "date": "2026-11-26"}))
            seen["head_after_dry"] = git(project, "rev-parse", "HEAD").strip()
            seen["wrap"] = payload(await session.call_tool("wrap", {"plan": plan, "date": "2026-11-26"}))
            seen["bad_plan"] = await session.call_tool("wrap", {"plan": {"patterns": [{"op": "fly"}]}})
            resources = (await session.list_resources()).resources
            seen["resources"] = {str(r.uri) for r in resources}
            content = await session.read_resource("flowgit://continuity")
            seen["continuity"] = content.contents[0].text
            seen["log"] = payload(await session.call_tool("log", {"names": ["retry_budget"]}))
            seen["log_negative_limit"] = await session.call_tool("log", {"limit": -1})
            seen["check"] = payload(await session.call_tool("check", {}))
            seen["audit"] = payload(await session.call_tool("audit", {}))
            seen["audit_range"] = payload(await session.call_tool("audit", {"range": "HEAD~1..HEAD"}))
            gate = payload(await session.call_tool("ascend", {"recall": "everything we figured out about the cache", "type": "cluster",
                                                              "partitions": ["claude"]}))
            seen["gate"] = gate
            seen["recognized"] = payload(await session.call_tool("ascend", {"state": gate["state"],
                                                                            "answer": "recognize"}))
            seen["bad_state"] = await session.call_tool("ascend", {"state": {"version": 99}, "answer": "recognize"})
            moved = project / "CONTINUITY.md.away"
            (project / "CONTINUITY.md").rename(moved)
            try:
                await session.read_resource("flowgit://continuity")
            except MCPError as exc:  # a protocol error, naming the file and the fix
                seen["missing_resource"] = str(exc)
            moved.rename(project / "CONTINUITY.md")
    return seen


def test_an_agent_session_over_mcp(run, repo, tmp_path):
    project = committed_project(repo, run)
    corpus = tmp_path / "claude"
    write_story(corpus)
    env = hook_env(CLAUDE_CONFIG_DIR=str(corpus), FLOWGIT_AGENT="agent-mcp")
    seen = anyio.run(drive, project, env)

    assert seen["server"] == "flowgit" and TOOLS <= set(seen["tools"])
    assert seen["tools"]["episode_add"].input_schema["required"] == ["type"]
    assert all(t.input_schema.get("additionalProperties") is False for t in seen["tools"].values())
    assert all(p.get("description") for p in seen["tools"]["episode_search"].input_schema["properties"].values())
    assert seen["by_content"]["added"][0]["content"] == "the breaker opened after five failures"
    for refused, name in ((seen["unknown_search"], "query"), (seen["unknown_wrap"], "dryrun")):
        error = json.loads(refused.content[0].text)["error"]  # the CLI's JSON error, with what the tool takes
        assert refused.is_error and error["message"].endswith(f"argument `{name}` is not an argument of this tool")
        assert " takes: " in error["fix"]  # an argument the tool does not take is refused, never dropped
    assert seen["head_unmoved"]  # `dryrun` did not turn the rehearsal into a commit
    missing = json.loads(seen["missing_type"].content[0].text)["error"]
    assert missing["message"] == "`episode_add`: argument `type` is missing" and "(required: type)" in missing["fix"]
    mistyped = json.loads(seen["mistyped_tags"].content[0].text)["error"]
    assert seen["mistyped_tags"].is_error and "argument `tags` is not valid" in mistyped["message"]

    first, second = seen["added"]
    assert first["added"][0]["session"] == "sess-c" and first["added"][0]["agent"] == "agent-mcp"
    assert second["already_present"] == [] and second["added"][0]["id"].startswith("ep-")
    assert seen["bad_type"].is_error
    err = json.loads(seen["bad_type"].content[0].text)["error"]
    assert err["message"] == "no episode type 'findng'" and err["fix"] == "did you mean `finding`?"
    assert [e["id"] for e in seen["search"]] == [first["added"][0]["id"]]
    negative = json.loads(seen["negative_limit"].content[0].text)["error"]  # (it used to drop the oldest match)
    assert seen["negative_limit"].is_error and "limit must be 0 (all) or more" in negative["message"]
    log_negative = json.loads(seen["log_negative_limit"].content[0].text)["error"]  # (it dropped the oldest)
    assert seen["log_negative_limit"].is_error and "limit must be 1 or more" in log_negative["message"]

    ready = {r["name"] for r in seen["candidates"]["ready_to_graduate"]}
    assert "retry_budget" in ready
    assert seen["dry"]["dry_run"] and seen["dry"]["committed"] is None and "retry_budget" in seen["dry"]["message"]
    assert seen["wrap"]["committed"] and seen["head_after_dry"] != git(project, "rev-parse", "HEAD").strip()
    assert "Graduated: retry_budget" in git(project, "log", "-1", "--format=%B")
    assert seen["bad_plan"].is_error and "fix" in json.loads(seen["bad_plan"].content[0].text)["error"]

    assert seen["resources"] >= {"flowgit://continuity", "flowgit://wrap-plan-schema"}
    proven = seen["continuity"].split("## Proven Knowledge")[1]
    assert "!! retry_budget:" in proven and seen["continuity"] == (project / "CONTINUITY.md").read_text()

    # the same JSON as the CLI's --json, whichever door the agent used
    assert seen["log"] == cli_json(project, "log", "retry_budget", env=env)
    assert seen["check"] == cli_json(project, "check", env=env)
    assert seen["audit"] == cli_json(project, "audit", env=env)
    assert seen["audit_range"] == cli_json(project, "audit", "--range", "HEAD~1..HEAD", env=env)
    assert seen["search"] == cli_json(project, "episode", "search", "third outage", env=env)

    assert seen["gate"]["status"] == "gate"
    assert [o["answer"] for o in seen["gate"]["options"]] == ["recognize", "refine", "reorient"]
    assert seen["recognized"]["status"] == "recognized" and seen["recognized"]["state"]["recognized"]
    assert seen["bad_state"].is_error
    assert "pass back the `state`" in json.loads(seen["bad_state"].content[0].text)["error"]["fix"]
    assert "CONTINUITY.md" in seen["missing_resource"] and "flowgit init" in seen["missing_resource"]


def test_without_the_sdk_the_command_says_how_to_install_it(run, tmp_path, monkeypatch):
    import sys

    for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")]:
        monkeypatch.setitem(sys.modules, name, None)  # as if the extra were not installed
    monkeypatch.setitem(sys.modules, "mcp", None)
    monkeypatch.delitem(sys.modules, "flowgit.mcp.server", raising=False)
    res = run(tmp_path, "mcp", "--json")
    assert res.code == 2
    assert "pip install '/path/to/flowgit[mcp]'" in json.loads(res.out)["error"]["fix"]


def _call_in_process(project: Path, name: str, arguments: dict):
    """One tool call on the server object itself (no subprocess): a failure can be planted inside a tool."""
    from flowgit.mcp.server import build_server

    server = build_server(project)
    return anyio.run(server.call_tool, name, arguments)


def test_a_failure_inside_a_tool_and_an_unknown_tool_come_back_as_the_json_error(repo, run, monkeypatch):
    assert run(repo, "init", "--commit").code == 0

    def broken(*args, **kwargs):
        raise RuntimeError("disk gremlin")

    monkeypatch.setattr("flowgit.overview.gather", broken)
    failed = _call_in_process(repo, "status", {})
    assert failed.is_error
    error = payload(failed)["error"]
    assert error["message"] == "`status` failed inside flowgit: RuntimeError: disk gremlin"
    assert "flowgit status --json" in error["fix"]
    unknown = _call_in_process(repo, "statsu", {})
    assert unknown.is_error and payload(unknown)["error"]["message"] == "no tool `statsu`"
    assert "status" in payload(unknown)["error"]["fix"].split(": ")[1].split(", ")


def test_episode_add_outside_a_repository_refuses_as_the_cli_does_and_writes_nothing(run, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    refused = _call_in_process(plain, "episode_add", {"type": "finding", "content": "what happened",
                                                      "session": "s1"})
    cli = run(plain, "episode", "add", "--type", "finding", "--session", "s1", "what happened", "--json")
    assert refused.is_error and cli.code == 2
    assert payload(refused) == json.loads(cli.out)  # the CLI's JSON error, word for word
    assert payload(refused)["error"]["message"] == "not inside a git repository"
    assert list(plain.iterdir()) == []  # no stray .flow/, no lock file


def test_episode_add_outside_a_repository_writes_where_the_server_was_told_to(tmp_path):
    from flowgit.mcp.server import build_server

    named = tmp_path / "notes.jsonl"
    server = build_server(tmp_path, store=str(named))  # `flowgit mcp --store PATH`, as `--store` on the CLI
    added = anyio.run(server.call_tool, "episode_add", {"type": "finding", "content": "x", "session": "s1"})
    assert not added.is_error and named.read_text().count("\n") == 1


def test_every_argument_of_every_tool_is_described_in_tools_list(repo, run):
    """docs/agents.md: "Every argument is described in the tool's schema": walked over `tools/list` as a client sees it,
    so a tool added later without descriptions fails here too."""
    from flowgit.mcp.server import build_server

    assert run(repo, "init", "--commit").code == 0
    tools = anyio.run(build_server(repo).list_tools)
    assert TOOLS <= {t.name for t in tools}
    bare = [f"{t.name}.{name}" for t in tools for name, prop in t.input_schema.get("properties", {}).items()
            if not str(prop.get("description", "")).strip()]
    assert bare == []


async def _calls(where: Path, env: dict, *calls: tuple[str, dict]) -> list:
    """Tool calls on one `flowgit mcp` subprocess started in ``where``: what each returned."""
    params = StdioServerParameters(command=str(BIN / "flowgit"), args=["mcp"], cwd=where, env=env)
    with anyio.fail_after(60):
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return [await session.call_tool(name, arguments) for name, arguments in calls]


def test_an_answer_naming_a_path_of_bytes_that_are_not_utf8_comes_back_and_the_server_goes_on(tmp_path):
    """A directory named with a Latin-1 byte (`caf\\xe9`) is read as a lone surrogate: the server escaped
    nothing, could not send the answer, and died (every later call met a closed pipe). The text now escapes
    it as JSON does, the same document as the CLI's, and the next call is answered."""
    where = tmp_path / os.fsdecode(b"caf\xe9")
    where.mkdir()
    audited, status = anyio.run(_calls, where, hook_env(), ("audit", {}), ("status", {}))
    assert audited.is_error and "\\udce9" in audited.content[0].text
    error = payload(audited)["error"]
    cli = subprocess.run([str(BIN / "flowgit"), "audit", "--json"], cwd=where, env=hook_env(), capture_output=True)
    assert cli.returncode == 2
    assert error == json.loads(cli.stdout.decode("utf-8", "surrogateescape"))["error"]
    assert status.is_error and payload(status)["error"]["message"] == error["message"]


def test_check_and_audit_over_mcp_judge_under_an_invalid_working_tree_configuration_as_the_cli_does(run, repo):
    """A typo in an uncommitted `.flowgit.toml` judges nothing in `check` and `audit` (the configuration
    committed at each commit does): the CLI warns and gives its verdict, and so do the tools (before, they
    returned the configuration's error instead)."""
    assert run(repo, "init", "--commit").code == 0
    (repo / ".flowgit.toml").write_text('continuty = "x.md"\n')
    checked, audited = anyio.run(_calls, repo, hook_env(), ("check", {}), ("audit", {}))
    assert not checked.is_error and not audited.is_error
    assert payload(checked) == cli_json(repo, "check", env=hook_env())
    assert payload(audited) == cli_json(repo, "audit", env=hook_env())


def test_episode_search_outside_a_repository_refuses_as_the_cli_does(tmp_path):
    """It answered `[]`, "the memory holds nothing", where the CLI and every other tool say "not inside a git
    repository": an agent whose server started in the wrong directory took it for an empty memory."""
    plain = tmp_path / "plain"
    plain.mkdir()
    env = hook_env(GIT_CEILING_DIRECTORIES=str(tmp_path))
    searched, status = anyio.run(_calls, plain, env, ("episode_search", {"text": "retry"}), ("status", {}))
    cli = subprocess.run([str(BIN / "flowgit"), "--json", "episode", "search", "retry"], cwd=plain, env=env,
                         capture_output=True, text=True)
    assert cli.returncode == 2 and searched.is_error
    assert payload(searched) == json.loads(cli.stdout)  # the CLI's JSON error, word for word
    assert payload(searched)["error"]["message"] == "not inside a git repository"
    assert payload(status) == payload(searched) and list(plain.iterdir()) == []


def test_errors_name_the_tools_arguments_not_the_command_lines_options(repo, run):
    """The tools' errors are the CLI's, which spoke of `--date`, `TEXT` and `flowgit episode add …`; an MCP
    caller has arguments. Every tool's error is now told in its own arguments, and a command of the tool as a
    call of it."""
    assert run(repo, "init", "--commit").code == 0
    calls = [("episode_add", {"type": "finding"}), ("episode_add", {"type": "finding", "content": "a", "text": "b"}),
             ("episode_add", {"type": "finding", "content": "a", "session": "a\nb"}),
             ("candidates", {"date": "nope"}), ("episode_search", {"since": "nope"}),
             ("wrap", {"plan": {"patterns": [{"op": "fly"}]}})]
    answers = anyio.run(_calls, repo, hook_env(), *calls)
    schemas = {t.name: set(t.input_schema["properties"]) for t in anyio.run(_tools, repo)}
    errors = [payload(answer)["error"] for answer in answers]
    assert all(answer.is_error for answer in answers)
    assert [e["option"] for e in errors] == ["text", None, "session", "date", "since", "plan"]
    assert all(e["option"] in schemas[name] for (name, _), e in zip(calls, errors) if e["option"])
    assert not [e for e in errors if "--" in e["message"] + e["fix"] or "flowgit " in e["fix"]]
    assert errors[0]["fix"] == 'give it as `text`: episode_add {"type": "finding", "text": "what happened"}'
    assert errors[1]["message"] == "the text is given twice (as `text` and with `content`)"
    assert errors[2]["message"].startswith("argument `session` holds a control character")
    assert "the resource `flowgit://wrap-plan-schema`" in errors[5]["fix"]


async def _tools(where: Path) -> list:
    """The tools `tools/list` lists, as a client sees them."""
    from flowgit.mcp.server import build_server

    return await build_server(where).list_tools()
