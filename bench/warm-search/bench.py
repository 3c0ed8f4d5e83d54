#!/usr/bin/env python3
"""Repeated searches through one long-lived `jig mcp` (warm index) against bare rg and fd.

A raw newline-delimited JSON-RPC client starts `jig mcp --root DATA` in DATA, waits until the
index says it is ready (its status line, logged with `JIG_LOG=jig_index=info`), then calls each
case N times and times the 2nd to Nth calls (the tools/call round trip, as an agent sees it).
The same query is run with bare rg / fd (process start included, as Pi's tools pay it). Prints
the medians and the ratio per case.

With `--trees DIR...` (trees made by `cargo bench -p jig-index --bench warm_search -- --dir`,
named `tree-N`), the cases are that generator's and each tree is also served by a cold
`jig mcp` (`"warmIndex": false` in a settings file of its own): the cost curve of a warm and a
cold call through the server, and the index's build time and memory from its status line.

Usage:
    python3 bench/warm-search/bench.py --jig target/release/jig --data /tmp/bench-data \\
        [--rg rg] [--fd fd] [-n 100]
    python3 bench/warm-search/bench.py --jig target/release/jig \\
        --trees /var/tmp/trees/tree-10000 /var/tmp/trees/tree-1000000 [-n 50] [--cold-n 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import threading
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

# The cases of the generated trees (benches/warm_search.rs in jig-index): a token in one file
# of a thousand (the tool's default limit of 100 matches, then no limit), a regex with matches in about one file of twelve (the tool's default limit of
# 100 matches), and every `.rs` file (the tool's default limit of 1000).
TREE_CASES = [
    (
        "grep-literal-i",
        "grep",
        {"pattern": "rare_needle_token", "ignoreCase": True, "literal": True},
        ["{rg}", "--json", "--line-number", "--color=never", "--hidden", "--ignore-case",
         "--fixed-strings", "rare_needle_token", "."],
    ),
    (
        # Every candidate read: the limit is never reached (about one match per 1,000 files).
        "grep-literal-all",
        "grep",
        {"pattern": "rare_needle_token", "ignoreCase": True, "literal": True, "limit": 100000},
        ["{rg}", "--json", "--line-number", "--color=never", "--hidden", "--ignore-case",
         "--fixed-strings", "rare_needle_token", "."],
    ),
    (
        "grep-regex",
        "grep",
        {"pattern": "fn\\s+parse_49[0-9]\\("},
        ["{rg}", "--json", "--line-number", "--color=never", "--hidden",
         "fn\\s+parse_49[0-9]\\(", "."],
    ),
    (
        "find-rs",
        "find",
        {"pattern": "**/*.rs"},
        ["{fd}", "--glob", "--color=never", "--hidden", "--max-results", "1000", "*.rs", "."],
    ),
]


class Client:
    """Newline-delimited JSON-RPC over a child's pipes, blocking."""

    def __init__(self, command: list[str], cwd: Path, env: dict | None = None) -> None:
        self.process = subprocess.Popen(
            command, cwd=str(cwd), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=env,
        )
        self.status: str | None = None
        self.ready = threading.Event()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        self.buffer = b""
        self.next_id = 0
        self.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "warm-search-bench", "version": "0"},
        })
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read_stderr(self) -> None:
        for raw in self.process.stderr:
            line = raw.decode(errors="replace")
            if "warm index of" in line:
                self.status = line[line.index("warm index of"):].strip()
                if ": ready," in line or ": cold (" in line:
                    self.ready.set()

    def wait_ready(self, timeout: float) -> str:
        if not self.ready.wait(timeout):
            raise RuntimeError(f"the index was not ready within {timeout} s")
        return self.status or ""

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


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def call_n(client: Client, tool: str, arguments: dict, n: int) -> tuple[list[float], str]:
    samples = []
    text = ""
    for _ in range(n):
        started = time.perf_counter()
        result = client.request("tools/call", {"name": tool, "arguments": arguments})
        samples.append(time.perf_counter() - started)
        text = result["content"][0]["text"]
    return samples, text


def bare_n(command: list[str], cwd: Path, n: int) -> list[float]:
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, check=False)
        samples.append(time.perf_counter() - started)
    return samples


def jig_env(extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env["JIG_LOG"] = "jig_index=info"
    env.update(extra or {})
    return env


def bench_tree(args: argparse.Namespace, cases: list, data: Path, cold: bool) -> None:
    jig = str(Path(args.jig).resolve())
    client = Client([jig, "mcp", "--root", str(data)], data, jig_env())
    status = client.wait_ready(args.build_timeout)
    print(f"{data}: {status}")
    cold_client = None
    settings = None
    if cold:
        settings = tempfile.TemporaryDirectory()
        (Path(settings.name) / "jig").mkdir()
        (Path(settings.name) / "jig" / "settings.json").write_text('{"warmIndex": false}')
        cold_client = Client([jig, "mcp", "--root", str(data)], data,
                             jig_env({"XDG_CONFIG_HOME": settings.name}))
    header = f"{'case':16} {'1st ms':>8} {'warm median ms':>15} {'bare ms':>9} {'bare/warm':>10}"
    if cold_client:
        header += f" {'cold jig mcp ms':>16} {'cold/warm':>10}"
    print(header)
    for name, tool, arguments, bare in cases:
        samples, warm_text = call_n(client, tool, arguments, args.n)
        command = [part.format(rg=args.rg, fd=args.fd) for part in bare]
        bare_ms = median_ms(bare_n(command, data, args.bare_runs))
        warm = median_ms(samples[1:])
        row = f"{name:16} {samples[0] * 1000:8.1f} {warm:15.2f} {bare_ms:9.1f} {bare_ms / warm:9.1f}x"
        if cold_client:
            cold_samples, cold_text = call_n(cold_client, tool, arguments, args.cold_n + 1)
            if cold_text != warm_text:
                raise RuntimeError(f"{name}: the warm and cold answers differ")
            cold_ms = median_ms(cold_samples[1:])
            row += f" {cold_ms:16.1f} {cold_ms / warm:9.1f}x"
        print(row, flush=True)
    client.close()
    if cold_client:
        cold_client.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jig", required=True)
    parser.add_argument("--data", default="/tmp/bench-data")
    parser.add_argument("--trees", nargs="*", default=[])
    parser.add_argument("--rg", default="rg")
    parser.add_argument("--fd", default="fd")
    parser.add_argument("-n", type=int, default=100)
    parser.add_argument("--cold-n", type=int, default=5)
    parser.add_argument("--bare-runs", type=int, default=15)
    parser.add_argument("--build-timeout", type=float, default=600.0)
    args = parser.parse_args()
    if args.trees:
        for tree in args.trees:
            bench_tree(args, TREE_CASES, Path(tree).resolve(), cold=True)
    else:
        bench_tree(args, CASES, Path(args.data).resolve(), cold=False)


if __name__ == "__main__":
    main()
