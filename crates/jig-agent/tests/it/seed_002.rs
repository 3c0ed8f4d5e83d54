//! Seed 002: a scripted model drives the real tools through the loop on a temp workspace —
//! read task.txt → edit it → verify with bash → final answer.
#![expect(
    clippy::disallowed_methods,
    reason = "the test sets up and checks a real workspace on the host"
)]

use std::path::PathBuf;
use std::sync::Arc;

use jig_agent::{Agent, AgentConfig, AgentObserver, RunEnd};
use jig_env_local::LocalEnv;
use jig_llm::scripted::{ScriptedProvider, ScriptedReply};
use jig_protocol::{Message, StopReason};
use jig_tool::ToolContext;
use jig_tool_builtins::{BuiltinsConfig, builtin_registry};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::Recorder;

#[tokio::test]
async fn read_edit_bash_final_on_a_temp_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let workspace: PathBuf = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(workspace.join("task.txt"), "status: draft\n").unwrap();

    let provider = Arc::new(ScriptedProvider::new([
        ScriptedReply::tool_call("read-1", "read", json!({"path": "task.txt"})),
        ScriptedReply::tool_call(
            "edit-1",
            "edit",
            json!({"path": "task.txt", "oldText": "status: draft", "newText": "status: done"}),
        ),
        ScriptedReply::tool_call(
            "bash-1",
            "bash",
            json!({"command": "grep -qx 'status: done' task.txt && printf verified"}),
        ),
        ScriptedReply::text("task.txt now says done."),
    ]));
    let tools = builtin_registry(&BuiltinsConfig::default());
    for name in ["read", "edit", "bash"] {
        assert!(
            tools.get(name).is_some(),
            "the {name} tool is not registered"
        );
    }
    let ctx = ToolContext::new(Arc::new(LocalEnv::new()), workspace.clone());
    let config = AgentConfig::new(
        provider.clone(),
        "scripted-model",
        "You are a test.",
        tools,
        ctx,
    );
    let mut agent = Agent::new(config);
    let recorder = Recorder::shared();
    let observer: Arc<dyn AgentObserver> = recorder.clone();
    let outcome = agent
        .run(
            Message::user_text("Mark the task as done and verify it."),
            &CancellationToken::new(),
            &observer,
        )
        .await;

    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(
        std::fs::read_to_string(workspace.join("task.txt")).unwrap(),
        "status: done\n"
    );

    let messages = agent.messages();
    let roles: Vec<&str> = messages.iter().map(Message::role).collect();
    assert_eq!(
        roles,
        vec![
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "toolResult",
            "assistant",
            "toolResult",
            "assistant"
        ]
    );
    // Each result pairs with the call just before it, by id and name.
    let mut pairs = Vec::new();
    for window in messages.windows(2) {
        if let (Message::Assistant(reply), Message::ToolResult(result)) = (&window[0], &window[1]) {
            let call = reply.tool_calls().next().unwrap();
            assert_eq!(
                (call.id.as_str(), call.name.as_str()),
                (result.tool_call_id.as_str(), result.tool_name.as_str())
            );
            assert!(!result.is_error, "{}: {}", result.tool_name, result.text());
            pairs.push((result.tool_call_id.clone(), result.text()));
        }
    }
    assert_eq!(pairs.len(), 3);
    assert!(
        pairs[0].1.contains("status: draft"),
        "read saw the draft: {}",
        pairs[0].1
    );
    assert_eq!(pairs[2].1, "verified");
    let final_reply = outcome.final_reply().unwrap();
    assert_eq!(final_reply.stop_reason, StopReason::Stop);
    assert_eq!(final_reply.text(), "task.txt now says done.");

    // One request per reply; each request already carried the previous results.
    let requests = provider.requests();
    assert_eq!(requests.len(), 4);
    for (index, request) in requests.iter().enumerate() {
        assert_eq!(request.messages.len(), 1 + 2 * index);
        assert_eq!(request.tools.len(), 7);
    }
    assert_eq!(provider.remaining(), 0);
}
