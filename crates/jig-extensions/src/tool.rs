//! An extension's tool as a registry tool.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use jig_protocol::{ContentBlock, ToolResult};
use jig_tool::{ArgumentValidator, DynTool, Effects, ToolContext, ToolError};
use jig_truncate::{TruncationOptions, format_size, truncate_head};

use crate::error::{ExtensionError, HandlerError, format_duration};
use crate::handle::{ExtensionHandle, ToolInvocation};
use crate::registration::ToolRegistration;

/// A tool an extension registered, as a [`DynTool`]: listed, validated and run like a built-in.
///
/// Arguments are validated by jig against the registered JSON Schema (the same rules and
/// messages as built-in tools) before the extension sees them; the result's text is bounded by
/// the default limits of `jig-truncate` (2000 lines, 50 KB, head kept) with a notice. What the
/// tool touches is the extension's own business.
pub struct ExtensionTool {
    handle: Arc<dyn ExtensionHandle>,
    name: String,
    title: String,
    description: String,
    validator: ArgumentValidator,
    details_schema: serde_json::Value,
    sequential: bool,
    effects: Effects,
    timeout: Duration,
    call_ids: Arc<AtomicU64>,
}

impl fmt::Debug for ExtensionTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExtensionTool")
            .field("name", &self.name)
            .field("extension", &self.handle.path())
            .finish_non_exhaustive()
    }
}

impl ExtensionTool {
    /// The tool `registration` of `handle`; an unusable schema is the error.
    pub(crate) fn new(
        handle: Arc<dyn ExtensionHandle>,
        registration: &ToolRegistration,
        timeout: Duration,
        call_ids: Arc<AtomicU64>,
    ) -> Result<Self, String> {
        let validator =
            ArgumentValidator::for_schema(registration.parameters.clone()).map_err(|error| {
                format!(
                    "Tool \"{}\" has an invalid parameters schema: {error}",
                    registration.name
                )
            })?;
        let effects = match registration.effects.as_deref() {
            Some("readOnly") => Effects::ReadOnly,
            Some("mutates") => Effects::Mutates,
            _ => Effects::Process,
        };
        Ok(Self {
            handle,
            name: registration.name.clone(),
            title: registration
                .label
                .clone()
                .unwrap_or_else(|| registration.name.clone()),
            description: registration.description.clone(),
            validator,
            details_schema: registration
                .details_schema
                .clone()
                .unwrap_or_else(|| serde_json::json!({})),
            sequential: registration.execution_mode.as_deref() == Some("sequential"),
            effects,
            timeout,
            call_ids,
        })
    }

    /// The extension's path.
    pub fn extension_path(&self) -> &str {
        self.handle.path()
    }

    fn error(&self, message: impl Into<String>) -> ToolError {
        ToolError::failed(
            ExtensionError {
                path: self.handle.path().to_owned(),
                event: format!("tool:{}", self.name),
                message: message.into(),
            }
            .to_string(),
        )
    }
}

#[async_trait]
impl DynTool for ExtensionTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn title(&self) -> &str {
        &self.title
    }
    fn description(&self) -> String {
        self.description.clone()
    }
    fn input_schema(&self) -> &serde_json::Value {
        self.validator.schema()
    }
    fn details_schema(&self) -> &serde_json::Value {
        &self.details_schema
    }
    fn effects(&self) -> Effects {
        self.effects
    }
    fn sequential(&self) -> bool {
        self.sequential
    }

    async fn execute(
        &self,
        ctx: &ToolContext,
        args: serde_json::Value,
    ) -> Result<ToolResult, ToolError> {
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        if let Some(reason) = self.handle.failure() {
            return Err(self.error(format!("the extension is not running ({reason})")));
        }
        let params = self.validator.check(&self.name, args)?;
        let call_id = format!("ext-{}", self.call_ids.fetch_add(1, Ordering::Relaxed));
        let cancel = ctx.cancel.child_token();
        let running = self.handle.execute_tool(ToolInvocation {
            call_id: &call_id,
            name: &self.name,
            params,
            cancel: cancel.clone(),
            updates: ctx.updates.clone(),
        });
        tokio::pin!(running);
        let outcome = tokio::select! {
            outcome = &mut running => outcome,
            () = tokio::time::sleep(self.timeout) => {
                cancel.cancel();
                let _ = tokio::time::timeout(Duration::from_secs(1), &mut running).await;
                return Err(self.error(format!("no result within {}", format_duration(self.timeout))));
            }
        };
        match outcome {
            Ok(result) => Ok(bound(result)),
            Err(_) if ctx.cancel.is_cancelled() => Err(ToolError::Cancelled),
            Err(HandlerError::Failed(message) | HandlerError::Gone(message)) => {
                Err(self.error(message))
            }
        }
    }
}

/// Keeps the text of `result` within the default limits, head first, with a notice.
pub(crate) fn bound(mut result: ToolResult) -> ToolResult {
    let limits = TruncationOptions::default();
    let mut lines_left = limits.max_lines;
    let mut bytes_left = limits.max_bytes;
    let mut exhausted = false;
    let mut blocks = Vec::with_capacity(result.content.len());
    for block in result.content {
        let ContentBlock::Text { text } = block else {
            blocks.push(block);
            continue;
        };
        if exhausted {
            continue;
        }
        let cut = truncate_head(
            &text,
            TruncationOptions {
                max_lines: lines_left,
                max_bytes: bytes_left,
            },
        );
        if !cut.truncated {
            lines_left = lines_left.saturating_sub(cut.total_lines);
            bytes_left = bytes_left.saturating_sub(cut.total_bytes);
            blocks.push(ContentBlock::Text { text });
            continue;
        }
        exhausted = true;
        let kept = if cut.first_line_exceeds_limit {
            &text[..jig_truncate::floor_char_boundary(&text, bytes_left)]
        } else {
            cut.content
        };
        blocks.push(ContentBlock::text(format!(
            "{kept}\n\n[Output truncated: showing {} of {} lines ({} limit)]",
            cut.output_lines.max(1),
            cut.total_lines,
            format_size(limits.max_bytes),
        )));
    }
    result.content = blocks;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_results_are_cut_with_a_notice() {
        let text: String = (1..=3000)
            .flat_map(|i| ["line ".to_owned(), i.to_string(), "\n".to_owned()])
            .collect();
        let result = bound(ToolResult::text(text));
        let out = result.text_content();
        assert!(out.starts_with("line 1\n"), "{out}");
        assert!(
            out.ends_with("[Output truncated: showing 2000 of 3000 lines (50.0KB limit)]"),
            "{}",
            &out[out.len() - 100..]
        );
        let small = bound(ToolResult::text("ok"));
        assert_eq!(small.text_content(), "ok");
    }
}
