"""Long-running calls: cancellation kills the process group; progress streams the output tail."""

from __future__ import annotations

import random
import time
from pathlib import Path

import anyio
import pytest

from conftest import connect, processes_with, require_tool, text_of

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
