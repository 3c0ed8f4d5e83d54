"""Clean shutdown: end of input or SIGINT/SIGTERM abort running calls, kill their processes,
remove temp files and exit 0."""

from __future__ import annotations

import random
import signal
import time
from pathlib import Path

import pytest

from conftest import processes_with


def wait_until(check, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def call(server, request_id: int, tool: str, arguments: dict) -> None:
    server.send(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
    )


def has_tool(server, name: str) -> bool:
    server.send({"jsonrpc": "2.0", "id": 999, "method": "tools/list"})
    return any(tool["name"] == name for tool in server.receive_response(999)["result"]["tools"])


def test_end_of_input_exits_zero(raw_server) -> None:
    server = raw_server()
    server.initialize()
    server.close_stdin()
    assert server.wait(10) == 0


def test_end_of_input_before_initialize_exits_zero(raw_server) -> None:
    server = raw_server()
    server.close_stdin()
    assert server.wait(10) == 0


def test_end_of_input_finishes_the_calls_already_received(raw_server, workspace: Path) -> None:
    # `printf '…' | jig mcp`: the input ends right after the requests; their answers still come.
    (workspace / "task.txt").write_text("status: draft\n")
    server = raw_server()
    server.initialize()
    call(server, 1, "read", {"path": "task.txt"})
    call(server, 2, "bash", {"command": "sleep 1.5; echo finished"})
    server.close_stdin()
    answers = {1: server.receive_response(1), 2: server.receive_response(2)}
    assert server.wait(10) == 0
    assert answers[1]["result"]["content"][0]["text"] == "   1│ status: draft"
    bash = answers[2]["result"]
    assert bash["isError"] is False, bash
    assert "finished" in bash["content"][0]["text"]


def test_end_of_input_with_the_client_gone_kills_running_commands_and_removes_temp_files(
    raw_server, tmp_path: Path
) -> None:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    server = raw_server(env={"TMPDIR": str(tmpdir)})
    server.initialize()
    if not has_tool(server, "bash"):
        pytest.skip("tool not registered")
    duration = f"{random.randint(300, 900)}.{random.randint(100, 999)}"
    # Large output so the command's output is spilled to a temp file, then a long sleep.
    call(server, 1, "bash", {"command": f"seq 1 300000; sleep {duration}"})
    assert wait_until(lambda: processes_with(f"sleep {duration}")), "command did not start"
    started = time.monotonic()
    # The client exits: both ends of the pipes close, nobody can read an answer.
    server.close_stdin()
    assert server.proc.stdout is not None
    server.proc.stdout.close()
    assert server.wait(15) == 0
    assert time.monotonic() - started < 8
    assert wait_until(lambda: not processes_with(f"sleep {duration}"), 5), "sleep survived"
    leftovers = [str(p) for p in tmpdir.rglob("*")]
    assert leftovers == [], f"temp files left behind: {leftovers}"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_aborts_calls_and_exits_zero(raw_server, tmp_path: Path, signum) -> None:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    server = raw_server(env={"TMPDIR": str(tmpdir)})
    server.initialize()
    if not has_tool(server, "bash"):
        pytest.skip("tool not registered")
    duration = f"{random.randint(300, 900)}.{random.randint(100, 999)}"
    call(server, 1, "bash", {"command": f"sleep {duration}"})
    assert wait_until(lambda: processes_with(f"sleep {duration}")), "command did not start"
    server.proc.send_signal(signum)
    assert server.wait(15) == 0
    assert wait_until(lambda: not processes_with(f"sleep {duration}"), 5), "sleep survived"
    assert [str(p) for p in tmpdir.rglob("*")] == []


def test_signal_while_idle_exits_zero(raw_server) -> None:
    server = raw_server()
    server.initialize()
    server.proc.send_signal(signal.SIGTERM)
    assert server.wait(10) == 0


@pytest.mark.parametrize("tool_cmd", [False, True])
def test_sigkill_of_jig_leaves_no_command_running(raw_server, workspace: Path, tool_cmd: bool) -> None:
    # jig cannot clean up after SIGKILL; its watchdog sees jig's end and kills what is left:
    # a background job, a process that left the session, and the foreground command.
    duration = f"{random.randint(300, 900)}.{random.randint(100, 999)}"
    command = f"sleep {duration} & ( setsid sleep {duration} & ); sleep {duration}"
    if tool_cmd:
        import json
        import subprocess

        from conftest import jig_bin

        proc = subprocess.Popen(
            [jig_bin(), "tool", "bash", "--args", json.dumps({"command": command})],
            cwd=workspace,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        pid = proc.pid
    else:
        server = raw_server()
        server.initialize()
        call(server, 1, "bash", {"command": command})
        pid = server.proc.pid
    import os

    def sleeping() -> list[int]:
        return [p for p in processes_with(f"sleep {duration}") if p != pid]

    try:
        # At least the three sleeps (a sandbox adds its own processes running the same command).
        assert wait_until(lambda: len(sleeping()) >= 3), sleeping()
        os.kill(pid, signal.SIGKILL)
        assert wait_until(lambda: not sleeping(), timeout=5), sleeping()
    finally:
        for leftover in sleeping():
            os.kill(leftover, signal.SIGKILL)
