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
    let all = records(&log);
    let named = calls_named_in_every_record(&call_records(&all));
    assert_eq!(named.len(), 2, "{all:?}");
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

/// The records of an audit log.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper: an unreadable log fails the test"
)]
fn records(log: &std::path::Path) -> Vec<serde_json::Value> {
    fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The records made during tool calls: from the first that names a call on, except the env's
/// cleanup when the process ends (start-up operations come before any call).
fn call_records(records: &[serde_json::Value]) -> Vec<&serde_json::Value> {
    records
        .iter()
        .skip_while(|record| record.get("call_id").is_none())
        .filter(|record| record["op"] != "cleanup")
        .collect()
}

/// Every record carries `call_id` and `tool`; each call's `tool_call` record is its last one, and
/// no record of another call or tool shares its id. Returns each call's tool and outcome, in
/// order.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper: an unreadable log fails the test"
)]
fn calls_named_in_every_record(records: &[&serde_json::Value]) -> Vec<(String, String, String)> {
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for record in records {
        let id = record["call_id"]
            .as_str()
            .unwrap_or_else(|| panic!("no call_id: {record}"));
        let tool = record["tool"]
            .as_str()
            .unwrap_or_else(|| panic!("no tool: {record}"));
        if record["op"] == "tool_call" {
            assert!(
                calls.iter().all(|(seen, ..)| seen != id),
                "one tool_call record per call id: {record}"
            );
            calls.push((
                id.to_owned(),
                tool.to_owned(),
                record["outcome"].as_str().unwrap().to_owned(),
            ));
        }
    }
    for record in records {
        let id = record["call_id"].as_str().unwrap();
        let (_, tool, _) = calls
            .iter()
            .find(|(call, ..)| call == id)
            .unwrap_or_else(|| panic!("a record of a call without a tool_call record: {record}"));
        assert_eq!(record["tool"].as_str(), Some(tool.as_str()), "{record}");
    }
    calls
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jig_mcp_names_the_call_in_every_record_it_makes() {
    use crate::extensions::{Workspace, example};
    use rmcp::ServiceExt as _;
    let workspace = Workspace::new();
    fs::write(workspace.ws.join("a.txt"), "alpha\n").unwrap();
    let log = workspace.root.join("audit.jsonl");
    let ws = workspace.ws.display().to_string();
    let gate = example("permission-gate");
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_jig"));
    command
        .args(["mcp", "--root", &ws, "-e", &gate, "--audit"])
        .arg(&log)
        .current_dir(&workspace.ws)
        .env("XDG_CONFIG_HOME", workspace.root.join("config"))
        .env("XDG_DATA_HOME", workspace.root.join("data"))
        .env_remove("JIG_TIMING")
        .stderr(std::process::Stdio::null());
    let transport = rmcp::transport::TokioChildProcess::new(command).unwrap();
    let client = tokio::time::timeout(std::time::Duration::from_secs(30), ().serve(transport))
        .await
        .unwrap()
        .unwrap();
    let calls = [
        ("write", json!({"path": "b.txt", "content": "beta\n"})),
        ("read", json!({"path": "a.txt"})),
        ("bash", json!({"command": "echo hi"})),
        ("grep", json!({"pattern": "beta"})),
        ("bash", json!({"command": "rm -rf victim"})),
        ("read", json!({"path": "missing.txt"})),
        ("read", json!({"path": "../outside.txt"})),
    ];
    for (tool, args) in calls {
        mcp_call(&client, tool, args).await;
    }
    // Two at once: each keeps its own id.
    let (one, two) = tokio::join!(
        mcp_call(&client, "read", json!({"path": "a.txt"})),
        mcp_call(&client, "ls", json!({})),
    );
    assert_ne!(one.is_error, Some(true));
    assert_ne!(two.is_error, Some(true));
    client.cancel().await.unwrap();
    assert!(workspace.ws.join("victim/file").exists());

    let records = records(&log);
    let during = call_records(&records);
    let calls = calls_named_in_every_record(&during);
    let outcomes: Vec<String> = calls
        .iter()
        .map(|(_, tool, outcome)| format!("{tool} {outcome}"))
        .collect();
    assert_eq!(
        outcomes[..7],
        [
            "write ok",
            "read ok",
            "bash ok",
            "grep ok",
            "bash denied",
            "read error",
            "read error"
        ]
    );
    let mut last_two = outcomes[7..].to_vec();
    last_two.sort();
    assert_eq!(last_two, ["ls ok", "read ok"]);
    for op in [
        "write",
        "read_head",
        "exec",
        "search",
        "resolve",
        "read_dir",
    ] {
        assert!(
            during.iter().any(|record| record["op"] == op),
            "an env record of {op} names its call: {records:?}"
        );
    }
}

#[test]
fn jig_tool_names_the_call_in_every_record_it_makes() {
    use crate::extensions::{Workspace, example};
    let workspace = Workspace::new();
    fs::write(workspace.ws.join("a.txt"), "alpha\n").unwrap();
    let gate = example("permission-gate");
    let calls = [
        ("write", json!({"path": "b.txt", "content": "beta\n"}), 0),
        ("read", json!({"path": "a.txt"}), 0),
        ("bash", json!({"command": "echo hi"}), 0),
        ("grep", json!({"pattern": "beta"}), 0),
        ("bash", json!({"command": "rm -rf victim"}), 1),
        ("read", json!({"path": "missing.txt"}), 1),
    ];
    // One log per process: its start-up operations come before its call.
    let mut during = Vec::new();
    for (n, (tool, args, code)) in calls.into_iter().enumerate() {
        let log = workspace.root.join(format!("audit-{n}.jsonl"));
        let log_arg = log.display().to_string();
        let args = args.to_string();
        let output = workspace
            .jig(&[
                "tool", tool, "-e", &gate, "--audit", &log_arg, "--args", &args,
            ])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(code), "{}", stderr_of(&output));
        during.extend(call_records(&records(&log)).into_iter().cloned());
    }
    let during: Vec<&serde_json::Value> = during.iter().collect();
    let calls = calls_named_in_every_record(&during);
    let outcomes: Vec<String> = calls
        .iter()
        .map(|(_, tool, outcome)| format!("{tool} {outcome}"))
        .collect();
    assert_eq!(
        outcomes,
        [
            "write ok",
            "read ok",
            "bash ok",
            "grep ok",
            "bash denied",
            "read error"
        ]
    );
    for op in ["write", "read_head", "exec", "search"] {
        assert!(
            during.iter().any(|record| record["op"] == op),
            "an env record of {op} names its call: {during:?}"
        );
    }
}
