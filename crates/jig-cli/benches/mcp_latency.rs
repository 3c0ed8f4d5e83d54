//! Round-trip latency of a small `read` through `jig mcp` versus the reference MCP filesystem
//! server (`@modelcontextprotocol/server-filesystem`, tool `read_text_file`).
//!
//! ```text
//! npm install --prefix /tmp/mcpfs @modelcontextprotocol/server-filesystem
//! cargo bench -p jig-cli --bench mcp_latency -- \
//!     --mcpfs /tmp/mcpfs/node_modules/.bin/mcp-server-filesystem [-n 2000]
//! ```
//!
//! Both servers run at once on the same 40-line file and are driven by the same client: a
//! minimal newline-delimited JSON-RPC client with blocking pipe I/O, so the round trip is the
//! servers' own cost plus the stdio transport, not a client SDK's. Calls alternate between the
//! servers (read, read, ping, ping; the order reversed every other round) so machine noise
//! hits both alike; server start-up, initialization and warm-up calls are not timed. Every
//! answer is checked (no error, the file's text present). `ping` measures what is transport
//! and JSON-RPC handling rather than the tool. Without `--mcpfs` (or `JIG_BENCH_MCPFS`) only
//! jig is measured, and the output says so.
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

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};

use mcp_client::Client;

/// `program args…` in `cwd`.
fn server_command(program: &str, args: &[&str], cwd: &Path) -> Command {
    let mut command = Command::new(program);
    command.args(args).current_dir(cwd);
    command
}

const WARMUP: usize = 50;
const DEFAULT_CALLS: usize = 2000;

fn main() -> Result<()> {
    let options = Options::parse()?;
    let dir = tempfile::tempdir().context("creating the workspace")?;
    let root = dir
        .path()
        .canonicalize()
        .context("resolving the workspace")?;
    let file = root.join("small.txt");
    let mut text = String::new();
    for i in 1..=40 {
        writeln!(text, "line {i}: the quick brown fox")?;
    }
    std::fs::write(&file, &text).context("writing the file to read")?;
    let root_arg = root.to_string_lossy().into_owned();
    let file_arg = file.to_string_lossy().into_owned();

    let mut jig = Client::start(
        "jig",
        server_command(
            env!("CARGO_BIN_EXE_jig"),
            &["mcp", "--root", &root_arg],
            &root,
        ),
    )?;
    let mut fs = if let Some(command) = &options.mcpfs {
        let mut words = command.split_whitespace();
        let program = words.next().context("--mcpfs is empty")?;
        let mut args: Vec<&str> = words.collect();
        args.push(&root_arg);
        Some(Client::start(
            "server-filesystem",
            server_command(program, &args, &root),
        )?)
    } else {
        println!(
            "server-filesystem not given (--mcpfs CMD or JIG_BENCH_MCPFS): measuring jig alone"
        );
        None
    };
    let ping = json!({});
    let mut jobs = vec![
        Job::new(
            "jig read",
            Server::Jig,
            "tools/call",
            json!({"name": "read", "arguments": {"path": "small.txt"}}),
        ),
        Job::new("jig ping", Server::Jig, "ping", ping.clone()),
    ];
    if fs.is_some() {
        jobs.push(Job::new(
            "server-filesystem read",
            Server::Filesystem,
            "tools/call",
            json!({"name": "read_text_file", "arguments": {"path": file_arg}}),
        ));
        jobs.push(Job::new(
            "server-filesystem ping",
            Server::Filesystem,
            "ping",
            ping,
        ));
    }

    let mut order: Vec<usize> = (0..jobs.len()).collect();
    for round in 0..WARMUP + options.calls {
        // Reverse the order every other round so neither server always follows the other.
        order.reverse();
        for &index in &order {
            let job = &mut jobs[index];
            let client = match job.server {
                Server::Jig => &mut jig,
                Server::Filesystem => fs.as_mut().context("the server-filesystem client")?,
            };
            let (elapsed, answer) = client.request(job.method, &job.params)?;
            if job.method == "tools/call" {
                check_read(client.name, &answer)?;
            }
            if round >= WARMUP {
                job.samples.push(elapsed);
            }
        }
    }
    jig.stop();
    if let Some(fs) = fs.as_mut() {
        fs.stop();
    }

    for job in &mut jobs {
        job.report();
    }
    if let [jig_read, jig_ping, fs_read, fs_ping] = jobs.as_slice() {
        println!(
            "server-side cost (median read minus median ping): jig {:.3} ms, server-filesystem {:.3} ms",
            ms(jig_read.median().saturating_sub(jig_ping.median())),
            ms(fs_read.median().saturating_sub(fs_ping.median())),
        );
        println!(
            "jig is {:.2}x faster at the median (read round trip, {} calls each)",
            fs_read.median().as_secs_f64() / jig_read.median().as_secs_f64(),
            options.calls
        );
    }
    Ok(())
}

/// A successful read answer that contains the file's text.
fn check_read(server: &str, answer: &Value) -> Result<()> {
    ensure!(
        answer["isError"] != json!(true),
        "{server}: the read failed: {answer}"
    );
    let shown = answer["content"][0]["text"].as_str().unwrap_or_default();
    ensure!(
        shown.contains("line 40: the quick brown fox"),
        "{server}: the read did not return the file: {answer}"
    );
    Ok(())
}

struct Options {
    mcpfs: Option<String>,
    calls: usize,
}

impl Options {
    fn parse() -> Result<Self> {
        let mut mcpfs = std::env::var("JIG_BENCH_MCPFS").ok();
        let mut calls = DEFAULT_CALLS;
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--mcpfs" => mcpfs = Some(args.next().context("--mcpfs needs a command")?),
                "-n" => {
                    calls = args
                        .next()
                        .context("-n needs a number")?
                        .parse()
                        .context("-n needs a number")?;
                }
                // What `cargo bench` passes to every bench target.
                "--bench" => {}
                other => bail!("unknown argument {other:?}; use --mcpfs CMD and -n CALLS"),
            }
        }
        ensure!(calls >= 10, "-n must be at least 10");
        Ok(Self { mcpfs, calls })
    }
}

#[derive(Clone, Copy)]
enum Server {
    Jig,
    Filesystem,
}

/// One kind of call and its round-trip times.
struct Job {
    name: &'static str,
    server: Server,
    method: &'static str,
    params: Value,
    samples: Vec<Duration>,
}

impl Job {
    fn new(name: &'static str, server: Server, method: &'static str, params: Value) -> Self {
        Self {
            name,
            server,
            method,
            params,
            samples: Vec::new(),
        }
    }

    fn median(&self) -> Duration {
        let mut sorted = self.samples.clone();
        sorted.sort();
        sorted[sorted.len() / 2]
    }

    fn report(&mut self) {
        self.samples.sort();
        let count = self.samples.len();
        let at = |percent: usize| ms(self.samples[(count - 1) * percent / 100]);
        let total: f64 = self.samples.iter().map(|&sample| ms(sample)).sum();
        println!(
            "{:24} median {:7.3} ms   p10 {:7.3}   p90 {:7.3}   mean {:7.3}",
            self.name,
            at(50),
            at(10),
            at(90),
            total / f64::from(u32::try_from(count).unwrap_or(u32::MAX))
        );
    }
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
