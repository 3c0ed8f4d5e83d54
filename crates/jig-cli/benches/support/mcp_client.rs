//! A newline-delimited JSON-RPC client for the benchmarks that drive `jig mcp`: blocking pipe
//! I/O, so a round trip is the server's own cost plus the stdio transport, not a client SDK's.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail, ensure};
use serde_json::{Value, json};

/// A newline-delimited JSON-RPC client over a server's stdin and stdout.
pub(crate) struct Client {
    pub(crate) name: &'static str,
    child: Child,
    input: Option<ChildStdin>,
    output: BufReader<ChildStdout>,
    next_id: u64,
    line: String,
}

impl Client {
    /// Starts `command` (its stdin, stdout and stderr are taken over) and initializes it as an
    /// MCP server.
    pub(crate) fn start(name: &'static str, mut command: Command) -> Result<Self> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {name}"))?;
        let input = child.stdin.take().context("the server's stdin")?;
        let output = BufReader::new(child.stdout.take().context("the server's stdout")?);
        let mut client = Self {
            name,
            child,
            input: Some(input),
            output,
            next_id: 0,
            line: String::new(),
        };
        client.request(
            "initialize",
            &json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "jig-bench", "version": "0"},
            }),
        )?;
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(client)
    }

    pub(crate) fn send(&mut self, message: &Value) -> Result<()> {
        let mut bytes = serde_json::to_vec(message)?;
        bytes.push(b'\n');
        let input = self
            .input
            .as_mut()
            .context("the server's stdin is closed")?;
        input
            .write_all(&bytes)
            .with_context(|| format!("writing to {}", self.name))
    }

    /// Sends one request and waits for its answer; returns the round trip and the result.
    pub(crate) fn request(&mut self, method: &str, params: &Value) -> Result<(Duration, Value)> {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let started = Instant::now();
        self.send(&message)?;
        loop {
            self.line.clear();
            let read = self
                .output
                .read_line(&mut self.line)
                .with_context(|| format!("reading from {}", self.name))?;
            ensure!(read > 0, "{} closed its output", self.name);
            let mut reply: Value = serde_json::from_str(&self.line)
                .with_context(|| format!("{} sent invalid JSON: {}", self.name, self.line))?;
            if reply["id"] == json!(id) && reply.get("method").is_none() {
                let elapsed = started.elapsed();
                if let Some(error) = reply.get("error") {
                    bail!("{}: {method} failed: {error}", self.name);
                }
                return Ok((elapsed, reply["result"].take()));
            }
        }
    }

    /// Closes the server's stdin and waits for it to end (killing it after 5 s).
    pub(crate) fn stop(&mut self) {
        drop(self.input.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
