//! The `find` tool: list paths matching a glob, through the env's `walk`.

use std::fmt::Write as _;

use jig_env::search::PathGlob;
use jig_env::{EntryKinds, ErrorKind, FileKind, IgnoreRules, SearchInputError, WalkRequest};
use jig_protocol::ToolResult;
use jig_tool::{Effects, Tool, ToolContext, ToolError};
use jig_truncate::{TruncationOptions, format_size, truncate_head};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::search_root::{RootKind, display_path, resolve_root, truncation_details};

/// Results `find` returns when the caller gives no `limit`.
pub const DEFAULT_FIND_LIMIT: usize = 1000;

/// Options of `find`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FindConfig {
    /// Paths returned when the caller gives no `limit`.
    pub default_limit: usize,
    /// At most this many bytes of output.
    pub max_bytes: usize,
}

impl Default for FindConfig {
    fn default() -> Self {
        Self {
            default_limit: DEFAULT_FIND_LIMIT,
            max_bytes: crate::config::DEFAULT_MAX_BYTES,
        }
    }
}

/// Search for files by glob pattern.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FindInput {
    /// Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'. Without
    /// '/', it matches file names at any depth; with '/', the path relative to the search
    /// directory.
    pub pattern: String,
    /// Directory to search in (default: current directory)
    #[serde(default)]
    pub path: Option<String>,
    /// Maximum number of results (default: 1000)
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
    /// Also list paths excluded by .gitignore, .ignore and .git/info/exclude (default: false)
    #[serde(default)]
    pub include_ignored: Option<bool>,
}

/// The `find` tool.
#[derive(Debug, Clone, Default)]
pub struct FindTool {
    config: FindConfig,
}

impl FindTool {
    /// The tool with `config`.
    pub fn new(config: FindConfig) -> Self {
        Self { config }
    }
}

impl Tool for FindTool {
    const NAME: &'static str = "find";
    type Input = FindInput;

    fn title(&self) -> &'static str {
        "Find files"
    }

    fn description(&self) -> String {
        format!(
            "Search for files by glob pattern. Returns matching paths relative to the search \
             directory, sorted, directories with a trailing '/'. Respects .gitignore, .ignore and \
             .git/info/exclude (inside and outside git repositories; includeIgnored lists ignored \
             paths too); lists hidden files but never .git. Output is truncated to {} results or \
             {} (whichever is hit first).",
            self.config.default_limit,
            format_size(self.config.max_bytes),
        )
    }

    fn effects(&self) -> Effects {
        Effects::ReadOnly
    }

    async fn call(&self, ctx: &ToolContext, input: FindInput) -> Result<ToolResult, ToolError> {
        let pattern = input.pattern.trim();
        if pattern.is_empty() {
            return Err(ToolError::invalid(
                "The pattern is empty. Give a glob such as \"*.rs\" or \"src/**/*.ts\".",
            ));
        }
        if let Err(error) = PathGlob::new(pattern) {
            return Err(glob_error(&error));
        }
        let root = resolve_root(ctx, input.path.as_deref()).await?;
        if root.kind != RootKind::Directory {
            return Err(ToolError::failed(format!(
                "Not a directory: {}. find searches a directory; use read for a single file.",
                root.shown
            )));
        }
        let limit = input
            .limit
            .map_or(self.config.default_limit, |limit| {
                usize::try_from(limit).unwrap_or(usize::MAX)
            })
            .max(1);
        let mut request = WalkRequest::new(root.path.clone());
        request.glob = Some(pattern.to_owned());
        request.kinds = EntryKinds::FilesAndDirectories;
        request.ignore = if input.include_ignored == Some(true) {
            IgnoreRules::IncludeIgnored
        } else {
            IgnoreRules::Respect
        };
        request.limit = Some(limit);
        request.cancel = ctx.cancel.child_token();

        let walk = ctx.env.walk(request);
        let result = tokio::select! {
            result = walk => result,
            () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
        };
        let result = match result {
            Ok(result) => result,
            Err(error) if error.kind() == ErrorKind::Aborted => return Err(ToolError::Cancelled),
            Err(error) if error.kind() == ErrorKind::NotFound => {
                return Err(ToolError::failed(format!("Path not found: {}", root.shown)));
            }
            Err(error) => return Err(ToolError::failed(format!("Find failed: {error}"))),
        };

        if result.entries.is_empty() {
            return Ok(ToolResult::text("No files found matching pattern")
                .with_details(json!({ "results": 0 })));
        }
        let mut output = String::new();
        for entry in &result.entries {
            let path = display_path(&entry.path);
            let slash = if entry.kind == FileKind::Directory {
                "/"
            } else {
                ""
            };
            let _ = writeln!(output, "{path}{slash}");
        }
        output.pop();

        let truncation = truncate_head(
            &output,
            TruncationOptions {
                max_lines: usize::MAX,
                max_bytes: self.config.max_bytes,
            },
        );
        let mut text = truncation.content.to_owned();
        let mut notices = Vec::new();
        if result.limit_reached {
            notices.push(format!(
                "{limit} results limit reached. Use limit={} for more, or refine pattern",
                limit.saturating_mul(2)
            ));
        }
        if truncation.truncated {
            notices.push(format!(
                "{} limit reached",
                format_size(self.config.max_bytes)
            ));
        }
        if !notices.is_empty() {
            let _ = write!(text, "\n\n[{}]", notices.join(". "));
        }

        let mut details = Map::new();
        details.insert("results".into(), json!(result.entries.len()));
        if result.limit_reached {
            details.insert("resultLimitReached".into(), json!(limit));
        }
        if truncation.truncated {
            details.insert("truncation".into(), truncation_details(&truncation));
        }
        Ok(ToolResult::text(text).with_details(Value::Object(details)))
    }
}

fn glob_error(error: &SearchInputError) -> ToolError {
    match error {
        SearchInputError::Glob { glob, message } => {
            ToolError::invalid(format!("Invalid glob \"{glob}\": {message}"))
        }
        other => ToolError::invalid(other.to_string()),
    }
}
