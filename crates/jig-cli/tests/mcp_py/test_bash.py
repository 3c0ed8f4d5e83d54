"""Long-running calls: cancellation kills the process group; progress streams the output tail."""

from __future__ import annotations

import random
import time
from pathlib import Path

import anyio
import pytest

from conftest import connect, processes_with, require_tool, server_env, text_of

pytestmark = pytest.mark.anyio


def unique_sleep() -> str:
    """A sleep duration no other process on the machine is likely to use."""
    return f"{random.randint(300, 900)}.{random.randint(100, 999)}"


async def wait_until(check, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        await anyio.sleep(0.05)
    return check()


async def test_cancelling_a_long_sleep_kills_its_processes(workspace: Path) -> None:
    duration = unique_sleep()
    async with connect(workspace) as session:
        await require_tool(session, "bash")
        started = anyio.Event()

        async def run() -> None:
            with anyio.CancelScope() as scope:
                run.scope = scope  # type: ignore[attr-defined]
                started.set()
                # A grandchild in the background too: the whole group must go.
                await session.call_tool(
                    "bash", {"command": f"sleep {duration} & sleep {duration}; wait"}
                )

        async with anyio.create_task_group() as group:
            group.start_soon(run)
            await started.wait()
            assert await wait_until(lambda: len(processes_with(f"sleep {duration}")) >= 2)
            # Cancelling the awaiting task makes the SDK send notifications/cancelled.
            run.scope.cancel()  # type: ignore[attr-defined]
        assert await wait_until(lambda: not processes_with(f"sleep {duration}")), (
            "sleep still running after cancellation"
        )
        # The server keeps serving after the cancellation.
        result = await session.call_tool("bash", {"command": "echo still here"})
        assert "still here" in text_of(result)


async def test_progress_notifications_carry_the_output_tail(workspace: Path) -> None:
    messages: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        messages.append((progress, message))

    async with connect(workspace) as session:
        await require_tool(session, "bash")
        result = await session.call_tool(
            "bash",
            {"command": "for i in 1 2 3 4 5 6; do echo tick $i; sleep 0.25; done"},
            progress_callback=on_progress,
        )
    assert result.is_error is False, text_of(result)
    assert "tick 6" in text_of(result)
    assert messages, "no progress notification arrived"
    assert all(message and "tick" in message for _, message in messages), messages
    progresses = [progress for progress, _ in messages]
    assert progresses == sorted(progresses) and len(set(progresses)) == len(progresses)
    # Intermediate updates show partial output: the run was streamed, not reported at the end.
    assert any("tick 6" not in (message or "") for _, message in messages), messages


async def test_concurrent_calls_run_in_parallel(workspace: Path) -> None:
    async with connect(workspace) as session:
        await require_tool(session, "bash")
        started = time.monotonic()
        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(session.call_tool, "bash", {"command": "sleep 1"})
        elapsed = time.monotonic() - started
    assert elapsed < 3.0, f"4 one-second calls took {elapsed:.1f}s: not concurrent"


async def test_sandbox_denies_escapes_and_says_so(workspace: Path, tmp_path: Path) -> None:
    """`jig mcp --sandbox workspace-write`: the instructions name the sandbox; writes outside the
    root, into .git/, a planted secret and the network are denied; the same commands succeed
    without the sandbox (so each check can fail)."""
    import os
    import shutil
    import socket
    import subprocess

    works = shutil.which("bwrap") and subprocess.run(
        ["bwrap", "--ro-bind", "/", "/", "--unshare-net", "true"], capture_output=True
    ).returncode == 0
    if not works:
        if os.environ.get("JIG_REQUIRE_SANDBOX") == "1":
            pytest.fail("JIG_REQUIRE_SANDBOX=1 but bubblewrap (bwrap) is missing or does not work")
        pytest.skip("bubblewrap (bwrap) is missing or does not work here")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("FAKE-SSH-KEY\n")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("[core]\n")
    outside = tmp_path / "outside.txt"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    script = (
        f"echo pwned > {outside}; echo pwned >> .git/config; cat ~/.ssh/id_ed25519; "
        f"(exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected-tcp); true"
    )
    env = server_env({"HOME": str(home), "JIG_SANDBOX_MECHANISM": "bwrap"})
    try:
        for mode in ["workspace-write", "off"]:
            outside.unlink(missing_ok=True)
            (workspace / ".git" / "config").write_text("[core]\n")
            async with connect(workspace, "--sandbox", mode, env=env) as session:
                init = await session.initialize()
                result = await session.call_tool("bash", {"command": script})
                text = result.content[0].text
            escaped = {
                "outside": outside.exists(),
                "git": "pwned" in (workspace / ".git" / "config").read_text(),
                "ssh": "FAKE-SSH-KEY" in text,
                "tcp": "connected-tcp" in text,
            }
            if mode == "off":
                assert all(escaped.values()), (escaped, text)
                assert "not confined" in (init.instructions or "")
            else:
                assert not any(escaped.values()), (escaped, text)
                assert "in a sandbox (sandbox: workspace-write" in (init.instructions or "")
                assert "bubblewrap" in (init.instructions or "")
    finally:
        listener.close()
