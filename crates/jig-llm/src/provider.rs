use std::fmt;
use std::pin::Pin;
use std::str::FromStr;

use async_trait::async_trait;
use futures::Stream;
use jig_protocol::{Message, StopReason, Usage};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::LlmError;

/// A tool as a model sees it: name, description and JSON Schema of its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDefinition {
    /// The tool's wire name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub input_schema: Value,
}

/// How much the model should reason before answering, where the API supports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
    /// No extended reasoning requested.
    #[default]
    Off,
    /// A little.
    Low,
    /// A moderate amount.
    Medium,
    /// A lot.
    High,
}

impl ThinkingLevel {
    /// The level's name (`off`, `low`, `medium`, `high`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}

impl fmt::Display for ThinkingLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ThinkingLevel {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "off" => Ok(Self::Off),
            "low" => Ok(Self::Low),
            "medium" => Ok(Self::Medium),
            "high" => Ok(Self::High),
            other => Err(format!(
                "invalid thinking level \"{other}\"; valid values: off, low, medium, high"
            )),
        }
    }
}

/// A failed attempt that is about to be retried.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RetryNotice {
    /// 1 for the first retry.
    pub attempt: u32,
    /// The most retries that will be made.
    pub max_retries: u32,
    /// The wait before this retry, in milliseconds.
    pub delay_ms: u64,
    /// Why the attempt failed (`HTTP 503: Overloaded`, `connection failed: …`).
    pub reason: String,
}

/// Told about each retry before its wait (progress output, `retry` events).
#[derive(Clone)]
pub struct RetryHook(pub std::sync::Arc<dyn Fn(&RetryNotice) + Send + Sync>);

impl RetryHook {
    /// Calls the hook.
    pub fn notify(&self, notice: &RetryNotice) {
        (self.0)(notice);
    }
}

impl fmt::Debug for RetryHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RetryHook")
    }
}

impl PartialEq for RetryHook {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// One request to a model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    /// The model id (`gpt-4.1`, `claude-sonnet-4-5`, …).
    pub model: String,
    /// The system prompt.
    pub system_prompt: String,
    /// The conversation so far (repaired with [`prepare_messages`](crate::prepare_messages)
    /// by the providers before sending).
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: Vec<ToolDefinition>,
    /// Requested reasoning effort.
    pub thinking: ThinkingLevel,
    /// Output-token limit; `None` uses the provider's default.
    pub max_output_tokens: Option<u32>,
    /// Told about each retry of a failed request.
    pub on_retry: Option<RetryHook>,
    /// Whether a failed request is retried as the provider's configuration says (`false`:
    /// the first failure is the answer).
    pub retry: bool,
}

/// One event of a streamed reply. Text and thinking deltas extend the last block of the same
/// kind; tool calls are keyed by a provider-chosen `index`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum StreamEvent {
    /// More visible text.
    #[serde(rename_all = "camelCase")]
    TextDelta {
        /// The new text.
        text: String,
    },
    /// More reasoning text.
    #[serde(rename_all = "camelCase")]
    ThinkingDelta {
        /// The new reasoning text.
        text: String,
    },
    /// The signature of the current thinking block (Anthropic).
    #[serde(rename_all = "camelCase")]
    ThinkingSignature {
        /// The opaque signature.
        signature: String,
    },
    /// A tool call begins.
    #[serde(rename_all = "camelCase")]
    ToolCallStart {
        /// The provider's index for this call within the reply.
        index: usize,
        /// The call id.
        id: String,
        /// The tool name.
        name: String,
    },
    /// More argument text (a piece of JSON) for the call at `index`.
    #[serde(rename_all = "camelCase")]
    ToolCallDelta {
        /// The call's index.
        index: usize,
        /// The next piece of the arguments' JSON text.
        arguments: String,
    },
    /// Token accounting so far (replaces earlier usage events).
    Usage {
        /// The counts.
        usage: Usage,
    },
    /// The reply is complete.
    #[serde(rename_all = "camelCase")]
    Stop {
        /// Why it ended.
        stop_reason: StopReason,
    },
}

/// The events of one reply, ending after [`StreamEvent::Stop`] or an error.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, LlmError>> + Send>>;

/// A model API that streams replies.
///
/// `stream` sends the request (retrying on rate limits and server errors as the implementation
/// documents) and returns the reply's events. An error before the reply starts is returned
/// directly; an error during streaming is the stream's last item. Dropping the stream closes the
/// connection. `cancel` interrupts the request and any retry wait ([`LlmError::Aborted`]).
///
/// # Implementing
/// Convert [`ModelRequest::messages`] with [`prepare_messages`](crate::prepare_messages) first
/// so every tool call is paired; emit deltas as they arrive, `Usage` whenever the API reports
/// it, and exactly one `Stop` at the end. A stream that ends without a `Stop` is an error.
#[async_trait]
pub trait Provider: Send + Sync + fmt::Debug {
    /// The provider's name as recorded in messages (`openai`, `anthropic`, …).
    fn name(&self) -> &str;

    /// Sends `request` and streams the reply.
    async fn stream(
        &self,
        request: ModelRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, LlmError>;
}
