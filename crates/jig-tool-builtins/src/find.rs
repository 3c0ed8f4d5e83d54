//! The `find` tool: list paths matching a glob, through the env's `walk`.

use std::fmt::Write as _;

use jig_env::{EntryKinds, FileKind, SearchInputError, WalkRequest};
use jig_search::PathGlob;
use jig_tool::{Effects, Tool, ToolContext, ToolError, ToolOutput};
use jig_truncate::format_size;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::details::FindDetails;

use crate::search_root::{
    RootKind, bounded_output, display_path, effective_limit, ignore_rules, resolve_root,
    run_env_search,
};

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
            max_bytes: jig_truncate::DEFAULT_MAX_BYTES,
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
    type Details = FindDetails;

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

    async fn call(
        &self,
        ctx: &ToolContext,
        input: FindInput,
    ) -> Result<ToolOutput<FindDetails>, ToolError> {
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
        let limit = effective_limit(input.limit, self.config.default_limit);
        let mut request = WalkRequest::new(root.path.clone());
        request.glob = Some(pattern.to_owned());
        request.kinds = EntryKinds::FilesAndDirectories;
        request.ignore = ignore_rules(input.include_ignored);
        request.limit = Some(limit);
        request.cancel = ctx.cancel.child_token();
        let result = run_env_search(ctx, &root, "Find", ctx.files()?.walk(request)).await?;

        if result.entries.is_empty() {
            return Ok(ToolOutput::text(
                "No files found matching pattern",
                FindDetails {
                    results: 0,
                    result_limit_reached: None,
                    truncation: None,
                },
            ));
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

        let limit_notice = result.limit_reached.then(|| {
            format!(
                "{limit} results limit reached. Use limit={} for more, or refine pattern",
                limit.saturating_mul(2)
            )
        });
        let (text, truncation) = bounded_output(&output, self.config.max_bytes, limit_notice, None);

        Ok(ToolOutput::text(
            text,
            FindDetails {
                results: result.entries.len() as u64,
                result_limit_reached: result.limit_reached.then_some(limit as u64),
                truncation,
            },
        ))
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
