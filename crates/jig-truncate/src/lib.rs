//! Bounded text: keep the beginning ([`truncate_head`]) or the end ([`truncate_tail`]) of a text
//! under a line limit and a byte limit, whichever is hit first, never splitting a UTF-8 character.
//!
//! Tools use these to keep what they hand to a model small: `read`, `grep`, `find` and `ls` keep
//! the head of their output, `bash` keeps the tail. The returned [`TruncationResult`] says what
//! happened (which limit cut the text, how much was kept, how large the input was) so a tool can
//! write an accurate notice such as `[Showing lines 1-2000 of 9000. Use offset=2001 to continue.]`.
//!
//! [`Truncation`] is the one shape in which every tool reports a cut in its `details`.
//!
//! # Line counting
//!
//! Lines are separated by `\n` only (a `\r` before it stays part of the line). The empty text has
//! zero lines, and a trailing `\n` ends the last line rather than starting an empty one, so
//! `"a\n"` is one line and `"a\nb"` is two — the way `wc -l` counts plus a final unterminated line.
//!
//! # Guarantees
//!
//! For every input and every limit:
//! - `content.len() <= max_bytes` and `content` has at most `max_lines` lines;
//! - `content` is a slice of the input on character boundaries: a prefix for [`truncate_head`], a
//!   suffix for [`truncate_tail`];
//! - [`truncate_head`] never returns a partial line; [`truncate_tail`] returns one only when the
//!   last line alone exceeds the byte limit (`last_line_partial`).
//!
//! # Example
//!
//! ```
//! use jig_truncate::{TruncatedBy, TruncationOptions, format_size, truncate_head, truncate_tail};
//!
//! let text = "one\ntwo\nthree\n";
//! let opts = TruncationOptions { max_lines: 2, ..TruncationOptions::default() };
//!
//! let head = truncate_head(text, opts);
//! assert_eq!(head.content, "one\ntwo");
//! assert_eq!(head.truncated_by, Some(TruncatedBy::Lines));
//! assert_eq!((head.output_lines, head.total_lines), (2, 3));
//!
//! let tail = truncate_tail(text, opts);
//! assert_eq!(tail.content, "two\nthree\n");
//!
//! assert_eq!(format_size(head.max_bytes), "50.0KB");
//! ```

mod details;

use std::borrow::Cow;
use std::fmt;

pub use details::{FullOutputState, Truncation};

/// Default line limit: 2000 lines.
pub const DEFAULT_MAX_LINES: usize = 2000;

/// Default byte limit: 50 KiB (51 200 bytes, shown as `50.0KB` by [`format_size`]).
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;

/// Default character limit of one line for [`truncate_line`] (grep match lines).
pub const GREP_MAX_LINE_LENGTH: usize = 500;

/// Marker appended by [`truncate_line`] to a line it shortened.
pub const LINE_TRUNCATED_MARKER: &str = "... [truncated]";

/// Limits for [`truncate_head`] and [`truncate_tail`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TruncationOptions {
    /// Maximum number of lines kept.
    pub max_lines: usize,
    /// Maximum number of UTF-8 bytes kept.
    pub max_bytes: usize,
}

impl Default for TruncationOptions {
    fn default() -> Self {
        Self {
            max_lines: DEFAULT_MAX_LINES,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// Which limit cut the text. On the wire: `"lines"` or `"bytes"`.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum TruncatedBy {
    /// The line limit was reached (also chosen when both limits are reached at the same line).
    Lines,
    /// The byte limit was reached.
    Bytes,
}

impl TruncatedBy {
    /// The lowercase name used in tool `details` (`"lines"` or `"bytes"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Lines => "lines",
            Self::Bytes => "bytes",
        }
    }
}

impl fmt::Display for TruncatedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What [`truncate_head`] or [`truncate_tail`] kept, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TruncationResult<'a> {
    /// The kept text: a prefix (head) or suffix (tail) of the input, on character boundaries.
    pub content: &'a str,
    /// Whether anything of the input was dropped.
    pub truncated: bool,
    /// Which limit cut the text; `None` when nothing was dropped.
    pub truncated_by: Option<TruncatedBy>,
    /// Lines in the whole input (see the crate docs for how lines are counted).
    pub total_lines: usize,
    /// UTF-8 bytes in the whole input.
    pub total_bytes: usize,
    /// Lines in `content`, counted the same way (a partial line counts as one).
    pub output_lines: usize,
    /// Bytes in `content`.
    pub output_bytes: usize,
    /// Tail only: `content` is the end of a single line that alone exceeds the byte limit.
    pub last_line_partial: bool,
    /// Head only: the first line alone exceeds the byte limit, so `content` is empty.
    pub first_line_exceeds_limit: bool,
    /// The line limit used.
    pub max_lines: usize,
    /// The byte limit used.
    pub max_bytes: usize,
}

impl TruncationResult<'_> {
    fn untouched(text: &str, total_lines: usize, opts: TruncationOptions) -> TruncationResult<'_> {
        TruncationResult {
            content: text,
            truncated: false,
            truncated_by: None,
            total_lines,
            total_bytes: text.len(),
            output_lines: total_lines,
            output_bytes: text.len(),
            last_line_partial: false,
            first_line_exceeds_limit: false,
            max_lines: opts.max_lines,
            max_bytes: opts.max_bytes,
        }
    }
}

/// Number of lines in `text`: `\n`-separated, a trailing `\n` does not start an extra line, and
/// the empty text has none.
///
/// ```
/// assert_eq!(jig_truncate::count_lines(""), 0);
/// assert_eq!(jig_truncate::count_lines("a\n"), 1);
/// assert_eq!(jig_truncate::count_lines("a\nb"), 2);
/// assert_eq!(jig_truncate::count_lines("\n"), 1);
/// ```
pub fn count_lines(text: &str) -> usize {
    let newlines = text.bytes().filter(|&b| b == b'\n').count();
    if text.is_empty() || text.ends_with('\n') {
        newlines
    } else {
        newlines + 1
    }
}

/// Keeps the beginning of `text`: whole lines from the top while both limits hold.
///
/// - Within both limits: `content` is `text` unchanged (trailing newline included).
/// - The first line alone is longer than `max_bytes`: `content` is empty and
///   `first_line_exceeds_limit` is set, so the caller can show a cut-down piece with its own notice.
/// - Otherwise: the longest run of whole lines that fits, joined by `\n`, without a trailing
///   newline. `truncated_by` is [`TruncatedBy::Lines`] when `max_lines` lines were kept (even if the
///   next line would also have broken the byte limit), else [`TruncatedBy::Bytes`].
///
/// Unlike Pi, the no-op check and the budget agree exactly: when every line fits but the input's
/// final `\n` would push it one byte over, all lines are returned (`output_lines == total_lines`)
/// with `truncated_by: Bytes`, and nothing but that newline is missing.
pub fn truncate_head(text: &str, opts: TruncationOptions) -> TruncationResult<'_> {
    let total_lines = count_lines(text);
    if total_lines <= opts.max_lines && text.len() <= opts.max_bytes {
        return TruncationResult::untouched(text, total_lines, opts);
    }

    let first_line_len = text.find('\n').unwrap_or(text.len());
    if first_line_len > opts.max_bytes {
        return TruncationResult {
            content: "",
            truncated: true,
            truncated_by: Some(TruncatedBy::Bytes),
            output_lines: 0,
            output_bytes: 0,
            first_line_exceeds_limit: true,
            ..TruncationResult::untouched(text, total_lines, opts)
        };
    }

    // `end` is the byte offset just past the last kept line (excluding its newline).
    let mut end = 0;
    let mut kept = 0;
    let mut truncated_by = TruncatedBy::Bytes;
    let mut line_start = 0;
    while line_start < text.len() {
        if kept == opts.max_lines {
            truncated_by = TruncatedBy::Lines;
            break;
        }
        let line_end = text[line_start..]
            .find('\n')
            .map_or(text.len(), |i| line_start + i);
        if line_end > opts.max_bytes {
            break;
        }
        end = line_end;
        kept += 1;
        line_start = line_end + 1;
    }

    TruncationResult {
        content: &text[..end],
        truncated: true,
        truncated_by: Some(truncated_by),
        output_lines: kept,
        output_bytes: end,
        ..TruncationResult::untouched(text, total_lines, opts)
    }
}

/// Keeps the end of `text`: whole lines from the bottom while both limits hold.
///
/// - Within both limits: `content` is `text` unchanged.
/// - Otherwise `content` is the longest suffix that starts at a line start and fits; a trailing
///   newline of the input is kept (and counts towards `max_bytes`). `truncated_by` is
///   [`TruncatedBy::Lines`] when `max_lines` lines were kept, else [`TruncatedBy::Bytes`].
/// - When even the last line does not fit, `content` is the last `max_bytes` bytes of the text,
///   moved forward to a character boundary, and `last_line_partial` is set (the only case that
///   returns part of a line).
pub fn truncate_tail(text: &str, opts: TruncationOptions) -> TruncationResult<'_> {
    let total_lines = count_lines(text);
    if total_lines <= opts.max_lines && text.len() <= opts.max_bytes {
        return TruncationResult::untouched(text, total_lines, opts);
    }

    // Lines are walked from the end. `body_end` excludes the input's final newline so that it
    // does not produce an empty line; `start` is where the kept suffix begins.
    let body_end = text.strip_suffix('\n').map_or(text.len(), str::len);
    let mut start = text.len();
    let mut kept = 0;
    let mut truncated_by = TruncatedBy::Bytes;
    let mut search_end = body_end;
    loop {
        if kept == opts.max_lines {
            truncated_by = TruncatedBy::Lines;
            break;
        }
        let line_start = text[..search_end].rfind('\n').map_or(0, |i| i + 1);
        if text.len() - line_start > opts.max_bytes {
            break;
        }
        start = line_start;
        kept += 1;
        if line_start == 0 {
            // Unreachable for inputs that needed truncation (the whole text would have fit), but
            // stopping here keeps the loop obviously finite.
            break;
        }
        search_end = line_start - 1;
    }

    let mut last_line_partial = false;
    if kept == 0 && truncated_by == TruncatedBy::Bytes {
        start = ceil_char_boundary(text, text.len() - opts.max_bytes.min(text.len()));
        last_line_partial = start < text.len();
        kept = count_lines(&text[start..]);
    }

    let content = &text[start..];
    TruncationResult {
        content,
        truncated: true,
        truncated_by: Some(truncated_by),
        output_lines: kept,
        output_bytes: content.len(),
        last_line_partial,
        ..TruncationResult::untouched(text, total_lines, opts)
    }
}

/// Shortens one line to at most `max_chars` characters (Unicode scalar values), appending
/// [`LINE_TRUNCATED_MARKER`] when it was cut. Returns the line and whether it was cut.
///
/// ```
/// let (line, cut) = jig_truncate::truncate_line("abcdef", 3);
/// assert_eq!((line.as_ref(), cut), ("abc... [truncated]", true));
/// ```
pub fn truncate_line(line: &str, max_chars: usize) -> (Cow<'_, str>, bool) {
    match line.char_indices().nth(max_chars) {
        None => (Cow::Borrowed(line), false),
        Some((cut, _)) => (
            Cow::Owned(format!("{}{LINE_TRUNCATED_MARKER}", &line[..cut])),
            true,
        ),
    }
}

/// The largest character boundary of `s` that is `<= idx` (`s.len()` when `idx` is past the end).
///
/// ```
/// let s = "aé"; // 'é' occupies bytes 1..3
/// assert_eq!(jig_truncate::floor_char_boundary(s, 2), 1);
/// assert_eq!(jig_truncate::floor_char_boundary(s, 9), 3);
/// ```
pub fn floor_char_boundary(s: &str, idx: usize) -> usize {
    if idx >= s.len() {
        return s.len();
    }
    // A UTF-8 character is at most 4 bytes, so a boundary is at most 3 bytes back.
    (idx.saturating_sub(3)..=idx)
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0)
}

/// The smallest character boundary of `s` that is `>= idx` (`s.len()` when `idx` is past the end).
///
/// ```
/// let s = "aé"; // 'é' occupies bytes 1..3
/// assert_eq!(jig_truncate::ceil_char_boundary(s, 2), 3);
/// assert_eq!(jig_truncate::ceil_char_boundary(s, 1), 1);
/// ```
pub fn ceil_char_boundary(s: &str, idx: usize) -> usize {
    if idx >= s.len() {
        return s.len();
    }
    (idx..s.len())
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(s.len())
}

/// Formats a byte count the way tool notices show it: `512B`, `50.0KB`, `1.5MB`.
///
/// Below 1024 the exact count with `B`; below 1 MiB kibibytes with one decimal and `KB`; otherwise
/// mebibytes with one decimal and `MB`. Halves round up (`1280` → `1.3KB`), as JavaScript's
/// `toFixed(1)` does for these exact binary fractions.
///
/// ```
/// use jig_truncate::format_size;
/// assert_eq!(format_size(512), "512B");
/// assert_eq!(format_size(51_200), "50.0KB");
/// assert_eq!(format_size(1_572_864), "1.5MB");
/// ```
pub fn format_size(bytes: usize) -> String {
    const KIB: u128 = 1024;
    const MIB: u128 = 1024 * 1024;
    let n = bytes as u128;
    let (unit, divisor) = match n {
        _ if n < KIB => return format!("{bytes}B"),
        _ if n < MIB => ("KB", KIB),
        _ => ("MB", MIB),
    };
    let tenths = (n * 10 + divisor / 2) / divisor;
    format!("{}.{}{unit}", tenths / 10, tenths % 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(max_lines: usize, max_bytes: usize) -> TruncationOptions {
        TruncationOptions {
            max_lines,
            max_bytes,
        }
    }

    #[test]
    fn counts_lines_like_wc_plus_final_partial_line() {
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\n"), 1);
        assert_eq!(count_lines("a\nb"), 2);
        assert_eq!(count_lines("a\nb\n"), 2);
        assert_eq!(count_lines("\n\n"), 2);
        assert_eq!(count_lines("a\r\nb\r\n"), 2);
    }

    #[test]
    fn head_within_limits_is_untouched_with_trailing_newline() {
        let r = truncate_head("a\nb\n", TruncationOptions::default());
        assert_eq!(r.content, "a\nb\n");
        assert!(!r.truncated);
        assert_eq!(r.truncated_by, None);
        assert_eq!((r.total_lines, r.output_lines), (2, 2));
        assert_eq!((r.total_bytes, r.output_bytes), (4, 4));
        assert_eq!(
            (r.max_lines, r.max_bytes),
            (DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES)
        );
    }

    #[test]
    fn byte_limit_equal_to_length_is_not_truncation() {
        assert!(!truncate_head("abc", opts(10, 3)).truncated);
        assert!(!truncate_tail("abc", opts(10, 3)).truncated);
        assert!(!truncate_head("a\nb", opts(2, 3)).truncated);
    }

    #[test]
    fn head_by_lines() {
        let r = truncate_head("1\n2\n3\n4\n", opts(2, 100));
        assert_eq!(r.content, "1\n2");
        assert_eq!(r.truncated_by, Some(TruncatedBy::Lines));
        assert_eq!((r.output_lines, r.total_lines), (2, 4));
        assert_eq!(r.output_bytes, 3);
    }

    #[test]
    fn head_by_bytes_keeps_whole_lines_only() {
        // "aaa\nbbb" is 7 bytes; "ccc" would make it 11.
        let r = truncate_head("aaa\nbbb\nccc", opts(100, 9));
        assert_eq!(r.content, "aaa\nbbb");
        assert_eq!(r.truncated_by, Some(TruncatedBy::Bytes));
        assert_eq!(r.output_lines, 2);
        assert!(!r.first_line_exceeds_limit);
    }

    #[test]
    fn head_both_limits_at_same_line_reports_lines() {
        // Two lines fit exactly in 7 bytes; the third breaks both limits.
        let r = truncate_head("aaa\nbbb\nccc", opts(2, 7));
        assert_eq!(r.content, "aaa\nbbb");
        assert_eq!(r.truncated_by, Some(TruncatedBy::Lines));
    }

    #[test]
    fn head_first_line_too_long() {
        let r = truncate_head("abcdef\nx", opts(100, 5));
        assert_eq!(r.content, "");
        assert!(r.truncated && r.first_line_exceeds_limit);
        assert_eq!(r.truncated_by, Some(TruncatedBy::Bytes));
        assert_eq!((r.output_lines, r.output_bytes), (0, 0));
        assert_eq!(r.total_lines, 2);
    }

    #[test]
    fn head_only_trailing_newline_over_budget() {
        let r = truncate_head("abc\n", opts(100, 3));
        assert_eq!(r.content, "abc");
        assert!(r.truncated);
        assert_eq!(r.truncated_by, Some(TruncatedBy::Bytes));
        assert_eq!((r.output_lines, r.total_lines), (1, 1));
    }

    #[test]
    fn head_keeps_carriage_returns() {
        let r = truncate_head("a\r\nb\r\nc\r\n", opts(2, 100));
        assert_eq!(r.content, "a\r\nb\r");
    }

    #[test]
    fn head_empty_leading_lines() {
        let r = truncate_head("\n\nabc", opts(2, 100));
        assert_eq!(r.content, "\n");
        assert_eq!(r.output_lines, 2);
    }

    #[test]
    fn head_zero_lines_limit() {
        let r = truncate_head("abc", opts(0, 100));
        assert_eq!(r.content, "");
        assert_eq!(r.truncated_by, Some(TruncatedBy::Lines));
        assert_eq!(r.output_lines, 0);
    }

    #[test]
    fn tail_by_lines_keeps_trailing_newline() {
        let r = truncate_tail("1\n2\n3\n4\n", opts(2, 100));
        assert_eq!(r.content, "3\n4\n");
        assert_eq!(r.truncated_by, Some(TruncatedBy::Lines));
        assert_eq!((r.output_lines, r.total_lines), (2, 4));
        assert_eq!(r.output_bytes, 4);
    }

    #[test]
    fn tail_by_lines_without_trailing_newline() {
        let r = truncate_tail("1\n2\n3", opts(1, 100));
        assert_eq!(r.content, "3");
        assert_eq!(r.output_lines, 1);
    }

    #[test]
    fn tail_by_bytes_keeps_whole_lines() {
        let r = truncate_tail("aaa\nbbb\nccc\n", opts(100, 9));
        assert_eq!(r.content, "bbb\nccc\n");
        assert_eq!(r.truncated_by, Some(TruncatedBy::Bytes));
        assert!(!r.last_line_partial);
        assert_eq!(r.output_lines, 2);
    }

    #[test]
    fn tail_both_limits_at_same_line_reports_lines() {
        let r = truncate_tail("aaa\nbbb\nccc", opts(2, 7));
        assert_eq!(r.content, "bbb\nccc");
        assert_eq!(r.truncated_by, Some(TruncatedBy::Lines));
    }

    #[test]
    fn tail_partial_last_line_on_char_boundary() {
        // "é" is two bytes; the last 5 bytes of "xxéééé" start inside an 'é'.
        let r = truncate_tail("first\nxxéééé", opts(100, 5));
        assert_eq!(r.content, "éé");
        assert!(r.last_line_partial);
        assert_eq!(r.truncated_by, Some(TruncatedBy::Bytes));
        assert_eq!((r.output_lines, r.output_bytes), (1, 4));
        assert!(!r.first_line_exceeds_limit);
    }

    #[test]
    fn tail_partial_with_trailing_newline() {
        let r = truncate_tail("abcdefgh\n", opts(100, 4));
        assert_eq!(r.content, "fgh\n");
        assert!(r.last_line_partial);
    }

    #[test]
    fn tail_zero_byte_limit() {
        let r = truncate_tail("abc", opts(100, 0));
        assert_eq!(r.content, "");
        assert!(r.truncated && !r.last_line_partial);
        assert_eq!(r.output_lines, 0);
    }

    #[test]
    fn tail_zero_line_limit() {
        let r = truncate_tail("abc\n", opts(0, 100));
        assert_eq!(r.content, "");
        assert_eq!(r.truncated_by, Some(TruncatedBy::Lines));
    }

    #[test]
    fn empty_input_is_never_truncated() {
        for r in [truncate_head("", opts(0, 0)), truncate_tail("", opts(0, 0))] {
            assert!(!r.truncated);
            assert_eq!((r.total_lines, r.total_bytes), (0, 0));
        }
    }

    #[test]
    fn truncate_line_counts_characters() {
        assert_eq!(truncate_line("héllo", 5), (Cow::Borrowed("héllo"), false));
        let (cut, was_cut) = truncate_line("héllo", 2);
        assert_eq!(cut, "hé... [truncated]");
        assert!(was_cut);
        assert!(!truncate_line("", 0).1);
    }

    #[test]
    fn char_boundaries() {
        let s = "a€b"; // '€' is bytes 1..4
        assert_eq!(
            (0..=6)
                .map(|i| floor_char_boundary(s, i))
                .collect::<Vec<_>>(),
            [0, 1, 1, 1, 4, 5, 5]
        );
        assert_eq!(
            (0..=6)
                .map(|i| ceil_char_boundary(s, i))
                .collect::<Vec<_>>(),
            [0, 1, 4, 4, 4, 5, 5]
        );
        assert_eq!(floor_char_boundary("", 3), 0);
    }

    #[test]
    fn format_size_matches_pi() {
        assert_eq!(format_size(0), "0B");
        assert_eq!(format_size(1023), "1023B");
        assert_eq!(format_size(1024), "1.0KB");
        assert_eq!(format_size(1280), "1.3KB");
        assert_eq!(format_size(1536), "1.5KB");
        assert_eq!(format_size(DEFAULT_MAX_BYTES), "50.0KB");
        assert_eq!(format_size(1024 * 1024 - 1), "1024.0KB");
        assert_eq!(format_size(1024 * 1024), "1.0MB");
        assert_eq!(format_size(200 * 1024 * 1024), "200.0MB");
        assert_eq!(format_size(usize::MAX), "17592186044416.0MB");
    }

    #[test]
    fn truncated_by_names() {
        assert_eq!(TruncatedBy::Lines.to_string(), "lines");
        assert_eq!(TruncatedBy::Bytes.as_str(), "bytes");
    }
}
