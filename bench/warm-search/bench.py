#!/usr/bin/env python3
"""Repeated searches through one long-lived `jig mcp` (warm index) against bare rg and fd.

A raw newline-delimited JSON-RPC client starts `jig mcp --root DATA` in DATA, waits for the
index to be built, then calls each case N times and times the 2nd to Nth calls (the tools/call
round trip, as an agent sees it). The same query is run N times with bare rg / fd (process
start included, as Pi's tools pay it). Prints the medians and the ratio per case.

Usage:
    python3 bench/warm-search/bench.py --jig target/release/jig --data /tmp/bench-data \\
        [--rg rg] [--fd fd] [-n 100] [--build-wait 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time
from pathlib import Path

CASES = [
    (
        "grep-literal-i",
        "grep",
        {"pattern": "quick brown fox NEEDLE", "path": "tree", "ignoreCase": True, "literal": True},
        ["{rg}", "--json", "--line-number", "--color=never", "--hidden", "--ignore-case",
         "--fixed-strings", "quick brown fox NEEDLE", "tree"],
    ),
    (
        "grep-regex",
        "grep",
        {"pattern": "handle_[a-z]+_request\\(", "path": "tree"},
        ["{rg}", "--json", "--line-number", "--color=never", "--hidden",
         "handle_[a-z]+_request\\(", "tree"],
    ),
    (
        "find-rs",
        "find",
        {"pattern": "**/*.rs", "path": "tree"},
        ["{fd}", "--glob", "--color=never", "--hidden", "*.rs", "tree"],
    ),
]


class Client:
    """Newline-delimited JSON-RPC over a child's pipes, blocking."""

    def __init__(self, command: list[str], cwd: Path) -> None:
        self.process = subprocess.Popen(
            command, cwd=str(cwd), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.buffer = b""
        self.next_id = 0
        self.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "warm-search-bench", "version": "0"},
        })
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict) -> None:
        data = json.dumps(message).encode() + b"\n"
        fd = self.process.stdin.fileno()
        while data:
            data = data[os.write(fd, data):]

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            while b"\n" not in self.buffer:
                chunk = os.read(self.process.stdout.fileno(), 1 << 20)
                if not chunk:
                    raise RuntimeError("jig mcp closed its output")
                self.buffer += chunk
            line, self.buffer = self.buffer.split(b"\n", 1)
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jig", required=True)
    parser.add_argument("--data", default="/tmp/bench-data")
    parser.add_argument("--rg", default="rg")
    parser.add_argument("--fd", default="fd")
    parser.add_argument("-n", type=int, default=100)
    parser.add_argument("--bare-runs", type=int, default=15)
    parser.add_argument("--build-wait", type=float, default=10.0)
    args = parser.parse_args()
    data = Path(args.data).resolve()
    client = Client([str(Path(args.jig).resolve()), "mcp", "--root", str(data)], data)
    time.sleep(args.build_wait)
    rows = []
    for name, tool, arguments, bare in CASES:
        samples = []
        text = ""
        for _ in range(args.n):
            started = time.perf_counter()
            result = client.request("tools/call", {"name": tool, "arguments": arguments})
            samples.append(time.perf_counter() - started)
            text = result["content"][0]["text"]
        command = [part.format(rg=args.rg, fd=args.fd) for part in bare]
        bare_samples = []
        for _ in range(args.bare_runs):
            started = time.perf_counter()
            subprocess.run(command, cwd=data, stdout=subprocess.DEVNULL, check=False)
            bare_samples.append(time.perf_counter() - started)
        warm = statistics.median(samples[1:]) * 1000
        first = samples[0] * 1000
        bare_ms = statistics.median(bare_samples) * 1000
        rows.append((name, first, warm, bare_ms, bare_ms / warm, len(text)))
    client.close()
    print(f"{'case':16} {'1st ms':>8} {'2nd..Nth median ms':>19} {'bare ms':>9} {'bare/warm':>10}")
    for name, first, warm, bare_ms, ratio, _ in rows:
        print(f"{name:16} {first:8.1f} {warm:19.2f} {bare_ms:9.1f} {ratio:10.1f}x")


if __name__ == "__main__":
    main()
