//! What `grep` and `find` share: resolving the searched root, the limit and ignore options,
//! running the env's search, and bounding and annotating the output.

use std::fmt::Write as _;
use std::future::Future;
use std::path::{Path, PathBuf};

use crate::failure::{Action, Subject, env_failure};
use jig_env::{EnvResult, FileKind, IgnoreRules};
use jig_tool::{ToolContext, ToolError, paths};
use jig_truncate::{Truncation, TruncationOptions, format_size, truncate_head};

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
    let subject = Subject {
        shown: given,
        absolute: &shown,
    };
    let info = ctx
        .files()?
        .stat(&resolved.canonical)
        .await
        .map_err(|error| env_failure(Action::SearchRoot, subject, &error))?;
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

/// The result limit of a call: the caller's, else the configured default; at least 1.
pub(crate) fn effective_limit(requested: Option<u64>, default: usize) -> usize {
    requested
        .map_or(default, |limit| {
            usize::try_from(limit).unwrap_or(usize::MAX)
        })
        .max(1)
}

/// The ignore rules for the `includeIgnored` argument.
pub(crate) fn ignore_rules(include_ignored: Option<bool>) -> IgnoreRules {
    if include_ignored == Some(true) {
        IgnoreRules::IncludeIgnored
    } else {
        IgnoreRules::Respect
    }
}

/// Runs the env's walk or search until it ends or the call is cancelled; env failures become
/// the messages a model reads (`what` names the operation: `Search`, `Find`).
pub(crate) async fn run_env_search<T>(
    ctx: &ToolContext,
    root: &SearchRoot,
    what: &str,
    search: impl Future<Output = EnvResult<T>>,
) -> Result<T, ToolError> {
    let result = tokio::select! {
        result = search => result,
        () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
    };
    result.map_err(|error| env_failure(Action::Search(what), Subject::same(&root.shown), &error))
}

/// `output` cut to `max_bytes` (whole lines from the start), followed by the notices in brackets:
/// `limit_notice` first, then the size limit when it cut, then `extra`. Also returns the
/// `truncation` details when the size limit cut.
pub(crate) fn bounded_output(
    output: &str,
    max_bytes: usize,
    limit_notice: Option<String>,
    extra: Option<String>,
) -> (String, Option<Truncation>) {
    let truncation = truncate_head(
        output,
        TruncationOptions {
            max_lines: usize::MAX,
            max_bytes,
        },
    );
    let mut text = truncation.content.to_owned();
    let size_notice = truncation
        .truncated
        .then(|| format!("{} limit reached", format_size(max_bytes)));
    let notices: Vec<String> = [limit_notice, size_notice, extra]
        .into_iter()
        .flatten()
        .collect();
    if !notices.is_empty() {
        let _ = write!(text, "\n\n[{}]", notices.join(". "));
    }
    (text, Truncation::of_head(&truncation))
}
