"""Gemini CLI (`gemini -p`) driving `jig mcp` against the scripted Gemini API endpoint."""

from __future__ import annotations

import json
import re

from conftest import Setup, base_env, client_bin, run_client
from model import TASK_MARKER, flatten_text
from scenario import PROMPT, SCRIPT, Outcome


def write_settings(setup: Setup, trust: bool = True, command: str | None = None) -> None:
    gemini_dir = setup.home / ".gemini"
    gemini_dir.mkdir()
    settings = {
        "mcpServers": {
            "jig": {
                "command": command or setup.jig,
                "args": setup.jig_args,
                "trust": trust,
            }
        },
        # With GOOGLE_GEMINI_BASE_URL set, Gemini CLI otherwise picks its "gateway" auth and
        # stops with "Invalid auth method selected."
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }
    (gemini_dir / "settings.json").write_text(json.dumps(settings, indent=2))


def tool_results(setup: Setup) -> list[str]:
    """The tool results in the longest scripted conversation, in call order."""
    longest: dict[str, str] = {}
    for request in setup.model.requests:
        body = request.body
        if "GenerateContent" not in request.path and "generateContent" not in request.path:
            continue
        if not isinstance(body, dict):
            continue
        contents = body.get("contents") or []
        if TASK_MARKER not in json.dumps(contents):
            continue
        found = {
            str(part["functionResponse"].get("id")): flatten_text(
                part["functionResponse"].get("response")
            )
            for content in contents
            for part in content.get("parts") or []
            if "functionResponse" in part
        }
        if len(found) > len(longest):
            longest = found
    return [longest[f"call_jig_{i}"] for i in range(len(SCRIPT)) if f"call_jig_{i}" in longest]


def invocation(setup: Setup, trust_workspace: bool = True) -> tuple[list[str], dict[str, str]]:
    env = base_env(setup.home) | {
        "GEMINI_API_KEY": "scripted-key",
        "GOOGLE_GEMINI_BASE_URL": setup.model.base_url,
    }
    if trust_workspace:
        env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
    argv = [
        client_bin("gemini"),
        "-p",
        PROMPT,
        "--output-format",
        "text",
    ]
    return argv, env


def test_gemini_cli_shows_the_model_what_jig_tools_return(setup: Setup) -> None:
    write_settings(setup)
    argv, env = invocation(setup)
    run = run_client(argv, env, setup.workspace, setup.logs)
    assert not setup.model.errors, setup.model.errors
    assert run.returncode == 0, run.report()
    Outcome(tool_results(setup), setup.workspace, setup.model.task_tools).check()
    assert "done" in run.stdout, run.report()
    warnings = re.findall(r'unknown format "[^"]+" ignored[^\n]*', run.stderr + run.stdout)
    assert not warnings, "Gemini CLI warned about jig's schemas:\n" + "\n".join(warnings)
