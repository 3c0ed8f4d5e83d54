use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use jig_protocol::ToolResult;
use jig_tool::UpdateSink;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::{ExtensionError, HandlerError};
use crate::host::ExtensionHost;
use crate::registration::Registrations;

/// One call of an extension's tool.
pub struct ToolInvocation<'a> {
    /// The call's id (unique per run).
    pub call_id: &'a str,
    /// The tool's name.
    pub name: &'a str,
    /// The validated arguments.
    pub params: Value,
    /// Cancelled when the call is aborted.
    pub cancel: CancellationToken,
    /// Where partial results go, when a host listens.
    pub updates: Option<UpdateSink>,
}

impl fmt::Debug for ToolInvocation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolInvocation")
            .field("call_id", &self.call_id)
            .field("name", &self.name)
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

/// One loaded extension, however it is reached (in-process closures, a JSON-RPC process, or
/// command hooks). The [`ExtensionRunner`](crate::ExtensionRunner) owns these in load order and
/// implements every fold rule on top of [`handle_event`](Self::handle_event); a transport only
/// carries one event to the extension and its answer back.
///
/// # Implementing
/// `handle_event` answers `Value::Null` for "no opinion" and otherwise the event's result object.
/// A handler that fails is [`HandlerError::Failed`]; an extension that can no longer be reached
/// is [`HandlerError::Gone`], and from then on [`failure`](Self::failure) says why (its handlers
/// drop out). Timeouts are applied by the runner, which then calls
/// [`timed_out`](Self::timed_out).
#[async_trait]
pub trait ExtensionHandle: Send + Sync + fmt::Debug {
    /// The path the extension was loaded from (or `<inline:NAME>`); names it in every message.
    fn path(&self) -> &str;

    /// What it registered while loading.
    fn registrations(&self) -> &Registrations;

    /// Delivers one event; `payload` is the event's JSON object.
    async fn handle_event(&self, event: &str, payload: &Value) -> Result<Value, HandlerError>;

    /// Runs one of the extension's tools.
    async fn execute_tool(
        &self,
        invocation: ToolInvocation<'_>,
    ) -> Result<ToolResult, HandlerError> {
        Err(HandlerError::Failed(format!(
            "extension has no tool named {}",
            invocation.name
        )))
    }

    /// Runs one of the extension's slash commands; the text it answers, if any.
    async fn run_command(&self, name: &str, args: &str) -> Result<Option<String>, HandlerError> {
        let _ = args;
        Err(HandlerError::Failed(format!(
            "extension has no command named {name}"
        )))
    }

    /// Binds the runtime: from now on action calls reach `host`. Queued provider registrations
    /// are applied; their failures are returned.
    async fn bind(&self, host: Arc<dyn ExtensionHost>) -> Vec<ExtensionError>;

    /// The runner gave up waiting for `event`. Long-lived transports stop the extension (its
    /// state is unknown); per-event transports only lose that one process.
    fn timed_out(&self, event: &str);

    /// Why the extension is gone, once it is.
    fn failure(&self) -> Option<String>;

    /// The values of the extension's flags (given on the command line, else their defaults),
    /// set once after loading, before [`bind`](Self::bind). The default ignores them.
    fn set_flag_values(&self, values: serde_json::Map<String, Value>) {
        let _ = values;
    }

    /// Stops the extension (it is told first, then killed after a grace period).
    async fn shutdown(&self);
}
