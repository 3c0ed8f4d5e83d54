//! `--audit` above the env: one record per tool call, also for calls that never reach the env
//! (a call the permission policy or a hook denied, an extension's tool), and each hook's
//! changed arguments. The env's own operations are recorded by `jig-env-audit`'s `AuditEnv`
//! (`env_cmd::audited`), into the same log.
//!
//! ```json
//! {"time":"…","op":"tool_call","call":"toolu_01","tool":"bash","outcome":"denied","error":"…"}
//! ```
//!
//! `outcome`: `ok`, `error` (the tool's result is an error; `error` holds its text), `denied`
//! (the policy or a hook blocked it; `error` holds the reason); `op` `hook` with outcome
//! `changed_arguments` when a hook replaced the arguments. A record that cannot be written
//! fails the call as the env's records do (unless `--audit-best-effort`).

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use jig_agent::{BeforeToolCall, ToolHooks};
use jig_env_audit::AuditLog;
use jig_protocol::{ContentBlock, ToolCall, ToolResult};
use jig_tool::{DynTool, ToolContext, ToolError, ToolRegistry};
use serde_json::{Map, Value, json};

/// The `--audit` log of this process, once `env_cmd::audited` opened it.
static LOG: OnceLock<AuditLog> = OnceLock::new();

/// Remembers the log the env records into.
pub fn set_log(log: AuditLog) {
    let _ = LOG.set(log);
}

/// The text of a result, for its record (at most 500 characters).
fn text_of(result: &ToolResult) -> String {
    let text: String = result
        .content
        .iter()
        .filter_map(|block| {
            if let ContentBlock::Text { text } = block {
                Some(text.as_str())
            } else {
                None
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    text.chars().take(500).collect()
}

fn record(
    log: &AuditLog,
    op: &str,
    call: Option<&str>,
    tool: &str,
    outcome: &str,
    error: Option<String>,
) -> Result<(), String> {
    let mut fields = Map::new();
    if let Some(call) = call {
        fields.insert("call".into(), json!(call));
    }
    fields.insert("tool".into(), json!(tool));
    fields.insert("outcome".into(), json!(outcome));
    if let Some(error) = error {
        fields.insert("error".into(), json!(error));
    }
    log.event(op, fields)
}

/// The record of a finished call; the result, or an error result when it cannot be written.
fn finished(log: &AuditLog, call: Option<&str>, tool: &str, result: ToolResult) -> ToolResult {
    let (outcome, error) = if result.is_error {
        ("error", Some(text_of(&result)))
    } else {
        ("ok", None)
    };
    match record(log, "tool_call", call, tool, outcome, error) {
        Ok(()) => result,
        // A failed call keeps its own reason first.
        Err(message) if result.is_error => {
            let mut result = result;
            result.content.push(ContentBlock::text(message));
            result
        }
        Err(message) => ToolResult::error(format!("{message} (the call ran)")),
    }
}

/// `inner`, with every decision and result recorded when `--audit` is on (`jig run`, the
/// interactive session).
pub fn hooks(inner: Arc<dyn ToolHooks>) -> Arc<dyn ToolHooks> {
    match LOG.get() {
        Some(log) => Arc::new(AuditedHooks {
            inner,
            log: log.clone(),
        }),
        None => inner,
    }
}

struct AuditedHooks {
    inner: Arc<dyn ToolHooks>,
    log: AuditLog,
}

#[async_trait]
impl ToolHooks for AuditedHooks {
    async fn before_tool_call(&self, call: &ToolCall) -> BeforeToolCall {
        let decision = self.inner.before_tool_call(call).await;
        let written = match &decision {
            BeforeToolCall::Continue => Ok(()),
            BeforeToolCall::Block { reason } => record(
                &self.log,
                "tool_call",
                Some(&call.id),
                &call.name,
                "denied",
                Some(
                    reason
                        .clone()
                        .unwrap_or_else(|| jig_agent::BLOCKED_TEXT.to_owned()),
                ),
            ),
            BeforeToolCall::ChangeArguments(_) => record(
                &self.log,
                "hook",
                Some(&call.id),
                &call.name,
                "changed_arguments",
                None,
            ),
        };
        match written {
            Ok(()) => decision,
            Err(message) => BeforeToolCall::Block {
                reason: Some(message),
            },
        }
    }

    async fn after_tool_call(
        &self,
        call: &ToolCall,
        arguments: &Value,
        result: ToolResult,
    ) -> ToolResult {
        let result = self.inner.after_tool_call(call, arguments, result).await;
        finished(&self.log, Some(&call.id), &call.name, result)
    }
}

/// `registry` with every call recorded when `--audit` is on (`jig mcp`, `jig tool`; wrap the
/// registry the extensions' hooks already wrap, so a call they block is recorded too).
pub fn registry(registry: ToolRegistry) -> ToolRegistry {
    let Some(log) = LOG.get() else {
        return registry;
    };
    let mut audited = ToolRegistry::new();
    for tool in registry.iter() {
        audited.register(Arc::new(AuditedTool {
            inner: Arc::clone(tool),
            log: log.clone(),
        }));
    }
    audited
}

#[derive(Debug)]
struct AuditedTool {
    inner: Arc<dyn DynTool>,
    log: AuditLog,
}

#[async_trait]
impl DynTool for AuditedTool {
    jig_tool::delegate_tool_metadata!();
    async fn execute(&self, ctx: &ToolContext, args: Value) -> Result<ToolResult, ToolError> {
        let result = self.inner.run(ctx, args).await;
        Ok(finished(&self.log, None, self.inner.name(), result))
    }
}
