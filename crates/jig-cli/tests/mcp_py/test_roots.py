"""Workspace roots: --root, the client's roots (roots/list), and roots/list_changed."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from conftest import connect, text_of

pytestmark = pytest.mark.anyio


def make_dir(base: Path, name: str, files: list[str]) -> Path:
    path = base / name
    path.mkdir()
    for file in files:
        (path / file).write_text(f"{file}\n")
    return path


async def test_client_roots_are_used_when_no_root_is_given(workspace: Path) -> None:
    client_root = make_dir(workspace.parent, "client root", ["from-client.txt"])
    (workspace / "from-cwd.txt").write_text("cwd\n")
    async with connect(workspace, roots=lambda: [client_root.as_uri()]) as session:
        listed = await session.call_tool("ls", {})
        refused = await session.call_tool("read", {"path": str(workspace / "from-cwd.txt")})
    assert text_of(listed) == "from-client.txt"
    assert refused.is_error is True
    assert str(client_root.resolve()) in text_of(refused)


async def test_roots_list_changed_is_followed(workspace: Path) -> None:
    first = make_dir(workspace.parent, "first", ["one.txt"])
    second = make_dir(workspace.parent, "second", ["two.txt"])
    current = [first.as_uri()]
    async with connect(workspace, roots=lambda: list(current)) as session:
        assert text_of(await session.call_tool("ls", {})) == "one.txt"
        current[:] = [second.as_uri(), first.as_uri()]
        await session.send_roots_list_changed()
        listing = ""
        for _ in range(100):
            listing = text_of(await session.call_tool("ls", {}))
            if listing == "two.txt":
                break
            await anyio.sleep(0.05)
        assert listing == "two.txt"
        # Both roots are containment roots now.
        both = await session.call_tool("read", {"path": str(first / "one.txt")})
        assert both.is_error is False, text_of(both)


async def test_explicit_roots_win_over_client_roots(workspace: Path) -> None:
    client_root = make_dir(workspace.parent, "client", ["from-client.txt"])
    extra = make_dir(workspace.parent, "extra", ["extra.txt"])
    (workspace / "mine.txt").write_text("mine\n")
    async with connect(
        workspace.parent,
        "--root",
        str(workspace),
        "--root",
        str(extra),
        roots=lambda: [client_root.as_uri()],
    ) as session:
        listed = await session.call_tool("ls", {})
        extra_read = await session.call_tool("read", {"path": str(extra / "extra.txt")})
        refused = await session.call_tool("read", {"path": str(client_root / "from-client.txt")})
    assert text_of(listed) == "mine.txt"
    assert extra_read.is_error is False, text_of(extra_read)
    assert refused.is_error is True


async def test_default_root_is_the_current_directory(workspace: Path) -> None:
    (workspace / "here.txt").write_text("here\n")
    async with connect(workspace) as session:
        listed = await session.call_tool("ls", {})
    assert text_of(listed) == "here.txt"


def test_missing_root_is_a_usage_error(workspace: Path) -> None:
    import subprocess

    from conftest import jig_bin

    done = subprocess.run(
        [jig_bin(), "mcp", "--root", str(workspace / "missing")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 2
    assert b"missing" in done.stderr
