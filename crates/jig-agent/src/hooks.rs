//! [`ToolHooks`]: how hosts and extensions plug into every tool call.

use async_trait::async_trait;
use jig_protocol::{ToolCall, ToolResult};
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
