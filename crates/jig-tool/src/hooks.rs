//! [`ToolHooks`]: how hosts, policies and extensions plug into every tool call, whoever
//! dispatches it (an agent loop, an MCP server, one call from the command line).

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use jig_protocol::{ToolCall, ToolResult};
use serde_json::Value;

use crate::context::{CallInfo, ToolContext};
use crate::error::ToolError;
use crate::registry::ToolRegistry;
use crate::tool::DynTool;

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
    crate::delegate_tool_metadata!();

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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use jig_env_memory::MemoryEnv;
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;

    use super::*;
    use crate::tool::{Effects, ErasedTool, Tool, ToolOutput};

    /// The input of [`Who`].
    #[derive(Debug, Deserialize, JsonSchema)]
    struct WhoInput {
        /// Echoed back.
        text: String,
    }

    /// Answers with its text, the call its context names and the session variable `HOOK`.
    struct Who;

    impl Tool for Who {
        const NAME: &'static str = "who";
        type Input = WhoInput;
        type Details = ();

        fn title(&self) -> &'static str {
            "Who"
        }
        fn description(&self) -> String {
            "Names the call.".into()
        }
        fn effects(&self) -> Effects {
            Effects::ReadOnly
        }
        async fn call(
            &self,
            ctx: &ToolContext,
            input: WhoInput,
        ) -> Result<ToolOutput<()>, ToolError> {
            let call = ctx.call.as_ref().expect("the call is named");
            let hook = ctx.session_env.get("HOOK").map_or("-", String::as_str);
            Ok(ToolOutput::text(
                format!("{} {} {} {hook}", input.text, call.id, call.tool),
                (),
            ))
        }
    }

    /// Blocks `block`, rewrites `change`, and notes the call id in the context; appends `!` to
    /// results.
    struct Hooks;

    #[async_trait]
    impl ToolHooks for Hooks {
        async fn before_tool_call(&self, call: &ToolCall, ctx: &mut ToolContext) -> BeforeToolCall {
            ctx.session_env.insert("HOOK".into(), call.id.clone());
            match call.arguments["text"].as_str() {
                Some("block") => BeforeToolCall::Block { reason: None },
                Some("change") => BeforeToolCall::ChangeArguments(json!({"text": "changed"})),
                _ => BeforeToolCall::Continue,
            }
        }

        async fn after_tool_call(
            &self,
            _call: &ToolCall,
            _arguments: &Value,
            result: ToolResult,
        ) -> ToolResult {
            ToolResult::text(format!("{}!", result.text_content()))
        }
    }

    fn hooked() -> Arc<dyn DynTool> {
        let mut registry = ToolRegistry::new();
        registry.register(ErasedTool::shared(Who));
        let hooks: Arc<dyn ToolHooks> = Arc::new(Hooks);
        Arc::clone(with_hooks(&registry, &hooks).get("who").unwrap())
    }

    fn ctx() -> ToolContext {
        ToolContext::new(Arc::new(MemoryEnv::new()), PathBuf::from("/ws"))
    }

    #[tokio::test]
    async fn a_hooked_tool_runs_as_the_hooks_decide_in_the_context_they_left() {
        let tool = hooked();
        let mut named = ctx();
        named.call = Some(CallInfo::new("c7", "who"));
        let ran = tool.run(&named, json!({"text": "hi"})).await;
        assert_eq!(ran.text_content(), "hi c7 who c7!");
        let changed = tool.run(&named, json!({"text": "change"})).await;
        assert_eq!(changed.text_content(), "changed c7 who c7!");
        let blocked = tool.run(&named, json!({"text": "block"})).await;
        assert!(blocked.is_error);
        assert_eq!(blocked.text_content(), BLOCKED_TEXT);
    }

    #[tokio::test]
    async fn a_call_no_one_named_gets_an_id_of_its_own() {
        let tool = hooked();
        let first = tool.run(&ctx(), json!({"text": "a"})).await.text_content();
        let second = tool.run(&ctx(), json!({"text": "a"})).await.text_content();
        let prefix = format!("a call-{}-", std::process::id());
        assert!(first.starts_with(&prefix), "{first}");
        assert!(second.starts_with(&prefix), "{second}");
        assert_ne!(first, second);
    }

    #[test]
    fn a_blank_reason_is_the_blocked_text() {
        assert_eq!(blocked_text(Some("  ".into())), BLOCKED_TEXT);
        assert_eq!(blocked_text(Some("no".into())), "no");
        assert_eq!(blocked_text(None), BLOCKED_TEXT);
    }
}
