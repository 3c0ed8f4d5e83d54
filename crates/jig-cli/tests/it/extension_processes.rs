//! What extensions and hooks start does not outlive jig, and what they answer is bounded.
//!
//! - An extension process and a command hook each start a `setsid` daemon (double-forked, in a
//!   session of its own, so killing their process group misses it): it is gone once `jig tool`
//!   has exited, and once `jig mcp` was killed with SIGKILL (the watchdog's work).
//! - A `tool_result` handler that rewrites a result into 30 MiB of text: what reaches the MCP
//!   client and `jig tool`'s output is bounded like every tool result.
#![expect(clippy::unwrap_used, reason = "test helpers fail loudly on purpose")]

use std::fs;
use std::io::{BufRead as _, BufReader, Write as _};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::extensions::{Workspace, executable, text};

/// Processes whose command line contains `marker` (zombies left out).
pub(crate) fn running(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let stat = fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'));
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if !zombie && cmdline.contains(marker) {
            found.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found
}

/// Waits until no process carries `marker` (at most `limit`); the survivors otherwise.
pub(crate) fn gone_within(marker: &str, limit: Duration) -> Result<(), Vec<String>> {
    let started = Instant::now();
    loop {
        let left = running(marker);
        if left.is_empty() {
            return Ok(());
        }
        if started.elapsed() > limit {
            // Do not leave them behind for the next test.
            for line in &left {
                if let Some(pid) = line
                    .split(':')
                    .next()
                    .and_then(|pid| pid.parse::<i32>().ok())
                    .and_then(rustix::process::Pid::from_raw)
                {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
            return Err(left);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until a process carries `marker`.
fn started(marker: &str) {
    let since = Instant::now();
    while running(marker).is_empty() {
        assert!(
            since.elapsed() < Duration::from_secs(20),
            "no process with {marker} started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A shell line that starts `sleep MARKER` as a daemon: in a new session, double-forked (its
/// parent exits at once, so it re-parents), its output away from every pipe.
fn daemon(marker: &str) -> String {
    format!("(setsid sleep {marker} </dev/null >/dev/null 2>&1 &)")
}

/// A Python extension that starts [`daemon`] while it initialises, then registers the tool
/// `noop` and answers every other request with `null`.
fn daemon_extension(marker: &str) -> String {
    format!(
        r#"#!/usr/bin/env python3
import json, subprocess, sys
subprocess.run(["sh", "-c", "{}"])
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    result = None
    if m["method"] == "initialize":
        result = {{"protocolVersion": 1, "name": "daemon", "tools": [{{"name": "noop",
            "description": "does nothing", "parameters": {{"type": "object"}}}}]}}
    elif m["method"] == "tool/execute":
        result = {{"content": [{{"type": "text", "text": "nothing done"}}]}}
    sys.stdout.write(json.dumps({{"jsonrpc": "2.0", "id": m["id"], "result": result}}) + "\n")
    sys.stdout.flush()
"#,
        daemon(marker)
    )
}

#[test]
fn an_extension_processs_setsid_daemon_is_gone_after_jig_tool() {
    let marker = "31.4159271";
    let workspace = Workspace::new();
    let dir = workspace.root.join("daemon");
    fs::create_dir_all(&dir).unwrap();
    executable(&dir.join("index.py"), &daemon_extension(marker));
    let output = workspace
        .jig(&[
            "tool",
            "noop",
            "-e",
            &dir.display().to_string(),
            "--args",
            "{}",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "nothing done\n");
    // jig has exited: nothing the extension started may be left (no waiting for a watchdog).
    if let Err(left) = gone_within(marker, Duration::from_millis(500)) {
        panic!("still running after jig tool exited: {left:?}");
    }
}

#[test]
fn a_command_hooks_setsid_daemon_is_gone_after_jig_tool() {
    let marker = "27.1828182";
    let workspace = Workspace::new();
    let dir = workspace.extension(
        "hook",
        "extension.toml",
        &format!(
            "[hooks]\ntool_call = [\"sh\", \"-c\", {:?}]\n",
            format!("{}; exit 0", daemon(marker))
        ),
    );
    let output = workspace
        .jig(&["tool", "ls", "-e", &dir.display().to_string()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    if let Err(left) = gone_within(marker, Duration::from_millis(500)) {
        panic!("still running after jig tool exited: {left:?}");
    }
}

/// `jig mcp` with `extension`, killed with SIGKILL once `marker` runs: the watchdog ends
/// what the extension started.
fn killed_mcp_leaves_nothing(workspace: &Workspace, extension: &str, marker: &str, call: bool) {
    let mut child = workspace
        .jig(&["mcp", "-e", extension])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "processes-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ];
    if call {
        lines.push(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "ls", "arguments": {}}}));
    }
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();
    started(marker);
    let pid = rustix::process::Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
    child.wait().unwrap();
    drop(stdin);
    if let Err(left) = gone_within(marker, Duration::from_secs(5)) {
        panic!("still running after jig mcp was killed: {left:?}");
    }
}

#[test]
fn setsid_daemons_of_an_extension_and_a_hook_die_with_a_killed_jig() {
    let workspace = Workspace::new();
    let marker = "14.1421356";
    let dir = workspace.root.join("daemon");
    fs::create_dir_all(&dir).unwrap();
    executable(&dir.join("index.py"), &daemon_extension(marker));
    killed_mcp_leaves_nothing(&workspace, &dir.display().to_string(), marker, false);

    // A hook that is still running (and has started its daemon) when jig is killed.
    let marker = "17.3205080";
    let hook = workspace.extension(
        "slow-hook",
        "extension.toml",
        &format!(
            "[hooks]\ntool_call = [\"sh\", \"-c\", {:?}]\n",
            format!("{}; sleep 30; exit 0", daemon(marker))
        ),
    );
    killed_mcp_leaves_nothing(&workspace, &hook.display().to_string(), marker, true);
}

/// A Python extension whose `tool_result` handler replaces every result with `size` bytes of
/// text on one line, and its `details` with 1 MiB (the reply stays under the 32 MiB a line
/// from an extension may have).
fn flooding_extension(size: usize) -> String {
    format!(
        r#"#!/usr/bin/env python3
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    result = None
    if m["method"] == "initialize":
        result = {{"protocolVersion": 1, "name": "flood", "events": ["tool_result"]}}
    elif m["method"] == "event" and m["params"]["event"] == "tool_result":
        flood = "x" * {size}
        result = {{"content": [{{"type": "text", "text": "flood " + flood}}],
                   "details": {{"flood": "y" * (1 << 20)}}}}
    sys.stdout.write(json.dumps({{"jsonrpc": "2.0", "id": m["id"], "result": result}}) + "\n")
    sys.stdout.flush()
"#
    )
}

#[test]
fn a_30_mib_tool_result_rewrite_is_bounded_for_the_mcp_client_and_jig_tool() {
    let workspace = Workspace::new();
    let dir = workspace.root.join("flood");
    fs::create_dir_all(&dir).unwrap();
    executable(&dir.join("index.py"), &flooding_extension(30 << 20));
    let extension = dir.display().to_string();

    let mut child = workspace
        .jig(&["mcp", "-e", &extension])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "flood-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "ls", "arguments": {}}}),
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let mut longest = 0;
    let mut answer = None;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        longest = longest.max(line.len());
        let reply: Value = serde_json::from_str(&line).unwrap();
        if reply["id"] == 1 {
            answer = Some(reply);
        }
    }
    child.wait().unwrap();
    assert!(
        longest < 128 * 1024,
        "an MCP line of {longest} bytes reached the client"
    );
    let answer = answer.expect("an answer to the call");
    let shown = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(shown.starts_with("flood xxx"), "{}", &shown[..100]);
    assert!(
        shown.ends_with("[Showing the first 50.0KB of line 1 of 1 lines (50.0KB limit)]"),
        "{}",
        &shown[shown.len() - 200..]
    );
    let notice = answer["result"]["content"][1]["text"].as_str().unwrap();
    assert_eq!(
        notice,
        "[Details omitted: 1.0MB of JSON, over the 256.0KB limit]"
    );

    let output = workspace
        .jig(&["tool", "ls", "-e", &extension])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(
        output.stdout.len() < 128 * 1024,
        "jig tool printed {} bytes",
        output.stdout.len()
    );
}
