#!/usr/bin/env python3
"""Round-trip latency of a small `read` through `jig mcp` versus the reference filesystem server.

Both servers run at the same time, driven by the same client (the official `mcp` Python SDK over
stdio), on the same file; calls alternate between them so machine noise hits both alike. Only the
tools/call round trip is timed (server start-up and initialization are excluded).

Usage:
    python3 -m venv /tmp/mcpvenv && /tmp/mcpvenv/bin/pip install mcp
    npm install --prefix /tmp/mcpfs @modelcontextprotocol/server-filesystem
    cargo build --release -p jig-cli
    /tmp/mcpvenv/bin/python bench/mcp-latency/bench.py --jig target/release/jig \
        --mcpfs /tmp/mcpfs/node_modules/.bin/mcp-server-filesystem -n 500

`--client raw` drives both servers with a minimal JSON-RPC line client (blocking pipe I/O, no
event loop) instead of the SDK, whose own per-call cost (validation, task hand-offs, about 0.7 ms
here) otherwise dominates and narrows the difference.

Prints one line per server (median, p10, p90, mean in milliseconds) and the ratio of medians,
plus a `ping` round trip per server: the part of the latency that is the client and the stdio
transport rather than the tool. `--json` prints the same as one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def open_session(
    stack: AsyncExitStack, command: str, args: list[str], cwd: Path, errlog
) -> ClientSession:
    params = StdioServerParameters(command=command, args=args, cwd=str(cwd))
    read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


class RawClient:
    """A minimal newline-delimited JSON-RPC client with blocking pipe I/O and no event loop:
    what any MCP host's transport does at its core, without an SDK's validation layers or an
    async runtime's task hand-offs, so the servers' own cost dominates the round trip."""

    def __init__(self, command: list[str], cwd: Path, errlog) -> None:
        self.process = subprocess.Popen(
            command, cwd=str(cwd), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin = self.process.stdin.fileno()
        self.stdout = self.process.stdout.fileno()
        self.buffer = b""
        self.next_id = 0
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "mcp-latency", "version": "0"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict) -> None:
        data = json.dumps(message).encode() + b"\n"
        while data:
            data = data[os.write(self.stdin, data) :]

    def read_message(self) -> dict:
        while b"\n" not in self.buffer:
            chunk = os.read(self.stdout, 1 << 20)
            if not chunk:
                raise RuntimeError("the server closed its output")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def request(self, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            reply = self.read_message()
            if reply.get("id") == self.next_id and "method" not in reply:
                if "error" in reply:
                    raise RuntimeError(f"{method} failed: {reply['error']}")
                return reply["result"]

    def call_tool(self, name: str, arguments: dict) -> dict:
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def send_ping(self) -> None:
        self.request("ping")

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    deciles = statistics.quantiles(ordered, n=10)
    return {
        "median_ms": statistics.median(ordered) * 1000,
        "p10_ms": deciles[0] * 1000,
        "p90_ms": deciles[-1] * 1000,
        "mean_ms": statistics.fmean(ordered) * 1000,
        "calls": len(ordered),
    }


def workspace(tmp: str) -> tuple[Path, Path]:
    root = Path(tmp).resolve()
    target = root / "small.txt"
    target.write_text("".join(f"line {i}: the quick brown fox\n" for i in range(1, 41)))
    return root, target


def commands(args: argparse.Namespace, root: Path) -> tuple[list[str], list[str]]:
    return [args.jig, "mcp", "--root", str(root)], [*args.mcpfs.split(), str(root)]


def check(result, what: str) -> None:
    failed = result.get("isError") if isinstance(result, dict) else result.is_error
    if failed:
        content = result.get("content") if isinstance(result, dict) else result.content
        raise RuntimeError(f"{what} failed: {content}")


def measure(args: argparse.Namespace, timed: dict) -> dict[str, list[float]]:
    """Runs the calls of `timed` (name -> callable) in alternating order, `args.warmup` untimed
    rounds first, and returns each call's round-trip times in seconds."""
    samples: dict[str, list[float]] = {name: [] for name in timed}
    for _ in range(args.warmup):
        for call in timed.values():
            call()
    for i in range(args.n):
        # Alternate which server goes first so neither always follows the other.
        order = list(timed.items()) if i % 2 == 0 else list(reversed(timed.items()))
        for name, call in order:
            started = time.perf_counter()
            call()
            samples[name].append(time.perf_counter() - started)
    return samples


def run_raw(args: argparse.Namespace) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory(prefix="mcp-latency-") as tmp:
        root, target = workspace(tmp)
        with open(root.parent / f"{root.name}.stderr.log", "w") as errlog:
            jig_cmd, fs_cmd = commands(args, root)
            jig = RawClient(jig_cmd, root, errlog)
            fs = RawClient(fs_cmd, root, errlog)
            try:
                return measure(
                    args,
                    {
                        "jig": lambda: check(
                            jig.call_tool("read", {"path": "small.txt"}), "jig read"
                        ),
                        "server-filesystem": lambda: check(
                            fs.call_tool("read_text_file", {"path": str(target)}),
                            "read_text_file",
                        ),
                        "jig ping": jig.send_ping,
                        "server-filesystem ping": fs.send_ping,
                    },
                )
            finally:
                jig.close()
                fs.close()
                Path(errlog.name).unlink(missing_ok=True)


async def run_sdk(args: argparse.Namespace) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory(prefix="mcp-latency-") as tmp:
        root, target = workspace(tmp)
        with open(root.parent / f"{root.name}.stderr.log", "w") as errlog:
            async with AsyncExitStack() as stack:
                jig_cmd, fs_cmd = commands(args, root)
                jig = await open_session(stack, jig_cmd[0], jig_cmd[1:], root, errlog)
                fs = await open_session(stack, fs_cmd[0], fs_cmd[1:], root, errlog)

                async def jig_call() -> None:
                    check(await jig.call_tool("read", {"path": "small.txt"}), "jig read")

                async def fs_call() -> None:
                    check(
                        await fs.call_tool("read_text_file", {"path": str(target)}),
                        "read_text_file",
                    )

                calls = {
                    "jig": jig_call,
                    "server-filesystem": fs_call,
                    "jig ping": jig.send_ping,
                    "server-filesystem ping": fs.send_ping,
                }
                samples: dict[str, list[float]] = {name: [] for name in calls}
                for _ in range(args.warmup):
                    for call in calls.values():
                        await call()
                for i in range(args.n):
                    order = list(calls.items()) if i % 2 == 0 else list(reversed(calls.items()))
                    for name, call in order:
                        started = time.perf_counter()
                        await call()
                        samples[name].append(time.perf_counter() - started)
            Path(errlog.name).unlink(missing_ok=True)
        return samples


def run(args: argparse.Namespace) -> dict:
    samples = run_raw(args) if args.client == "raw" else anyio.run(run_sdk, args)
    results: dict = {name: summary(values) for name, values in samples.items()}
    results["client"] = args.client
    results["speedup_median"] = (
        results["server-filesystem"]["median_ms"] / results["jig"]["median_ms"]
    )
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jig", required=True, help="path to the jig binary")
    parser.add_argument(
        "--mcpfs",
        required=True,
        help="command starting @modelcontextprotocol/server-filesystem "
        "(e.g. /tmp/mcpfs/node_modules/.bin/mcp-server-filesystem)",
    )
    parser.add_argument("-n", type=int, default=300, help="timed calls per server")
    parser.add_argument("--warmup", type=int, default=20, help="untimed calls per server first")
    parser.add_argument(
        "--client",
        choices=["sdk", "raw"],
        default="sdk",
        help="sdk: the official mcp Python client (default); raw: a minimal JSON-RPC line client",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    results = run(args)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for name in ("jig", "server-filesystem", "jig ping", "server-filesystem ping"):
        r = results[name]
        print(
            f"{name:22} median {r['median_ms']:7.3f} ms   p10 {r['p10_ms']:7.3f}   "
            f"p90 {r['p90_ms']:7.3f}   mean {r['mean_ms']:7.3f}   ({r['calls']} calls)"
        )
    print(f"client: {args.client}")
    print(f"jig is {results['speedup_median']:.2f}x faster at the median (read round trip)")
    print(
        "server-side cost (median read minus median ping): "
        f"jig {results['jig']['median_ms'] - results['jig ping']['median_ms']:.3f} ms, "
        "server-filesystem "
        f"{results['server-filesystem']['median_ms'] - results['server-filesystem ping']['median_ms']:.3f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
