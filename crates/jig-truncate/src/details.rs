//! The `truncation` object of a tool's `details`: one shape for every tool that cuts its output.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{TruncatedBy, TruncationResult};

/// How an output was cut, as tools report it in `details.truncation`.
///
/// Every cut says which limit cut it and how large the whole output was. A head-only cut (`grep`,
/// `find`) says how much was kept (`outputLines`, `outputBytes`); a head-and-tail cut (`bash`)
/// says how many lines of each end were kept and how much was left out between them, and what
/// happened to the full output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Truncation {
    /// Which limit cut the output.
    pub truncated_by: TruncatedBy,
    /// Lines in the whole output.
    pub total_lines: u64,
    /// Bytes in the whole output.
    pub total_bytes: u64,
    /// The byte limit.
    pub max_bytes: u64,
    /// The line limit (head-and-tail cuts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_lines: Option<u64>,
    /// Lines kept (head-only cuts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_lines: Option<u64>,
    /// Bytes kept (head-only cuts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_bytes: Option<u64>,
    /// Lines kept from the start (head-and-tail cuts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_lines: Option<u64>,
    /// Lines kept from the end (head-and-tail cuts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail_lines: Option<u64>,
    /// Lines left out between head and tail (head-and-tail cuts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omitted_lines: Option<u64>,
    /// Bytes left out between head and tail (head-and-tail cuts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omitted_bytes: Option<u64>,
    /// The tail is the end of one line that alone is over the byte limit (head-and-tail cuts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_line_partial: Option<bool>,
    /// What happened to the full output (head-and-tail cuts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output: Option<FullOutputState>,
    /// Why the full output could not be saved (`fullOutput: "failed"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_error: Option<String>,
    /// Bytes left out of the middle of the full-output file when the output was longer than
    /// the file's bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_dropped_bytes: Option<u64>,
}

/// What happened to the full output of a cut result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum FullOutputState {
    /// Saved in a file whose path the result gives.
    Kept,
    /// Not saved (by configuration).
    NotKept,
    /// Saving it failed.
    Failed,
}

impl Truncation {
    /// A cut that kept `truncated_by`'s side, with only the fields every cut has.
    pub fn new(
        truncated_by: TruncatedBy,
        total_lines: u64,
        total_bytes: u64,
        max_bytes: u64,
    ) -> Self {
        Self {
            truncated_by,
            total_lines,
            total_bytes,
            max_bytes,
            max_lines: None,
            output_lines: None,
            output_bytes: None,
            head_lines: None,
            tail_lines: None,
            omitted_lines: None,
            omitted_bytes: None,
            last_line_partial: None,
            full_output: None,
            full_output_error: None,
            full_output_dropped_bytes: None,
        }
    }

    /// The head-only cut `result` describes; `None` when nothing was cut.
    pub fn of_head(result: &TruncationResult<'_>) -> Option<Self> {
        let truncated_by = result.truncated_by.filter(|_| result.truncated)?;
        Some(Self {
            output_lines: Some(result.output_lines as u64),
            output_bytes: Some(result.output_bytes as u64),
            ..Self::new(
                truncated_by,
                result.total_lines as u64,
                result.total_bytes as u64,
                result.max_bytes as u64,
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{TruncationOptions, truncate_head};

    #[test]
    fn a_head_cut_serialises_with_camel_case_keys_and_no_empty_fields() {
        let result = truncate_head(
            "a\nb\nc",
            TruncationOptions {
                max_lines: usize::MAX,
                max_bytes: 3,
            },
        );
        let details = serde_json::to_value(Truncation::of_head(&result).unwrap()).unwrap();
        assert_eq!(
            details,
            serde_json::json!({
                "truncatedBy": "bytes",
                "totalLines": 3,
                "totalBytes": 5,
                "outputLines": 2,
                "outputBytes": 3,
                "maxBytes": 3,
            })
        );
        assert!(Truncation::of_head(&truncate_head("a", TruncationOptions::default())).is_none());
    }
}
