//! The `read` tool: a page of a text file with line numbers, or what a binary file is.
//!
//! One [`ExecutionEnv::read_head`](jig_env::ExecutionEnv::read_head) call gives the file's
//! metadata and its first 64 KiB: enough to tell text from binary, and all of most source files,
//! which are then paged in memory. A bigger text file is paged through
//! [`ExecutionEnv::read_lines`](jig_env::ExecutionEnv::read_lines), so a page near the start of
//! a multi-GB file reads only that page (plus one streaming pass to count the lines) and memory
//! is bounded by the page. UTF-16 files (with a BOM) are decoded whole.

mod page;
mod sniff;

use jig_env::{FileKind, LineWindow, lines_window};
use jig_tool::paths::{self, ResolvedPath};
use jig_tool::{Effects, Tool, ToolContext, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use self::page::{Page, PageLine, PageRequest};
use self::sniff::{Content, FileType, Utf16Order};
use crate::bom::UTF8_BOM;
use crate::cancel::cancellable;
use crate::config::ReadConfig;
use crate::details::{BinaryFile, ReadDetails, ReadPage};
use crate::failure::{self, Action};
use jig_truncate::format_size;

/// Files up to this size are read whole in the same env call that gives their metadata; larger
/// ones are sniffed from their start, then paged with `read_lines`.
const WHOLE_FILE_MAX: usize = 64 * 1024;

/// Arguments of the `read` tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReadInput {
    /// Path of the file to read, relative to the workspace root (an absolute path inside the workspace also works).
    pub path: String,
    /// 1-based line number to start reading from (default 1). To continue a cut page, use the `offset` its notice gives.
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    /// Maximum number of lines to return (default: as many as fit on one page).
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
}

/// `read`: shows a text file with line numbers, one bounded page at a time.
#[derive(Debug, Clone, Default)]
pub struct ReadTool {
    config: ReadConfig,
}

impl ReadTool {
    /// The tool with `config`'s page limits.
    pub fn new(config: ReadConfig) -> Self {
        Self { config }
    }
}

impl Tool for ReadTool {
    const NAME: &'static str = "read";
    type Input = ReadInput;
    type Details = ReadDetails;

    fn title(&self) -> &'static str {
        "Read file"
    }

    fn description(&self) -> String {
        format!(
            "Read a file in the workspace. Text is shown with a line number before each line \
             (`   1│ first line`); the numbers and the `│ ` separator are not part of the file. \
             One call returns at most {lines} lines or {size} (whichever comes first); when a \
             page is cut, a notice at the end gives the `offset` to continue from. Use \
             offset/limit to page through large files, and keep reading with the suggested offset \
             when you need the whole file. Binary files are not shown: the result gives their \
             size and type. Paths are relative to the workspace root; paths outside the \
             workspace (also through symbolic links) are refused.",
            lines = self.config.max_lines,
            size = format_size(self.config.max_bytes),
        )
    }

    fn effects(&self) -> Effects {
        Effects::ReadOnly
    }

    async fn call(
        &self,
        ctx: &ToolContext,
        input: ReadInput,
    ) -> Result<ToolOutput<ReadDetails>, ToolError> {
        let path = paths::resolve_for_read(ctx, &input.path).await?;
        let files = ctx.files_for_reading()?;
        let env = files.as_ref();
        // One env call gives the metadata and, for most source files, the whole content.
        let head_bytes = self.config.sniff_bytes.max(WHOLE_FILE_MAX);
        let head = cancellable(ctx, env.read_head(&path.absolute, head_bytes))
            .await?
            .map_err(|error| failure::at_path(Action::Read, &path, &error))?;
        match head.info.kind {
            FileKind::File => {}
            FileKind::Directory => {
                return Err(failure::is_a_directory(Action::Read, &path.display));
            }
            FileKind::Symlink | FileKind::Other => {
                // A FIFO or device could block forever or never end.
                return Err(failure::not_regular(Action::Read, &path.display));
            }
        }
        let sniffed = &head.bytes[..head.bytes.len().min(self.config.sniff_bytes)];
        let sniff_complete = head.complete && sniffed.len() == head.bytes.len();
        if self.config.image.enabled
            && let Some(kind) = crate::image::sniff_image(sniffed)
        {
            return crate::image::read_image(ctx, &path, head.info.size, kind, &self.config.image)
                .await;
        }
        let whole = head.complete.then_some(head.bytes.as_slice());
        match sniff::classify(sniffed, sniff_complete) {
            Content::Utf8 { bom } => self.read_utf8(ctx, &path, &input, bom, whole).await,
            Content::Utf16(order) => self.read_utf16(ctx, &path, &input, order, whole).await,
            Content::Binary(file_type) => {
                Ok(binary_or_image_result(&path, head.info.size, file_type))
            }
        }
    }
}

impl ReadTool {
    async fn read_utf8(
        &self,
        ctx: &ToolContext,
        path: &ResolvedPath,
        input: &ReadInput,
        bom: bool,
        whole: Option<&[u8]>,
    ) -> Result<ToolOutput<ReadDetails>, ToolError> {
        let offset = input.offset.unwrap_or(1);
        let window = LineWindow {
            start_line: offset,
            max_lines: self.window_lines(input.limit),
            max_bytes: self.config.max_bytes,
        };
        let read = match whole {
            Some(content) => lines_window(content, &window),
            None => cancellable(
                ctx,
                ctx.files_for_reading()?.read_lines(&path.absolute, window),
            )
            .await?
            .map_err(|error| failure::at_path(Action::Read, path, &error))?,
        };
        let lines = read
            .lines
            .into_iter()
            .map(|line| {
                let mut bytes = line.bytes.as_slice();
                let mut full_len = line.full_len;
                if bom && line.number == 1 && bytes.starts_with(UTF8_BOM) {
                    bytes = &bytes[UTF8_BOM.len()..];
                    full_len = full_len.saturating_sub(UTF8_BOM.len() as u64);
                }
                PageLine::from_bytes(line.number, bytes, full_len)
            })
            .collect();
        self.finish(path, input, read.total_lines, read.total_bytes, lines)
    }

    async fn read_utf16(
        &self,
        ctx: &ToolContext,
        path: &ResolvedPath,
        input: &ReadInput,
        order: Utf16Order,
        whole: Option<&[u8]>,
    ) -> Result<ToolOutput<ReadDetails>, ToolError> {
        let read;
        let bytes = if let Some(content) = whole {
            content
        } else {
            read = cancellable(ctx, ctx.files_for_reading()?.read(&path.absolute))
                .await?
                .map_err(|error| failure::at_path(Action::Read, path, &error))?;
            read.as_slice()
        };
        let text = sniff::decode_utf16(bytes, order);
        let total_lines = page::count_lines(&text);
        let offset = input.offset.unwrap_or(1);
        let max_lines = self.window_lines(input.limit);
        let skip = usize::try_from(offset.saturating_sub(1)).unwrap_or(usize::MAX);
        let mut lines = Vec::new();
        let mut collected = 0_usize;
        for (index, line) in text
            .split_terminator('\n')
            .enumerate()
            .skip(skip)
            .take(max_lines)
        {
            let number = index as u64 + 1;
            let full_len = line.len() as u64;
            let cut = floor_char_boundary(line, self.config.max_bytes);
            lines.push(PageLine::from_bytes(
                number,
                &line.as_bytes()[..cut],
                full_len,
            ));
            collected += line.len() + 1;
            if collected >= self.config.max_bytes {
                break;
            }
        }
        self.finish(path, input, total_lines, bytes.len() as u64, lines)
    }

    /// How many lines to ask the env for: the caller's limit, capped by the page bound.
    fn window_lines(&self, limit: Option<u64>) -> usize {
        let limit = limit.map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX));
        limit.min(self.config.max_lines).max(1)
    }

    fn finish(
        &self,
        path: &ResolvedPath,
        input: &ReadInput,
        total_lines: u64,
        total_bytes: u64,
        lines: Vec<PageLine>,
    ) -> Result<ToolOutput<ReadDetails>, ToolError> {
        let offset = input.offset.unwrap_or(1);
        let path_text = path.absolute_display();
        if total_lines == 0 && offset == 1 {
            // The content of an empty file is nothing: any text here could be mistaken for the
            // file's content. The fact is in the details.
            return Ok(ToolOutput::text(
                "",
                ReadDetails::Text(ReadPage {
                    path: path_text,
                    empty: true,
                    bytes: total_bytes,
                    lines: 0,
                    start_line: 0,
                    end_line: 0,
                    truncated: false,
                    truncated_by: None,
                    next_offset: None,
                }),
            ));
        }
        if offset > total_lines {
            return Err(ToolError::failed(format!(
                "Offset {offset} is beyond end of file ({total_lines} {} total)",
                if total_lines == 1 { "line" } else { "lines" }
            )));
        }
        let caller_limited = input
            .limit
            .is_some_and(|limit| usize::try_from(limit).is_ok_and(|l| l <= self.config.max_lines));
        let page: Page = page::compose(&PageRequest {
            lines,
            total_lines,
            caller_limited,
            max_bytes: self.config.max_bytes,
        });
        let details = ReadDetails::Text(ReadPage {
            path: path_text,
            empty: false,
            bytes: total_bytes,
            lines: total_lines,
            start_line: page.start_line,
            end_line: page.end_line,
            truncated: page.truncated_by.is_some(),
            truncated_by: page.truncated_by,
            next_offset: page.next_offset,
        });
        Ok(ToolOutput::text(page.text, details))
    }
}

/// What `read` answers for a file that is not text. Images are reported as binary for now;
/// this is the one place where an image would instead be returned as an image block.
fn binary_or_image_result(
    path: &ResolvedPath,
    size: u64,
    file_type: FileType,
) -> ToolOutput<ReadDetails> {
    let text = format!(
        "{} is a binary file ({}, {}, {}); its contents cannot be shown as text.",
        path.display,
        file_type.description,
        file_type.mime,
        format_size(usize::try_from(size).unwrap_or(usize::MAX)),
    );
    ToolOutput::text(
        text,
        ReadDetails::Binary(BinaryFile {
            path: path.absolute_display(),
            bytes: size,
            binary: true,
            mime_type: file_type.mime.to_owned(),
            file_type: file_type.description.to_owned(),
        }),
    )
}

/// The largest index `<= index` on a character boundary of `text`.
fn floor_char_boundary(text: &str, index: usize) -> usize {
    if index >= text.len() {
        return text.len();
    }
    let mut at = index;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}
