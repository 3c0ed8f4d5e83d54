//! `--audit` above the env, the outermost layer of the tool-call chain (`chain`): each call
//! runs with the view of the audited env that names it (`AuditEnv::for_call`), so its env
//! operations are on record as its own; and one record per tool call, also for calls that
//! never reach the env (a call the permission policy or a hook denied, an extension's tool),
//! and each hook's changed arguments. The env's own operations are recorded by
//! `jig-env-audit`'s `AuditEnv` (`env_cmd::audited`), into the same log. Every record made
//! during a call names it: `call_id` and `tool`.
//!
//! ```json
//! {"time":"…","op":"tool_call","call_id":"toolu_01","tool":"bash","outcome":"denied","error":"…"}
//! ```
//!
//! `outcome`: `ok`, `error` (the tool's result is an error; `error` holds its text), `denied`
//! (the policy or a hook blocked it; `error` holds the reason); `op` `hook` with outcome
//! `changed_arguments` when a hook replaced the arguments. A record that cannot be written
//! fails the call as the env's records do (unless `--audit-best-effort`).

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use jig_env_audit::{AuditEnv, AuditLog, RecordError};
use jig_protocol::{ContentBlock, ToolCall, ToolResult};
use jig_tool::{BeforeToolCall, NoHooks, ToolContext, ToolHooks, blocked_text};
use serde_json::{Map, Value, json};

/// The audited env of this process, once `env_cmd::audited` opened the `--audit` log.
static ENV: OnceLock<AuditEnv> = OnceLock::new();

/// Remembers the audited env tool calls get their views of.
pub fn set_env(env: AuditEnv) {
    let _ = ENV.set(env);
}

/// The audited env, when `--audit` is on.
pub fn env() -> Option<&'static AuditEnv> {
    ENV.get()
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

/// Writes one record through `log` (a call's handle: it adds `call_id` and `tool`).
fn record(
    log: &AuditLog,
    op: &str,
    outcome: &str,
    error: Option<String>,
) -> Result<(), RecordError> {
    let mut fields = Map::new();
    fields.insert("outcome".into(), json!(outcome));
    if let Some(error) = error {
        fields.insert("error".into(), json!(error));
    }
    log.event(op, fields)
}

/// The record of a finished call; the result, or an error result when it cannot be written.
fn finished(log: &AuditLog, result: ToolResult) -> ToolResult {
    let (outcome, error) = if result.is_error {
        ("error", Some(text_of(&result)))
    } else {
        ("ok", None)
    };
    match record(log, "tool_call", outcome, error) {
        Ok(()) => result,
        // A failed call keeps its own reason first.
        Err(failed) if result.is_error => {
            let mut result = result;
            result.content.push(ContentBlock::text(failed.to_string()));
            result
        }
        Err(failed) => ToolResult::error(format!("{failed} (the call ran)")),
    }
}

/// `inner` (or no hooks) with the call's env view and every decision and result recorded in
/// `env`'s log; `inner` as it is without an audited env.
pub fn layer(
    env: Option<&AuditEnv>,
    inner: Option<Arc<dyn ToolHooks>>,
) -> Option<Arc<dyn ToolHooks>> {
    let Some(env) = env else { return inner };
    Some(Arc::new(AuditedHooks {
        inner: inner.unwrap_or_else(|| Arc::new(NoHooks)),
        env: env.clone(),
    }))
}

struct AuditedHooks {
    inner: Arc<dyn ToolHooks>,
    env: AuditEnv,
}

#[async_trait]
impl ToolHooks for AuditedHooks {
    async fn before_tool_call(&self, call: &ToolCall, ctx: &mut ToolContext) -> BeforeToolCall {
        // From here on everything the call does is on record as its own, the inner hooks'
        // lookups included.
        let view = self.env.for_call(&call.id, &call.name);
        let log = view.log().clone();
        ctx.env = Arc::new(view);
        let decision = self.inner.before_tool_call(call, ctx).await;
        let written = match &decision {
            BeforeToolCall::Continue => Ok(()),
            BeforeToolCall::Block { reason } => record(
                &log,
                "tool_call",
                "denied",
                Some(blocked_text(reason.clone())),
            ),
            BeforeToolCall::ChangeArguments(_) => record(&log, "hook", "changed_arguments", None),
        };
        match written {
            Ok(()) => decision,
            Err(failed) => BeforeToolCall::Block {
                reason: Some(failed.to_string()),
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
        finished(&self.env.log().for_call(&call.id, &call.name), result)
    }
}
