//! The `write` tool: create or replace a whole file, atomically.

use jig_env::{Bytes, EnvError, ErrorKind, FileKind};
use jig_protocol::ToolResult;
use jig_tool::paths::{self, ResolvedPath};
use jig_tool::{Effects, Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::cancel::cancellable;
use crate::config::WriteConfig;

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

    async fn call(&self, ctx: &ToolContext, input: WriteInput) -> Result<ToolResult, ToolError> {
        let path = paths::resolve(ctx, &input.path).await?;
        if path.display.ends_with('/') {
            // `dir/` names a directory; writing would create a file called `dir`.
            return Err(is_a_directory(&path));
        }
        // Held across the whole operation: writes to one file (under any alias) run one at a time.
        let _turn = cancellable(ctx, ctx.mutation_queue.lock_key(path.canonical.clone())).await?;
        let files = ctx.files()?;
        let env = files.as_ref();
        let exists = match cancellable(ctx, env.stat(&path.absolute)).await? {
            Ok(info) if info.kind == FileKind::Directory => return Err(is_a_directory(&path)),
            Ok(info) if info.kind != FileKind::File => return Err(not_regular(&path)),
            Ok(_) => true,
            Err(error) if error.kind() == ErrorKind::NotFound => false,
            Err(error) => return Err(env_failure(&path, &error)),
        };
        // An existing file: wait for the update lock other jig processes take around their
        // edits, so a whole-file write never lands in the middle of one. (It is gone when the
        // file was removed meanwhile: then there is nothing to wait for.)
        let _lock = if exists {
            match cancellable(ctx, env.lock_file(&path.absolute)).await? {
                Ok(lock) => Some(lock),
                Err(error) if error.kind() == ErrorKind::NotFound => None,
                // `lock_file` refuses anything but a regular file as invalid.
                Err(error) if error.kind() == ErrorKind::Invalid => return Err(not_regular(&path)),
                Err(error) => return Err(env_failure(&path, &error)),
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
            .map_err(|error| env_failure(&path, &error))?;
        let text = format!(
            "Wrote {bytes} {} ({lines} {}) to {}",
            if bytes == 1 { "byte" } else { "bytes" },
            if lines == 1 { "line" } else { "lines" },
            path.display
        );
        Ok(ToolResult::text(text).with_details(json!({
            "path": path.absolute_display(),
            "bytes": bytes,
            "lines": lines,
            "created": outcome.created,
        })))
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

fn is_a_directory(path: &ResolvedPath) -> ToolError {
    ToolError::failed(format!(
        "Cannot write {}: it is a directory. Give the path of a file (e.g. {}/name.txt).",
        path.display,
        path.display.trim_end_matches('/')
    ))
}

fn not_regular(path: &ResolvedPath) -> ToolError {
    ToolError::failed(format!(
        "Cannot write {}: it is not a regular file (a socket, FIFO or device); it was left as it is.",
        path.display
    ))
}

fn env_failure(path: &ResolvedPath, error: &EnvError) -> ToolError {
    if let Some(refused) = paths::refusal(&path.display, error) {
        return refused;
    }
    match error.kind() {
        ErrorKind::IsADirectory => is_a_directory(path),
        ErrorKind::PermissionDenied => ToolError::failed(format!(
            "Permission denied: cannot write {}",
            path.absolute_display()
        )),
        ErrorKind::NotADirectory => ToolError::failed(format!(
            "Cannot write {}: a parent of it is a file, not a directory.",
            path.display
        )),
        ErrorKind::Aborted => ToolError::Cancelled,
        _ => ToolError::failed(format!("Cannot write {}: {error}", path.display)),
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
