//! `TurnHooks`: queued messages (steering, follow-ups), active tools, the context sent, finished
//! messages replaced, compactions cancelled.
#![expect(
    clippy::unwrap_used,
    reason = "test hooks panic when a lock is poisoned"
)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use jig_agent::compaction::CompactionReason;
use jig_agent::{Agent, AgentConfig, AgentObserver, CompactError, RunEnd, TurnHooks};
use jig_env_memory::MemoryEnv;
use jig_llm::scripted::{ScriptedProvider, ScriptedReply};
use jig_protocol::{AssistantBlock, Message};
use jig_tool::{ErasedTool, ToolContext, ToolRegistry};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::Recorder;
use crate::tools::{EchoTool, SerialTool};

#[derive(Default)]
struct Hooks {
    steering_calls: AtomicUsize,
    follow_up: Mutex<Option<Message>>,
    contexts: Mutex<Vec<usize>>,
    cancel: bool,
}

#[async_trait]
impl TurnHooks for Hooks {
    fn take_steering(&self) -> Vec<Message> {
        // The second time: before the request after the first tool call.
        if self.steering_calls.fetch_add(1, Ordering::SeqCst) == 1 {
            vec![Message::user_text("steer")]
        } else {
            Vec::new()
        }
    }

    fn take_follow_ups(&self) -> Vec<Message> {
        self.follow_up.lock().unwrap().take().into_iter().collect()
    }

    fn active_tools(&self) -> Option<Vec<String>> {
        Some(vec!["echo".to_owned()])
    }

    async fn context(&self, messages: Vec<Message>) -> Vec<Message> {
        self.contexts.lock().unwrap().push(messages.len());
        messages
    }

    async fn message_end(&self, message: Message) -> Message {
        match message {
            Message::Assistant(mut reply) => {
                for block in &mut reply.content {
                    if let AssistantBlock::Text { text } = block {
                        *text = text.to_uppercase();
                    }
                }
                Message::Assistant(reply)
            }
            other => other,
        }
    }

    async fn cancel_compaction(&self, _reason: CompactionReason) -> bool {
        self.cancel
    }
}

fn config(provider: Arc<ScriptedProvider>, hooks: Arc<Hooks>) -> AgentConfig {
    let echo = EchoTool::default();
    let mut tools = ToolRegistry::new();
    tools.register(ErasedTool::shared(echo.clone()));
    tools.register(ErasedTool::shared(SerialTool(echo)));
    let ctx = ToolContext::new(Arc::new(MemoryEnv::new()), PathBuf::from("/ws"));
    let mut config = AgentConfig::new(provider, "scripted-model", "You are a test.", tools, ctx);
    config.turn_hooks = hooks;
    config
}

fn last_text(messages: &[Message]) -> String {
    match messages.last() {
        Some(Message::User(user)) => user
            .content
            .iter()
            .filter_map(|block| match block {
                jig_protocol::ContentBlock::Text { text } => Some(text.as_str()),
                jig_protocol::ContentBlock::Image { .. } => None,
            })
            .collect(),
        other => panic!("not a user message: {other:?}"),
    }
}

#[tokio::test]
async fn steering_goes_before_the_next_request_and_follow_ups_keep_the_run_going() {
    let provider = Arc::new(ScriptedProvider::new([
        ScriptedReply::tool_call("c1", "echo", json!({"text": "x"})),
        ScriptedReply::text("a"),
        ScriptedReply::text("b"),
    ]));
    let hooks = Arc::new(Hooks {
        follow_up: Mutex::new(Some(Message::user_text("more"))),
        ..Hooks::default()
    });
    let mut agent = Agent::new(config(provider.clone(), Arc::clone(&hooks)));
    let observer: Arc<dyn AgentObserver> = Recorder::shared();
    let outcome = agent
        .run(
            Message::user_text("go"),
            &CancellationToken::new(),
            &observer,
        )
        .await;
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(
        outcome.final_reply().unwrap().text(),
        "B",
        "message_end replaced it"
    );
    let roles: Vec<&str> = agent.messages().iter().map(Message::role).collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "toolResult",
            "user",
            "assistant",
            "user",
            "assistant"
        ]
    );
    let requests = provider.requests();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        let offered: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(offered, ["echo"], "only the active tools");
    }
    assert_eq!(last_text(&requests[1].messages), "steer");
    assert_eq!(last_text(&requests[2].messages), "more");
    assert_eq!(*hooks.contexts.lock().unwrap(), [1, 4, 6]);
}

#[tokio::test]
async fn a_hook_cancels_a_compaction() {
    let provider = Arc::new(ScriptedProvider::new([]));
    let hooks = Arc::new(Hooks {
        cancel: true,
        ..Hooks::default()
    });
    let mut agent = Agent::new(config(provider.clone(), hooks));
    let observer: Arc<dyn AgentObserver> = Recorder::shared();
    let result = agent
        .compact(
            CompactionReason::Manual,
            &CancellationToken::new(),
            &observer,
        )
        .await;
    assert_eq!(result, Err(CompactError::Cancelled));
    assert!(provider.requests().is_empty());
}
