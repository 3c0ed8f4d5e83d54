//! The `grep` tool: search file contents with ripgrep's engine, in process, through the env.

use std::fmt::Write as _;

use jig_env::{
    CaseSensitivity, FileMatches, LineKind, PatternSyntax, SearchInputError, SearchRequest,
    SearchResult,
};
use jig_tool::{Effects, Tool, ToolContext, ToolError, ToolOutput};
use jig_truncate::{format_size, truncate_line};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::details::GrepDetails;

use crate::search_root::{
    bounded_output, display_path, effective_limit, ignore_rules, resolve_root, run_env_search,
};

/// Matches `grep` returns when the caller gives no `limit`.
pub const DEFAULT_GREP_LIMIT: usize = 100;
/// Lines longer than this many characters are cut in `grep` output.
pub const GREP_MAX_LINE_CHARS: usize = jig_truncate::GREP_MAX_LINE_LENGTH;

/// Options of `grep`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GrepConfig {
    /// Matching lines returned when the caller gives no `limit`.
    pub default_limit: usize,
    /// At most this many bytes of output.
    pub max_bytes: usize,
    /// Lines longer than this many characters are cut.
    pub max_line_chars: usize,
}

impl Default for GrepConfig {
    fn default() -> Self {
        Self {
            default_limit: DEFAULT_GREP_LIMIT,
            max_bytes: jig_truncate::DEFAULT_MAX_BYTES,
            max_line_chars: GREP_MAX_LINE_CHARS,
        }
    }
}

/// Search file contents for a pattern (ripgrep's engine and regex syntax).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GrepInput {
    /// Search pattern (regex or literal string)
    pub pattern: String,
    /// Directory or file to search (default: current directory)
    #[serde(default)]
    pub path: Option<String>,
    /// Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'
    #[serde(default)]
    pub glob: Option<String>,
    /// Case-insensitive search (default: false)
    #[serde(default)]
    pub ignore_case: Option<bool>,
    /// Treat pattern as literal string instead of regex (default: false)
    #[serde(default)]
    pub literal: Option<bool>,
    /// Number of lines to show before and after each match (default: 0)
    #[serde(default)]
    #[schemars(range(max = 1000))]
    pub context: Option<u32>,
    /// Maximum number of matches to return (default: 100)
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
    /// Also search files excluded by .gitignore, .ignore and .git/info/exclude (default: false)
    #[serde(default)]
    pub include_ignored: Option<bool>,
}

/// The `grep` tool.
#[derive(Debug, Clone, Default)]
pub struct GrepTool {
    config: GrepConfig,
}

impl GrepTool {
    /// The tool with `config`.
    pub fn new(config: GrepConfig) -> Self {
        Self { config }
    }
}

impl Tool for GrepTool {
    const NAME: &'static str = "grep";
    type Input = GrepInput;
    type Details = GrepDetails;

    fn title(&self) -> &'static str {
        "Search file contents"
    }

    fn description(&self) -> String {
        format!(
            "Search file contents for a pattern. Returns matching lines with file paths and line \
             numbers. Respects .gitignore, .ignore and .git/info/exclude (inside and outside git \
             repositories; includeIgnored searches ignored files too); searches hidden files but \
             never .git; skips binary files. Output is truncated to {} matches or {} (whichever is \
             hit first). Long lines are truncated to {} chars.",
            self.config.default_limit,
            format_size(self.config.max_bytes),
            self.config.max_line_chars,
        )
    }

    fn effects(&self) -> Effects {
        Effects::ReadOnly
    }

    async fn call(
        &self,
        ctx: &ToolContext,
        input: GrepInput,
    ) -> Result<ToolOutput<GrepDetails>, ToolError> {
        let root = resolve_root(ctx, input.path.as_deref()).await?;
        let limit = effective_limit(input.limit, self.config.default_limit);
        let context = input.context.unwrap_or(0) as usize;
        let mut request = SearchRequest::new(root.path.clone(), input.pattern.clone());
        request.syntax = if input.literal == Some(true) {
            PatternSyntax::Literal
        } else {
            PatternSyntax::Regex
        };
        request.case = if input.ignore_case == Some(true) {
            CaseSensitivity::Insensitive
        } else {
            CaseSensitivity::Sensitive
        };
        request.glob = input.glob.clone().filter(|glob| !glob.trim().is_empty());
        request.ignore = ignore_rules(input.include_ignored);
        request.context_lines = context;
        request.limit = Some(limit);
        // Enough bytes for `max_line_chars` characters of any width.
        request.max_line_bytes = self
            .config
            .max_line_chars
            .saturating_mul(4)
            .saturating_add(4);
        request.cancel = ctx.cancel.child_token();
        if let Err(error) = jig_search::validate(&request) {
            return Err(input_error(&error));
        }

        let result = run_env_search(ctx, &root, "Search", ctx.files()?.search(request)).await?;
        Ok(self.render(&result, limit, context))
    }
}

impl GrepTool {
    /// The text and details a model reads for `result`.
    fn render(
        &self,
        result: &SearchResult,
        limit: usize,
        context: usize,
    ) -> ToolOutput<GrepDetails> {
        if result.files.is_empty() {
            return ToolOutput::text(
                "No matches found",
                GrepDetails {
                    matches: 0,
                    files: 0,
                    match_limit_reached: None,
                    truncation: None,
                    lines_truncated: false,
                },
            );
        }
        let mut lines_truncated = false;
        let mut output = String::new();
        for (index, file) in result.files.iter().enumerate() {
            if context > 0 && index > 0 {
                output.push_str("--\n");
            }
            let path = display_path(&file.path);
            lines_truncated |= write_file(
                &mut output,
                &path,
                file,
                context > 0,
                self.config.max_line_chars,
            );
        }
        if output.ends_with('\n') {
            output.pop();
        }

        let limit_notice = result.limit_reached.then(|| {
            format!(
                "{limit} matches limit reached. Use limit={} for more, or refine pattern",
                limit.saturating_mul(2)
            )
        });
        let cut_lines_notice = lines_truncated.then(|| {
            format!(
                "Some lines truncated to {} chars. Use read to see full lines",
                self.config.max_line_chars
            )
        });
        let (text, truncation) = bounded_output(
            &output,
            self.config.max_bytes,
            limit_notice,
            cut_lines_notice,
        );

        ToolOutput::text(
            text,
            GrepDetails {
                matches: result.matches as u64,
                files: result.files.len() as u64,
                match_limit_reached: result.limit_reached.then_some(limit as u64),
                truncation,
                lines_truncated,
            },
        )
    }
}

/// Appends one file's lines; with context, `--` separates blocks that are not adjacent. Returns whether a
/// line was cut.
fn write_file(
    output: &mut String,
    path: &str,
    file: &FileMatches,
    separate_blocks: bool,
    max_chars: usize,
) -> bool {
    let mut cut_any = false;
    let mut previous: Option<u64> = None;
    for line in &file.lines {
        if separate_blocks && previous.is_some_and(|previous| line.number > previous + 1) {
            output.push_str("--\n");
        }
        previous = Some(line.number);
        let (text, cut) = truncate_line(&line.text, max_chars);
        let text = if line.truncated && !cut {
            format!("{text}{}", jig_truncate::LINE_TRUNCATED_MARKER).into()
        } else {
            text
        };
        cut_any |= cut || line.truncated;
        let separator = match line.kind {
            LineKind::Match => ':',
            LineKind::Context => '-',
        };
        let _ = writeln!(output, "{path}{separator}{}{separator} {text}", line.number);
    }
    cut_any
}

fn input_error(error: &SearchInputError) -> ToolError {
    match error {
        SearchInputError::Pattern { message } => ToolError::invalid(format!(
            "Invalid regex: {message}\nFix the pattern, or set literal: true to search for the \
             text exactly as written."
        )),
        SearchInputError::Glob { glob, message } => {
            ToolError::invalid(format!("Invalid glob \"{glob}\": {message}"))
        }
        _ => ToolError::invalid(error.to_string()),
    }
}
