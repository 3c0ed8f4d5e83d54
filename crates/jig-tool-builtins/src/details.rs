//! The `details` of each built-in tool's results: one type per tool, the wire contract hosts
//! read (MCP `_meta`, `jig tool --json`, session files). Keys are camelCase; absent facts are
//! left out rather than sent as `null`. Each type's schema is published with the tool
//! (`jig tools --json`, [`jig_tool::DynTool::details_schema`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use jig_truncate::{FullOutputState, TruncatedBy, Truncation};

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_false(value: &bool) -> bool {
    !*value
}

/// `read`'s details: a page of text, a binary file, or an image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ReadDetails {
    /// A page of a text file (or an empty file).
    Text(ReadPage),
    /// A file that is not text, described rather than shown.
    Binary(BinaryFile),
    /// An image file.
    Image {
        /// What was sent, or that it was left out.
        image: ImageDetails,
    },
}

/// A page of a text file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadPage {
    /// The file's absolute path.
    pub path: String,
    /// True for an empty file (the result's text is then empty).
    #[serde(default, skip_serializing_if = "is_false")]
    pub empty: bool,
    /// Bytes in the file.
    pub bytes: u64,
    /// Lines in the file.
    pub lines: u64,
    /// The first line shown (0 for an empty file).
    pub start_line: u64,
    /// The last line shown (0 for an empty file).
    pub end_line: u64,
    /// Whether the page ends before the file does.
    pub truncated: bool,
    /// Which bound cut the page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated_by: Option<TruncatedBy>,
    /// The `offset` that continues after this page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
}

/// A file `read` does not show as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BinaryFile {
    /// The file's absolute path.
    pub path: String,
    /// Bytes in the file.
    pub bytes: u64,
    /// Always true.
    pub binary: bool,
    /// The detected MIME type.
    pub mime_type: String,
    /// A short name of the detected type (`PNG image`).
    pub file_type: String,
}

/// An image `read` returned, or left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ImageDetails {
    /// An image block was sent.
    Sent(SentImage),
    /// No image block: the text says why.
    Omitted {
        /// Always true.
        omitted: bool,
        /// Bytes in the file.
        #[serde(rename = "fileBytes")]
        file_bytes: u64,
    },
}

/// The image block `read` sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SentImage {
    /// The MIME type of the bytes sent.
    pub mime_type: String,
    /// The file's width (oriented).
    pub original_width: u32,
    /// The file's height (oriented).
    pub original_height: u32,
    /// The width sent.
    pub width: u32,
    /// The height sent.
    pub height: u32,
    /// True when the bytes sent are not the file's own.
    pub converted: bool,
    /// Bytes in the file.
    pub file_bytes: u64,
}

/// `write`'s details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WriteDetails {
    /// The file's absolute path.
    pub path: String,
    /// Bytes written.
    pub bytes: u64,
    /// Lines written.
    pub lines: u64,
    /// Whether the file was created (rather than replaced).
    pub created: bool,
}

/// `edit`'s details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditDetails {
    /// A compact numbered view of the change.
    pub diff: String,
    /// A unified diff of the change.
    pub patch: String,
    /// The first changed line in the new file (1-based).
    pub first_changed_line: u64,
    /// Bytes in the file before.
    pub old_bytes: u64,
    /// Bytes in the file after.
    pub new_bytes: u64,
    /// How the first inexact match was found, when one was not exact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuzzy: Option<String>,
}

/// `ls`'s details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LsDetails {
    /// The directory's absolute path.
    pub path: String,
    /// Entries shown.
    pub entries: u64,
    /// The entry limit, when the directory has more entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_limit_reached: Option<u64>,
    /// True when the byte limit cut the listing.
    #[serde(default, skip_serializing_if = "is_false")]
    pub byte_limit_reached: bool,
}

/// `find`'s details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FindDetails {
    /// Paths found.
    pub results: u64,
    /// The result limit, when it was reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_limit_reached: Option<u64>,
    /// How the output was cut by its byte limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation: Option<Truncation>,
}

/// `grep`'s details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrepDetails {
    /// Matching lines found.
    pub matches: u64,
    /// Files with a match.
    pub files: u64,
    /// The match limit, when it was reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_limit_reached: Option<u64>,
    /// How the output was cut by its byte limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation: Option<Truncation>,
    /// True when some lines were shortened.
    #[serde(default, skip_serializing_if = "is_false")]
    pub lines_truncated: bool,
}

/// `bash`'s details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BashDetails {
    /// The exit code (the shell's convention when a signal ended it).
    pub exit_code: i32,
    /// The signal that ended the command (`SIGKILL`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// Whether the timeout stopped the command.
    pub timed_out: bool,
    /// Whether the call was aborted.
    pub aborted: bool,
    /// How long the command ran, in milliseconds.
    pub duration_ms: u64,
    /// How the output was cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation: Option<Truncation>,
    /// The file holding the full output, when the output was cut and it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// The `[sandbox]` note, when the command failed in a way the sandbox likely caused (the
    /// interactive session offers to run it again outside the sandbox).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_denied: Option<String>,
}

/// The details of `bash`'s streaming updates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BashProgress {
    /// How the output so far is cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation: Option<Truncation>,
    /// The file receiving the full output, once there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
}
