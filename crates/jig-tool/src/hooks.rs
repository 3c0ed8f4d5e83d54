//! [`ToolHooks`]: how hosts, policies and extensions plug into every tool call, whoever
//! dispatches it (an agent loop, an MCP server, one call from the command line); [`CallInfo`]:
//! which call a [`ToolContext`] runs.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use jig_protocol::{ToolCall, ToolResult};
use serde_json::Value;

use crate::context::ToolContext;
use crate::error::ToolError;
use crate::registry::ToolRegistry;
use crate::tool::{DynTool, Effects};

/// The call a context runs: set by whoever dispatches it (the agent loop with the model's call
/// id, a host without a model with [`CallInfo::next`]), so everything the call does can be
/// attributed to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallInfo {
    /// The call's id: the model's tool call id, or `call-PID-N` for a call no model made.
    pub id: String,
    /// The tool's name.
    pub tool: String,
}

/// The last id [`CallInfo::next`] gave out in this process.
static MINTED: AtomicU64 = AtomicU64::new(0);

impl CallInfo {
    /// The call `id` of `tool`.
    pub fn new(id: impl Into<String>, tool: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            tool: tool.into(),
        }
    }

    /// A call of `tool` no model made (an MCP client's, the command line's): `call-PID-1`,
    /// `call-PID-2`, … from one counter per process, so that calls of processes writing one
    /// audit log at the same time are told apart too.
    pub fn next(tool: impl Into<String>) -> Self {
        let n = MINTED.fetch_add(1, Ordering::Relaxed) + 1;
        Self::new(format!("call-{}-{n}", std::process::id()), tool)
    }
}

/// What a `before_tool_call` hook decided.
#[derive(Debug, Clone, PartialEq)]
pub enum BeforeToolCall {
    /// Run the call as requested.
    Continue,
    /// Run the call with these arguments instead (they are validated like the model's).
    ChangeArguments(Value),
    /// Do not run the call; the caller sees an error result with `reason` (or
    /// [`BLOCKED_TEXT`]).
    Block {
        /// Why, for the model.
        reason: Option<String>,
    },
}

/// The text of a blocked call's result when the hook gave no reason.
pub const BLOCKED_TEXT: &str = "Tool execution was blocked";

/// The text of a blocked call's result: `reason`, or [`BLOCKED_TEXT`] when it is missing or
/// blank.
pub fn blocked_text(reason: Option<String>) -> String {
    reason
        .filter(|reason| !reason.trim().is_empty())
        .unwrap_or_else(|| BLOCKED_TEXT.to_owned())
}

/// Hooks around every tool call: how extensions, approval prompts, policies and the audit log
/// plug in.
///
/// `before_tool_call` runs after the tool was found and before it runs (in an agent loop one
/// call at a time in call order, also when calls then run concurrently); it sees the arguments
/// as the caller sent them, and validation against the tool's schema happens when the call runs
/// (so arguments a hook changes are validated too). It gets the context the call will run with
/// (its [`ToolContext::call`] set) and may change it: the audit log gives the call a view of
/// the env whose records name the call. `after_tool_call` runs when the call finished (also for
/// error results) and may replace the result. Neither runs for an unknown tool or, in an agent
/// loop, for calls skipped because the reply hit the output-token limit.
///
/// # Implementing
/// Both methods have pass-through defaults; override what you need. Hooks must not panic; to
/// fail closed, return [`BeforeToolCall::Block`].
#[async_trait]
pub trait ToolHooks: Send + Sync {
    /// Decides whether (and with which arguments) `call` runs, with `ctx`.
    async fn before_tool_call(&self, call: &ToolCall, ctx: &mut ToolContext) -> BeforeToolCall {
        let _ = (call, ctx);
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

/// `registry`'s tools, each run through `hooks`: for hosts without an agent loop (an MCP
/// server, one call from the command line). A call whose context names no call gets
/// [`CallInfo::next`].
pub fn with_hooks(registry: &ToolRegistry, hooks: &Arc<dyn ToolHooks>) -> ToolRegistry {
    let mut hooked = ToolRegistry::new();
    for tool in registry.iter() {
        hooked.register(Arc::new(HookedTool {
            inner: Arc::clone(tool),
            hooks: Arc::clone(hooks),
        }));
    }
    hooked
}

/// A tool with `hooks` around it: a block is an error result with the reason; replaced
/// arguments are what runs.
struct HookedTool {
    inner: Arc<dyn DynTool>,
    hooks: Arc<dyn ToolHooks>,
}

impl fmt::Debug for HookedTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HookedTool")
            .field("inner", &self.inner.name())
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl DynTool for HookedTool {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn title(&self) -> &str {
        self.inner.title()
    }
    fn description(&self) -> String {
        self.inner.description()
    }
    fn input_schema(&self) -> &Value {
        self.inner.input_schema()
    }
    fn details_schema(&self) -> &Value {
        self.inner.details_schema()
    }
    fn effects(&self) -> Effects {
        self.inner.effects()
    }
    fn sequential(&self) -> bool {
        self.inner.sequential()
    }

    async fn execute(&self, ctx: &ToolContext, args: Value) -> Result<ToolResult, ToolError> {
        let mut ctx = ctx.clone();
        let info = ctx
            .call
            .get_or_insert_with(|| CallInfo::next(self.inner.name()))
            .clone();
        let call = ToolCall {
            id: info.id,
            name: info.tool,
            arguments: args,
            raw_arguments: None,
        };
        let arguments = match self.hooks.before_tool_call(&call, &mut ctx).await {
            BeforeToolCall::Continue => call.arguments.clone(),
            BeforeToolCall::ChangeArguments(arguments) => arguments,
            BeforeToolCall::Block { reason } => {
                return Ok(ToolResult::error(blocked_text(reason)));
            }
        };
        let result = self.inner.run(&ctx, arguments.clone()).await;
        Ok(self.hooks.after_tool_call(&call, &arguments, result).await)
    }
}
