//! The `edit` tool: exact, multi-edit text replacement that never changes a byte it was not
//! asked to change.
//!
//! How one call runs:
//! 1. [`EditTool::prepare_arguments`] folds older argument shapes into `{path, edits}`.
//! 2. The path is resolved and checked against the workspace; the file's mutation-queue turn
//!    and the env's cross-process update lock are taken and held across the whole
//!    read-modify-write (waiting for either is cancellable). Before writing, the file must still
//!    be the version that was read (size, modification time, identity), else the edit fails as
//!    "changed since it was read" and writes nothing.
//! 3. The bytes are decoded strictly ([`encoding`]): UTF-8 with or without BOM, UTF-16 with BOM.
//!    Anything else is refused, never decoded lossily.
//! 4. [`matching::plan`] locates every `oldText` in the original text (exact first, counted with
//!    overlaps; then the independent [`tolerant`] tiers), checks the batch as a whole and returns
//!    byte spans of the original with the bytes to put there, line endings converted.
//! 5. The new content is built by splicing into the original bytes and written atomically
//!    through the env; [`diff`] reports the change computed over the changed lines only.

mod closest;
mod diff;
mod encoding;
mod matching;
mod text;
mod tolerant;

use std::fmt::Write as _;

use jig_env::{Bytes, EnvError, ErrorKind, FileKind};
use jig_tool::{Effects, Tool, ToolContext, ToolError, ToolOutput, paths};
use jig_truncate::format_size;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::cancel::cancellable;
use crate::details::EditDetails;
use crate::failure::{self, Action, Subject};

use self::encoding::{DecodeError, TextEncoding, decode, encode_utf16};
use self::matching::{EditRequest, PlanError, plan, splice_in_place, splice_into, spliced_len};
use self::text::Source;
use self::tolerant::{MAX_COUNTED, Tier};

/// Edit a single file using exact text replacement. Every edits[].oldText must match a unique,
/// non-overlapping region of the original file. If two changes affect the same block or nearby
/// lines, merge them into one edit instead of emitting overlapping edits. Do not include large
/// unchanged regions just to connect distant changes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditInput {
    /// Path to the file to edit (relative or absolute)
    pub path: String,
    /// One or more targeted replacements. Each edit is matched against the original file, not
    /// incrementally. Do not include overlapping or nested edits. If two changes touch the same
    /// block or nearby lines, merge them into one edit instead.
    pub edits: Vec<EditOperation>,
}

/// One targeted replacement.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditOperation {
    /// Exact text for one targeted replacement. It must be unique in the original file and must
    /// not overlap with any other edits[].oldText in the same call.
    pub old_text: String,
    /// Replacement text for this targeted edit.
    pub new_text: String,
}

/// The `edit` tool.
#[derive(Debug, Clone, Default)]
pub struct EditTool {}

impl EditTool {
    /// The tool.
    pub fn new() -> Self {
        Self {}
    }
}

const DESCRIPTION: &str = "Edit a single file using exact text replacement. Every edits[].oldText \
must match a unique, non-overlapping region of the original file. If two changes affect the same \
block or nearby lines, merge them into one edit instead of emitting overlapping edits. Do not \
include large unchanged regions just to connect distant changes.\n\n\
Each oldText is matched against the original file (not incrementally) and must be unique; keep \
it as small as possible while unique. newText is inserted literally and takes the file's line \
endings. All edits are checked before anything is written: if one fails, the file is unchanged. \
Only when an oldText has no exact match, the tool also accepts a unique match that differs only \
in trailing whitespace, Unicode quotes/dashes/spaces, uniform indentation, or line-number \
prefixes copied from read output, and says so in its result. newText is then re-indented to the \
file's indentation like oldText. If oldText carried read's line-number gutter, a newText gutter is \
stripped only when every line has one, numbered consecutively from any start, and a partial or \
out-of-sequence one is refused: best send newText without the prefixes.";

impl Tool for EditTool {
    const NAME: &'static str = "edit";
    type Input = EditInput;
    type Details = EditDetails;

    fn title(&self) -> &'static str {
        "Edit file"
    }

    fn description(&self) -> String {
        DESCRIPTION.to_owned()
    }

    fn effects(&self) -> Effects {
        Effects::Mutates
    }

    fn prepare_arguments(&self, args: Value) -> Value {
        prepare_arguments(args)
    }

    async fn call(
        &self,
        ctx: &ToolContext,
        input: EditInput,
    ) -> Result<ToolOutput<EditDetails>, ToolError> {
        run(ctx, input).await
    }
}

/// Key spellings of one edit's two fields accepted from models trained on other tools.
/// The largest file `edit` changes: it holds the file, its decoded text and the result in
/// memory at once. Larger files are refused before anything is read.
pub(crate) const MAX_EDIT_BYTES: u64 = 1024 * 1024 * 1024;

const OLD_KEYS: [&str; 3] = ["oldText", "old_text", "old_string"];
const NEW_KEYS: [&str; 3] = ["newText", "new_text", "new_string"];

fn take_pair(map: &mut Map<String, Value>) -> Option<(Value, Value)> {
    let old_key = OLD_KEYS
        .iter()
        .find(|k| map.get(**k).is_some_and(Value::is_string))?;
    let new_key = NEW_KEYS
        .iter()
        .find(|k| map.get(**k).is_some_and(Value::is_string))?;
    let old = map.remove(*old_key)?;
    let new = map.remove(*new_key)?;
    Some((old, new))
}

fn normalize_edit(item: Value) -> Value {
    match item {
        Value::Object(mut map) if !map.contains_key("oldText") || !map.contains_key("newText") => {
            if let Some((old, new)) = take_pair(&mut map) {
                map.insert("oldText".to_owned(), old);
                map.insert("newText".to_owned(), new);
            }
            Value::Object(map)
        }
        other => other,
    }
}

/// Rewrites older argument shapes into `{path, edits: [{oldText, newText}, …]}`: `edits` given
/// as a JSON string or as a single object, and a top-level `oldText`/`newText` pair (also
/// `old_string`/`new_string`), which is appended to `edits`. Anything else is left for
/// validation to report.
pub(crate) fn prepare_arguments(args: Value) -> Value {
    let Value::Object(mut map) = args else {
        return args;
    };
    if let Some(Value::String(raw)) = map.get("edits")
        && let Ok(parsed @ (Value::Array(_) | Value::Object(_))) =
            serde_json::from_str::<Value>(raw)
    {
        map.insert("edits".to_owned(), parsed);
    }
    if let Some(Value::Object(_)) = map.get("edits")
        && let Some(single) = map.remove("edits")
    {
        map.insert("edits".to_owned(), Value::Array(vec![single]));
    }
    if let Some((old, new)) = take_pair(&mut map) {
        let entry = json!({ "oldText": old, "newText": new });
        match map.get_mut("edits") {
            Some(Value::Array(edits)) => edits.push(entry),
            None | Some(Value::Null) => {
                map.insert("edits".to_owned(), Value::Array(vec![entry]));
            }
            Some(_) => {
                // An `edits` of another type: keep the pair visible so validation reports both.
                map.insert("oldText".to_owned(), entry["oldText"].clone());
                map.insert("newText".to_owned(), entry["newText"].clone());
            }
        }
    }
    if let Some(Value::Array(edits)) = map.get_mut("edits") {
        let items = std::mem::take(edits);
        *edits = items.into_iter().map(normalize_edit).collect();
    }
    Value::Object(map)
}

#[expect(
    clippy::too_many_lines,
    reason = "one linear read-plan-write sequence, clearer in one place"
)]
async fn run(ctx: &ToolContext, input: EditInput) -> Result<ToolOutput<EditDetails>, ToolError> {
    if input.edits.is_empty() {
        return Err(ToolError::invalid(
            "Edit tool input is invalid. edits must contain at least one replacement.",
        ));
    }
    let requests: Vec<EditRequest> = input
        .edits
        .into_iter()
        .map(|e| EditRequest {
            old_text: e.old_text,
            new_text: e.new_text,
        })
        .collect();
    let resolved = paths::resolve(ctx, &input.path).await?;
    let shown = resolved.display.as_str();
    let path = resolved.absolute.as_path();
    // Held across read, plan and write: concurrent edits of one file (through any alias) queue.
    // Waiting is cancellable: a cancelled call gives up its place and holds nothing.
    let _guard = cancellable(ctx, ctx.mutation_queue.lock_key(resolved.canonical.clone())).await?;
    let files = ctx.files()?;
    let env = files.as_ref();
    // The same, between processes: every jig process takes this lock around its
    // read-modify-write of the file (it refuses directories and non-regular files).
    let _lock = cancellable(ctx, env.lock_file(path))
        .await?
        .map_err(|error| match error.kind() {
            // `lock_file` refuses anything but a regular file as invalid.
            ErrorKind::Invalid => failure::not_regular(Action::EditRead, shown),
            _ => env_error(shown, &error, false),
        })?;
    let info = cancellable(ctx, env.stat(path))
        .await?
        .map_err(|error| env_error(shown, &error, false))?;
    match info.kind {
        FileKind::File => {}
        FileKind::Directory => return Err(failure::is_a_directory(Action::EditRead, shown)),
        FileKind::Symlink | FileKind::Other => {
            return Err(failure::not_regular(Action::EditRead, shown));
        }
    }
    if info.size > MAX_EDIT_BYTES {
        return Err(ToolError::failed(format!(
            "Cannot edit {shown}: it is {}, more than the {} edit holds in memory. The file was \
             left unchanged. Change it with a command through bash (for example sed or a \
             script that streams it), or split it.",
            large_size(info.size),
            large_size(MAX_EDIT_BYTES),
        )));
    }
    let original = cancellable(ctx, env.read(path))
        .await?
        .map_err(|error| env_error(shown, &error, false))?;
    let decoded = decode(&original).map_err(|error| decode_error(shown, &error))?;
    let single = requests.len() == 1;
    let source = Source::with_cr(&decoded.text, decoded.has_cr);
    let replacements = plan(source, &requests)
        .map_err(|error| plan_error(shown, single, &decoded.text, &error))?;

    let old_bytes = original.len();
    let report = diff::build(source, &replacements, shown);
    let tiers: Vec<(usize, Tier)> = replacements
        .iter()
        .filter_map(|r| r.tier.map(|tier| (r.index, tier)))
        .collect();
    let count = replacements.len();
    let new_content: Vec<u8> = match decoded.encoding {
        TextEncoding::Utf8 { .. } => {
            // Splice into the buffer just read: a big file is never held twice.
            let bom_len = encoding::bom(decoded.encoding).len();
            drop(decoded);
            let mut content = original;
            splice_in_place(&mut content, bom_len, &replacements);
            content
        }
        TextEncoding::Utf16Le | TextEncoding::Utf16Be => {
            let mut out = Vec::with_capacity(spliced_len(&decoded.text, &replacements));
            splice_into(&mut out, &decoded.text, &replacements);
            let text = String::from_utf8(out).map_err(|_| {
                ToolError::Fatal("edit produced invalid UTF-8 while splicing valid text".to_owned())
            })?;
            encode_utf16(&text, decoded.encoding)
        }
    };
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    // A program that does not take the lock (an editor saving) may have written meanwhile:
    // then this edit was planned on old content and must not replace the new.
    let now = cancellable(ctx, env.stat(path))
        .await?
        .map_err(|error| env_error(shown, &error, false))?;
    if stamp(&now) != stamp(&info) {
        return Err(ToolError::failed(format!(
            "Cannot edit {shown}: it changed since it was read (another program wrote it \
             meanwhile). Nothing was written; read the file again and redo the edit."
        )));
    }
    let new_bytes = new_content.len();
    // Not raced against cancellation: once started, the atomic write either completes or
    // leaves the file untouched, and its outcome is reported.
    env.write(path, Bytes::from(new_content))
        .await
        .map_err(|error| env_error(shown, &error, true))?;

    let mut text = format!("Successfully replaced {count} block(s) in {shown}.");
    for (index, tier) in &tiers {
        let subject = if single {
            "oldText".to_owned()
        } else {
            format!("edits[{index}].oldText")
        };
        let _ = write!(
            text,
            "\nNote: {subject} had no exact match; it was matched {}. Check the diff.",
            tier.describe()
        );
    }
    let details = EditDetails {
        diff: report.diff,
        patch: report.patch,
        first_changed_line: report.first_changed_line as u64,
        old_bytes: old_bytes as u64,
        new_bytes: new_bytes as u64,
        fuzzy: tiers.first().map(|(_, tier)| tier.as_str().to_owned()),
    };
    Ok(ToolOutput::text(text, details))
}

/// A size in GiB with at most one decimal (`32 GiB`, `1.5 GiB`), or smaller units below 1 GiB.
fn large_size(bytes: u64) -> String {
    const GIB: u64 = 1024 * 1024 * 1024;
    if bytes < GIB {
        return format_size(usize::try_from(bytes).unwrap_or(usize::MAX));
    }
    let tenths = (u128::from(bytes) * 10 + u128::from(GIB) / 2) / u128::from(GIB);
    if tenths % 10 == 0 {
        format!("{} GiB", tenths / 10)
    } else {
        format!("{}.{} GiB", tenths / 10, tenths % 10)
    }
}

/// What identifies one version of a file: a rename gives a new identity, a write in place a new
/// size or modification time.
fn stamp(info: &jig_env::FileInfo) -> (u64, Option<std::time::SystemTime>, Option<(u64, u64)>) {
    (info.size, info.modified, info.file_id)
}

/// An env failure as text for the model; `writing` when it came from writing the file back.
fn env_error(shown: &str, error: &EnvError, writing: bool) -> ToolError {
    let action = if writing {
        Action::EditWrite
    } else {
        Action::EditRead
    };
    failure::env_failure(action, Subject::same(shown), error)
}

fn decode_error(shown: &str, error: &DecodeError) -> ToolError {
    ToolError::failed(match error {
        DecodeError::Nul { offset } => format!(
            "Cannot edit {shown}: it contains a NUL byte (at byte {offset}), so it is not a text \
             file edit can change safely. The file was left unchanged."
        ),
        DecodeError::InvalidUtf8 { offset } => format!(
            "Cannot edit {shown}: it is not valid UTF-8 (first invalid byte at offset {offset}) and \
             has no UTF-16 byte-order mark. edit refuses to rewrite it rather than corrupt it; the \
             file was left unchanged."
        ),
        DecodeError::Unsupported { bom } => format!(
            "Cannot edit {shown}: it starts with a {} byte-order mark; edit changes only UTF-8 and \
             UTF-16 text. The file was left unchanged.",
            bom.name()
        ),
        DecodeError::InvalidUtf16 { encoding } => format!(
            "Cannot edit {shown}: it starts with a {} byte-order mark but is not valid {}. The file \
             was left unchanged.",
            encoding.name(),
            encoding.name()
        ),
    })
}

/// `line 3`, `lines 3, 7`, `line 1 ×2` (two matches on one line), `… and 4 more`.
fn format_lines(lines: &[usize], count: usize) -> String {
    let mut entries: Vec<(usize, usize)> = Vec::new();
    for &line in lines {
        match entries.last_mut() {
            Some((last, times)) if *last == line => *times += 1,
            _ => entries.push((line, 1)),
        }
    }
    let listed: Vec<String> = entries
        .iter()
        .map(|&(line, times)| {
            if times > 1 {
                format!("{line} ×{times}")
            } else {
                line.to_string()
            }
        })
        .collect();
    let mut out = format!(
        "line{} {}",
        if entries.len() == 1 { "" } else { "s" },
        listed.join(", ")
    );
    if count > lines.len() {
        let _ = write!(out, " and {} more", count - lines.len());
    }
    out
}

/// How many lines of the file a "not found" error shows when nothing similar was found.
const FIRST_LINES_SHOWN: usize = 10;
/// Characters shown of each of those lines.
const FIRST_LINE_CHARS: usize = 200;

/// Appends the file's first lines (numbered as `read` numbers them), so the model sees what the
/// file holds without another call.
fn push_first_lines(message: &mut String, text: &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.is_empty() {
        message.push_str(" The file is empty.");
        return;
    }
    let total = text.lines().count();
    let shown = total.min(FIRST_LINES_SHOWN);
    let _ = write!(
        message,
        "\nIts first {shown} of {total} {}:",
        if total == 1 { "line" } else { "lines" }
    );
    let width = shown.to_string().len().max(4);
    for (index, line) in text.lines().take(shown).enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let mut cut: String = line.chars().take(FIRST_LINE_CHARS).collect();
        if cut.len() < line.len() {
            cut.push('…');
        }
        let _ = write!(message, "\n{:>width$}│ {cut}", index + 1);
    }
}

#[expect(
    clippy::too_many_lines,
    reason = "one message per planning error, kept side by side"
)]
fn plan_error(shown: &str, single: bool, text: &str, error: &PlanError) -> ToolError {
    let subject = |index: usize| {
        if single {
            "the text".to_owned()
        } else {
            format!("edits[{index}]")
        }
    };
    let mut message = match error {
        PlanError::EmptyOldText { index } => {
            let field = if single {
                "oldText".to_owned()
            } else {
                format!("edits[{index}].oldText")
            };
            format!(
                "{field} must not be empty in {shown}. Give the exact text to replace; to insert, \
                 include a neighbouring line in oldText and repeat it in newText."
            )
        }
        PlanError::NotFound { index, closest } => {
            let mut message = if single {
                format!(
                    "Could not find the exact text in {shown}. The old text must match exactly \
                     including all whitespace and newlines."
                )
            } else {
                format!(
                    "Could not find edits[{index}] in {shown}. The oldText must match exactly \
                     including all whitespace and newlines."
                )
            };
            if let Some(closest) = closest {
                let range = if closest.start_line == closest.end_line {
                    format!("line {}", closest.start_line)
                } else {
                    format!("lines {}-{}", closest.start_line, closest.end_line)
                };
                let _ = write!(
                    message,
                    "\nThe most similar region is {range} ({}% similar):",
                    closest.similarity_percent
                );
                let width = closest
                    .excerpt
                    .last()
                    .map_or(1, |(n, _)| n.to_string().len());
                for (number, line) in &closest.excerpt {
                    let _ = write!(message, "\n{number:>width$}│ {line}");
                }
                if closest.end_line - closest.start_line + 1 > closest.excerpt.len() {
                    let _ = write!(message, "\n{:>width$}│ …", "");
                }
                message.push_str(
                    "\nRead those lines again and copy oldText from them exactly (without the \
                     line-number prefixes).",
                );
            } else {
                message.push_str(
                    "\nNo similar region was found: the file may have changed; read it again \
                     before editing.",
                );
                push_first_lines(&mut message, text);
            }
            message
        }
        PlanError::Ambiguous {
            index,
            count,
            saturated,
            lines,
            tier,
        } => {
            let count_text = if *saturated {
                format!("at least {MAX_COUNTED}")
            } else {
                count.to_string()
            };
            let place = if *saturated {
                format!("{} and more", format_lines(lines, lines.len()))
            } else {
                format_lines(lines, *count)
            };
            let unique = if single {
                "The text must be unique"
            } else {
                "Each oldText must be unique"
            };
            match tier {
                None => format!(
                    "Found {count_text} occurrences of {} in {shown} ({place}). {unique}. Please \
                     provide more context to make it unique.",
                    subject(*index)
                ),
                Some(tier) => format!(
                    "Could not find {} exactly in {shown}; {count_text} regions match it {} \
                     ({place}). {unique}: copy the exact text, with more context.",
                    subject(*index),
                    tier.describe()
                ),
            }
        }
        PlanError::Refused {
            index,
            tier,
            line,
            reason,
        } => {
            let subject = if single {
                "The old text".to_owned()
            } else {
                format!("edits[{index}]")
            };
            match tier {
                Tier::LineNumbers => format!(
                    "{subject} matches the text at line {line} of {shown} once line-number \
                     prefixes are stripped, but {reason}. Give oldText and newText without the \
                     prefixes read adds (`   12│ `)."
                ),
                Tier::Indentation => format!(
                    "{subject} matches the block at line {line} of {shown} only with a different \
                     indentation, but {reason}. Copy oldText with the file's exact indentation \
                     and write newText in it."
                ),
                Tier::TrailingWhitespace | Tier::Unicode => format!(
                    "{subject} has no exact match in {shown}; at line {line} it matches {}, but \
                     {reason}. Copy oldText exactly from the file.",
                    tier.describe()
                ),
            }
        }
        PlanError::Overlap {
            first,
            second,
            first_lines,
            second_lines,
        } => format!(
            "edits[{first}] and edits[{second}] overlap in {shown} ({} and {}). Merge them into \
             one edit or target disjoint regions.",
            span_lines(*first_lines),
            span_lines(*second_lines)
        ),
        PlanError::NoChange => {
            if single {
                format!("No changes made to {shown}. The replacement produced identical content.")
            } else {
                format!("No changes made to {shown}. The replacements produced identical content.")
            }
        }
    };
    if !single && !matches!(error, PlanError::NoChange) {
        message.push_str("\nNo edits were applied; the file is unchanged.");
    }
    ToolError::failed(message)
}

fn span_lines((first, last): (usize, usize)) -> String {
    if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}-{last}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_sizes_read_in_gib() {
        const GIB: u64 = 1024 * 1024 * 1024;
        assert_eq!(large_size(32 * GIB), "32 GiB");
        assert_eq!(large_size(GIB), "1 GiB");
        assert_eq!(large_size(GIB + GIB / 2), "1.5 GiB");
        assert_eq!(
            large_size(512 * 1024 * 1024),
            format_size(512 * 1024 * 1024)
        );
    }

    #[test]
    fn prepare_arguments_folds_legacy_shapes() {
        let folded = prepare_arguments(json!({"path": "a", "oldText": "x", "newText": "y"}));
        assert_eq!(
            folded,
            json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}]})
        );

        let folded = prepare_arguments(
            json!({"path": "a", "edits": "[{\"oldText\":\"x\",\"newText\":\"y\"}]"}),
        );
        assert_eq!(
            folded,
            json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}]})
        );

        let folded =
            prepare_arguments(json!({"path": "a", "edits": {"oldText": "x", "newText": "y"}}));
        assert_eq!(
            folded,
            json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}]})
        );

        let folded = prepare_arguments(json!({
            "path": "a",
            "edits": [{"oldText": "1", "newText": "2"}],
            "old_string": "x",
            "new_string": "y"
        }));
        assert_eq!(
            folded,
            json!({"path": "a", "edits": [{"oldText": "1", "newText": "2"}, {"oldText": "x", "newText": "y"}]})
        );

        let folded = prepare_arguments(json!({"path": "a", "edits": "not json"}));
        assert_eq!(folded, json!({"path": "a", "edits": "not json"}));
    }
}
