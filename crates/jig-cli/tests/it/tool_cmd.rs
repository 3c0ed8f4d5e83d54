//! `jig tool` end to end on a temp directory with the real `LocalEnv`.

use std::fmt::Write as _;
use std::fs;

use insta::assert_snapshot;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{Sandbox, jig, stderr_of, stdout_of};

/// A valid 1×1 PNG.
const PNG_1X1: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x64, 0x60, 0xf8, 0x5f,
    0x0f, 0x00, 0x02, 0x87, 0x01, 0x80, 0xeb, 0x47, 0xba, 0x92, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

#[test]
fn seed_walkthrough_write_then_read() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .jig(
            "write",
            &json!({"path": "task.txt", "content": "status: draft\n"}),
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(stdout_of(&output), "Wrote 14 bytes (1 line) to task.txt\n");
    assert_eq!(
        fs::read_to_string(sandbox.ws.join("task.txt")).unwrap(),
        "status: draft\n"
    );

    let output = sandbox
        .jig("read", &json!({"path": "task.txt"}))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout_of(&output), "   1│ status: draft\n");
}

#[test]
fn seed_two_line_file_pages_with_offset_2() {
    let sandbox = Sandbox::new();
    sandbox.file("two.txt", "first\nsecond\n");
    let page1 = sandbox
        .jig("read", &json!({"path": "two.txt", "limit": 1}))
        .output()
        .unwrap();
    assert_eq!(
        stdout_of(&page1),
        "   1│ first\n\n[1 more lines in file. Use offset=2 to continue.]\n"
    );
    let page2 = sandbox
        .jig("read", &json!({"path": "two.txt", "offset": 2, "limit": 1}))
        .output()
        .unwrap();
    assert_eq!(stdout_of(&page2), "   2│ second\n");
}

#[test]
fn json_prints_the_whole_result() {
    let sandbox = Sandbox::new();
    sandbox.file("task.txt", "status: draft\n");
    let output = sandbox
        .jig("read", &json!({"path": "task.txt"}))
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let path = sandbox.ws.join("task.txt").display().to_string();
    assert_eq!(
        result,
        json!({
            "content": [{"type": "text", "text": "   1│ status: draft"}],
            "details": {"path": path, "bytes": 14, "lines": 1, "startLine": 1, "endLine": 1, "truncated": false},
            "isError": false
        })
    );
    assert_eq!(stdout_of(&output).lines().count(), 1);
}

#[test]
fn a_tool_error_exits_1_with_its_text_on_stdout() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .jig("read", &json!({"path": "missing.txt"}))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr_of(&output).is_empty());
    assert_snapshot!("read_missing", sandbox.redact(&stdout_of(&output)));

    let output = sandbox
        .jig("read", &json!({"path": "missing.txt"}))
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["isError"], true);

    let output = sandbox.jig("read", &json!({"offset": 1})).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_snapshot!("read_invalid_arguments", stdout_of(&output));
}

#[test]
fn args_come_from_a_file_or_stdin() {
    let sandbox = Sandbox::new();
    sandbox.file("a.txt", "from a\n");
    let args_file = sandbox.base.join("args.json");
    fs::write(&args_file, r#"{"path": "a.txt"}"#).unwrap();
    let output = jig()
        .args(["tool", "read", "--cwd"])
        .arg(&sandbox.ws)
        .arg("--args")
        .arg(format!("@{}", args_file.display()))
        .output()
        .unwrap();
    assert_eq!(stdout_of(&output), "   1│ from a\n");
    let output = jig()
        .args(["tool", "read", "--args", "-", "--cwd"])
        .arg(&sandbox.ws)
        .write_stdin(r#"{"path": "a.txt"}"#)
        .output()
        .unwrap();
    assert_eq!(stdout_of(&output), "   1│ from a\n");
}

#[test]
fn the_current_directory_is_the_default_cwd_and_root() {
    let sandbox = Sandbox::new();
    sandbox.file("here.txt", "here\n");
    let output = jig()
        .args(["tool", "read", "--args", r#"{"path":"here.txt"}"#])
        .current_dir(&sandbox.ws)
        .output()
        .unwrap();
    assert_eq!(stdout_of(&output), "   1│ here\n");
    let output = jig()
        .args(["tool", "ls", "--args", r#"{"path":"../outside"}"#])
        .current_dir(&sandbox.ws)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout_of(&output).starts_with("Access denied"));
}

#[test]
fn a_cwd_reached_through_a_symlink_works() {
    let sandbox = Sandbox::new();
    sandbox.file("a.txt", "via link\n");
    let link = sandbox.base.join("link-to-ws");
    std::os::unix::fs::symlink(&sandbox.ws, &link).unwrap();
    let output = jig()
        .args([
            "tool",
            "read",
            "--json",
            "--args",
            r#"{"path":"a.txt"}"#,
            "--cwd",
        ])
        .arg(&link)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stdout_of(&output));
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["content"][0]["text"], "   1│ via link");
    assert_eq!(
        result["details"]["path"],
        sandbox.ws.join("a.txt").display().to_string()
    );
}

#[test]
fn containment_none_reaches_outside_the_cwd() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .jig("read", &json!({"path": "../outside/secret.txt"}))
        .args(["--containment", "none"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout_of(&output), "   1│ secret\n");
}

#[test]
fn jig_timing_prints_the_execution_time_as_the_last_stderr_line() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .jig("ls", &json!({}))
        .env("JIG_TIMING", "1")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stderr = stderr_of(&output);
    let last = stderr.lines().last().unwrap();
    let timing: Value = serde_json::from_str(last).unwrap();
    assert!(
        timing["timing"]["exec_ms"].as_f64().unwrap() >= 0.0,
        "{last}"
    );
    // Not printed without the variable.
    let output = sandbox.jig("ls", &json!({})).output().unwrap();
    assert!(stderr_of(&output).is_empty());
}

#[test]
fn an_image_prints_as_one_placeholder_line() {
    let sandbox = Sandbox::new();
    sandbox.file("dot.png", PNG_1X1);
    let output = sandbox
        .jig("read", &json!({"path": "dot.png"}))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stdout_of(&output));
    let text = stdout_of(&output);
    let placeholder = text
        .lines()
        .find(|line| line.starts_with("[image: "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        placeholder.starts_with("[image: image/png, "),
        "{placeholder}"
    );
    assert!(placeholder.ends_with(", 1x1]"), "{placeholder}");
}

#[test]
fn ls_write_and_errors_through_the_binary() {
    let sandbox = Sandbox::new();
    sandbox.file("b.txt", "");
    sandbox.file("A.txt", "");
    sandbox.file("dir/inner.txt", "");
    sandbox.symlink("dir", "dir-link");
    sandbox.symlink("gone.txt", "dangling");
    let output = sandbox.jig("ls", &json!({})).output().unwrap();
    assert_eq!(
        stdout_of(&output),
        "A.txt\nb.txt\ndangling -> gone.txt (broken symlink)\ndir/\ndir-link/\n"
    );
    let output = sandbox
        .jig("ls", &json!({"path": "dir-link"}))
        .output()
        .unwrap();
    assert_eq!(stdout_of(&output), "inner.txt\n");
    let output = sandbox
        .jig("write", &json!({"path": "dir", "content": "x"}))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_snapshot!("write_directory", stdout_of(&output));
    let output = sandbox
        .jig("ls", &json!({"path": "b.txt"}))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        sandbox.redact(&stdout_of(&output)),
        "Not a directory: [BASE]/ws/b.txt\n"
    );
}

#[test]
fn paging_a_multi_megabyte_file_is_exact() {
    let sandbox = Sandbox::new();
    let mut content = String::new();
    let mut lines = 0_u64;
    while content.len() < 3 * 1024 * 1024 {
        lines += 1;
        writeln!(content, "row {lines:08}").unwrap();
    }
    sandbox.file("big.log", &content);
    let output = sandbox
        .jig(
            "read",
            &json!({"path": "big.log", "offset": 200_000, "limit": 2}),
        )
        .arg("--json")
        .output()
        .unwrap();
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        result["content"][0]["text"],
        format!(
            "200000│ row 00200000\n200001│ row 00200001\n\n[{} more lines in file. Use offset=200002 to continue.]",
            lines - 200_001
        )
    );
    assert_eq!(result["details"]["lines"], lines);
    assert_eq!(result["details"]["bytes"], content.len());
    assert_eq!(result["details"]["nextOffset"], 200_002);
}

/// Processes whose command line contains `marker`.
#[expect(clippy::unwrap_used, reason = "a test helper fails loudly")]
fn processes_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let state = fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = state
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|state| state == "Z");
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if !zombie && cmdline.contains(marker) {
            found.push(pid);
        }
    }
    found
}

#[expect(clippy::unwrap_used, reason = "a test helper fails loudly")]
fn signal_stops_bash(signal: rustix::process::Signal, name: &str, code: i32, marker: &str) {
    let sandbox = Sandbox::new();
    let tmp = tempfile::tempdir().unwrap();
    // A child in the background, one that leaves the session, and one in the foreground.
    let command = format!(
        "seq 1 100000; sleep {marker} & ( setsid sleep {marker} & ); sleep {marker}; echo never"
    );
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_jig"))
        .args(["tool", "bash", "--cwd"])
        .arg(&sandbox.ws)
        .arg("--args")
        .arg(json!({ "command": command }).to_string())
        .env("TMPDIR", tmp.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while processes_with(&format!("sleep {marker}")).len() < 3 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "the command did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid = rustix::process::Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
    rustix::process::kill_process(pid, signal).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(code), "{}", stderr_of(&output));
    assert!(
        stderr_of(&output).contains(&format!("jig: stopped by {name}")),
        "{}",
        stderr_of(&output)
    );
    assert!(!stdout_of(&output).contains("never"));
    let survivors = processes_with(&format!("sleep {marker}"));
    assert!(survivors.is_empty(), "still running: {survivors:?}");
    let left: Vec<_> = fs::read_dir(tmp.path()).unwrap().flatten().collect();
    assert!(left.is_empty(), "temp files left: {left:?}");
}

#[test]
fn sigint_kills_the_command_tree_and_removes_temp_files() {
    signal_stops_bash(rustix::process::Signal::INT, "SIGINT", 130, "30.1357");
}

#[test]
fn sigterm_kills_the_command_tree_and_removes_temp_files() {
    signal_stops_bash(rustix::process::Signal::TERM, "SIGTERM", 143, "30.2468");
}
