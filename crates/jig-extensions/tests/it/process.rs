//! The JSON-RPC process transport: handshake, full duplex, tools.

use std::sync::{Arc, Mutex};

use jig_extensions::{
    ExtensionHost, NOT_INITIALIZED, RecordedAction, ToolCallOutcome, UiRequest, events,
    load_process,
};
use jig_protocol::ToolResult;
use jig_tool::ToolContext;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::{fixture, host, options, patient as runner, python_fixture};

fn tool_context() -> ToolContext {
    ToolContext::new(
        Arc::new(jig_env_memory::MemoryEnv::new()),
        std::path::PathBuf::from("/"),
    )
}

#[tokio::test]
async fn actions_during_initialize_are_refused_and_the_bound_runtime_serves_them_mid_handler() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture("ext.py");
    let extension = load_process(&path, &python_fixture("load-phase"), &options(dir.path()))
        .await
        .unwrap();
    let runner = runner(vec![extension]);
    let host = host();
    runner
        .bind(Arc::clone(&host) as Arc<dyn ExtensionHost>)
        .await;
    // The handler calls back into the host (appendEntry, getSessionInfo, ui/confirm) while the
    // host awaits its answer; without a UI, confirm answers false, so the call is blocked.
    assert_eq!(
        runner
            .tool_call("c1", "bash", &json!({"command": "ls"}))
            .await,
        ToolCallOutcome::Block {
            reason: Some("not confirmed in session s-1".to_owned())
        }
    );
    let name = path.display().to_string();
    assert_eq!(
        host.actions(),
        vec![
            RecordedAction::RegisterProvider(name.clone(), json!({"name": "queued-provider"})),
            RecordedAction::AppendEntry(
                name.clone(),
                "refused-while-loading".to_owned(),
                json!(NOT_INITIALIZED)
            ),
            RecordedAction::Ui(
                name,
                UiRequest::Confirm {
                    title: "Allow bash?".to_owned(),
                    message: None
                }
            ),
        ]
    );
    runner.shutdown().await;
}

#[tokio::test]
async fn replaced_input_and_result_patches_cross_the_process_boundary() {
    let dir = tempfile::tempdir().unwrap();
    let extension = load_process(
        &fixture("ext.py"),
        &python_fixture("transform"),
        &options(dir.path()),
    )
    .await
    .unwrap();
    let runner = runner(vec![extension]);
    assert_eq!(
        runner.tool_call("c1", "read", &json!({"path": "a"})).await,
        ToolCallOutcome::Allow {
            input: Some(json!({"path": "a", "checked": true}))
        }
    );
    let result = runner
        .tool_result("c1", "read", &json!({}), ToolResult::text("body"))
        .await;
    assert_eq!(result.text_content(), "seen: body");
    runner.shutdown().await;
}

#[tokio::test]
async fn a_handler_error_reply_blocks_the_call_but_the_extension_stays() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture("ext.py");
    let extension = load_process(&path, &python_fixture("error"), &options(dir.path()))
        .await
        .unwrap();
    let runner = runner(vec![extension]);
    for id in ["c1", "c2"] {
        assert_eq!(
            runner.tool_call(id, "bash", &json!({})).await,
            ToolCallOutcome::Block {
                reason: Some(format!(
                    "Extension \"{}\" tool_call error: handler threw: TypeError",
                    path.display()
                ))
            }
        );
    }
    assert!(runner.has_handlers(events::TOOL_CALL));
    runner.shutdown().await;
}

#[tokio::test]
async fn an_extension_tool_is_validated_run_updated_and_bounded_like_a_builtin() {
    let dir = tempfile::tempdir().unwrap();
    let extension = load_process(
        &fixture("ext.py"),
        &python_fixture("tool"),
        &options(dir.path()),
    )
    .await
    .unwrap();
    let runner = runner(vec![extension]);
    let tools = runner.tools();
    assert_eq!(tools.len(), 1);
    let tool = &tools[0];
    assert_eq!(tool.name(), "shout");
    assert_eq!(tool.title(), "Shout");
    assert_eq!(
        tool.input_schema(),
        &json!({"type": "object", "properties": {"text": {"type": "string"}, "times": {"type": "integer"}},
                "required": ["text"]})
    );
    let updates = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&updates);
    let mut ctx = tool_context();
    ctx.updates = Some(Arc::new(move |partial: ToolResult| {
        sink.lock().unwrap().push(partial.text_content());
    }));
    // Numeric strings are coerced as for built-in tools.
    let result = tool
        .execute(&ctx, json!({"text": "hi", "times": "2"}))
        .await
        .unwrap();
    assert_eq!(result.text_content(), "HI HI");
    assert_eq!(*updates.lock().unwrap(), ["working"]);

    let invalid = tool.run(&ctx, json!({"times": 1})).await;
    assert!(invalid.is_error);
    assert_eq!(
        invalid.text_content(),
        "Validation failed for tool \"shout\":\n  - (root): \"text\" is a required property\n\nReceived arguments:\n{\"times\":1}"
    );

    let big = tool.execute(&ctx, json!({"text": "big"})).await.unwrap();
    assert!(
        big.text_content()
            .ends_with("[Showing lines 1-2000 of 5000 lines (2000 line limit)]"),
        "{}",
        big.text_content()
    );

    let failed = tool.run(&ctx, json!({"text": "fail"})).await;
    assert!(failed.is_error);
    assert_eq!(
        failed.text_content(),
        format!(
            "Extension \"{}\" tool:shout error: shout failed",
            fixture("ext.py").display()
        )
    );
    runner.shutdown().await;
}

#[tokio::test]
async fn shutdown_ends_the_process_and_its_tools_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let extension = load_process(
        &fixture("ext.py"),
        &python_fixture("tool"),
        &options(dir.path()),
    )
    .await
    .unwrap();
    let runner = runner(vec![extension]);
    runner.shutdown().await;
    assert!(runner.extensions()[0].failure().is_some());
    let result = runner.tools()[0]
        .run(&tool_context(), json!({"text": "x"}))
        .await;
    assert!(result.is_error);
    assert!(
        result
            .text_content()
            .contains("the extension is not running"),
        "{}",
        result.text_content()
    );
}
