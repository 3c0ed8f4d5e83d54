//! The `ls` tool: the entries of one directory.

use std::cmp::Ordering;

use jig_env::{DirEntry, ErrorKind, ExecutionEnv, FileKind};
use jig_tool::paths::{self, ResolvedPath};
use jig_tool::{Effects, Tool, ToolContext, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::cancel::cancellable;
use crate::config::LsConfig;
use crate::details::LsDetails;
use crate::failure::{self, Action};
use jig_truncate::format_size;

/// Arguments of the `ls` tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LsInput {
    /// Directory to list, relative to the workspace root (default: the workspace root itself).
    pub path: Option<String>,
    /// Maximum number of entries to return (default 500).
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
}

/// `ls`: lists one directory, sorted, with `/` after directories.
#[derive(Debug, Clone, Default)]
pub struct LsTool {
    config: LsConfig,
}

impl LsTool {
    /// The tool with `config`'s limits.
    pub fn new(config: LsConfig) -> Self {
        Self { config }
    }
}

impl Tool for LsTool {
    const NAME: &'static str = "ls";
    type Input = LsInput;
    type Details = LsDetails;

    fn title(&self) -> &'static str {
        "List directory"
    }

    fn description(&self) -> String {
        format!(
            "List the entries of one directory in the workspace (not recursive), including \
             dotfiles, sorted case-insensitively. Directories end with `/` (also symbolic links \
             to directories); a broken symbolic link is shown as `name -> target (broken \
             symlink)`. Returns at most {limit} entries (raise `limit` for more) and {size} of \
             output. Paths are relative to the workspace root (default: the root itself); paths \
             outside the workspace (also through symbolic links) are refused.",
            limit = self.config.default_limit,
            size = format_size(self.config.max_bytes),
        )
    }

    fn effects(&self) -> Effects {
        Effects::ReadOnly
    }

    async fn call(
        &self,
        ctx: &ToolContext,
        input: LsInput,
    ) -> Result<ToolOutput<LsDetails>, ToolError> {
        let raw = match input.path.as_deref() {
            None | Some("") => ".",
            Some(raw) => raw,
        };
        let path = paths::resolve(ctx, raw).await?;
        let files = ctx.files()?;
        let env = files.as_ref();
        let absolute = path.absolute_display();
        match cancellable(ctx, env.stat(&path.absolute)).await? {
            Ok(info) if info.kind == FileKind::Directory => {}
            Ok(_) => return Err(failure::not_a_directory(&absolute)),
            Err(error) => return Err(failure::at_path(Action::List, &path, &error)),
        }
        // The canonical path: a symlink to a directory is listed as its target's entries on
        // every env (reading a directory does not follow a final symlink everywhere).
        let mut entries = cancellable(ctx, env.read_dir(&path.canonical))
            .await?
            .map_err(|error| failure::at_path(Action::List, &path, &error))?;
        sort_entries(&mut entries);

        let limit = input
            .limit
            .map_or(self.config.default_limit, |l| {
                usize::try_from(l).unwrap_or(usize::MAX)
            })
            .max(1);
        let entry_limit_reached = entries.len() > limit;
        let mut output = String::new();
        let mut shown = 0_usize;
        let mut byte_limit_reached = false;
        // Room for the longest notice, so the output with its notice stays within the budget.
        let reserve = 2 + notice(Some(limit), true, &format_size(self.config.max_bytes)).len();
        for entry in entries.iter().take(limit) {
            if ctx.cancel.is_cancelled() {
                return Err(ToolError::Cancelled);
            }
            let line = describe(ctx, env, &path, entry).await?;
            let cost = line.len() + usize::from(shown > 0);
            if output.len() + cost + reserve > self.config.max_bytes {
                byte_limit_reached = true;
                break;
            }
            if shown > 0 {
                output.push('\n');
            }
            output.push_str(&line);
            shown += 1;
        }
        if entries.is_empty() {
            output.push_str("(empty directory)");
        }
        if entry_limit_reached || byte_limit_reached {
            let limit_text = format_size(self.config.max_bytes);
            output.push_str("\n\n");
            output.push_str(&notice(
                entry_limit_reached.then_some(limit),
                byte_limit_reached,
                &limit_text,
            ));
        }
        Ok(ToolOutput::text(
            output,
            LsDetails {
                path: absolute,
                entries: shown as u64,
                entry_limit_reached: entry_limit_reached.then_some(limit as u64),
                byte_limit_reached,
            },
        ))
    }
}

/// `[500 entries limit reached. Use limit=1000 for more]`, `[50.0KB limit reached]`, or both
/// joined with `. `.
fn notice(entry_limit: Option<usize>, bytes: bool, limit_text: &str) -> String {
    let mut parts = Vec::new();
    if let Some(limit) = entry_limit {
        parts.push(format!(
            "{limit} entries limit reached. Use limit={} for more",
            limit.saturating_mul(2)
        ));
    }
    if bytes {
        parts.push(format!("{limit_text} limit reached"));
    }
    format!("[{}]", parts.join(". "))
}

/// Case-insensitive (lowercase forms compared), then byte-wise; no locale.
fn sort_entries(entries: &mut [DirEntry]) {
    let mut keyed: Vec<(String, DirEntry)> = entries
        .iter()
        .map(|entry| (entry.name.to_string_lossy().to_lowercase(), entry.clone()))
        .collect();
    keyed.sort_by(|(a_key, a), (b_key, b)| compare(a_key, a, b_key, b));
    for (slot, (_, entry)) in entries.iter_mut().zip(keyed) {
        *slot = entry;
    }
}

fn compare(a_key: &str, a: &DirEntry, b_key: &str, b: &DirEntry) -> Ordering {
    a_key
        .cmp(b_key)
        .then_with(|| a.name.as_encoded_bytes().cmp(b.name.as_encoded_bytes()))
}

/// One output line: the name, `/` for a directory (or a symlink to one), or the broken-link
/// form.
async fn describe(
    ctx: &ToolContext,
    env: &dyn ExecutionEnv,
    dir: &ResolvedPath,
    entry: &DirEntry,
) -> Result<String, ToolError> {
    let name = entry.name.to_string_lossy();
    match entry.kind {
        FileKind::Directory => Ok(format!("{name}/")),
        FileKind::Symlink => {
            let full = dir.canonical.join(&entry.name);
            match cancellable(ctx, env.stat(&full)).await? {
                Ok(info) if info.kind == FileKind::Directory => Ok(format!("{name}/")),
                Err(error) if matches!(error.kind(), ErrorKind::NotFound | ErrorKind::Invalid) => {
                    let target = match cancellable(ctx, env.read_link(&full)).await? {
                        Ok(target) => target.display().to_string(),
                        Err(_) => "?".to_owned(),
                    };
                    Ok(format!("{name} -> {target} (broken symlink)"))
                }
                // A file, or a link whose target cannot be examined: shown by name.
                Ok(_) | Err(_) => Ok(name.into_owned()),
            }
        }
        FileKind::File | FileKind::Other => Ok(name.into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> DirEntry {
        DirEntry {
            name: name.into(),
            kind: FileKind::File,
        }
    }

    #[test]
    fn entries_sort_case_insensitively_with_a_bytewise_tie_break() {
        let mut entries = vec![
            entry("b"),
            entry("B"),
            entry("a"),
            entry(".z"),
            entry("A"),
            entry("_"),
        ];
        sort_entries(&mut entries);
        let names: Vec<String> = entries
            .iter()
            .map(|e| e.name.to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [".z", "_", "A", "a", "B", "b"]);
    }

    #[test]
    fn notices_match_the_documented_text() {
        assert_eq!(
            notice(Some(500), false, "50.0KB"),
            "[500 entries limit reached. Use limit=1000 for more]"
        );
        assert_eq!(notice(None, true, "50.0KB"), "[50.0KB limit reached]");
    }
}
