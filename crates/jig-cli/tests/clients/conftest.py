"""Shared fixtures for the client end-to-end suite.

Each test drives a real client binary (Claude Code, Codex CLI, Gemini CLI; installed by
`scripts/test-clients` into `$JIG_CLIENTS_BIN`, default `target/clients/node_modules/.bin`)
against the scripted model endpoint in `model.py`, with `jig mcp` (`$JIG_BIN`) as the client's
only MCP server. Every client runs in a temporary HOME with a temporary workspace, so nothing from
the user's own configuration takes part.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from model import ModelServer
from scenario import SCRIPT, make_workspace

REPO = Path(__file__).resolve().parents[4]
CLIENT_TIMEOUT = float(os.environ.get("JIG_CLIENT_TIMEOUT", "240"))


def jig_bin() -> str:
    path = os.environ.get("JIG_BIN")
    if not path:
        raise RuntimeError("set JIG_BIN to the jig binary under test (e.g. target/debug/jig)")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"JIG_BIN={path} is not an executable file")
    return str(Path(path).resolve())


def client_bin(name: str) -> str:
    directory = Path(
        os.environ.get("JIG_CLIENTS_BIN", REPO / "target" / "clients" / "node_modules" / ".bin")
    )
    path = directory / name
    if not os.access(path, os.X_OK):
        raise RuntimeError(
            f"{path} is missing: run scripts/test-clients, which installs the pinned clients"
        )
    return str(path)


def base_env(home: Path) -> dict[str, str]:
    """A clean environment: the caller's PATH (the clients need node), a temporary HOME, and
    none of the caller's model credentials or client settings."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "USER": os.environ.get("USER", "tester"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "TMPDIR": str(home / "tmp"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "JIG_LOG": "info",
    }
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return env


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def report(self) -> str:
        return (
            f"exit {self.returncode} after {self.seconds:.1f}s\n"
            f"--- stdout ---\n{self.stdout[-4000:]}\n--- stderr ---\n{self.stderr[-6000:]}"
        )


def run_client(argv: list[str], env: dict[str, str], cwd: Path, log_dir: Path) -> Run:
    """Runs a client to completion (killing its whole process group on timeout)."""
    started = time.monotonic()
    out_path, err_path = log_dir / "client.stdout", log_dir / "client.stderr"
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        try:
            code = proc.wait(timeout=CLIENT_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            code = -9
    return Run(code, out_path.read_text(errors="replace"), err_path.read_text(errors="replace"),
               time.monotonic() - started)


@dataclass
class Setup:
    home: Path
    workspace: Path
    logs: Path
    model: ModelServer
    jig: str
    jig_args: list[str]  # the server's arguments, `mcp` first


@pytest.fixture(params=["root", "default-root"])
def setup(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Setup]:
    """A temporary HOME, workspace and model endpoint. `root` runs `jig mcp --root WORKSPACE`;
    `default-root` runs plain `jig mcp` as the documented configurations do, so the workspace is
    the client's working directory or the roots the client offers."""
    home = tmp_path / "home"
    home.mkdir()
    workspace = tmp_path / "workspace"
    make_workspace(workspace)
    logs = tmp_path / "logs"
    logs.mkdir()
    model = ModelServer(script=SCRIPT).start()
    try:
        args = ["mcp", "--root", str(workspace)] if request.param == "root" else ["mcp"]
        yield Setup(home, workspace, logs, model, jig_bin(), args)
    finally:
        model.stop()
        (logs / "requests.jsonl").write_text(model.dump())
        if os.environ.get("JIG_CLIENTS_KEEP"):
            kept = Path(os.environ["JIG_CLIENTS_KEEP"]) / tmp_path.name
            shutil.copytree(tmp_path, kept, symlinks=True, dirs_exist_ok=True)
