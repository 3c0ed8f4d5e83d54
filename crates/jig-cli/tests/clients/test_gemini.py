"""Gemini CLI (`gemini -p`) driving `jig mcp` against the scripted Gemini API endpoint."""

from __future__ import annotations

import json
import re

from conftest import Setup, base_env, client_bin, run_client
from model import TASK_MARKER, flatten_text
from scenario import PROMPT, SCRIPT, Outcome


def write_settings(setup: Setup) -> None:
    gemini_dir = setup.home / ".gemini"
    gemini_dir.mkdir()
    settings = {
        "mcpServers": {
            "jig": {
                "command": setup.jig,
                "args": ["mcp", "--root", str(setup.workspace)],
                "trust": True,
            }
        },
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }
    (gemini_dir / "settings.json").write_text(json.dumps(settings, indent=2))


def tool_results(setup: Setup) -> list[str]:
    longest: list[str] = []
    for request in setup.model.requests:
        body = request.body
        if "GenerateContent" not in request.path and "generateContent" not in request.path:
            continue
        if not isinstance(body, dict):
            continue
        contents = body.get("contents") or []
        if TASK_MARKER not in json.dumps(contents):
            continue
        found = [
            flatten_text(part["functionResponse"].get("response"))
            for content in contents
            for part in content.get("parts") or []
            if "functionResponse" in part
        ]
        if len(found) > len(longest):
            longest = found
    return longest[: len(SCRIPT)]


def test_gemini_cli_shows_the_model_what_jig_tools_return(setup: Setup) -> None:
    write_settings(setup)
    env = base_env(setup.home) | {
        "GEMINI_API_KEY": "scripted-key",
        "GOOGLE_GEMINI_BASE_URL": setup.model.base_url,
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    run = run_client(
        [client_bin("gemini"), "-p", PROMPT, "--model", "gemini-2.5-flash", "--output-format", "text"],
        env,
        setup.workspace,
        setup.logs,
    )
    assert not setup.model.errors, setup.model.errors
    assert run.returncode == 0, run.report()
    Outcome(tool_results(setup), setup.workspace).check()
    assert "done" in run.stdout, run.report()
    warnings = re.findall(r'unknown format "[^"]+" ignored[^\n]*', run.stderr)
    assert not warnings, "Gemini CLI warned about jig's schemas:\n" + "\n".join(warnings)
