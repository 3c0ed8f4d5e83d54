//! [`ToolHooks`]: how hosts and extensions plug into every tool call; [`TurnHooks`]: into every
//! model request and finished message.

use async_trait::async_trait;
use jig_protocol::{Message, ToolCall, ToolResult};

use crate::compaction::CompactionReason;
use serde_json::Value;

/// What a `before_tool_call` hook decided.
#[derive(Debug, Clone, PartialEq)]
pub enum BeforeToolCall {
    /// Run the call as requested.
    Continue,
    /// Run the call with these arguments instead (they are validated like the model's).
    ChangeArguments(Value),
    /// Do not run the call; the model sees an error result with `reason` (or
    /// `Tool execution was blocked`).
    Block {
        /// Why, for the model.
        reason: Option<String>,
    },
}

/// The text of a blocked call's result when the hook gave no reason.
pub const BLOCKED_TEXT: &str = "Tool execution was blocked";

/// Host-supplied hooks around every tool call: how extensions, approval prompts and policies plug
/// into the loop.
///
/// `before_tool_call` runs after the tool was found and before it runs, one call at a time in
/// call order (also when calls then run concurrently); it sees the arguments as the model sent
/// them, and validation against the tool's schema happens when the call runs (so arguments a hook
/// changes are validated too); `after_tool_call` runs when the call
/// finished (also for error results) and may replace the result. Neither runs for an unknown
/// tool or for calls skipped because the reply hit the output-token limit.
///
/// # Implementing
/// Both methods have pass-through defaults; override what you need. Hooks must not panic; to
/// fail closed, return [`BeforeToolCall::Block`].
#[async_trait]
pub trait ToolHooks: Send + Sync {
    /// Decides whether (and with which arguments) `call` runs.
    async fn before_tool_call(&self, call: &ToolCall) -> BeforeToolCall {
        let _ = call;
        BeforeToolCall::Continue
    }

    /// Sees (and may replace) the result of `call`, which ran with `arguments`.
    async fn after_tool_call(
        &self,
        call: &ToolCall,
        arguments: &Value,
        result: ToolResult,
    ) -> ToolResult {
        let _ = (call, arguments);
        result
    }
}

/// Hooks that change nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHooks;

impl ToolHooks for NoHooks {}

/// Host-supplied hooks around each model request and each finished message: how extensions
/// steer a run (messages queued while it runs), rewrite what the model is sent, narrow the
/// tools it is offered, replace finished messages and cancel a compaction.
///
/// # Implementing
/// Every method has a pass-through default. The sync methods are called once per turn and must
/// be cheap; the async ones are awaited on the run's path.
#[async_trait]
pub trait TurnHooks: Send + Sync {
    /// Messages to add to the conversation before the next model request (steering): called
    /// before every request, and when the model stops calling tools (any message then makes
    /// the run go on).
    fn take_steering(&self) -> Vec<Message> {
        Vec::new()
    }

    /// Messages to add when the run would otherwise end (follow-ups): the run goes on with
    /// them.
    fn take_follow_ups(&self) -> Vec<Message> {
        Vec::new()
    }

    /// Tools added to the session since the last call (an extension registered them after
    /// loading): from the next request on they can be offered and called.
    fn take_new_tools(&self) -> Vec<std::sync::Arc<dyn jig_tool::DynTool>> {
        Vec::new()
    }

    /// The names of the tools offered from the next request on; `None` offers all of them. A
    /// tool left out cannot be called either (`Tool <name> not found`).
    fn active_tools(&self) -> Option<Vec<String>> {
        None
    }

    /// The messages the next request sends (a copy: the conversation is not changed).
    async fn context(&self, messages: Vec<Message>) -> Vec<Message> {
        messages
    }

    /// A finished message (the prompt, a reply, a tool result, a steering message), before it
    /// joins the conversation; the returned one is what is kept and recorded.
    async fn message_end(&self, message: Message) -> Message {
        message
    }

    /// Whether to cancel a compaction that is about to happen.
    async fn cancel_compaction(&self, reason: CompactionReason) -> bool {
        let _ = reason;
        false
    }
}

impl TurnHooks for NoHooks {}
