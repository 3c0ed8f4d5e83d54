//! What loaded extensions add to a tool call through `jig mcp`.
//!
//! ```text
//! cargo bench -p jig-cli --bench extension_overhead [-- -n 2000]
//! ```
//!
//! Three servers run at once on the same 40-line file, driven by one minimal newline-delimited
//! JSON-RPC client with blocking pipe I/O: `jig mcp -ne` (no extensions), `jig mcp -e
//! examples/extensions/word-count` (an extension is loaded and bound, registers a tool, but
//! subscribes to neither `tool_call` nor `tool_result`), and `jig mcp -e
//! examples/extensions/permission-gate` (subscribes to `tool_call`: one round trip to the
//! Python process per call, for scale). Calls of `read` rotate between the servers so machine
//! noise hits all alike; start-up and warm-up calls are not timed.
#![expect(
    clippy::disallowed_methods,
    reason = "a benchmark driving server processes directly"
)]
#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

#[path = "support/mcp_client.rs"]
mod mcp_client;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use serde_json::json;

use mcp_client::Client;

const WARMUP: usize = 50;
const DEFAULT_CALLS: usize = 2000;

fn main() -> Result<()> {
    let mut calls = DEFAULT_CALLS;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "-n" {
            calls = args.next().context("-n needs a number")?.parse()?;
        }
    }
    let dir = tempfile::tempdir().context("creating the workspace")?;
    let root = dir.path().canonicalize()?;
    let file = root.join("small.txt");
    let mut text = String::new();
    for i in 1..=40 {
        writeln!(text, "line {i}: the quick brown fox")?;
    }
    std::fs::write(&file, &text)?;
    let root_arg = root.to_string_lossy().into_owned();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/extensions");
    let word_count = examples.join("word-count").canonicalize()?;
    let gate = examples.join("permission-gate").canonicalize()?;
    let word_count = word_count.to_string_lossy().into_owned();
    let gate = gate.to_string_lossy().into_owned();
    let mut servers = vec![
        (
            "no extensions (-ne)",
            jig(&["mcp", "-ne", "--root", &root_arg], &root)?,
            Vec::new(),
        ),
        (
            "word-count loaded, no tool_call subscriber",
            jig(
                &["mcp", "-ne", "-e", &word_count, "--root", &root_arg],
                &root,
            )?,
            Vec::new(),
        ),
        (
            "permission-gate (tool_call subscriber)",
            jig(&["mcp", "-ne", "-e", &gate, "--root", &root_arg], &root)?,
            Vec::new(),
        ),
    ];
    let params = json!({"name": "read", "arguments": {"path": file.to_string_lossy()}});
    for round in 0..WARMUP + calls {
        let count = servers.len();
        for step in 0..count {
            let index = (round + step) % count;
            let (_, client, times) = &mut servers[index];
            let (elapsed, result) = client.request("tools/call", &params)?;
            ensure!(result["isError"] == json!(false), "read failed: {result}");
            if round >= WARMUP {
                times.push(elapsed);
            }
        }
    }
    println!("read of a 40-line file through jig mcp, {calls} calls each");
    for (name, client, times) in &mut servers {
        times.sort();
        let pct = |p: usize| times[(times.len() - 1) * p / 100];
        println!(
            "{name:<45} median {:>8.1} µs   p90 {:>8.1} µs",
            micros(pct(50)),
            micros(pct(90))
        );
        client.stop();
    }
    Ok(())
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

/// `jig ARGS` in `cwd`, with its own (empty) configuration directory, as an MCP server.
fn jig(args: &[&str], cwd: &Path) -> Result<Client> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_jig"));
    command
        .args(args)
        .current_dir(cwd)
        .env("XDG_CONFIG_HOME", cwd.join("config"));
    Client::start("jig", command)
}
