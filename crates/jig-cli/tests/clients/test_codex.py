"""Codex CLI (`codex exec`) driving `jig mcp` against the scripted Responses API endpoint."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Setup, base_env, client_bin, run_client
from model import TASK_MARKER, flatten_text
from scenario import PROMPT, SCRIPT, Outcome


def toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def write_config(
    setup: Setup, approve: bool = True, command: str | None = None, extra: str = ""
) -> Path:
    codex_home = setup.home / ".codex"
    codex_home.mkdir()
    args = ", ".join(toml_string(a) for a in setup.jig_args)
    (codex_home / "config.toml").write_text(
        f"""\
model = "scripted-model"
model_provider = "scripted"

[model_providers.scripted]
name = "Scripted"
base_url = {toml_string(setup.model.base_url + "/v1")}
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
request_max_retries = 0
stream_max_retries = 0

# `required`: without it `codex exec` waits only briefly for the server to start and then
# runs without its tools, silently.
[mcp_servers.jig]
command = {toml_string(command or setup.jig)}
args = [{args}]
required = true
{'default_tools_approval_mode = "approve"' if approve else ""}
{extra}"""
    )
    return codex_home


def tool_results(setup: Setup) -> list[str]:
    """The tool results in the longest scripted conversation, in call order."""
    longest: dict[str, str] = {}
    for request in setup.model.requests:
        body = request.body
        if not request.path.endswith("/responses") or not isinstance(body, dict):
            continue
        items = body.get("input") or []
        if TASK_MARKER not in json.dumps(items):
            continue
        found = {
            item["call_id"]: flatten_text(item.get("output"))
            for item in items
            if isinstance(item, dict) and "call_id" in item and "output" in item
        }
        if len(found) > len(longest):
            longest = found
    return [longest[f"call_jig_{i}"] for i in range(len(SCRIPT)) if f"call_jig_{i}" in longest]


def invocation(setup: Setup, codex_home: Path) -> tuple[list[str], dict[str, str]]:
    env = base_env(setup.home) | {
        "CODEX_HOME": str(codex_home),
        "SCRIPTED_API_KEY": "sk-scripted",
    }
    argv = [
        client_bin("codex"),
        "exec",
        "--skip-git-repo-check",
        "--cd",
        str(setup.workspace),
        "--color",
        "never",
        PROMPT,
    ]
    return argv, env


def test_codex_shows_the_model_what_jig_tools_return(setup: Setup) -> None:
    argv, env = invocation(setup, write_config(setup))
    run = run_client(argv, env, setup.workspace, setup.logs)
    assert not setup.model.errors, setup.model.errors
    assert run.returncode == 0, run.report()
    Outcome(tool_results(setup), setup.workspace, setup.model.task_tools).check()
    assert "done" in run.stdout, run.report()
