//! tools/list and tools/call: schemas, annotations, content, errors, cancellation, progress.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ClientHandler;
use rmcp::model::{
    CallToolRequestParams, ClientRequest, ProgressNotificationParam, Request, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RoleClient};
use serde_json::json;

use crate::support::{Setup, args, call, eventually, start, start_with, text};

#[tokio::test]
async fn lists_tools_with_schemas_titles_and_annotations() {
    let h = start(Setup::default()).await;
    let tools = h.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    for expected in ["read", "write", "ls", "slow"] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let read = tools.iter().find(|tool| tool.name == "read").unwrap();
    assert_eq!(read.input_schema.get("type"), Some(&json!("object")));
    assert!(read.input_schema["properties"].get("path").is_some());
    assert!(read.title.as_deref().is_some_and(|title| !title.is_empty()));
    let hints = read.annotations.as_ref().unwrap();
    assert_eq!(hints.read_only_hint, Some(true));
    assert_eq!(hints.open_world_hint, Some(false));
    let write = tools.iter().find(|tool| tool.name == "write").unwrap();
    let hints = write.annotations.as_ref().unwrap();
    assert_eq!(
        (
            hints.read_only_hint,
            hints.destructive_hint,
            hints.open_world_hint
        ),
        (Some(false), Some(true), Some(false))
    );
    let slow = tools.iter().find(|tool| tool.name == "slow").unwrap();
    assert_eq!(
        slow.annotations.as_ref().unwrap().open_world_hint,
        Some(true)
    );
}

#[tokio::test]
async fn read_returns_text_for_the_model_and_details_in_meta() {
    let h = start(Setup::default()).await;
    let result = call(&h, "read", json!({"path": "task.txt"})).await;
    assert_eq!(result.is_error, Some(false));
    assert_eq!(text(&result), "   1│ status: draft");
    // Clients show the model `structuredContent` instead of the text when it is present.
    assert_eq!(result.structured_content, None);
    let details = &result.meta.unwrap().0[jig_mcp_server::DETAILS_META_KEY];
    assert_eq!(details["lines"], 1);
    assert_eq!(details["path"], "/ws/task.txt");
}

#[tokio::test]
async fn invalid_arguments_are_tool_errors_not_protocol_errors() {
    let h = start(Setup::default()).await;
    let result = call(&h, "read", json!({"offset": "x"})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("path"), "{}", text(&result));
}

#[tokio::test]
async fn missing_files_and_refused_paths_are_tool_errors() {
    let h = start(Setup::default()).await;
    let missing = call(&h, "read", json!({"path": "nope.txt"})).await;
    assert_eq!(missing.is_error, Some(true));
    let outside = call(&h, "read", json!({"path": "../outside/secret.txt"})).await;
    assert_eq!(outside.is_error, Some(true));
    assert!(text(&outside).contains("/ws"), "{}", text(&outside));
    assert!(!text(&outside).contains("secret\n"));
    let written = call(
        &h,
        "write",
        json!({"path": "/outside/new.txt", "content": "x"}),
    )
    .await;
    assert_eq!(written.is_error, Some(true));
    assert!(
        h.env
            .files()
            .keys()
            .all(|path| path.to_str() != Some("/outside/new.txt"))
    );
}

#[tokio::test]
async fn unknown_tool_is_a_json_rpc_error() {
    let h = start(Setup::default()).await;
    let error = h
        .client
        .call_tool(CallToolRequestParams::new("nonexistent"))
        .await
        .unwrap_err();
    let rmcp::ServiceError::McpError(error) = error else {
        panic!("expected a JSON-RPC error, got {error:?}");
    };
    assert_eq!(error.code.0, -32602);
    assert!(
        error.message.contains("Unknown tool: nonexistent"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn concurrent_writes_to_one_file_each_land_whole() {
    let h = start(Setup::default()).await;
    let mut calls = Vec::new();
    for i in 0..20 {
        let content = format!("writer {i}\n").repeat(200);
        let path = if i % 2 == 0 {
            "shared.txt"
        } else {
            "/ws/./shared.txt"
        };
        calls.push(call(&h, "write", json!({"path": path, "content": content})));
    }
    let results = futures::future::join_all(calls).await;
    assert!(results.iter().all(|result| result.is_error == Some(false)));
    let files = h.env.files();
    let content = String::from_utf8(files[std::path::Path::new("/ws/shared.txt")].clone()).unwrap();
    let first = content.lines().next().unwrap().to_owned();
    assert!(
        content.lines().all(|line| line == first),
        "interleaved content"
    );
    assert_eq!(content.lines().count(), 200);
}

#[tokio::test]
async fn cancellation_aborts_the_running_call() {
    let h = start(Setup::default()).await;
    let handle = h
        .client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(Request::new(
                CallToolRequestParams::new("slow").with_arguments(args(json!({}))),
            )),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!h.saw_cancel.load(Ordering::SeqCst));
    handle.cancel(Some("test".to_owned())).await.unwrap();
    assert!(eventually(|| h.saw_cancel.load(Ordering::SeqCst)).await);
    assert!(h.server.wait_for_calls(Duration::from_secs(2)).await);
    // The server keeps serving.
    let result = call(&h, "read", json!({"path": "two.txt"})).await;
    assert_eq!(result.is_error, Some(false));
}

/// Records progress notifications.
#[derive(Debug, Clone, Default)]
struct ProgressClient {
    seen: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for ProgressClient {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(params);
    }
}

#[tokio::test]
async fn streamed_updates_become_progress_notifications() {
    let client = ProgressClient::default();
    let seen = client.seen.clone();
    let h = start_with(Setup::default(), client).await;
    let handle = h
        .client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(Request::new(
                CallToolRequestParams::new("slow").with_arguments(args(json!({"steps": 5}))),
            )),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let response = handle.await_response().await.unwrap();
    let ServerResult::CallToolResult(result) = response else {
        panic!("unexpected response {response:?}");
    };
    assert_eq!(result.is_error, Some(false));
    // Notifications are delivered before the response; give the handler a moment to record.
    assert!(
        eventually(|| seen
            .lock()
            .unwrap()
            .last()
            .and_then(|p| p.message.clone())
            .as_deref()
            == Some("line 1\nline 2\nline 3\nline 4\nline 5\n"))
        .await
    );
    let seen = seen.lock().unwrap().clone();
    assert!(
        seen.windows(2)
            .all(|pair| pair[0].progress < pair[1].progress)
    );
}
