use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use async_trait::async_trait;
use jig_agent::{Agent, AgentConfig, AgentObserver, RunEnd, truncated_call_text};
use jig_env_memory::MemoryEnv;
use jig_llm::scripted::{ScriptedProvider, ScriptedReply};
use jig_protocol::{Message, StopReason, ToolCall, ToolResult};
use jig_tool::{BeforeToolCall, ErasedTool, ToolContext, ToolHooks, ToolRegistry};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::Recorder;
use crate::tools::{EchoTool, SerialTool, WhoTool};

fn config(provider: Arc<ScriptedProvider>, echo: &EchoTool) -> AgentConfig {
    let mut tools = ToolRegistry::new();
    tools.register(ErasedTool::shared(echo.clone()));
    tools.register(ErasedTool::shared(SerialTool(echo.clone())));
    let ctx = ToolContext::new(Arc::new(MemoryEnv::new()), PathBuf::from("/ws"));
    AgentConfig::new(provider, "scripted-model", "You are a test.", tools, ctx)
}

fn results(messages: &[Message]) -> Vec<(String, String, bool)> {
    messages
        .iter()
        .filter_map(Message::as_tool_result)
        .map(|r| (r.tool_call_id.clone(), r.text(), r.is_error))
        .collect()
}

fn roles(messages: &[Message]) -> Vec<&'static str> {
    messages.iter().map(Message::role).collect()
}

async fn run(agent: &mut Agent, recorder: &Arc<Recorder>) -> jig_agent::RunOutcome {
    let observer: Arc<dyn AgentObserver> = recorder.clone();
    agent
        .run(
            Message::user_text("go"),
            &CancellationToken::new(),
            &observer,
        )
        .await
}

#[tokio::test]
async fn unknown_tools_invalid_arguments_and_bad_json_get_error_results_and_the_loop_goes_on() {
    let mut cut = ScriptedReply::tool_call("c3", "echo", json!({}));
    if let ScriptedReply::Message(message) = &mut cut
        && let jig_protocol::AssistantBlock::ToolCall(call) = &mut message.content[0]
    {
        call.raw_arguments = Some("{\"text\": ".into());
    }
    let provider = Arc::new(ScriptedProvider::new([
        ScriptedReply::tool_calls(&[
            ("c1", "nope", json!({})),
            ("c2", "echo", json!({"text": 5})),
        ]),
        cut,
        ScriptedReply::text("done"),
    ]));
    let mut agent = Agent::new(config(provider.clone(), &EchoTool::default()));
    let outcome = run(&mut agent, &Recorder::shared()).await;
    assert_eq!(outcome.end, RunEnd::Completed);
    let results = results(agent.messages());
    assert_eq!(
        results[0],
        ("c1".into(), "Tool nope not found".into(), true)
    );
    assert!(
        results[1]
            .1
            .starts_with("Validation failed for tool \"echo\":"),
        "{}",
        results[1].1
    );
    assert!(results[1].2);
    insta::assert_snapshot!(results[2].1, @r#"
    Tool call "echo" was not executed: its arguments are not valid JSON.

    Received arguments:
    {"text": 

    Re-issue the tool call with a JSON object as arguments.
    "#);
    assert_eq!(provider.requests().len(), 3);
}

#[tokio::test]
async fn calls_in_one_reply_run_concurrently_and_results_keep_call_order() {
    let echo = EchoTool::default();
    let provider = Arc::new(ScriptedProvider::new([
        ScriptedReply::tool_calls(&[
            ("slow", "echo", json!({"text": "first", "delay_ms": 300})),
            ("fast", "echo", json!({"text": "second", "delay_ms": 10})),
        ]),
        ScriptedReply::text("done"),
    ]));
    let mut agent = Agent::new(config(provider, &echo));
    let recorder = Recorder::shared();
    run(&mut agent, &recorder).await;
    assert_eq!(echo.max_running.load(Ordering::SeqCst), 2);
    assert_eq!(
        results(agent.messages()),
        vec![
            ("slow".into(), "first".into(), false),
            ("fast".into(), "second".into(), false)
        ]
    );
    // tool_execution_end arrives in completion order: fast before slow.
    let ends: Vec<String> = recorder
        .events()
        .iter()
        .filter_map(|e| match e {
            jig_agent::AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                Some(tool_call_id.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(ends, vec!["fast", "slow"]);
}

#[tokio::test]
async fn a_sequential_tool_makes_the_whole_batch_run_one_at_a_time() {
    let echo = EchoTool::default();
    let provider = Arc::new(ScriptedProvider::new([
        ScriptedReply::tool_calls(&[
            ("a", "echo", json!({"text": "a", "delay_ms": 50})),
            ("b", "serial", json!({"text": "b", "delay_ms": 50})),
        ]),
        ScriptedReply::text("done"),
    ]));
    let mut agent = Agent::new(config(provider, &echo));
    run(&mut agent, &Recorder::shared()).await;
    assert_eq!(echo.max_running.load(Ordering::SeqCst), 1);
    assert_eq!(results(agent.messages()).len(), 2);
}

#[tokio::test]
async fn a_reply_cut_by_the_token_limit_runs_none_of_its_calls() {
    let echo = EchoTool::default();
    let provider = Arc::new(ScriptedProvider::new([
        ScriptedReply::tool_calls(&[
            ("a", "echo", json!({"text": "a"})),
            ("b", "echo", json!({"text": "b"})),
        ])
        .with_stop_reason(StopReason::Length),
        ScriptedReply::text("done"),
    ]));
    let mut agent = Agent::new(config(provider.clone(), &echo));
    let outcome = run(&mut agent, &Recorder::shared()).await;
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(echo.max_running.load(Ordering::SeqCst), 0, "no call ran");
    let results = results(agent.messages());
    assert_eq!(
        results,
        vec![
            ("a".into(), truncated_call_text("echo"), true),
            ("b".into(), truncated_call_text("echo"), true)
        ]
    );
    insta::assert_snapshot!(truncated_call_text("echo"), @r#"Tool call "echo" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments."#);
    assert_eq!(provider.requests().len(), 2);
}

struct Policy;

#[async_trait]
impl ToolHooks for Policy {
    async fn before_tool_call(&self, call: &ToolCall, ctx: &mut ToolContext) -> BeforeToolCall {
        match call.id.as_str() {
            "context" => {
                ctx.session_env.insert("HOOKED".into(), "yes".into());
                BeforeToolCall::Continue
            }
            "blocked" => BeforeToolCall::Block {
                reason: Some("echo is not allowed here".into()),
            },
            "silent" => BeforeToolCall::Block { reason: None },
            "changed" => BeforeToolCall::ChangeArguments(json!({"text": "rewritten"})),
            _ => BeforeToolCall::Continue,
        }
    }

    async fn after_tool_call(
        &self,
        call: &ToolCall,
        arguments: &Value,
        result: ToolResult,
    ) -> ToolResult {
        if call.id == "after" {
            return ToolResult::text(format!("{} (seen with {arguments})", result.text_content()));
        }
        result
    }
}

#[tokio::test]
async fn hooks_can_block_change_arguments_and_replace_results() {
    let echo = EchoTool::default();
    let provider = Arc::new(ScriptedProvider::new([
        ScriptedReply::tool_calls(&[
            ("blocked", "echo", json!({"text": "x"})),
            ("silent", "echo", json!({"text": "x"})),
            ("changed", "echo", json!({"text": "original"})),
            ("after", "echo", json!({"text": "y"})),
        ]),
        ScriptedReply::text("done"),
    ]));
    let mut config = config(provider, &echo);
    config.hooks = Arc::new(Policy);
    let mut agent = Agent::new(config);
    run(&mut agent, &Recorder::shared()).await;
    assert_eq!(
        results(agent.messages()),
        vec![
            ("blocked".into(), "echo is not allowed here".into(), true),
            ("silent".into(), "Tool execution was blocked".into(), true),
            ("changed".into(), "rewritten".into(), false),
            (
                "after".into(),
                "y (seen with {\"text\":\"y\"})".into(),
                false
            ),
        ]
    );
}

#[tokio::test]
async fn each_call_runs_in_a_context_naming_it_as_the_hooks_left_it() {
    let provider = Arc::new(ScriptedProvider::new([
        ScriptedReply::tool_calls(&[("context", "who", json!({})), ("plain", "who", json!({}))]),
        ScriptedReply::text("done"),
    ]));
    let mut config = config(provider, &EchoTool::default());
    config.tools.register(ErasedTool::shared(WhoTool));
    config.hooks = Arc::new(Policy);
    let mut agent = Agent::new(config);
    run(&mut agent, &Recorder::shared()).await;
    assert_eq!(
        results(agent.messages()),
        vec![
            ("context".into(), "context who yes".into(), false),
            ("plain".into(), "plain who -".into(), false),
        ]
    );
}

#[tokio::test]
async fn events_come_in_order_for_one_tool_turn() {
    let provider = Arc::new(ScriptedProvider::new([
        ScriptedReply::tool_call("a", "echo", json!({"text": "hi"})),
        ScriptedReply::text("done"),
    ]));
    let mut agent = Agent::new(config(provider, &EchoTool::default()));
    let recorder = Recorder::shared();
    run(&mut agent, &recorder).await;
    insta::assert_snapshot!(recorder.kinds().join("\n"));
    let mut last = serde_json::to_value(recorder.events().last().unwrap()).unwrap();
    assert!(last["durationMs"].as_u64().is_some(), "{last}");
    last["durationMs"] = json!(0);
    assert_eq!(
        last,
        json!({"type": "agent_end", "end": {"reason": "completed"}, "finalText": "done", "turns": 2,
            "usage": [{"provider": "scripted", "model": "scripted-model", "input": 20, "output": 10, "cacheRead": 0, "cacheWrite": 0, "cost": null}],
            "cost": null, "durationMs": 0})
    );
}

#[tokio::test]
async fn agent_end_prices_the_tokens_from_the_model_table() {
    let provider = Arc::new(ScriptedProvider::new([
        ScriptedReply::tool_call("a", "echo", json!({"text": "hi"})),
        ScriptedReply::text("done"),
    ]));
    let mut config = config(provider, &EchoTool::default());
    config.models = Arc::new(jig_llm::ModelTable::builtin().with_models(
        "scripted",
        [jig_llm::ModelInfo {
            id: "scripted-model".into(),
            context_window: None,
            cost: Some(jig_llm::ModelCost {
                input: 1_000.0,
                output: 2_000.0,
                cache_read: 0.0,
                cache_write: 0.0,
            }),
        }],
    ));
    let mut agent = Agent::new(config);
    let recorder = Recorder::shared();
    run(&mut agent, &recorder).await;
    let last = serde_json::to_value(recorder.events().last().unwrap()).unwrap();
    // 20 input tokens at $1000 per million, 10 output tokens at $2000 per million.
    assert_eq!(
        last["usage"][0]["cost"],
        json!({"input": 0.02, "output": 0.02, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 0.04})
    );
    assert_eq!(last["cost"], json!(0.04));
}

#[tokio::test]
async fn the_turn_limit_stops_a_model_that_keeps_calling_tools() {
    let provider = Arc::new(ScriptedProvider::new([
        ScriptedReply::tool_call("a", "echo", json!({"text": "1"})),
        ScriptedReply::tool_call("b", "echo", json!({"text": "2"})),
        ScriptedReply::text("never"),
    ]));
    let mut config = config(provider.clone(), &EchoTool::default());
    config.max_turns = Some(2);
    let mut agent = Agent::new(config);
    let outcome = run(&mut agent, &Recorder::shared()).await;
    assert_eq!(outcome.end, RunEnd::MaxTurns { max_turns: 2 });
    assert_eq!(outcome.turns, 2);
    assert_eq!(provider.requests().len(), 2);
    assert_eq!(
        roles(agent.messages()),
        vec!["user", "assistant", "toolResult", "assistant", "toolResult"]
    );
}

#[tokio::test]
async fn a_provider_error_ends_the_run_as_an_error_reply() {
    let provider = Arc::new(ScriptedProvider::new([ScriptedReply::Error(
        "Overloaded".into(),
    )]));
    let mut agent = Agent::new(config(provider, &EchoTool::default()));
    let outcome = run(&mut agent, &Recorder::shared()).await;
    assert_eq!(
        outcome.end,
        RunEnd::Error {
            message: "scripted reported an error: Overloaded".into()
        }
    );
    let reply = outcome.final_reply().unwrap();
    assert_eq!(reply.stop_reason, StopReason::Error);
}

#[tokio::test]
async fn abort_while_tools_run_cancels_them_and_pairs_every_call() {
    let echo = EchoTool::default();
    let provider = Arc::new(ScriptedProvider::new([
        ScriptedReply::tool_calls(&[
            ("long", "echo", json!({"text": "a", "delay_ms": 60_000})),
            ("short", "echo", json!({"text": "b"})),
            ("missing", "nope", json!({})),
        ]),
        ScriptedReply::text("never"),
    ]));
    let mut agent = Agent::new(config(provider.clone(), &echo));
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let observer: Arc<dyn AgentObserver> = Arc::new(move |event: &jig_agent::AgentEvent| {
        if matches!(event, jig_agent::AgentEvent::ToolExecutionEnd { tool_call_id, .. } if tool_call_id == "short")
        {
            trigger.cancel();
        }
    });
    let outcome = tokio::time::timeout(
        Duration::from_secs(10),
        agent.run(Message::user_text("go"), &cancel, &observer),
    )
    .await
    .expect("the abort must end the run");
    assert_eq!(outcome.end, RunEnd::Aborted);
    assert_eq!(
        results(agent.messages()),
        vec![
            ("long".into(), "Operation aborted".into(), true),
            ("short".into(), "b".into(), false),
            ("missing".into(), "Tool nope not found".into(), true),
        ]
    );
    assert_eq!(echo.running.load(Ordering::SeqCst), 0);
    assert_eq!(provider.requests().len(), 1, "no request after the abort");
}

#[tokio::test]
async fn abort_while_the_reply_streams_keeps_the_partial_reply_as_aborted() {
    let provider = Arc::new(ScriptedProvider::new([ScriptedReply::Hang(
        "thinking about".into(),
    )]));
    let mut agent = Agent::new(config(provider, &EchoTool::default()));
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let observer: Arc<dyn AgentObserver> = Arc::new(move |event: &jig_agent::AgentEvent| {
        if matches!(event, jig_agent::AgentEvent::MessageUpdate { .. }) {
            trigger.cancel();
        }
    });
    let outcome = tokio::time::timeout(
        Duration::from_secs(10),
        agent.run(Message::user_text("go"), &cancel, &observer),
    )
    .await
    .unwrap();
    assert_eq!(outcome.end, RunEnd::Aborted);
    let reply = outcome.final_reply().unwrap();
    assert_eq!(reply.stop_reason, StopReason::Aborted);
    assert_eq!(reply.text(), "thinking about");
    assert_eq!(reply.error_message.as_deref(), Some("Operation aborted"));
}

fn fast_retry(max_retries: u32) -> jig_llm::RetryPolicy {
    jig_llm::RetryPolicy {
        max_retries,
        initial_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
    }
}

#[tokio::test]
async fn an_overloaded_stream_before_any_content_is_requested_again() {
    let provider = Arc::new(ScriptedProvider::new([
        ScriptedReply::StreamError("Overloaded (overloaded_error)".into()),
        ScriptedReply::StreamError("Overloaded (overloaded_error)".into()),
        ScriptedReply::text("done"),
    ]));
    let mut config = config(provider.clone(), &EchoTool::default());
    config.stream_retry = fast_retry(2);
    let mut agent = Agent::new(config);
    let outcome = run(&mut agent, &Recorder::shared()).await;
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(provider.requests().len(), 3);
    assert_eq!(roles(agent.messages()), vec!["user", "assistant"]);
}

#[tokio::test]
async fn stream_retries_give_up_with_the_last_error() {
    let provider = Arc::new(ScriptedProvider::new([
        ScriptedReply::StreamError("Overloaded (overloaded_error)".into()),
        ScriptedReply::StreamError("Overloaded (overloaded_error)".into()),
        ScriptedReply::text("never"),
    ]));
    let mut config = config(provider.clone(), &EchoTool::default());
    config.stream_retry = fast_retry(1);
    let mut agent = Agent::new(config);
    let outcome = run(&mut agent, &Recorder::shared()).await;
    assert_eq!(
        outcome.end,
        RunEnd::Error {
            message:
                "scripted reported an error: Overloaded (overloaded_error) (gave up after 1 retry)"
                    .into()
        }
    );
    assert_eq!(provider.requests().len(), 2);
}

#[tokio::test]
async fn a_stream_error_that_is_not_transient_is_not_retried() {
    let provider = Arc::new(ScriptedProvider::new([
        ScriptedReply::StreamError("prompt is too long (invalid_request_error)".into()),
        ScriptedReply::text("never"),
    ]));
    let mut config = config(provider.clone(), &EchoTool::default());
    config.stream_retry = fast_retry(3);
    let mut agent = Agent::new(config);
    let outcome = run(&mut agent, &Recorder::shared()).await;
    assert!(matches!(outcome.end, RunEnd::Error { .. }));
    assert_eq!(provider.requests().len(), 1);
}
