"""Initialization, tools/list, protocol errors and malformed input."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from mcp import StdioServerParameters
from mcp.client.client import Client
from mcp.shared.exceptions import MCPError

from conftest import DESTRUCTIVE_TOOLS, READ_ONLY_TOOLS, connect, jig_bin, server_env, tool_names

pytestmark = pytest.mark.anyio


async def test_initialize_reports_jig_and_tools(workspace: Path) -> None:
    async with connect(workspace) as session:
        result = await session.initialize()
        assert result.server_info.name == "jig"
        assert result.capabilities.tools is not None
        assert result.protocol_version in {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}
        assert result.instructions and "workspace" in result.instructions


async def test_auto_mode_client_falls_back_to_the_handshake(workspace: Path) -> None:
    """The SDK's default `Client` probes `server/discover` first; jig must still connect."""
    (workspace / "hello.txt").write_text("hi\n")
    params = StdioServerParameters(
        command=jig_bin(), args=["mcp"], cwd=str(workspace), env=server_env()
    )
    async with Client(params) as client:
        assert client.server_info is not None and client.server_info.name == "jig"
        result = await client.call_tool("read", {"path": "hello.txt"})
        assert not result.is_error
        assert "hi" in result.content[0].text


async def test_tools_list_has_schemas_titles_and_annotations(workspace: Path) -> None:
    async with connect(workspace) as session:
        tools = (await session.list_tools()).tools
    names = {tool.name for tool in tools}
    assert {"read", "write", "ls"} <= names
    for tool in tools:
        assert tool.title, f"{tool.name} has no title"
        assert tool.description
        assert tool.input_schema.get("type") == "object", tool.name
        assert isinstance(tool.input_schema.get("properties"), dict), tool.name
        hints = tool.annotations
        assert hints is not None, tool.name
        if tool.name in READ_ONLY_TOOLS:
            assert hints.read_only_hint is True, tool.name
            assert hints.open_world_hint is False, tool.name
        if tool.name in DESTRUCTIVE_TOOLS:
            assert hints.read_only_hint is False, tool.name
            assert hints.destructive_hint is True, tool.name
        assert hints.open_world_hint is (tool.name == "bash"), tool.name
    read = next(tool for tool in tools if tool.name == "read")
    assert "path" in read.input_schema["properties"]
    assert "path" in read.input_schema.get("required", [])


async def test_read_only_serves_only_read_only_tools(workspace: Path) -> None:
    async with connect(workspace, "--read-only") as session:
        names = await tool_names(session)
    assert names and names <= READ_ONLY_TOOLS
    assert {"read", "ls"} <= names


async def test_tools_flag_selects_tools(workspace: Path) -> None:
    async with connect(workspace, "--tools", "read,ls") as session:
        assert await tool_names(session) == {"read", "ls"}


def test_unknown_tool_in_flag_is_a_usage_error(workspace: Path) -> None:
    done = subprocess.run(
        [jig_bin(), "mcp", "--tools", "read,nope"],
        cwd=workspace,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 2
    assert b"nope" in done.stderr
    assert done.stdout == b""


async def test_unknown_tool_is_a_json_rpc_error(workspace: Path) -> None:
    async with connect(workspace) as session:
        with pytest.raises(MCPError) as raised:
            await session.call_tool("no_such_tool", {})
    assert raised.value.code == -32602
    assert "no_such_tool" in raised.value.message


def test_malformed_json_gets_a_parse_error_and_the_server_keeps_serving(raw_server) -> None:
    server = raw_server()
    init = server.initialize()
    assert init["result"]["serverInfo"]["name"] == "jig"
    server.send_raw(b"{this is not json\n")
    error = server.receive()
    assert error["error"]["code"] == -32700
    assert error["id"] is None
    server.send_raw(b"\xff\xfe garbage bytes\n")
    assert server.receive()["error"]["code"] == -32700
    # Well-formed JSON that is not a valid request: -32600 with its id.
    server.send({"jsonrpc": "2.0", "id": 5, "params": []})
    invalid = server.receive()
    assert invalid["error"]["code"] == -32600
    assert invalid["id"] == 5
    # Still serving.
    server.send({"jsonrpc": "2.0", "id": 6, "method": "tools/list"})
    listed = server.receive_response(6)
    assert any(tool["name"] == "read" for tool in listed["result"]["tools"])
    # An unknown method is -32601.
    server.send({"jsonrpc": "2.0", "id": 7, "method": "no/such/method"})
    assert server.receive_response(7)["error"]["code"] == -32601
    server.close_stdin()
    assert server.wait(10) == 0


def test_stdout_carries_only_protocol_messages(raw_server, workspace: Path) -> None:
    (workspace / "a.txt").write_text("x\n")
    server = raw_server(env={"JIG_LOG": "debug"})
    server.initialize()
    server.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "read", "arguments": {"path": "a.txt"}},
        }
    )
    response = server.receive_response(1)
    assert response["result"]["isError"] is False
    server.close_stdin()
    assert server.wait(10) == 0
    # Every remaining stdout line is JSON-RPC; logs went to stderr.
    assert server.proc.stdout is not None
    for line in server.proc.stdout.read().splitlines():
        assert line.startswith(b"{"), line
    assert server.stderr_text().strip(), "debug logging should have written to stderr"


def test_a_request_before_initialize_gets_a_clear_error(raw_server) -> None:
    server = raw_server()
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    error = server.receive_response(1)["error"]
    assert error["code"] == -32002
    assert error["message"].startswith("Not initialized: `tools/list` was sent before `initialize`")
    # A stray notification before the handshake does not end the session.
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    server.initialize()
    server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert server.receive_response(2)["result"]["tools"]


@pytest.mark.parametrize(
    ("raw_id", "echoed"), [({"a": 1}, None), (1.5, 1.5), (None, None), ([1], None)]
)
def test_a_request_with_an_invalid_id_gets_an_invalid_request_error(raw_server, raw_id, echoed) -> None:
    server = raw_server()
    server.initialize()
    server.send({"jsonrpc": "2.0", "id": raw_id, "method": "tools/list"})
    reply = server.receive()
    assert reply["id"] == echoed
    assert reply["error"]["code"] == -32600
    assert "the id must be a string or an integer" in reply["error"]["message"]
    server.send({"jsonrpc": "2.0", "id": 7, "method": "ping"})
    assert server.receive_response(7)["result"] == {}


def test_wrong_typed_params_are_invalid_params(raw_server) -> None:
    server = raw_server()
    server.initialize()
    server.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": "read"})
    error = server.receive_response(3)["error"]
    assert error["code"] == -32602, error
    assert error["message"].startswith("Invalid params for `tools/call`"), error
    server.send({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": 5}})
    assert server.receive_response(4)["error"]["code"] == -32602


def test_a_reused_id_of_a_request_in_progress_is_refused(raw_server) -> None:
    server = raw_server()
    server.initialize()
    slow = {"name": "bash", "arguments": {"command": "sleep 1; echo first"}}
    server.send({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": slow})
    server.send({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
    refused = server.receive_response(5)
    assert refused["error"]["code"] == -32600
    assert "id 5 is already used by a request in progress" in refused["error"]["message"]
    answered = server.receive_response(5)
    assert "first" in answered["result"]["content"][0]["text"]
    # Once answered, the id may be used again.
    server.send({"jsonrpc": "2.0", "id": 5, "method": "ping"})
    assert server.receive_response(5)["result"] == {}


def test_tools_flag_trims_spaces(raw_server) -> None:
    server = raw_server("--tools", "read, grep ")
    server.initialize()
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    names = {tool["name"] for tool in server.receive_response(1)["result"]["tools"]}
    assert names == {"read", "grep"}


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_bad_root_is_reported_as_root(workspace: Path, kind: str) -> None:
    target = workspace / "nope"
    if kind == "file":
        target.write_text("x")
    result = subprocess.run(
        [jig_bin(), "mcp", "--root", str(target)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    expected = "no such directory" if kind == "missing" else "not a directory"
    assert f"--root {target}: {expected}" in result.stderr, result.stderr
    assert "--cwd" not in result.stderr


def test_typed_in_a_terminal_it_says_what_it_is(workspace: Path) -> None:
    import os
    import pty

    primary, secondary = pty.openpty()
    try:
        proc = subprocess.Popen(
            [jig_bin(), "mcp"],
            cwd=workspace,
            stdin=secondary,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        os.write(primary, b"\x04")  # Ctrl-D: end of input
        _, stderr = proc.communicate(timeout=30)
    finally:
        os.close(primary)
        os.close(secondary)
    assert proc.returncode == 0
    assert stderr.decode().startswith("jig mcp: serving MCP over stdin/stdout."), stderr
