//! An extension's tool as a registry tool.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use jig_protocol::{ContentBlock, ToolResult};
use jig_tool::{ArgumentValidator, DynTool, Effects, ToolContext, ToolError};
use jig_truncate::{TruncatedBy, TruncationOptions, count_lines, format_size, truncate_head};

use crate::error::{ActionError, ExtensionError, HandlerError, format_duration};
use crate::handle::{ExtensionHandle, ToolInvocation};
use crate::registration::ToolRegistration;

/// A tool an extension registered, as a [`DynTool`]: listed, validated and run like a built-in.
///
/// Arguments are validated by jig against the registered JSON Schema (the same rules and
/// messages as built-in tools) before the extension sees them; the result's text is bounded by
/// the default limits of `jig-truncate` (2000 lines, 50 KB, head kept, all text blocks together)
/// with a notice. What the
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
    ) -> Result<Self, ActionError> {
        let validator =
            ArgumentValidator::for_schema(registration.parameters.clone()).map_err(|error| {
                ActionError::InvalidSchema {
                    name: registration.name.clone(),
                    reason: error.to_string(),
                }
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

/// Most of a result's images (their base64, all together) that is kept: 4.5 MiB, the read
/// tool's default for one inline image. Images past it are replaced by a notice.
pub const MAX_RESULT_IMAGE_BYTES: usize = 4_718_592;

/// Largest `details` value (as JSON) that is kept: 256 KiB. A bigger one is replaced by `null`
/// with a notice in the text.
pub const MAX_RESULT_DETAILS_BYTES: usize = 256 * 1024;

/// Keeps `result` within what every tool result is held to: its text within the default limits
/// of `jig-truncate` (see [`bound_text`]), its images within [`MAX_RESULT_IMAGE_BYTES`], its
/// `details` within [`MAX_RESULT_DETAILS_BYTES`]. What is dropped is said in the text.
pub(crate) fn bound(mut result: ToolResult) -> ToolResult {
    let mut notices = Vec::new();
    let mut image_bytes = 0;
    let blocks = std::mem::take(&mut result.content);
    for block in blocks {
        if let ContentBlock::Image { data, mime_type } = &block {
            if image_bytes + data.len() > MAX_RESULT_IMAGE_BYTES {
                notices.push(format!(
                    "[Image omitted: {mime_type} of {} base64, over the {} limit of a result's images]",
                    format_size(data.len()),
                    format_size(MAX_RESULT_IMAGE_BYTES)
                ));
                continue;
            }
            image_bytes += data.len();
        }
        result.content.push(block);
    }
    if !result.details.is_null() {
        let size = json_size(&result.details);
        if size > MAX_RESULT_DETAILS_BYTES {
            result.details = serde_json::Value::Null;
            notices.push(format!(
                "[Details omitted: {} of JSON, over the {} limit]",
                format_size(size),
                format_size(MAX_RESULT_DETAILS_BYTES)
            ));
        }
    }
    let mut result = bound_text(result);
    if !notices.is_empty() {
        result.content.push(ContentBlock::text(notices.join("\n")));
    }
    result
}

/// The length of `value` as JSON, counted without building it.
fn json_size(value: &serde_json::Value) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => counter.0,
        Err(_) => usize::MAX,
    }
}

/// Keeps the text of `result` within the default limits, head first, with a notice.
///
/// The bound applies to the result as a whole: the lines and bytes of all its text blocks count
/// together, in order. Blocks before the cut are kept whole, the one it falls in is shortened to
/// whole lines (only a first line longer than the byte limit is cut inside), later text blocks
/// are dropped, images stay. The notice, appended to the last kept text, counts the lines of all
/// text blocks: `[Showing lines 1-512 of 2000 (50.0KB limit)]`.
fn bound_text(mut result: ToolResult) -> ToolResult {
    let limits = TruncationOptions::default();
    let (total_lines, total_bytes) = result
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .fold((0, 0), |(lines, bytes), text| {
            (lines + count_lines(text), bytes + text.len())
        });
    if total_lines <= limits.max_lines && total_bytes <= limits.max_bytes {
        return result;
    }
    let mut lines_left = limits.max_lines;
    let mut bytes_left = limits.max_bytes;
    let mut kept_lines = 0;
    let mut partial = None;
    let mut truncated_by = TruncatedBy::Bytes;
    let mut done = false;
    let mut last_text = None;
    let mut blocks = Vec::with_capacity(result.content.len());
    for block in result.content {
        let ContentBlock::Text { mut text } = block else {
            blocks.push(block);
            continue;
        };
        if done {
            continue;
        }
        let cut = truncate_head(
            &text,
            TruncationOptions {
                max_lines: lines_left,
                max_bytes: bytes_left,
            },
        );
        if cut.truncated {
            done = true;
            truncated_by = cut.truncated_by.unwrap_or(TruncatedBy::Bytes);
            let keep = if !cut.first_line_exceeds_limit {
                kept_lines += cut.output_lines;
                cut.output_bytes
            } else if kept_lines == 0 {
                let keep = jig_truncate::floor_char_boundary(&text, bytes_left);
                partial = Some(keep);
                keep
            } else {
                0
            };
            text.truncate(keep);
            if text.is_empty() {
                continue;
            }
        } else {
            lines_left -= cut.total_lines;
            bytes_left -= cut.total_bytes;
            kept_lines += cut.total_lines;
        }
        last_text = Some(blocks.len());
        blocks.push(ContentBlock::Text { text });
    }
    let shown = match (partial, kept_lines) {
        (Some(bytes), _) => format!("the first {} of line 1", format_size(bytes)),
        (None, 0) => "no lines".to_owned(),
        (None, 1) => "line 1".to_owned(),
        (None, lines) => format!("lines 1-{lines}"),
    };
    let limit = match truncated_by {
        TruncatedBy::Lines => format!("{} line limit", limits.max_lines),
        TruncatedBy::Bytes => format!("{} limit", format_size(limits.max_bytes)),
    };
    let notice = format!("[Showing {shown} of {total_lines} lines ({limit})]");
    match last_text.and_then(|index| blocks.get_mut(index)) {
        Some(ContentBlock::Text { text }) => {
            let trimmed = text.trim_end_matches('\n').len();
            text.truncate(trimmed);
            text.push_str("\n\n");
            text.push_str(&notice);
        }
        _ => blocks.push(ContentBlock::text(notice)),
    }
    result.content = blocks;
    result
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;
    use pretty_assertions::assert_eq;

    /// `count` lines of `width` bytes each (newline included), numbered from `from`.
    fn lines(from: usize, count: usize, width: usize) -> String {
        let mut text = String::new();
        for i in from..from + count {
            let _ = writeln!(text, "{:<pad$}", format!("line {i}"), pad = width - 1);
        }
        text
    }

    fn texts(result: &ToolResult) -> Vec<&str> {
        result
            .content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect()
    }

    #[test]
    fn long_results_are_cut_with_a_notice() {
        let text: String = (1..=3000)
            .flat_map(|i| ["line ".to_owned(), i.to_string(), "\n".to_owned()])
            .collect();
        let result = bound(ToolResult::text(text));
        let out = result.text_content();
        assert!(out.starts_with("line 1\n"), "{out}");
        assert!(
            out.ends_with("line 2000\n\n[Showing lines 1-2000 of 3000 lines (2000 line limit)]"),
            "{}",
            &out[out.len() - 100..]
        );
        let small = bound(ToolResult::text("ok"));
        assert_eq!(small.text_content(), "ok");
    }

    #[test]
    fn the_bound_applies_to_all_text_blocks_together() {
        // Two blocks of 1000 lines of 100 bytes: the head of the first fills the 50 KB.
        let result = bound(ToolResult {
            content: vec![
                ContentBlock::text(lines(1, 1000, 100)),
                ContentBlock::text(lines(1001, 1000, 100)),
            ],
            ..ToolResult::text("")
        });
        let kept = texts(&result);
        assert_eq!(kept.len(), 1);
        let (head, notice) = kept[0].rsplit_once("\n\n").unwrap();
        assert_eq!(format!("{head}\n"), lines(1, 512, 100));
        insta::assert_snapshot!("two_long_blocks_notice", notice);

        // Two blocks of 300 lines: the first whole, the head of the second.
        let result = bound(ToolResult {
            content: vec![
                ContentBlock::text(lines(1, 300, 100)),
                ContentBlock::text(lines(301, 300, 100)),
            ],
            ..ToolResult::text("")
        });
        let kept = texts(&result);
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[0], lines(1, 300, 100));
        let (head, notice) = kept[1].rsplit_once("\n\n").unwrap();
        assert_eq!(format!("{head}\n"), lines(301, 212, 100));
        insta::assert_snapshot!("two_blocks_of_300_notice", notice);

        // The lines of all blocks count towards the line limit; an image stays.
        let result = bound(ToolResult {
            content: vec![
                ContentBlock::text(lines(1, 1500, 12)),
                ContentBlock::Image {
                    data: "AAAA".to_owned(),
                    mime_type: "image/png".to_owned(),
                },
                ContentBlock::text(lines(1501, 1500, 12)),
            ],
            ..ToolResult::text("")
        });
        assert_eq!(result.content.len(), 3);
        let kept = texts(&result);
        assert_eq!(kept[0], lines(1, 1500, 12));
        let (head, notice) = kept[1].rsplit_once("\n\n").unwrap();
        assert_eq!(format!("{head}\n"), lines(1501, 500, 12));
        insta::assert_snapshot!("line_limit_over_blocks_notice", notice);
    }

    #[test]
    fn a_first_line_over_the_byte_limit_is_cut_with_its_own_notice() {
        let result = bound(ToolResult::text(format!("{}\nmore\n", "é".repeat(30_000))));
        let text = result.text_content();
        let (head, notice) = text.rsplit_once("\n\n").unwrap();
        assert_eq!(head, "é".repeat(25_600));
        insta::assert_snapshot!(notice, @"[Showing the first 50.0KB of line 1 of 2 lines (50.0KB limit)]");
    }
}
