//! Compaction with a scripted provider: a long tool-calling session crosses the threshold
//! repeatedly; a context-overflow error is recovered by one compaction and a retry.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use jig_agent::compaction::{
    CompactionConfig, CompactionReason, SUMMARY_INSTRUCTION, cut_point, is_context_overflow,
    transcript,
};
use jig_agent::{Agent, AgentConfig, AgentEvent, AgentObserver, RunEnd};
use jig_env_memory::MemoryEnv;
use jig_llm::ModelRequest;
use jig_llm::scripted::{ScriptedProvider, ScriptedReply};
use jig_protocol::Message;
use jig_tool::{ErasedTool, ToolContext, ToolRegistry};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::Recorder;
use crate::tools::EchoTool;

fn config(provider: Arc<ScriptedProvider>, window: u64) -> AgentConfig {
    let mut tools = ToolRegistry::new();
    tools.register(ErasedTool::shared(EchoTool::default()));
    let ctx = ToolContext::new(Arc::new(MemoryEnv::new()), PathBuf::from("/ws"));
    let mut config = AgentConfig::new(provider, "scripted-model", "You are a test.", tools, ctx);
    config.compaction = Some(CompactionConfig::for_window(window));
    config
}

fn with_input(reply: ScriptedReply, input: u64) -> ScriptedReply {
    match reply {
        ScriptedReply::Message(mut message) => {
            message.usage.input = input;
            ScriptedReply::Message(message)
        }
        other => other,
    }
}

/// Every tool call in `messages` is followed by its result, and every result follows its call.
fn assert_paired(messages: &[Message]) {
    let mut open: HashSet<String> = HashSet::new();
    let mut seen: HashSet<String> = HashSet::new();
    for message in messages {
        match message {
            Message::Assistant(reply) => {
                assert!(open.is_empty(), "calls without results: {open:?}");
                for call in reply.tool_calls() {
                    open.insert(call.id.clone());
                    seen.insert(call.id.clone());
                }
            }
            Message::ToolResult(result) => {
                assert!(
                    open.remove(&result.tool_call_id),
                    "result {} without its call",
                    result.tool_call_id
                );
            }
            Message::User(_) => assert!(open.is_empty(), "calls without results: {open:?}"),
        }
    }
    assert!(open.is_empty(), "calls without results: {open:?}");
}

fn first_text(message: &Message) -> String {
    match message {
        Message::User(user) => jig_protocol::ContentBlock::join_text(&user.content),
        Message::Assistant(reply) => reply.text(),
        Message::ToolResult(result) => result.text(),
    }
}

fn is_summary_request(request: &ModelRequest) -> bool {
    request.system_prompt == SUMMARY_INSTRUCTION
}

#[tokio::test]
async fn a_200_turn_session_compacts_twice_and_keeps_every_call_with_its_result() {
    // Window 10 000, threshold 80 %: each turn reports 100 more input tokens than the last, from
    // 1 000 after a compaction; the reply reporting 8 000 makes the next request compact first.
    let mut replies = Vec::new();
    let mut since = 0u64;
    let mut compactions = 0;
    for turn in 0..200 {
        let input = 1_000 + 100 * since;
        replies.push(with_input(
            ScriptedReply::tool_call(
                &format!("call{turn}"),
                "echo",
                json!({"text": format!("t{turn}")}),
            ),
            input,
        ));
        since += 1;
        if input >= 8_000 {
            compactions += 1;
            replies.push(ScriptedReply::text(&format!("SUMMARY {compactions}")));
            since = 0;
        }
    }
    replies.push(ScriptedReply::text("all done"));
    assert_eq!(compactions, 2, "the script crosses the threshold twice");

    let provider = Arc::new(ScriptedProvider::new(replies));
    let recorder = Recorder::shared();
    let observer: Arc<dyn AgentObserver> = recorder.clone();
    let mut agent = Agent::new(config(provider.clone(), 10_000));
    let outcome = agent
        .run(
            Message::user_text("go"),
            &CancellationToken::new(),
            &observer,
        )
        .await;
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(outcome.turns, 201);
    assert_eq!(provider.remaining(), 0);
    // The conversation keeps everything: the prompt, 200 calls with results, the final reply.
    assert_eq!(agent.messages().len(), 1 + 200 * 2 + 1);
    assert_paired(agent.messages());

    let events: Vec<(CompactionReason, Option<u64>, usize, usize)> = recorder
        .events()
        .into_iter()
        .filter_map(|event| match event {
            AgentEvent::Compaction {
                reason,
                tokens_before,
                summarised_messages,
                kept_messages,
                ..
            } => Some((reason, tokens_before, summarised_messages, kept_messages)),
            _ => None,
        })
        .collect();
    assert_eq!(events.len(), 2, "{events:?}");
    for (reason, tokens_before, _, kept) in &events {
        assert_eq!(*reason, CompactionReason::Threshold);
        assert_eq!(*tokens_before, Some(8_000));
        // The last 4 replies with their results.
        assert_eq!(*kept, 4 * 2);
    }

    let requests = provider.requests();
    let summary_at: Vec<usize> = (0..requests.len())
        .filter(|&i| is_summary_request(&requests[i]))
        .collect();
    assert_eq!(summary_at.len(), 2);
    for (n, &index) in summary_at.iter().enumerate() {
        let summarise = first_text(&requests[index].messages[0]);
        assert!(requests[index].tools.is_empty());
        if n == 1 {
            assert!(
                summarise.contains("SUMMARY 1"),
                "the second summary builds on the first"
            );
        }
        let after = &requests[index + 1];
        assert!(!is_summary_request(after));
        let head = first_text(&after.messages[0]);
        assert!(
            head.contains(&format!("SUMMARY {}", n + 1)),
            "the request after a compaction starts with its summary: {head}"
        );
        assert_paired(&after.messages[1..]);
        assert!(
            matches!(after.messages[1], Message::User(_) | Message::Assistant(_)),
            "kept turns start at a user message or a reply"
        );
        assert!(after.messages.len() < 20, "{}", after.messages.len());
    }
    // Every request is well formed, before and after the compactions.
    for request in requests.iter().filter(|r| !is_summary_request(r)) {
        assert_paired(&request.messages);
    }
    assert_eq!(agent.summary(), Some("SUMMARY 2"));
}

#[tokio::test]
async fn a_context_overflow_error_compacts_once_and_sends_the_request_again() {
    let mut replies = Vec::new();
    for turn in 0..6 {
        replies.push(ScriptedReply::tool_call(
            &format!("c{turn}"),
            "echo",
            json!({"text": "x"}),
        ));
    }
    replies.push(ScriptedReply::Error(
        "openai returned HTTP 400: This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. (invalid_request_error)".to_owned(),
    ));
    replies.push(ScriptedReply::text("THE SUMMARY"));
    replies.push(ScriptedReply::text("finished"));
    let provider = Arc::new(ScriptedProvider::new(replies));
    let recorder = Recorder::shared();
    let observer: Arc<dyn AgentObserver> = recorder.clone();
    let mut agent = Agent::new(config(provider.clone(), 1_000_000));
    let outcome = agent
        .run(
            Message::user_text("go"),
            &CancellationToken::new(),
            &observer,
        )
        .await;
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(outcome.final_reply().unwrap().text(), "finished");
    // The failed reply is not part of the conversation.
    assert_eq!(agent.messages().len(), 1 + 6 * 2 + 1);
    let requests = provider.requests();
    assert_eq!(requests.len(), 9);
    assert!(is_summary_request(&requests[7]));
    let retry = &requests[8];
    assert!(first_text(&retry.messages[0]).contains("THE SUMMARY"));
    assert_paired(&retry.messages[1..]);
    assert!(retry.messages.len() < requests[6].messages.len());
    let reasons: Vec<CompactionReason> = recorder
        .events()
        .into_iter()
        .filter_map(|event| match event {
            AgentEvent::Compaction { reason, .. } => Some(reason),
            _ => None,
        })
        .collect();
    assert_eq!(reasons, vec![CompactionReason::Overflow]);
    // 6 calls, the summary and the final reply, 10 input and 5 output tokens each.
    let usage = recorder
        .events()
        .into_iter()
        .find_map(|event| match event {
            AgentEvent::AgentEnd { usage, .. } => Some(usage),
            _ => None,
        })
        .unwrap();
    assert_eq!((usage[0].input, usage[0].output), (80, 40));
}

#[tokio::test]
async fn a_second_overflow_after_compacting_ends_the_run_with_the_error() {
    let overflow =
        "anthropic returned HTTP 400: prompt is too long: 210000 tokens > 200000 maximum";
    let mut replies = Vec::new();
    for turn in 0..6 {
        replies.push(ScriptedReply::tool_call(
            &format!("c{turn}"),
            "echo",
            json!({"text": "x"}),
        ));
    }
    replies.push(ScriptedReply::Error(overflow.to_owned()));
    replies.push(ScriptedReply::text("THE SUMMARY"));
    replies.push(ScriptedReply::Error(overflow.to_owned()));
    let provider = Arc::new(ScriptedProvider::new(replies));
    let mut agent = Agent::new(config(provider.clone(), 1_000_000));
    let observer: Arc<dyn AgentObserver> = Recorder::shared();
    let outcome = agent
        .run(
            Message::user_text("go"),
            &CancellationToken::new(),
            &observer,
        )
        .await;
    let RunEnd::Error { message } = outcome.end else {
        panic!("{:?}", outcome.end)
    };
    assert!(message.contains("prompt is too long"), "{message}");
    assert_eq!(provider.remaining(), 0);
}

#[tokio::test]
async fn a_failed_summary_ends_the_run_and_leaves_the_conversation_whole() {
    let mut replies = vec![with_input(
        ScriptedReply::tool_call("a", "echo", json!({"text": "x"})),
        10,
    )];
    replies.push(with_input(
        ScriptedReply::tool_call("b", "echo", json!({"text": "x"})),
        900,
    ));
    // The summarisation request fails.
    replies.push(ScriptedReply::Error("server exploded".to_owned()));
    let provider = Arc::new(ScriptedProvider::new(replies));
    let mut agent = Agent::new(config(provider.clone(), 1_000));
    let observer: Arc<dyn AgentObserver> = Recorder::shared();
    let outcome = agent
        .run(
            Message::user_text("go"),
            &CancellationToken::new(),
            &observer,
        )
        .await;
    assert_eq!(
        outcome.end,
        RunEnd::Error {
            message: "context compaction failed: scripted reported an error: server exploded"
                .into()
        }
    );
    assert_eq!(agent.summary(), None);
    assert_eq!(agent.context().len(), agent.messages().len());
}

#[test]
fn cuts_fall_only_before_user_messages_and_replies() {
    let call = |id: &str| {
        let ScriptedReply::Message(message) =
            ScriptedReply::tool_call(id, "echo", json!({"text": "x"}))
        else {
            unreachable!()
        };
        Message::Assistant(message)
    };
    let result = |id: &str| {
        Message::ToolResult(jig_protocol::ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "echo".into(),
            content: vec![jig_protocol::ContentBlock::text("ok")],
            details: serde_json::Value::Null,
            is_error: false,
            timestamp: 0,
        })
    };
    let messages = vec![
        Message::user_text("go"),
        call("a"),
        result("a"),
        call("b"),
        result("b"),
        Message::user_text("more"),
        call("c"),
        result("c"),
    ];
    // Keep 1 reply: it was asked for by the user message right before it.
    assert_eq!(cut_point(&messages, 1), Some(5));
    assert_eq!(cut_point(&messages, 2), Some(3));
    assert_eq!(
        cut_point(&messages, 3),
        None,
        "nothing older than the kept turns"
    );
    assert_eq!(cut_point(&messages[..1], 1), None);
    // Fewer replies than asked to keep: only the latest exchange is kept.
    assert_eq!(cut_point(&messages, 4), Some(5));
}

#[test]
fn a_transcript_longer_than_allowed_leaves_out_its_oldest_part_but_keeps_the_summary() {
    let messages: Vec<Message> = (0..50)
        .map(|i| Message::user_text(format!("message number {i:02}")))
        .collect();
    let whole = transcript(Some("EARLIER"), &messages, usize::MAX);
    assert!(whole.contains("message number 00") && whole.contains("message number 49"));
    let short = transcript(Some("EARLIER"), &messages, 200);
    assert!(
        short.starts_with(
            "[summary of the conversation before this]\nEARLIER\n\n[… the oldest part"
        )
    );
    assert!(short.contains("message number 49"));
    assert!(!short.contains("message number 00"));
    assert!(short.chars().count() < 400);
}

#[test]
fn known_models_have_windows_and_overflow_messages_are_recognised() {
    let table = jig_llm::ModelTable::builtin();
    let context_window = |model| table.context_window("anthropic", model);
    assert_eq!(context_window("claude-sonnet-4-5"), Some(200_000));
    assert_eq!(context_window("anthropic/claude-sonnet-4.5"), Some(200_000));
    assert_eq!(context_window("gpt-4.1"), Some(1_047_576));
    assert_eq!(context_window("gpt-4.1-mini"), Some(1_047_576));
    assert_eq!(context_window("gpt-4o-mini"), Some(128_000));
    assert_eq!(context_window("gpt-4"), Some(8_192));
    assert_eq!(context_window("qwen3-coder"), None);
    assert!(is_context_overflow(
        "openai returned HTTP 400: This model's maximum context length is 128000 tokens"
    ));
    assert!(is_context_overflow(
        "anthropic returned HTTP 400: prompt is too long: 201000 tokens > 200000 maximum (invalid_request_error)"
    ));
    assert!(!is_context_overflow(
        "openai returned HTTP 429: Rate limit reached"
    ));
    assert_eq!(CompactionConfig::for_window(10_000).limit(), 8_000);
}

#[tokio::test]
async fn a_first_turn_over_the_threshold_goes_on_without_compacting() {
    let provider = Arc::new(ScriptedProvider::new([
        with_input(
            ScriptedReply::tool_call("a", "echo", json!({"text": "x"})),
            950,
        ),
        ScriptedReply::text("done"),
    ]));
    let recorder = Recorder::shared();
    let observer: Arc<dyn AgentObserver> = recorder.clone();
    let mut agent = Agent::new(config(provider.clone(), 1_000));
    let outcome = agent
        .run(
            Message::user_text("go"),
            &CancellationToken::new(),
            &observer,
        )
        .await;
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(provider.requests().len(), 2);
    assert!(!recorder.kinds().iter().any(|kind| kind == "compaction"));
}
