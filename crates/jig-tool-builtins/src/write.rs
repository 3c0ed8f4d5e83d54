//! The `write` tool: create or replace a whole file, atomically.

use jig_env::{Bytes, ErrorKind, FileKind};
use jig_tool::paths;
use jig_tool::{Effects, Tool, ToolContext, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::cancel::cancellable;
use crate::config::WriteConfig;
use crate::details::WriteDetails;
use crate::failure::{self, Action};

/// Arguments of the `write` tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WriteInput {
    /// Path of the file to write, relative to the workspace root (an absolute path inside the workspace also works). Missing parent directories are created.
    pub path: String,
    /// The complete new content of the file.
    pub content: String,
}

/// `write`: replaces a file's whole content (or creates it), atomically and one writer at a time.
#[derive(Debug, Clone, Default)]
pub struct WriteTool {
    config: WriteConfig,
}

impl WriteTool {
    /// The tool with `config`.
    pub fn new(config: WriteConfig) -> Self {
        Self { config }
    }

    /// The options this tool runs with.
    pub fn config(&self) -> &WriteConfig {
        &self.config
    }
}

impl Tool for WriteTool {
    const NAME: &'static str = "write";
    type Input = WriteInput;
    type Details = WriteDetails;

    fn title(&self) -> &'static str {
        "Write file"
    }

    fn description(&self) -> String {
        "Write a whole file in the workspace: creates it if it does not exist, replaces its \
         entire content if it does, and creates missing parent directories. The write is atomic \
         (readers see the old or the new content, never a mix). Use it for new files or complete \
         rewrites; to change part of an existing file, prefer an edit. Paths are relative to the \
         workspace root; paths outside the workspace (also through symbolic links) are refused."
            .to_owned()
    }

    fn effects(&self) -> Effects {
        Effects::Mutates
    }

    async fn call(
        &self,
        ctx: &ToolContext,
        input: WriteInput,
    ) -> Result<ToolOutput<WriteDetails>, ToolError> {
        let path = paths::resolve(ctx, &input.path).await?;
        if path.display.ends_with('/') {
            // `dir/` names a directory; writing would create a file called `dir`.
            return Err(failure::is_a_directory(Action::Write, &path.display));
        }
        // Held across the whole operation: writes to one file (under any alias) run one at a time.
        let _turn = cancellable(ctx, ctx.mutation_queue.lock_key(path.canonical.clone())).await?;
        let files = ctx.files()?;
        let env = files.as_ref();
        let exists = match cancellable(ctx, env.stat(&path.absolute)).await? {
            Ok(info) if info.kind == FileKind::Directory => {
                return Err(failure::is_a_directory(Action::Write, &path.display));
            }
            Ok(info) if info.kind != FileKind::File => {
                return Err(failure::not_regular(Action::Write, &path.display));
            }
            Ok(_) => true,
            Err(error) if error.kind() == ErrorKind::NotFound => false,
            Err(error) => return Err(failure::at_path(Action::Write, &path, &error)),
        };
        // An existing file: wait for the update lock other jig processes take around their
        // edits, so a whole-file write never lands in the middle of one. (It is gone when the
        // file was removed meanwhile: then there is nothing to wait for.)
        let _lock = if exists {
            match cancellable(ctx, env.lock_file(&path.absolute)).await? {
                Ok(lock) => Some(lock),
                Err(error) if error.kind() == ErrorKind::NotFound => None,
                // `lock_file` refuses anything but a regular file as invalid.
                Err(error) if error.kind() == ErrorKind::Invalid => {
                    return Err(failure::not_regular(Action::Write, &path.display));
                }
                Err(error) => return Err(failure::at_path(Action::Write, &path, &error)),
            }
        } else {
            None
        };
        let bytes = input.content.len();
        let lines = count_lines(&input.content);
        // Not raced against cancellation: once started, the atomic write either completes or
        // leaves the file untouched, and its outcome is reported.
        let outcome = env
            .write(&path.absolute, Bytes::from(input.content))
            .await
            .map_err(|error| failure::at_path(Action::Write, &path, &error))?;
        let text = format!(
            "Wrote {bytes} {} ({lines} {}) to {}",
            if bytes == 1 { "byte" } else { "bytes" },
            if lines == 1 { "line" } else { "lines" },
            path.display
        );
        Ok(ToolOutput::text(
            text,
            WriteDetails {
                path: path.absolute_display(),
                bytes: bytes as u64,
                lines,
                created: outcome.created,
            },
        ))
    }
}

/// Lines as `read` counts them: a final line without `\n` counts, a trailing `\n` adds none.
fn count_lines(text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    let newlines = text.bytes().filter(|&b| b == b'\n').count() as u64;
    if text.ends_with('\n') {
        newlines
    } else {
        newlines + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_count_like_read() {
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\n"), 1);
        assert_eq!(count_lines("a\nb"), 2);
    }
}
