//! Containment under a symlink race and updates from several processes, end to end through
//! `jig tool` and `jig mcp`.
//!
//! - Race: a thread keeps swapping `ws/link` between a directory inside the workspace and a
//!   symlink to a directory outside, and `ws/f` between a file inside and a symlink to a file
//!   outside (each swap one atomic `renameat2(RENAME_EXCHANGE)`), while every file tool runs
//!   on paths through them. No call may show outside content or change anything outside.
//! - Lost updates: 200 parallel `jig tool edit` processes, and 4 `jig mcp` servers with 50
//!   edits each, all on one file, each edit changing its own line: every edit reported as a
//!   success is in the file at the end.
//!
//! `JIG_RACE_CALLS` scales the race (calls per tool through `jig mcp`; a tenth of it through
//! `jig tool`, which starts a process per call).
#![expect(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "test helpers fail loudly on purpose; the tests print what they measured"
)]

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use jig_env_local::test_support::{SECRET, SymlinkRace, leaked};
use rmcp::ServiceExt as _;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::support::{mcp_call, mcp_client, mcp_text};

/// The race's calls: tool name and the arguments of call `i`.
fn race_args(tool: &str, i: u64) -> Value {
    let through = |file: &str| {
        if i.is_multiple_of(2) {
            format!("link/{file}")
        } else {
            "f".to_owned()
        }
    };
    match tool {
        "read" => json!({"path": through("file.txt")}),
        "write" => {
            json!({"path": through(&format!("w{i}.txt")), "content": format!("written {i}\n")})
        }
        "edit" => {
            let path = if (i / 2).is_multiple_of(2) {
                "link/file.txt"
            } else {
                "f"
            };
            let (old, new) = if i.is_multiple_of(2) {
                ("count", "Count")
            } else {
                ("Count", "count")
            };
            json!({"path": path, "edits": [{"oldText": old, "newText": new}]})
        }
        "ls" => json!({"path": "link"}),
        "grep" => {
            json!({"pattern": SECRET, "path": if i.is_multiple_of(2) { "." } else { "link" }})
        }
        "find" => json!({"pattern": "*", "path": if i.is_multiple_of(2) { "." } else { "link" }}),
        other => panic!("no race arguments for {other}"),
    }
}

const TOOLS: [&str; 6] = ["read", "write", "edit", "ls", "grep", "find"];

#[derive(Debug, Default)]
struct Count {
    calls: u64,
    successes: u64,
    escapes: u64,
}

fn calls_per_tool() -> u64 {
    std::env::var("JIG_RACE_CALLS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(200)
}

fn check(counts: &[(&str, Count)], rounds: u64, through: &str) {
    for (tool, count) in counts {
        println!(
            "{through} {tool}: {} calls, {} succeeded, {} escapes",
            count.calls, count.successes, count.escapes
        );
    }
    println!("{through}: {rounds} swap rounds");
    assert!(rounds > 10, "the flipper ran ({rounds} rounds)");
    for (tool, count) in counts {
        assert_eq!(count.escapes, 0, "{through} {tool} escaped the workspace");
    }
    let successes: u64 = counts.iter().map(|(_, count)| count.successes).sum();
    assert!(
        successes > 0,
        "{through}: no call succeeded while the links flipped"
    );
}

#[test]
fn jig_tool_never_escapes_while_symlinks_are_swapped() {
    let arena = SymlinkRace::new();
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = arena.flipper(Arc::clone(&stop));
    let calls = (calls_per_tool() / 10).max(4);
    let mut counts = Vec::new();
    for tool in TOOLS {
        let mut count = Count::default();
        for i in 0..calls {
            let output = std::process::Command::new(env!("CARGO_BIN_EXE_jig"))
                .args(["tool", tool, "--cwd"])
                .arg(&arena.ws)
                .arg("--args")
                .arg(race_args(tool, i).to_string())
                .env_remove("JIG_TIMING")
                .output()
                .unwrap();
            count.calls += 1;
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            if leaked(&text) {
                count.escapes += 1;
            }
            if output.status.success() {
                count.successes += 1;
            }
            count.escapes += arena.outside_changes();
        }
        counts.push((tool, count));
    }
    stop.store(true, Ordering::Relaxed);
    let rounds = flipper.join().unwrap();
    check(&counts, rounds, "jig tool");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jig_mcp_never_escapes_while_symlinks_are_swapped() {
    let arena = SymlinkRace::new();
    let client = mcp_client(&arena.ws, &[]).await;
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = arena.flipper(Arc::clone(&stop));
    let calls = calls_per_tool();
    let mut counts = Vec::new();
    for tool in TOOLS {
        let mut count = Count::default();
        for i in 0..calls {
            let result = mcp_call(&client, tool, race_args(tool, i)).await;
            count.calls += 1;
            if leaked(&mcp_text(&result)) {
                count.escapes += 1;
            }
            if result.is_error != Some(true) {
                count.successes += 1;
            }
            count.escapes += arena.outside_changes();
        }
        counts.push((tool, count));
    }
    stop.store(true, Ordering::Relaxed);
    let rounds = flipper.join().unwrap();
    client.cancel().await.unwrap();
    check(&counts, rounds, "jig mcp");
}

const LINES: usize = 200;

fn item(i: usize, state: &str) -> String {
    format!("item {i:03}: {state}\n")
}

fn edit_args(i: usize) -> Value {
    json!({"path": "shared.txt", "edits": [{"oldText": item(i, "old"), "newText": item(i, "new")}]})
}

/// Every edit that reported success is in the file; returns (successes, lost).
fn tally(ws: &Path, succeeded: &[usize]) -> (usize, usize) {
    let content = std::fs::read_to_string(ws.join("shared.txt")).unwrap();
    let lost = succeeded
        .iter()
        .filter(|&&i| !content.contains(&item(i, "new")))
        .count();
    (succeeded.len(), lost)
}

#[test]
fn parallel_jig_tool_edits_lose_no_update() {
    let arena = SymlinkRace::new();
    let original: String = (0..LINES).map(|i| item(i, "old")).collect();
    std::fs::write(arena.ws.join("shared.txt"), &original).unwrap();
    let children: Vec<(usize, std::process::Child)> = (0..LINES)
        .map(|i| {
            let child = std::process::Command::new(env!("CARGO_BIN_EXE_jig"))
                .args(["tool", "edit", "--cwd"])
                .arg(&arena.ws)
                .arg("--args")
                .arg(edit_args(i).to_string())
                .env_remove("JIG_TIMING")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (i, child)
        })
        .collect();
    let mut succeeded = Vec::new();
    let mut failures = Vec::new();
    for (i, child) in children {
        let output = child.wait_with_output().unwrap();
        if output.status.success() {
            succeeded.push(i);
        } else {
            failures.push(String::from_utf8_lossy(&output.stdout).into_owned());
        }
    }
    let (successes, lost) = tally(&arena.ws, &succeeded);
    println!(
        "200 parallel `jig tool edit`: {successes} succeeded, {} reported an error, {lost} lost",
        failures.len()
    );
    for failure in failures.iter().take(3) {
        println!("  failure: {failure}");
    }
    assert_eq!(lost, 0, "edits reported as done are missing from the file");
    assert_eq!(successes, LINES, "every edit applies: {failures:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_jig_mcp_servers_lose_no_update() {
    let arena = SymlinkRace::new();
    let original: String = (0..LINES).map(|i| item(i, "old")).collect();
    std::fs::write(arena.ws.join("shared.txt"), &original).unwrap();
    let mut clients = Vec::new();
    for _ in 0..4 {
        clients.push(Arc::new(mcp_client(&arena.ws, &[]).await));
    }
    let mut tasks = Vec::new();
    for i in 0..LINES {
        let client = Arc::clone(&clients[i % 4]);
        tasks.push(tokio::spawn(async move {
            let result = mcp_call(&client, "edit", edit_args(i)).await;
            (i, result.is_error != Some(true), mcp_text(&result))
        }));
    }
    let mut succeeded = Vec::new();
    let mut failures = Vec::new();
    for task in tasks {
        let (i, ok, text) = task.await.unwrap();
        if ok {
            succeeded.push(i);
        } else {
            failures.push(text);
        }
    }
    for client in clients {
        Arc::try_unwrap(client).unwrap().cancel().await.unwrap();
    }
    let (successes, lost) = tally(&arena.ws, &succeeded);
    println!(
        "4 `jig mcp` x 50 edits: {successes} succeeded, {} reported an error, {lost} lost",
        failures.len()
    );
    assert_eq!(lost, 0, "edits reported as done are missing from the file");
    assert_eq!(successes, LINES, "every edit applies: {failures:?}");
}

/// A workspace given as a symlink (`--cwd S`, `--root S`; macOS `/tmp`, symlinked projects):
/// absolute paths spelled through `S` are inside, also with both `S` and its target as roots.
#[tokio::test]
async fn absolute_paths_through_a_symlinked_root_are_inside() {
    let arena = SymlinkRace::new();
    let alias = arena.ws.parent().unwrap().join("alias");
    std::os::unix::fs::symlink(&arena.ws, &alias).unwrap();
    let through = alias.join("link/file.txt").display().to_string();

    let output = std::process::Command::new(env!("CARGO_BIN_EXE_jig"))
        .args(["tool", "read", "--cwd"])
        .arg(&alias)
        .arg("--args")
        .arg(json!({"path": through}).to_string())
        .env_remove("JIG_TIMING")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(stdout.contains("inside count"), "{stdout}");

    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_jig"));
    command
        .arg("mcp")
        .arg("--root")
        .arg(&alias)
        .arg("--root")
        .arg(&arena.ws)
        .env_remove("JIG_TIMING")
        .stderr(Stdio::null());
    let client = tokio::time::timeout(
        Duration::from_secs(30),
        ().serve(TokioChildProcess::new(command).unwrap()),
    )
    .await
    .unwrap()
    .unwrap();
    let read = mcp_call(&client, "read", json!({"path": through})).await;
    assert_eq!(read.is_error, Some(false), "{}", mcp_text(&read));
    let written = mcp_call(
        &client,
        "write",
        json!({"path": alias.join("new.txt").display().to_string(), "content": "x\n"}),
    )
    .await;
    assert_eq!(written.is_error, Some(false), "{}", mcp_text(&written));
    assert_eq!(
        std::fs::read_to_string(arena.ws.join("new.txt")).unwrap(),
        "x\n"
    );
    // Outside stays outside, however it is spelled.
    let outside = alias.join("../outside/file.txt").display().to_string();
    let refused = mcp_call(&client, "read", json!({"path": outside})).await;
    assert_eq!(refused.is_error, Some(true), "{}", mcp_text(&refused));
    client.cancel().await.unwrap();
}

/// Through `jig mcp`: `write` and `edit` of a FIFO answer at once with an error and leave it a
/// FIFO, and the server keeps serving edits of that path and others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jig_mcp_refuses_fifos_and_keeps_serving() {
    use std::os::unix::fs::FileTypeExt;

    let arena = SymlinkRace::new();
    let fifo = arena.fifo("pipe");
    let client = mcp_client(&arena.ws, &[]).await;
    let within = |future| tokio::time::timeout(Duration::from_secs(5), future);
    for _ in 0..5 {
        let written = within(mcp_call(
            &client,
            "write",
            json!({"path": "pipe", "content": "x"}),
        ))
        .await
        .expect("write answered");
        assert_eq!(written.is_error, Some(true), "{}", mcp_text(&written));
        let edited = within(mcp_call(
            &client,
            "edit",
            json!({"path": "pipe", "edits": [{"oldText": "a", "newText": "b"}]}),
        ))
        .await
        .expect("edit answered");
        assert_eq!(edited.is_error, Some(true), "{}", mcp_text(&edited));
        assert!(
            mcp_text(&edited).contains("not a regular file"),
            "{}",
            mcp_text(&edited)
        );
    }
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    let edited = within(mcp_call(
        &client,
        "edit",
        json!({"path": "f", "edits": [{"oldText": "count", "newText": "done"}]}),
    ))
    .await
    .expect("edit answered");
    assert_eq!(edited.is_error, Some(false), "{}", mcp_text(&edited));
    client.cancel().await.unwrap();
}
