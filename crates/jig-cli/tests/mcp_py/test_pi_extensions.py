"""Pi's own extensions (from the package jig's Node host installs) through `jig mcp`: their
tools are listed and served, and their tool_call gates hold for an MCP client too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import connect, text_of

pytestmark = pytest.mark.anyio

HOST = Path(__file__).resolve().parents[2].parent / "jig-extensions" / "pi-host"
EXAMPLES = HOST / "node_modules" / "@mariozechner" / "pi-coding-agent" / "examples" / "extensions"


def require_host() -> None:
    if EXAMPLES.is_dir():
        return
    if os.environ.get("JIG_REQUIRE_CLIENTS") == "1":
        pytest.fail(f"the Pi extension host's dependencies are not installed: npm ci --prefix {HOST}")
    pytest.skip(f"the Pi extension host's dependencies are not installed (npm ci --prefix {HOST})")


async def test_pi_tools_are_listed_and_served(workspace: Path, tmp_path: Path) -> None:
    require_host()
    env = {"JIG_PI_HOST": str(HOST), "HOME": str(tmp_path / "home")}
    async with connect(
        workspace,
        "-e", str(EXAMPLES / "hello.ts"),
        "-e", str(EXAMPLES / "todo.ts"),
        env=env,
    ) as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert {"hello", "todo"} <= set(listed)
        assert listed["hello"].input_schema["required"] == ["name"]
        hello = await session.call_tool("hello", {"name": "mcp"})
        assert hello.is_error is False
        assert text_of(hello) == "Hello, mcp!"
        await session.call_tool("todo", {"action": "add", "text": "ship it"})
        listing = await session.call_tool("todo", {"action": "list"})
        assert "ship it" in text_of(listing)
        bad = await session.call_tool("hello", {})
        assert bad.is_error is True
        assert "name" in text_of(bad)


async def test_pi_permission_gate_blocks_bash_for_an_mcp_client(workspace: Path, tmp_path: Path) -> None:
    require_host()
    (workspace / "victim").mkdir()
    (workspace / "victim" / "file").write_text("keep me\n")
    env = {"JIG_PI_HOST": str(HOST), "HOME": str(tmp_path / "home")}
    async with connect(workspace, "-e", str(EXAMPLES / "permission-gate.ts"), env=env) as session:
        result = await session.call_tool("bash", {"command": "rm -rf victim"})
    assert result.is_error is True
    assert "Dangerous command blocked" in text_of(result)
    assert (workspace / "victim" / "file").read_text() == "keep me\n"
