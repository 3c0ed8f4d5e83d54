//! `jig mcp` driven by rmcp's own client over a child process (the Python SDK suite in
//! `tests/mcp_py` covers the rest end to end).
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers outside #[test] functions fail loudly on purpose"
)]

use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, JsonObject};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::support::Sandbox;

async fn connect(sandbox: &Sandbox, extra: &[&str]) -> RunningService<RoleClient, ()> {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_jig"));
    command.arg("mcp").args(extra).current_dir(&sandbox.ws);
    let transport = TokioChildProcess::new(command).unwrap();
    tokio::time::timeout(Duration::from_secs(30), ().serve(transport))
        .await
        .expect("initialize timed out")
        .expect("initialize failed")
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

async fn call(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> CallToolResult {
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(object(args)))
        .await
        .unwrap()
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn rmcp_client_lists_and_calls_tools() {
    let sandbox = Sandbox::new();
    sandbox.file("task.txt", "status: draft\n");
    let client = connect(&sandbox, &[]).await;

    let info = client.peer_info().expect("server info after initialize");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("jig")
    );

    let tools = client.list_all_tools().await.unwrap();
    let read = tools.iter().find(|tool| tool.name == "read").unwrap();
    assert_eq!(
        read.annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );
    assert!(read.title.is_some());
    assert_eq!(read.input_schema["type"], "object");
    let write = tools.iter().find(|tool| tool.name == "write").unwrap();
    assert_eq!(
        write.annotations.as_ref().unwrap().destructive_hint,
        Some(true)
    );

    let result = call(&client, "read", json!({"path": "task.txt"})).await;
    assert_eq!(result.is_error, Some(false));
    assert_eq!(text(&result), "   1│ status: draft");
    assert_eq!(result.structured_content, None);
    assert_eq!(result.meta.as_ref().unwrap().0["jig/details"]["lines"], 1);

    let written = call(
        &client,
        "write",
        json!({"path": "out/new.txt", "content": "a\nb\n"}),
    )
    .await;
    assert_eq!(written.is_error, Some(false), "{}", text(&written));
    assert_eq!(
        std::fs::read_to_string(sandbox.ws.join("out/new.txt")).unwrap(),
        "a\nb\n"
    );

    let refused = call(&client, "read", json!({"path": "../outside/secret.txt"})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(
        text(&refused).contains(sandbox.ws.to_str().unwrap()),
        "{}",
        text(&refused)
    );

    let invalid = call(&client, "read", json!({})).await;
    assert_eq!(invalid.is_error, Some(true));

    let unknown = client
        .call_tool(CallToolRequestParams::new("nope"))
        .await
        .unwrap_err();
    assert!(
        matches!(&unknown, rmcp::ServiceError::McpError(error) if error.code.0 == -32602),
        "{unknown:?}"
    );

    client.cancel().await.unwrap();
}

#[tokio::test]
async fn read_only_flag_limits_the_tools() {
    let sandbox = Sandbox::new();
    let client = connect(&sandbox, &["--read-only"]).await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(!tools.is_empty());
    for tool in &tools {
        assert_eq!(
            tool.annotations.as_ref().unwrap().read_only_hint,
            Some(true),
            "{} served with --read-only",
            tool.name
        );
    }
    client.cancel().await.unwrap();
}
