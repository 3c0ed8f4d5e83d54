//! Small tools for loop tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use jig_protocol::ToolResult;
use jig_tool::{Effects, Tool, ToolContext, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

/// Echo input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EchoInput {
    /// The text to echo.
    pub text: String,
    /// Milliseconds to wait first.
    pub delay_ms: Option<u64>,
}

/// Echoes its text after an optional delay; counts how many calls run at once.
#[derive(Debug, Default, Clone)]
pub struct EchoTool {
    pub running: Arc<AtomicUsize>,
    pub max_running: Arc<AtomicUsize>,
}

impl Tool for EchoTool {
    const NAME: &'static str = "echo";
    type Input = EchoInput;
    type Details = ();

    fn title(&self) -> &'static str {
        "Echo"
    }
    fn description(&self) -> String {
        "Echo the text back.".into()
    }
    fn effects(&self) -> Effects {
        Effects::ReadOnly
    }
    async fn call(&self, ctx: &ToolContext, input: EchoInput) -> Result<ToolOutput<()>, ToolError> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_running.fetch_max(now, Ordering::SeqCst);
        if let Some(ms) = input.delay_ms {
            tokio::select! {
                () = ctx.cancel.cancelled() => {
                    self.running.fetch_sub(1, Ordering::SeqCst);
                    return Err(ToolError::Cancelled);
                }
                () = tokio::time::sleep(Duration::from_millis(ms)) => {}
            }
        }
        ctx.send_update(ToolResult::text(format!("partial {}", input.text)));
        self.running.fetch_sub(1, Ordering::SeqCst);
        Ok(ToolOutput::text(input.text, ()))
    }
}

/// Same as echo but declares itself sequential.
#[derive(Debug, Default, Clone)]
pub struct SerialTool(pub EchoTool);

impl Tool for SerialTool {
    const NAME: &'static str = "serial";
    type Input = EchoInput;
    type Details = ();

    fn title(&self) -> &'static str {
        "Serial"
    }
    fn description(&self) -> String {
        "Echo, one call at a time.".into()
    }
    fn effects(&self) -> Effects {
        Effects::Mutates
    }
    fn sequential(&self) -> bool {
        true
    }
    async fn call(&self, ctx: &ToolContext, input: EchoInput) -> Result<ToolOutput<()>, ToolError> {
        self.0.call(ctx, input).await
    }
}

/// No input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoInput {}

/// Says which call its context names, and the session variable `HOOKED`.
#[derive(Debug, Default, Clone)]
pub struct WhoTool;

impl Tool for WhoTool {
    const NAME: &'static str = "who";
    type Input = NoInput;
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
    async fn call(&self, ctx: &ToolContext, _input: NoInput) -> Result<ToolOutput<()>, ToolError> {
        let call = ctx.call.as_ref().map_or_else(
            || "none".to_owned(),
            |call| format!("{} {}", call.id, call.tool),
        );
        let hooked = ctx.session_env.get("HOOKED").map_or("-", String::as_str);
        Ok(ToolOutput::text(format!("{call} {hooked}"), ()))
    }
}
