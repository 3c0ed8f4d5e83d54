"""Long-running calls: cancellation kills the process group; progress streams the output tail."""

from __future__ import annotations

import os
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


def mechanism_works(mechanism: str) -> bool:
    """Whether `jig sandbox` can enforce a policy with `mechanism` here."""
    import subprocess

    from conftest import jig_bin

    probe = subprocess.run(
        [jig_bin(), "sandbox", "--mode", "read-only", "--", "true"],
        capture_output=True,
        env={**os.environ, "JIG_SANDBOX_MECHANISM": mechanism},
    )
    return probe.returncode == 0


@pytest.mark.parametrize("mechanism", ["bwrap", "landlock"])
async def test_sandbox_denies_escapes_and_says_so(mechanism: str) -> None:
    """`jig mcp --sandbox workspace-write` under each mechanism (the other forced off): the
    instructions name the sandbox and the mechanism; every escape attempt is denied; the same
    commands succeed without the sandbox (so each check can fail)."""
    import shutil
    import socket
    import tempfile

    if not mechanism_works(mechanism):
        if os.environ.get("JIG_REQUIRE_SANDBOX") == "1":
            pytest.fail(f"JIG_REQUIRE_SANDBOX=1 but the {mechanism} mechanism does not work here")
        pytest.skip(f"the {mechanism} mechanism does not work here")
    # Outside /tmp: plain host paths, whatever a mechanism does with /tmp.
    base = Path(tempfile.mkdtemp(prefix="jig-mcp-sandbox-", dir="/var/tmp")).resolve()
    home = base / "home"
    workspace = home / "project"
    outside = base / "outside"
    for directory in [home / ".ssh", workspace / ".git", workspace / ".jig", outside]:
        directory.mkdir(parents=True)
    (workspace / "link-out").symlink_to(outside)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.settimeout(2)
    udp_port = udp.getsockname()[1]
    abstract_name = f"jig-mcp-sandbox-{os.getpid()}-{mechanism}"
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind("\0" + abstract_name)
    abstract.listen(1)
    me = os.getpid()
    py = "/usr/bin/python3"
    attempts = {
        "write outside": f"echo pwned > {outside}/new.txt",
        "write .git/config": "echo pwned >> .git/config",
        "write .jig/settings.json": "echo pwned > .jig/settings.json",
        "read ~/.ssh": "cat ~/.ssh/id_ed25519",
        "read .env": "cat .env",
        "tcp": f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected-tcp",
        "udp": f"{py} -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
        f".sendto(b'pwned', ('127.0.0.1', {udp_port}))\"",
        "abstract unix": f"{py} -c \"import socket; s = socket.socket(socket.AF_UNIX); "
        f"s.connect('\\0{abstract_name}'); print('connected-unix')\"",
        "symlink out": "echo pwned > link-out/via-link.txt",
        "/proc/self/root": f"echo pwned > /proc/self/root{outside}/proc.txt",
        "mount": "mkdir -p mnt && mount -t tmpfs tmpfs mnt && echo mounted && umount mnt",
        "ptrace": f"{py} -c \"import ctypes; l = ctypes.CDLL(None, use_errno=True); "
        f"r = l.ptrace(0x4206, {me}, 0, 0); print('seized' if r == 0 else 'denied'); "
        f"l.ptrace(17, {me}, 0, 0)\"",
        "kill": f"kill -0 {me} && echo signalled",
        "setsid daemon": f"setsid bash -c \"trap '' TERM; ( sleep 0.5; echo pwned > "
        f"{outside}/late.txt ) &\" & exit 0",
    }
    if shutil.which("curl"):
        attempts["curl"] = f"curl -s --max-time 5 http://127.0.0.1:{port}/"

    def reset() -> None:
        for name in ["new.txt", "via-link.txt", "proc.txt", "late.txt"]:
            (outside / name).unlink(missing_ok=True)
        (workspace / ".git" / "config").write_text("[core]\n")
        (workspace / ".jig" / "settings.json").write_text("{}\n")
        (workspace / ".env").write_text("SECRET=env-secret\n")
        (home / ".ssh" / "id_ed25519").write_text("FAKE-SSH-KEY\n")

    def escaped(name: str, text: str) -> bool:
        def written(file: str) -> bool:
            path = outside / file
            return path.exists() and "pwned" in path.read_text()

        if name == "udp":
            try:
                return udp.recv(16) == b"pwned"
            except TimeoutError:
                return False
        return {
            "write outside": lambda: written("new.txt"),
            "write .git/config": lambda: "pwned" in (workspace / ".git" / "config").read_text(),
            "write .jig/settings.json": lambda: "pwned"
            in (workspace / ".jig" / "settings.json").read_text(),
            "read ~/.ssh": lambda: "FAKE-SSH-KEY" in text,
            "read .env": lambda: "env-secret" in text,
            "tcp": lambda: "connected-tcp" in text,
            "abstract unix": lambda: "connected-unix" in text,
            "symlink out": lambda: written("via-link.txt"),
            "/proc/self/root": lambda: written("proc.txt"),
            "mount": lambda: "mounted" in text,
            "ptrace": lambda: "seized" in text,
            "kill": lambda: "signalled" in text,
            "setsid daemon": lambda: (time.sleep(1.0), written("late.txt"))[1],
            "curl": lambda: "hello" in text,
        }[name]()

    def serve_http() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with connection:
                connection.recv(1024)
                connection.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello")

    import threading

    threading.Thread(target=serve_http, daemon=True).start()
    env = server_env({"HOME": str(home), "JIG_SANDBOX_MECHANISM": mechanism})
    failures: list[str] = []
    try:
        for mode in ["workspace-write", "off"]:
            reset()
            async with connect(workspace, "--sandbox", mode, env=env) as session:
                init = await session.initialize()
                instructions = init.instructions or ""
                if mode == "off":
                    assert "not confined" in instructions, instructions
                else:
                    assert "in a sandbox (sandbox: workspace-write" in instructions, instructions
                    assert ("bubblewrap" if mechanism == "bwrap" else "Landlock") in instructions
                for name, script in attempts.items():
                    result = await session.call_tool("bash", {"command": script})
                    text = text_of(result)
                    got_out = escaped(name, text)
                    if got_out != (mode == "off"):
                        failures.append(f"{name} ({mode}): escaped={got_out}: {text}")
    finally:
        listener.close()
        udp.close()
        abstract.close()
        shutil.rmtree(base, ignore_errors=True)
    assert not failures, "\n".join(failures)
