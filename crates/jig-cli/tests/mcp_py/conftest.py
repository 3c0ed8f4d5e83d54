"""Shared helpers for the `jig mcp` end-to-end suite.

The binary under test is `$JIG_BIN` (a built `jig`). Every test starts its own server process
on a fresh temporary workspace, talks to it through the official `mcp` SDK's stdio client (or
raw bytes on stdin where the SDK would refuse to send them), and checks what a real MCP client
would see.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Callable

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
import mcp.types as types

READ_ONLY_TOOLS = {"read", "grep", "find", "ls"}
DESTRUCTIVE_TOOLS = {"write", "edit", "bash"}


def jig_bin() -> str:
    path = os.environ.get("JIG_BIN")
    if not path:
        raise RuntimeError("set JIG_BIN to the jig binary under test (e.g. target/debug/jig)")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"JIG_BIN={path} is not an executable file")
    return path


def server_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {"JIG_LOG": "info"}
    if extra:
        env.update(extra)
    return env


@asynccontextmanager
async def connect(
    cwd: Path,
    *args: str,
    roots: Callable[[], list[str]] | None = None,
    env: dict[str, str] | None = None,
    stderr_path: Path | None = None,
) -> AsyncIterator[ClientSession]:
    """A session with `jig mcp ARGS` started in `cwd` (the default root).

    `roots`, when given, makes the client declare the roots capability and answer
    `roots/list` with the URIs it returns at that moment.
    """
    params = StdioServerParameters(
        command=jig_bin(), args=["mcp", *args], cwd=str(cwd), env=server_env(env)
    )
    callback = None
    if roots is not None:

        async def callback(_context: Any) -> types.ListRootsResult:
            return types.ListRootsResult(roots=[types.Root(uri=uri) for uri in roots()])

    log = stderr_path or (cwd.parent / f"jig-mcp-{time.monotonic_ns()}.log")
    with open(log, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, list_roots_callback=callback) as session:
                await session.initialize()
                yield session


async def tool_names(session: ClientSession) -> set[str]:
    return {tool.name for tool in (await session.list_tools()).tools}


async def require_tool(session: ClientSession, name: str) -> None:
    """Skips the test while `name` is not registered (the tool lands in a later change)."""
    if name not in await tool_names(session):
        pytest.skip("tool not registered")


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def details(result: types.CallToolResult) -> dict[str, Any]:
    """The tool's machine-readable details: in `_meta`, never in `structuredContent` (which
    clients would show the model instead of the text)."""
    assert result.structured_content is None
    assert result.meta is not None, "result carries no _meta"
    return result.meta["jig/details"]


def processes_with(marker: str) -> list[int]:
    """PIDs of live processes whose command line contains `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().split(") ", 1)[1].split(" ", 1)[0]
        except (OSError, IndexError):
            continue
        if marker in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


class RawServer:
    """`jig mcp` driven with raw JSON-RPC lines, for what an SDK client never sends."""

    def __init__(self, cwd: Path, *args: str, env: dict[str, str] | None = None) -> None:
        full_env = {**os.environ, **server_env(env)}
        self.proc = subprocess.Popen(
            [jig_bin(), "mcp", *args],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=full_env,
        )

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def receive(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise EOFError(f"server closed stdout; stderr: {self.stderr_text()}")
        return json.loads(line)

    def receive_response(self, request_id: Any) -> dict[str, Any]:
        """The next message answering `request_id`, skipping notifications."""
        while True:
            message = self.receive()
            if "id" in message and message.get("id") == request_id and "method" not in message:
                return message

    def initialize(self) -> dict[str, Any]:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw-test", "version": "0"},
                },
            }
        )
        response = self.receive_response(0)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return response

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def wait(self, timeout: float) -> int:
        return self.proc.wait(timeout=timeout)

    def stderr_text(self) -> str:
        if self.proc.poll() is None:
            return "(still running)"
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode(errors="replace")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace directory (its parent holds logs and outside-the-root fixtures)."""
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def raw_server(workspace: Path):
    servers: list[RawServer] = []

    def start(*args: str, env: dict[str, str] | None = None) -> RawServer:
        server = RawServer(workspace, *args, env=env)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.kill()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
