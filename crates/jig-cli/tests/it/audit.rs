//! `--audit` fails closed: a tool call whose record cannot be written fails with an error
//! naming the log (in `jig tool` and in `jig mcp`, which keeps serving), unless
//! `--audit-best-effort`; the log is created 0600.
#![expect(clippy::unwrap_used, reason = "test setup fails loudly")]

use std::fs;
use std::os::unix::fs::PermissionsExt as _;

use serde_json::json;

use crate::support::{Sandbox, mcp_call, mcp_client, mcp_text, stderr_of, stdout_of};

#[test]
fn jig_tool_with_an_audit_log_that_cannot_be_written_fails_and_changes_nothing() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .jig("write", &json!({"path": "new.txt", "content": "hello\n"}))
        .args(["--audit", "/dev/full"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stdout_of(&output));
    assert!(
        !sandbox.ws.join("new.txt").exists(),
        "nothing ran unrecorded"
    );
    let said = format!("{}{}", stdout_of(&output), stderr_of(&output));
    assert!(
        said.contains("cannot write the audit log /dev/full: No space left on device"),
        "{said}"
    );
    insta::assert_snapshot!(sandbox.redact(&said));
}

#[test]
fn jig_tool_with_audit_best_effort_warns_and_runs() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .jig("write", &json!({"path": "new.txt", "content": "hello\n"}))
        .args(["--audit", "/dev/full", "--audit-best-effort"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(
        fs::read_to_string(sandbox.ws.join("new.txt")).unwrap(),
        "hello\n"
    );
    let stderr = stderr_of(&output);
    assert!(
        stderr
            .lines()
            .all(|line| line
                == "jig: warning: cannot write the audit log /dev/full: No space left on device (os error 28)"),
        "{stderr}"
    );
    assert!(!stderr.is_empty());
}

#[test]
fn the_audit_log_is_created_0600() {
    let sandbox = Sandbox::new();
    sandbox.file("a.txt", "a\n");
    let log = sandbox.base.join("audit.jsonl");
    let output = sandbox
        .jig("read", &json!({"path": "a.txt"}))
        .arg("--audit")
        .arg(&log)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let mode = fs::metadata(&log).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    for line in fs::read_to_string(&log).unwrap().lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jig_mcp_with_an_audit_log_that_cannot_be_written_answers_tool_errors_and_keeps_serving() {
    let sandbox = Sandbox::new();
    let ws = sandbox.ws.display().to_string();
    let client = mcp_client(&sandbox.ws, &["--root", &ws, "--audit", "/dev/full"]).await;
    for name in ["one.txt", "two.txt"] {
        let result = mcp_call(&client, "write", json!({"path": name, "content": "x\n"})).await;
        assert_eq!(result.is_error, Some(true));
        let text = mcp_text(&result);
        assert!(text.contains("the audit log /dev/full"), "{text}");
        assert!(!sandbox.ws.join(name).exists());
    }
    // Still serving.
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|tool| tool.name == "read"));
    client.cancel().await.unwrap();
}
