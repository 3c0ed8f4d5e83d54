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

Prints one line per server (median, p10, p90, mean in milliseconds) and the ratio of medians;
`--json` prints the same as one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
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


async def run(args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory(prefix="mcp-latency-") as tmp:
        root = Path(tmp).resolve()
        target = root / "small.txt"
        target.write_text("".join(f"line {i}: the quick brown fox\n" for i in range(1, 41)))
        log_path = root.parent / f"{root.name}.stderr.log"
        with open(log_path, "w") as errlog:
            async with AsyncExitStack() as stack:
                jig = await open_session(stack, args.jig, ["mcp", "--root", str(root)], root, errlog)
                mcpfs_cmd = args.mcpfs.split()
                fs = await open_session(stack, mcpfs_cmd[0], [*mcpfs_cmd[1:], str(root)], root, errlog)

                async def jig_call() -> None:
                    result = await jig.call_tool("read", {"path": "small.txt"})
                    if result.is_error:
                        raise RuntimeError(f"jig read failed: {result.content}")

                async def fs_call() -> None:
                    result = await fs.call_tool("read_text_file", {"path": str(target)})
                    if result.is_error:
                        raise RuntimeError(f"read_text_file failed: {result.content}")

                calls = {"jig": jig_call, "server-filesystem": fs_call}
                samples: dict[str, list[float]] = {name: [] for name in calls}
                for _ in range(args.warmup):
                    for call in calls.values():
                        await call()
                for i in range(args.n):
                    # Alternate which server goes first so neither always follows the other.
                    order = list(calls.items()) if i % 2 == 0 else list(reversed(calls.items()))
                    for name, call in order:
                        started = time.perf_counter()
                        await call()
                        samples[name].append(time.perf_counter() - started)
        log_path.unlink(missing_ok=True)
    results = {name: summary(values) for name, values in samples.items()}
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
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    results = anyio.run(run, args)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for name in ("jig", "server-filesystem"):
        r = results[name]
        print(
            f"{name:18} median {r['median_ms']:7.3f} ms   p10 {r['p10_ms']:7.3f}   "
            f"p90 {r['p90_ms']:7.3f}   mean {r['mean_ms']:7.3f}   ({r['calls']} calls)"
        )
    print(f"jig is {results['speedup_median']:.2f}x faster at the median")
    return 0


if __name__ == "__main__":
    sys.exit(main())
