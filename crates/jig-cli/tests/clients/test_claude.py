"""Claude Code (`claude -p`) driving `jig mcp` against the scripted Anthropic endpoint."""

from __future__ import annotations

import json
from typing import Any

from conftest import Setup, base_env, client_bin, run_client
from model import TASK_MARKER, flatten_text
from scenario import PROMPT, SCRIPT, Outcome

ALLOWED = ",".join(f"mcp__jig__{step.tool}" for step in SCRIPT)


def tool_results(setup: Setup) -> list[str]:
    """The tool results in the longest scripted conversation, in call order."""
    longest: dict[str, str] = {}
    for request in setup.model.requests:
        body = request.body
        if not request.path.startswith("/v1/messages") or not isinstance(body, dict):
            continue
        messages = body.get("messages") or []
        if TASK_MARKER not in json.dumps(messages):
            continue
        found = {
            block["tool_use_id"]: flatten_text(block.get("content"))
            for message in messages
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        }
        if len(found) > len(longest):
            longest = found
    return [longest[f"toolu_jig_{i}"] for i in range(len(SCRIPT)) if f"toolu_jig_{i}" in longest]


def invocation(
    setup: Setup, allowed: str | None = ALLOWED, command: str | None = None
) -> tuple[list[str], dict[str, str]]:
    """`claude -p` with jig as the only MCP server and, unless `allowed` is None, jig's tools
    allowed up front (print mode cannot ask)."""
    mcp_config = {
        "mcpServers": {
            "jig": {
                "type": "stdio",
                "command": command or setup.jig,
                "args": setup.jig_args,
            }
        }
    }
    env = base_env(setup.home) | {
        "ANTHROPIC_BASE_URL": setup.model.base_url,
        "ANTHROPIC_API_KEY": "sk-ant-scripted",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    argv = [
        client_bin("claude"),
        "-p",
        PROMPT,
        "--mcp-config",
        json.dumps(mcp_config),
        "--strict-mcp-config",
        "--output-format",
        "text",
    ]
    if allowed is not None:
        argv += ["--allowedTools", allowed]
    return argv, env


def test_claude_code_shows_the_model_what_jig_tools_return(setup: Setup) -> None:
    argv, env = invocation(setup)
    run = run_client(argv, env, setup.workspace, setup.logs)
    assert not setup.model.errors, setup.model.errors
    assert run.returncode == 0, run.report()
    Outcome(tool_results(setup), setup.workspace, setup.model.task_tools).check()
    assert "done" in run.stdout, run.report()
