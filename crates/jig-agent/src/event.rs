//! [`AgentEvent`]s, what observers see of a run, and how a run ended.

use jig_llm::{Cost, ModelTable, RetryNotice, StreamEvent};
use jig_protocol::{AssistantMessage, Message, ToolResult, ToolResultMessage, Usage};
use serde::Serialize;
use serde_json::Value;

use crate::compaction::CompactionReason;

/// What happens during a run, in order, for observers (the JSON output mode, extensions, the
/// MCP layer). Serialised as one JSON object with a snake_case `type` and camelCase fields.
///
/// Order of one run: `agent_start`; `message_start`/`message_end` for the prompt; then per turn
/// `turn_start`, the assistant `message_start`, `message_update`* (one per streamed delta),
/// `message_end`, for each tool call `tool_execution_start`, `tool_execution_update`*,
/// `tool_execution_end` (completion order when calls run concurrently), the tool results'
/// `message_start`/`message_end` (call order), `turn_end`; finally `agent_end`. A `retry` comes
/// before each repeated model request; a `compaction` comes before the `turn_start` of the
/// request it shortens. After a context-overflow error the refused reply's `message_start` has no
/// `message_end` (the reply is not part of the conversation): `compaction` follows, then the
/// `message_start` of the request sent again.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum AgentEvent {
    /// The run begins.
    AgentStart,
    /// A model request is about to be made.
    #[serde(rename_all = "camelCase")]
    TurnStart {
        /// 0-based turn number within the run.
        turn_index: u32,
    },
    /// A message begins: the prompt, a reply about to stream (empty), or a tool result.
    MessageStart {
        /// The message (for a reply: what exists so far).
        message: Message,
    },
    /// One streamed piece of the reply.
    MessageUpdate {
        /// The delta.
        delta: StreamEvent,
    },
    /// A message is complete and part of the conversation.
    MessageEnd {
        /// The final message.
        message: Message,
    },
    /// A tool call begins (also for calls that fail at once: unknown tool, blocked, …).
    #[serde(rename_all = "camelCase")]
    ToolExecutionStart {
        /// The call id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// The arguments as the model sent them.
        args: Value,
    },
    /// A partial result of a running call (bash's output so far).
    #[serde(rename_all = "camelCase")]
    ToolExecutionUpdate {
        /// The call id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// The partial result.
        partial_result: ToolResult,
    },
    /// A tool call finished.
    #[serde(rename_all = "camelCase")]
    ToolExecutionEnd {
        /// The call id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// The final result (after the `after_tool_call` hook).
        result: ToolResult,
        /// Whether it failed.
        is_error: bool,
    },
    /// A turn is over: the reply and the results of its calls.
    #[serde(rename_all = "camelCase")]
    TurnEnd {
        /// The turn number.
        turn_index: u32,
        /// The reply.
        message: AssistantMessage,
        /// Its tool results, in call order.
        tool_results: Vec<ToolResultMessage>,
    },
    /// A failed model request is about to be sent again (after `delayMs`).
    Retry(RetryNotice),
    /// The older part of the conversation was replaced by a summary for the model (before the
    /// next model request).
    #[serde(rename_all = "camelCase")]
    Compaction {
        /// Why.
        reason: CompactionReason,
        /// The summary the model is sent from now on.
        summary: String,
        /// Input tokens of the last request before the compaction (`None` when unknown).
        tokens_before: Option<u64>,
        /// Messages of the conversation the summary replaces (all before the kept ones).
        summarised_messages: usize,
        /// The most recent messages kept verbatim.
        kept_messages: usize,
        /// Tokens of the summarisation request.
        usage: Usage,
    },
    /// The run is over.
    #[serde(rename_all = "camelCase")]
    AgentEnd {
        /// How it ended.
        end: RunEnd,
        /// The text of the last reply (`None` when the run made none).
        final_text: Option<String>,
        /// Model requests made.
        turns: u32,
        /// Tokens used and their cost, per provider and model, in order of first use
        /// (summarisation requests of compactions included).
        usage: Vec<ModelUsage>,
        /// What the run cost in US dollars, from the model table; `None` (`null`) when the price
        /// of a model used is unknown.
        cost: Option<f64>,
        /// Wall time of the run in milliseconds.
        duration_ms: u64,
    },
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "camelCase")]
pub enum RunEnd {
    /// The model stopped calling tools.
    Completed,
    /// The turn limit was reached while the model still called tools.
    #[serde(rename_all = "camelCase")]
    MaxTurns {
        /// The limit.
        max_turns: u32,
    },
    /// The run was cancelled.
    Aborted,
    /// A request failed or a tool failed beyond what the model can fix.
    Error {
        /// What went wrong.
        message: String,
    },
}

impl RunEnd {
    /// True for `Completed`.
    pub fn is_success(&self) -> bool {
        *self == Self::Completed
    }
}

/// The tokens one model used in a run, and what they cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelUsage {
    /// The provider's name.
    pub provider: String,
    /// The model id.
    pub model: String,
    /// Input tokens not served from a cache.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write: u64,
    /// What these tokens cost in US dollars, from the model table; `None` (`null`) when the
    /// model's price is unknown.
    pub cost: Option<Cost>,
}

/// The cost of a whole run: the sum of `usage`'s costs, or `None` when one of them is unknown.
pub fn total_cost(usage: &[ModelUsage]) -> Option<f64> {
    usage
        .iter()
        .map(|model| model.cost.map(|cost| cost.total))
        .sum()
}

/// Sums the usage of `messages`' replies per provider and model and prices it from `models`.
pub fn usage_by_model(messages: &[Message], models: &ModelTable) -> Vec<ModelUsage> {
    let mut totals: Vec<ModelUsage> = Vec::new();
    for reply in messages.iter().filter_map(Message::as_assistant) {
        let known = totals
            .iter()
            .position(|u| u.provider == reply.provider && u.model == reply.model);
        let index = known.unwrap_or_else(|| {
            totals.push(ModelUsage {
                provider: reply.provider.clone(),
                model: reply.model.clone(),
                input: 0,
                output: 0,
                cache_read: 0,
                cache_write: 0,
                cost: None,
            });
            totals.len() - 1
        });
        let total = &mut totals[index];
        total.input += reply.usage.input;
        total.output += reply.usage.output;
        total.cache_read += reply.usage.cache_read;
        total.cache_write += reply.usage.cache_write;
    }
    for total in &mut totals {
        let usage = Usage {
            input: total.input,
            output: total.output,
            cache_read: total.cache_read,
            cache_write: total.cache_write,
        };
        total.cost = models
            .cost(&total.provider, &total.model)
            .map(|prices| prices.of(&usage));
    }
    totals
}

/// Receives a run's events. Called from the loop and from running tools (for updates), so it
/// must be cheap and thread-safe; it must not block for long.
pub trait AgentObserver: Send + Sync {
    /// One event.
    fn on_event(&self, event: &AgentEvent);
}

impl<F: Fn(&AgentEvent) + Send + Sync> AgentObserver for F {
    fn on_event(&self, event: &AgentEvent) {
        self(event);
    }
}

/// An observer that ignores everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoObserver;

impl AgentObserver for NoObserver {
    fn on_event(&self, _event: &AgentEvent) {}
}
