//! `--audit` fails closed: a tool call whose record cannot be written fails with an error
//! naming the log (in `jig tool` and in `jig mcp`, which keeps serving), unless
//! `--audit-best-effort`; the log is created 0600.

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

#[test]
fn a_path_refused_by_containment_is_recorded_as_refused_with_its_reason() {
    let sandbox = Sandbox::new();
    let log = sandbox.base.join("audit.jsonl");
    sandbox.symlink(sandbox.base.join("outside/secret.txt"), "link.txt");
    for path in ["../outside/secret.txt", "link.txt"] {
        let output = sandbox
            .jig("read", &json!({"path": path}))
            .arg("--audit")
            .arg(&log)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{}", stdout_of(&output));
    }
    let records: Vec<serde_json::Value> = fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let refused: Vec<String> = records
        .iter()
        .filter(|record| record["outcome"] == "refused")
        .map(|record| {
            sandbox.redact(&format!(
                "{} {} {}",
                record["op"].as_str().unwrap(),
                record["path"].as_str().unwrap(),
                record["error"].as_str().unwrap()
            ))
        })
        .collect();
    insta::assert_snapshot!(refused.join("\n"));
    assert!(
        records
            .iter()
            .all(|record| record["outcome"] != "ok" || record["op"] != "read"),
        "nothing outside was read"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jig_run_records_a_call_the_permission_policy_denied_and_every_finished_call() {
    use crate::run_cmd::{Setup, reply};
    use jig_llm::scripted::ScriptedReply;
    let setup = Setup::new(vec![
        reply(ScriptedReply::tool_call(
            "call_1",
            "bash",
            json!({"command": "echo hi"}),
        )),
        reply(ScriptedReply::tool_call(
            "call_2",
            "read",
            json!({"path": "a.txt"}),
        )),
        reply(ScriptedReply::text("done")),
    ])
    .await;
    fs::write(setup.ws.join("a.txt"), "a\n").unwrap();
    let log = setup.ws.parent().unwrap().join("audit.jsonl");
    let log_arg = log.display().to_string();
    let mut command = setup.command(&[
        "--permission-mode",
        "ask",
        "--audit",
        &log_arg,
        "--model",
        "m",
        "go",
    ]);
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let calls: Vec<String> = fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|record| record["op"] == "tool_call")
        .map(|record| {
            format!(
                "{} {} {} {}",
                record["call_id"].as_str().unwrap(),
                record["tool"].as_str().unwrap(),
                record["outcome"].as_str().unwrap(),
                record["error"].as_str().unwrap_or("")
            )
        })
        .collect();
    insta::assert_snapshot!(calls.join("\n"));
}

#[test]
fn an_extension_tool_and_a_call_an_extension_blocks_are_recorded() {
    use crate::extensions::{Workspace, example};
    let workspace = Workspace::new();
    let log = workspace.root.join("audit.jsonl");
    let log_arg = log.display().to_string();
    let words = example("word-count");
    let ran = workspace
        .jig(&[
            "tool",
            "word_count",
            "-e",
            &words,
            "--audit",
            &log_arg,
            "--args",
            r#"{"text":"a b"}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(ran.status.code(), Some(0), "{}", stderr_of(&ran));
    let gate = example("permission-gate");
    let blocked = workspace
        .jig(&[
            "tool",
            "bash",
            "-e",
            &gate,
            "--audit",
            &log_arg,
            "--args",
            r#"{"command":"rm -rf victim"}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(blocked.status.code(), Some(1));
    let calls: Vec<String> = fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|record| record["op"] == "tool_call")
        .map(|record| {
            format!(
                "{} {} {}",
                record["tool"].as_str().unwrap(),
                record["outcome"].as_str().unwrap(),
                record["error"].as_str().unwrap_or("")
            )
        })
        .collect();
    insta::assert_snapshot!(calls.join("\n"));
}
