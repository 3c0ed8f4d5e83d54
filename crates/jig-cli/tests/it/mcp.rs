//! `jig mcp` driven by rmcp's own client over a child process (the Python SDK suite in
//! `tests/mcp_py` covers the rest end to end).

use rmcp::model::CallToolRequestParams;
use serde_json::json;

use crate::support::{Sandbox, mcp_call, mcp_client, mcp_text};

#[tokio::test]
async fn rmcp_client_lists_and_calls_tools() {
    let sandbox = Sandbox::new();
    sandbox.file("task.txt", "status: draft\n");
    let client = mcp_client(&sandbox.ws, &[]).await;

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

    let result = mcp_call(&client, "read", json!({"path": "task.txt"})).await;
    assert_eq!(result.is_error, Some(false));
    assert_eq!(mcp_text(&result), "   1│ status: draft");
    assert_eq!(result.structured_content, None);
    assert_eq!(result.meta.as_ref().unwrap().0["jig/details"]["lines"], 1);

    let written = mcp_call(
        &client,
        "write",
        json!({"path": "out/new.txt", "content": "a\nb\n"}),
    )
    .await;
    assert_eq!(written.is_error, Some(false), "{}", mcp_text(&written));
    assert_eq!(
        std::fs::read_to_string(sandbox.ws.join("out/new.txt")).unwrap(),
        "a\nb\n"
    );

    let refused = mcp_call(&client, "read", json!({"path": "../outside/secret.txt"})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(
        mcp_text(&refused).contains(sandbox.ws.to_str().unwrap()),
        "{}",
        mcp_text(&refused)
    );

    let invalid = mcp_call(&client, "read", json!({})).await;
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
    let client = mcp_client(&sandbox.ws, &["--read-only"]).await;
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
