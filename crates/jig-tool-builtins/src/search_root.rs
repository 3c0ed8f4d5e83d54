//! What `grep` and `find` share: resolving the searched root and describing truncation.

use std::path::{Path, PathBuf};

use jig_env::{ErrorKind, FileKind};
use jig_tool::{ToolContext, ToolError, paths};
use jig_truncate::TruncationResult;
use serde_json::{Value, json};

/// Whether the searched root is a directory or a single file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RootKind {
    Directory,
    File,
}

/// A resolved, contained search root.
#[derive(Debug, Clone)]
pub(crate) struct SearchRoot {
    /// The canonical path handed to the env.
    pub(crate) path: PathBuf,
    /// The path as the model should see it in messages.
    pub(crate) shown: String,
    pub(crate) kind: RootKind,
}

/// Resolves `path` (default: the working directory) with [`jig_tool::paths`], containment
/// included, and checks that it exists.
pub(crate) async fn resolve_root(
    ctx: &ToolContext,
    path: Option<&str>,
) -> Result<SearchRoot, ToolError> {
    let given = path
        .map(str::trim)
        .filter(|path| !path.is_empty())
        .unwrap_or(".");
    let resolved = paths::resolve(ctx, given).await?;
    let shown = resolved.absolute_display();
    let info = match ctx.env.stat(&resolved.canonical).await {
        Ok(info) => info,
        Err(error) if matches!(error.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            return Err(ToolError::failed(format!("Path not found: {shown}")));
        }
        Err(error) if error.kind() == ErrorKind::Aborted => return Err(ToolError::Cancelled),
        Err(error) => return Err(ToolError::failed(format!("Cannot access {shown}: {error}"))),
    };
    let kind = if info.kind == FileKind::Directory {
        RootKind::Directory
    } else {
        RootKind::File
    };
    Ok(SearchRoot {
        path: resolved.canonical,
        shown,
        kind,
    })
}

/// A relative path as the model sees it: `/` separators.
pub(crate) fn display_path(path: &Path) -> String {
    let text = path.to_string_lossy();
    if std::path::MAIN_SEPARATOR == '/' {
        text.into_owned()
    } else {
        text.replace('\\', "/")
    }
}

/// The `truncation` object of a tool's `details`.
pub(crate) fn truncation_details(truncation: &TruncationResult<'_>) -> Value {
    json!({
        "truncatedBy": truncation.truncated_by.map(jig_truncate::TruncatedBy::as_str),
        "totalLines": truncation.total_lines,
        "totalBytes": truncation.total_bytes,
        "outputLines": truncation.output_lines,
        "outputBytes": truncation.output_bytes,
        "maxBytes": truncation.max_bytes,
    })
}
