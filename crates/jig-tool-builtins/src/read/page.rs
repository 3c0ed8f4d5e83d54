//! Laying out one page of numbered lines within the line and byte budgets.

use std::fmt::Write as _;

use jig_truncate::{TruncatedBy, format_size};

/// The separator between the line number and the line.
const SEPARATOR: &str = "│ ";

/// One line of the window, decoded for display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PageLine {
    /// 1-based line number.
    pub(crate) number: u64,
    /// The text shown (no `\n`, no trailing `\r`), possibly only the line's beginning.
    pub(crate) text: String,
    /// True when `text` is only the beginning of the line.
    pub(crate) cut: bool,
    /// The whole line's length in bytes.
    pub(crate) full_len: u64,
}

impl PageLine {
    /// A line from its bytes (possibly only a prefix of the line, when `bytes.len() < full_len`).
    /// Invalid UTF-8 is shown as U+FFFD; a character cut by the prefix is dropped; a final
    /// `\r` of a complete line is not shown.
    pub(crate) fn from_bytes(number: u64, bytes: &[u8], full_len: u64) -> Self {
        let cut = (bytes.len() as u64) < full_len;
        let mut bytes = bytes;
        if cut {
            if let Err(error) = std::str::from_utf8(bytes)
                && error.error_len().is_none()
            {
                bytes = &bytes[..error.valid_up_to()];
            }
        } else if let Some(stripped) = bytes.strip_suffix(b"\r") {
            bytes = stripped;
        }
        let text = match std::str::from_utf8(bytes) {
            Ok(valid) => valid.to_owned(),
            Err(_) => String::from_utf8_lossy(bytes).into_owned(),
        };
        Self {
            number,
            text,
            cut,
            full_len,
        }
    }
}

/// What [`compose`] lays out.
#[derive(Debug)]
pub(crate) struct PageRequest {
    /// The window's lines, in order, starting at the requested offset.
    pub(crate) lines: Vec<PageLine>,
    /// Lines in the whole file.
    pub(crate) total_lines: u64,
    /// True when the window ended because of the caller's `limit` (not truncation).
    pub(crate) caller_limited: bool,
    /// The byte budget for the whole output, notice included.
    pub(crate) max_bytes: usize,
}

/// A laid-out page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Page {
    /// The output text, notice included.
    pub(crate) text: String,
    /// First line shown.
    pub(crate) start_line: u64,
    /// Last line shown (possibly only its beginning).
    pub(crate) end_line: u64,
    /// Set when a budget cut the page.
    pub(crate) truncated_by: Option<TruncatedBy>,
    /// The offset to continue from, when there is more to read.
    pub(crate) next_offset: Option<u64>,
}

/// Lines in `text`: a final line without `\n` counts, a trailing `\n` adds none.
pub(crate) fn count_lines(text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    let newlines = memchr_count(text.as_bytes());
    if text.ends_with('\n') {
        newlines
    } else {
        newlines + 1
    }
}

fn memchr_count(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

fn digits(number: u64) -> usize {
    number.to_string().len()
}

/// The number column's width: digits of the largest number on the page, at least 4.
fn width_for(last: u64) -> usize {
    digits(last).max(4)
}

fn prefix_len(width: usize) -> usize {
    width + SEPARATOR.len()
}

fn line_cost(line: &PageLine, width: usize) -> usize {
    prefix_len(width) + line.text.len()
}

fn render(lines: &[PageLine]) -> String {
    let Some(last) = lines.last() else {
        return String::new();
    };
    let width = width_for(last.number);
    let mut out = String::with_capacity(lines.iter().map(|line| line_cost(line, width) + 1).sum());
    for (index, line) in lines.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        let _ = write!(out, "{:>width$}{SEPARATOR}{}", line.number, line.text);
    }
    out
}

fn showing_notice(start: u64, end: u64, total: u64, limit: Option<&str>) -> String {
    match limit {
        Some(limit) => format!(
            "[Showing lines {start}-{end} of {total} ({limit} limit). Use offset={} to continue.]",
            end + 1
        ),
        None => format!(
            "[Showing lines {start}-{end} of {total}. Use offset={} to continue.]",
            end + 1
        ),
    }
}

fn more_notice(end: u64, total: u64) -> String {
    format!(
        "[{} more lines in file. Use offset={} to continue.]",
        total - end,
        end + 1
    )
}

fn cut_line_notice(line: u64, full_len: u64, total: u64, limit: &str) -> String {
    let size = format_size(usize::try_from(full_len).unwrap_or(usize::MAX));
    if line < total {
        format!(
            "[Line {line} is {size}, over the {limit} limit: only its beginning is shown. Use offset={} to continue.]",
            line + 1
        )
    } else {
        format!(
            "[Line {line} is {size}, over the {limit} limit: only its beginning is shown. It is the last line of the file.]"
        )
    }
}

/// Lays out the page: whole lines while they fit (number prefixes and the notice count against
/// the byte budget), or the beginning of the first line when it alone is too long.
pub(crate) fn compose(request: &PageRequest) -> Page {
    let PageRequest {
        lines,
        total_lines,
        caller_limited,
        max_bytes,
    } = request;
    let (total, max_bytes) = (*total_lines, *max_bytes);
    let Some(first) = lines.first() else {
        return Page {
            text: String::new(),
            start_line: 0,
            end_line: 0,
            truncated_by: None,
            next_offset: None,
        };
    };
    let start = first.number;
    let limit_text = format_size(max_bytes);

    // Everything up to the end of the file fits without a notice: show it as is.
    let widest = width_for(lines.last().map_or(start, |line| line.number));
    let all_cost: usize = lines
        .iter()
        .map(|line| line_cost(line, widest))
        .sum::<usize>()
        + lines.len()
        - 1;
    let reaches_end = lines.last().is_some_and(|line| line.number == total);
    if reaches_end && all_cost <= max_bytes && !lines.iter().any(|line| line.cut) {
        return Page {
            text: render(lines),
            start_line: start,
            end_line: total,
            truncated_by: None,
            next_offset: None,
        };
    }

    // A notice is needed: reserve room for the longest one this page could carry.
    // (The notice for a first line that alone is too long is sized where it is built.)
    let reserve = 2 + showing_notice(start, total, total, Some(&limit_text))
        .len()
        .max(more_notice(start.saturating_sub(1), total).len());
    let budget = max_bytes.saturating_sub(reserve);
    let mut used = 0_usize;
    let mut shown = 0_usize;
    for line in lines {
        if line.cut {
            break;
        }
        let cost = line_cost(line, widest) + usize::from(shown > 0);
        if used + cost > budget {
            break;
        }
        used += cost;
        shown += 1;
    }

    if shown == 0 {
        return first_line_beginning(first, total, max_bytes, &limit_text);
    }

    let page_lines = &lines[..shown];
    let end = page_lines[shown - 1].number;
    let body = render(page_lines);
    if end >= total {
        return Page {
            text: body,
            start_line: start,
            end_line: end,
            truncated_by: None,
            next_offset: None,
        };
    }
    let (notice, truncated_by) = if shown < lines.len() {
        (
            showing_notice(start, end, total, Some(&limit_text)),
            Some(TruncatedBy::Bytes),
        )
    } else if *caller_limited {
        (more_notice(end, total), None)
    } else {
        (
            showing_notice(start, end, total, None),
            Some(TruncatedBy::Lines),
        )
    };
    Page {
        text: format!("{body}\n\n{notice}"),
        start_line: start,
        end_line: end,
        truncated_by,
        next_offset: Some(end + 1),
    }
}

/// The page when the first line alone is too long: its beginning, cut on a character
/// boundary, and a notice naming the next offset.
fn first_line_beginning(first: &PageLine, total: u64, max_bytes: usize, limit_text: &str) -> Page {
    let start = first.number;
    let width = width_for(start);
    let notice = cut_line_notice(start, first.full_len, total, limit_text);
    let budget = max_bytes.saturating_sub(2 + notice.len());
    let room = budget.saturating_sub(prefix_len(width)).max(1);
    let cut = floor_boundary(&first.text, room);
    let partial = PageLine {
        text: first.text[..cut].to_owned(),
        ..first.clone()
    };
    let text = format!("{}\n\n{notice}", render(std::slice::from_ref(&partial)));
    Page {
        text,
        start_line: start,
        end_line: start,
        truncated_by: Some(TruncatedBy::Bytes),
        next_offset: (start < total).then_some(start + 1),
    }
}

fn floor_boundary(text: &str, index: usize) -> usize {
    if index >= text.len() {
        return text.len();
    }
    let mut at = index;
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(number: u64, text: &str) -> PageLine {
        PageLine::from_bytes(number, text.as_bytes(), text.len() as u64)
    }

    fn request(
        lines: Vec<PageLine>,
        total: u64,
        caller_limited: bool,
        max_bytes: usize,
    ) -> PageRequest {
        PageRequest {
            lines,
            total_lines: total,
            caller_limited,
            max_bytes,
        }
    }

    #[test]
    fn a_whole_small_file_has_no_notice() {
        let page = compose(&request(vec![line(1, "status: draft")], 1, false, 51200));
        assert_eq!(page.text, "   1│ status: draft");
        assert_eq!(
            (page.start_line, page.end_line, page.next_offset),
            (1, 1, None)
        );
    }

    #[test]
    fn the_caller_limit_gives_the_more_lines_notice_without_truncation() {
        let page = compose(&request(vec![line(1, "a")], 2, true, 51200));
        assert_eq!(
            page.text,
            "   1│ a\n\n[1 more lines in file. Use offset=2 to continue.]"
        );
        assert_eq!(page.truncated_by, None);
        assert_eq!(page.next_offset, Some(2));
    }

    #[test]
    fn the_width_follows_the_largest_number_shown() {
        let page = compose(&request(
            vec![line(9999, "a"), line(10000, "b")],
            10000,
            false,
            51200,
        ));
        assert_eq!(page.text, " 9999│ a\n10000│ b");
    }

    #[test]
    fn output_stays_within_the_byte_budget_including_the_notice() {
        let lines: Vec<PageLine> = (1..=100).map(|n| line(n, "0123456789")).collect();
        let page = compose(&request(lines, 1000, false, 300));
        assert!(page.text.len() <= 300, "{}", page.text.len());
        assert_eq!(page.truncated_by, Some(TruncatedBy::Bytes));
        assert!(page.text.ends_with(&format!(
            "of 1000 (300B limit). Use offset={} to continue.]",
            page.end_line + 1
        )));
    }

    #[test]
    fn a_line_longer_than_the_budget_shows_its_beginning_cut_on_a_char_boundary() {
        let long = "é".repeat(500);
        let page = compose(&request(vec![line(1, &long), line(2, "x")], 2, false, 300));
        assert!(page.text.len() <= 300);
        assert!(page.text.starts_with("   1│ éé"));
        assert!(page.text.ends_with("[Line 1 is 1000B, over the 300B limit: only its beginning is shown. Use offset=2 to continue.]"), "{}", page.text);
        assert_eq!(page.next_offset, Some(2));
    }

    #[test]
    fn crlf_is_hidden_and_cut_characters_dropped() {
        assert_eq!(line(1, "a\r").text, "a");
        let cut = PageLine::from_bytes(1, "aé".as_bytes().get(..2).unwrap(), 3);
        assert_eq!(cut.text, "a");
        assert!(cut.cut);
    }

    #[test]
    fn line_counting_ignores_a_trailing_newline() {
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\n"), 1);
        assert_eq!(count_lines("a\nb"), 2);
        assert_eq!(count_lines("\n"), 1);
    }
}
