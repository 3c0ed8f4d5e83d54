//! The `diff` and `patch` an edit reports, computed only over the changed lines plus context.
//!
//! Line numbers come from counting line breaks up to each changed block, never from a whole-file
//! line diff, so the cost is one linear scan plus a line diff of the (small) changed blocks. A
//! pathological block diff is bounded by a deadline (the diff is then coarser, never wrong).

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use similar::{Algorithm, DiffTag, capture_diff_slices_deadline};

use super::matching::Replacement;
use super::text::{Source, normalize_newlines};

/// Context lines around changes, in both the patch and the numbered view.
const CONTEXT: usize = 4;
/// Time budget for line-diffing all changed blocks of one edit.
const DIFF_BUDGET: Duration = Duration::from_millis(500);

/// What the edit's details report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EditDiff {
    /// Compact numbered view: `+`/`-`/` `, line number, text; long unchanged runs as `...`.
    pub(crate) diff: String,
    /// A unified diff with `---`/`+++` headers.
    pub(crate) patch: String,
    /// 1-based line in the new file where the first change is.
    pub(crate) first_changed_line: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Row {
    /// An unchanged line: its old and new numbers.
    Same {
        old: usize,
        new: usize,
        text: String,
        last_in_file: bool,
    },
    /// A removed line; `new` is the new-file line now at its place.
    Removed {
        old: usize,
        new: usize,
        text: String,
        last_in_old: bool,
    },
    Added {
        old: usize,
        new: usize,
        text: String,
        last_in_new: bool,
    },
    /// `count` unchanged lines not materialised (old numbers from `old`).
    Skipped {
        old: usize,
        new: usize,
        count: usize,
    },
}

impl Row {
    fn is_change(&self) -> bool {
        matches!(self, Self::Removed { .. } | Self::Added { .. })
    }
    fn lines(&self) -> usize {
        match self {
            Self::Skipped { count, .. } => *count,
            _ => 1,
        }
    }
}

/// Splits LF text into lines; the flag says whether the text ended with a line break.
fn split_lines(text: &str) -> (Vec<&str>, bool) {
    if text.is_empty() {
        return (Vec::new(), true);
    }
    let ends = text.ends_with('\n');
    (
        text.strip_suffix('\n')
            .unwrap_or(text)
            .split('\n')
            .collect(),
        ends,
    )
}

/// The unchanged lines of `text[from..to]` (line-aligned) as rows, keeping only the first
/// `head` and last `tail` lines and a `Skipped` row between. Reads only the kept lines, so a
/// gap of millions of lines costs one line count.
fn unchanged_rows(
    source: Source<'_>,
    (from, to): (usize, usize),
    (first_old, breaks): (usize, usize),
    delta: isize,
    (head, tail): (usize, usize),
    rows: &mut Vec<Row>,
) {
    let text = source.text;
    let at_eof = to == text.len();
    let partial_last = at_eof && to > from && !matches!(text.as_bytes()[to - 1], b'\n' | b'\r');
    let count = breaks + usize::from(partial_last);
    let new_of = |old: usize| old.checked_add_signed(delta).unwrap_or(old);
    let row = |k: usize, start: usize, end: usize| Row::Same {
        old: first_old + k,
        new: new_of(first_old + k),
        text: text[start..end].to_owned(),
        last_in_file: partial_last && k + 1 == count,
    };
    let forward = |n: usize, rows: &mut Vec<Row>| {
        let mut at = from;
        for k in 0..n {
            let end = source.line_end(at);
            rows.push(row(k, at, end));
            at = end + source.break_len(end);
        }
    };
    if count <= head + tail {
        forward(count, rows);
        return;
    }
    forward(head, rows);
    rows.push(Row::Skipped {
        old: first_old + head,
        new: new_of(first_old + head),
        count: count - head - tail,
    });
    let mut tail_rows = Vec::with_capacity(tail);
    let mut end = to;
    for k in (count - tail..count).rev() {
        let content_end = if k + 1 == count && partial_last {
            end
        } else if end >= 2 && &text.as_bytes()[end - 2..end] == b"\r\n" {
            end - 2
        } else {
            end - 1
        };
        let start = source.line_start(content_end).max(from);
        tail_rows.push(row(k, start, content_end));
        end = start;
    }
    rows.extend(tail_rows.into_iter().rev());
}

/// Builds the diff of applying `plan` (sorted, non-overlapping) to `text`.
#[expect(
    clippy::too_many_lines,
    reason = "the block walk keeps line bookkeeping in one place"
)]
pub(crate) fn build(source: Source<'_>, plan: &[Replacement], path: &str) -> EditDiff {
    let text = source.text;
    // Line-aligned blocks around each replacement, merged when they share or touch lines.
    let mut groups: Vec<(usize, usize, Vec<&Replacement>)> = Vec::new();
    for replacement in plan {
        let start = source.line_start(replacement.start);
        let end = if replacement.end > replacement.start
            && matches!(text.as_bytes()[replacement.end - 1], b'\n' | b'\r')
            && source.break_len(replacement.end - 1) != 2
        {
            replacement.end
        } else {
            let line_end = source.line_end(replacement.end);
            line_end + source.break_len(line_end)
        };
        match groups.last_mut() {
            Some(last) if start <= last.1 => {
                last.1 = last.1.max(end);
                last.2.push(replacement);
            }
            _ => groups.push((start, end, vec![replacement])),
        }
    }

    let deadline = Instant::now() + DIFF_BUDGET;
    let mut rows: Vec<Row> = Vec::new();
    let mut delta: isize = 0;
    let mut line = 1;
    let mut previous_end: Option<usize> = None;
    for (start, end, replacements) in &groups {
        let gap_from = previous_end.unwrap_or(0);
        let gap_breaks = source.count_breaks(gap_from, *start);
        let context = if previous_end.is_none() {
            (0, CONTEXT)
        } else {
            (CONTEXT, CONTEXT)
        };
        unchanged_rows(
            source,
            (gap_from, *start),
            (line, gap_breaks),
            delta,
            context,
            &mut rows,
        );
        line += gap_breaks;

        let mut new_block = String::new();
        let mut copied = *start;
        for r in replacements {
            new_block.push_str(&text[copied..r.start]);
            new_block.push_str(&r.text);
            copied = r.end;
        }
        new_block.push_str(&text[copied..*end]);
        let old_block = normalize_newlines(&text[*start..*end]).into_owned();
        let new_block = normalize_newlines(&new_block).into_owned();
        let (old_lines, old_ends) = split_lines(&old_block);
        let (new_lines, new_ends) = split_lines(&new_block);
        let at_eof = *end == text.len();
        let ops =
            capture_diff_slices_deadline(Algorithm::Myers, &old_lines, &new_lines, Some(deadline));
        for op in ops {
            let (tag, old_range, new_range) = op.as_tag_tuple();
            let old_at = |k: usize| line + k;
            let new_at = |k: usize| (line + k).checked_add_signed(delta).unwrap_or(line + k);
            match tag {
                DiffTag::Equal => {
                    for (o, n) in old_range.zip(new_range) {
                        rows.push(Row::Same {
                            old: old_at(o),
                            new: new_at(0) + n,
                            text: old_lines[o].to_owned(),
                            last_in_file: at_eof && o + 1 == old_lines.len() && !old_ends,
                        });
                    }
                }
                DiffTag::Delete | DiffTag::Replace | DiffTag::Insert => {
                    for o in old_range.clone() {
                        rows.push(Row::Removed {
                            old: old_at(o),
                            new: new_at(0) + new_range.start,
                            text: old_lines[o].to_owned(),
                            last_in_old: at_eof && o + 1 == old_lines.len() && !old_ends,
                        });
                    }
                    for n in new_range {
                        rows.push(Row::Added {
                            old: old_at(old_range.end),
                            new: new_at(0) + n,
                            text: new_lines[n].to_owned(),
                            last_in_new: at_eof && n + 1 == new_lines.len() && !new_ends,
                        });
                    }
                }
            }
        }
        line += old_lines.len();
        delta += isize::try_from(new_lines.len()).unwrap_or(isize::MAX)
            - isize::try_from(old_lines.len()).unwrap_or(isize::MAX);
        previous_end = Some(*end);
    }
    if let Some(end) = previous_end {
        // Only whether more than CONTEXT lines follow matters: never count to the end.
        let breaks = source.count_breaks_up_to(end, text.len(), CONTEXT + 1);
        unchanged_rows(
            source,
            (end, text.len()),
            (line, breaks),
            delta,
            (CONTEXT, 0),
            &mut rows,
        );
    }

    let first_changed_line = rows
        .iter()
        .find_map(|row| match row {
            Row::Removed { new, .. } | Row::Added { new, .. } => Some(*new),
            _ => None,
        })
        .unwrap_or(1);
    EditDiff {
        diff: render_numbered(&rows),
        patch: render_patch(&rows, path),
        first_changed_line,
    }
}

/// Which rows of `rows` are shown: unchanged runs keep `CONTEXT` lines next to a change.
fn visible(rows: &[Row]) -> Vec<Option<usize>> {
    // Each entry: Some(row index) to show, None for a `...` marker.
    let mut out = Vec::new();
    let mut i = 0;
    let any_change = rows.iter().any(Row::is_change);
    while i < rows.len() {
        if rows[i].is_change() {
            out.push(Some(i));
            i += 1;
            continue;
        }
        let run_start = i;
        while i < rows.len() && !rows[i].is_change() {
            i += 1;
        }
        let run = run_start..i;
        let before_change = i < rows.len();
        let after_change = run_start > 0;
        let total: usize = rows[run.clone()].iter().map(Row::lines).sum();
        let materialised: Vec<usize> = run
            .clone()
            .filter(|&k| !matches!(rows[k], Row::Skipped { .. }))
            .collect();
        let head: Vec<usize> = materialised.iter().copied().take(CONTEXT).collect();
        let tail: Vec<usize> = materialised
            .iter()
            .copied()
            .skip(materialised.len().saturating_sub(CONTEXT))
            .collect();
        if !any_change {
            continue;
        }
        match (after_change, before_change) {
            (true, true) if total <= 2 * CONTEXT => {
                out.extend(materialised.iter().map(|&k| Some(k)));
            }
            (true, true) => {
                out.extend(head.iter().map(|&k| Some(k)));
                out.push(None);
                out.extend(tail.iter().map(|&k| Some(k)));
            }
            (true, false) => {
                out.extend(head.iter().map(|&k| Some(k)));
                if total > CONTEXT {
                    out.push(None);
                }
            }
            (false, true) => {
                if total > CONTEXT {
                    out.push(None);
                }
                out.extend(tail.iter().map(|&k| Some(k)));
            }
            (false, false) => {}
        }
    }
    out
}

fn render_numbered(rows: &[Row]) -> String {
    let shown = visible(rows);
    let width = shown
        .iter()
        .flatten()
        .map(|&k| match &rows[k] {
            Row::Same { old, .. } | Row::Removed { old, .. } => *old,
            Row::Added { new, .. } => *new,
            Row::Skipped { .. } => 0,
        })
        .max()
        .unwrap_or(1)
        .to_string()
        .len();
    let mut out = String::new();
    for entry in shown {
        match entry.map(|k| &rows[k]) {
            None => {
                let _ = writeln!(out, " {:>width$} ...", "");
            }
            Some(Row::Same { old, text, .. }) => {
                let _ = writeln!(out, " {old:>width$} {text}");
            }
            Some(Row::Removed { old, text, .. }) => {
                let _ = writeln!(out, "-{old:>width$} {text}");
            }
            Some(Row::Added { new, text, .. }) => {
                let _ = writeln!(out, "+{new:>width$} {text}");
            }
            Some(Row::Skipped { .. }) => {}
        }
    }
    out.pop();
    out
}

fn render_patch(rows: &[Row], path: &str) -> String {
    let mut out = format!("--- {path}\n+++ {path}\n");
    // Hunks: change clusters whose unchanged gap is at most 2 * CONTEXT lines.
    let changes: Vec<usize> = (0..rows.len()).filter(|&k| rows[k].is_change()).collect();
    let mut k = 0;
    while k < changes.len() {
        let first = changes[k];
        let mut last = first;
        while k + 1 < changes.len() {
            let gap: usize = rows[last + 1..changes[k + 1]].iter().map(Row::lines).sum();
            if gap > 2 * CONTEXT {
                break;
            }
            k += 1;
            last = changes[k];
        }
        k += 1;
        let mut from = first;
        let mut taken = 0;
        while from > 0 && taken < CONTEXT && matches!(rows[from - 1], Row::Same { .. }) {
            from -= 1;
            taken += 1;
        }
        let mut to = last + 1;
        taken = 0;
        while to < rows.len() && taken < CONTEXT && matches!(rows[to], Row::Same { .. }) {
            to += 1;
            taken += 1;
        }
        let hunk = &rows[from..to];
        let old_count = hunk
            .iter()
            .filter(|r| !matches!(r, Row::Added { .. }))
            .count();
        let new_count = hunk
            .iter()
            .filter(|r| !matches!(r, Row::Removed { .. }))
            .count();
        let (old_start, new_start) = match &hunk[0] {
            Row::Same { old, new, .. }
            | Row::Removed { old, new, .. }
            | Row::Added { old, new, .. }
            | Row::Skipped { old, new, .. } => (*old, *new),
        };
        let old_start = if old_count == 0 {
            old_start - 1
        } else {
            old_start
        };
        let new_start = if new_count == 0 {
            new_start.saturating_sub(1)
        } else {
            new_start
        };
        let _ = writeln!(
            out,
            "@@ -{old_start},{old_count} +{new_start},{new_count} @@"
        );
        for row in hunk {
            let (sign, text, no_newline) = match row {
                Row::Same {
                    text, last_in_file, ..
                } => (' ', text, *last_in_file),
                Row::Removed {
                    text, last_in_old, ..
                } => ('-', text, *last_in_old),
                Row::Added {
                    text, last_in_new, ..
                } => ('+', text, *last_in_new),
                Row::Skipped { .. } => continue,
            };
            let _ = writeln!(out, "{sign}{text}");
            if no_newline {
                out.push_str("\\ No newline at end of file\n");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::matching::{EditRequest, plan};

    fn diff_of(text: &str, edits: &[(&str, &str)]) -> EditDiff {
        let requests: Vec<EditRequest> = edits
            .iter()
            .map(|(o, n)| EditRequest {
                old_text: (*o).to_owned(),
                new_text: (*n).to_owned(),
            })
            .collect();
        build(
            Source::new(text),
            &plan(Source::new(text), &requests).unwrap(),
            "f.txt",
        )
    }

    fn numbered(n: usize) -> String {
        (1..=n).fold(String::new(), |mut out, i| {
            let _ = writeln!(out, "line {i}");
            out
        })
    }

    #[test]
    fn one_line_change_in_the_middle() {
        let d = diff_of(&numbered(20), &[("line 10\n", "ten\n")]);
        assert_eq!(d.first_changed_line, 10);
        let expected_diff = [
            "    ...",
            "  6 line 6",
            "  7 line 7",
            "  8 line 8",
            "  9 line 9",
            "-10 line 10",
            "+10 ten",
            " 11 line 11",
            " 12 line 12",
            " 13 line 13",
            " 14 line 14",
            "    ...",
        ];
        assert_eq!(d.diff, expected_diff.join("\n"));
        let expected_patch = [
            "--- f.txt",
            "+++ f.txt",
            "@@ -6,9 +6,9 @@",
            " line 6",
            " line 7",
            " line 8",
            " line 9",
            "-line 10",
            "+ten",
            " line 11",
            " line 12",
            " line 13",
            " line 14",
            "",
        ];
        assert_eq!(d.patch, expected_patch.join("\n"));
    }

    #[test]
    fn crlf_and_no_final_newline_and_line_shift() {
        let text = "a\r\nb\r\nc\r\nd\r\ne\r\nf\r\ng\r\nh\r\ni\r\nj\r\nk\r\nl";
        let d = diff_of(text, &[("b", "b1\nb2"), ("l", "L")]);
        assert_eq!(d.first_changed_line, 2);
        let expected_diff = [
            "  1 a", "- 2 b", "+ 2 b1", "+ 3 b2", "  3 c", "  4 d", "  5 e", "  6 f", "    ...",
            "  8 h", "  9 i", " 10 j", " 11 k", "-12 l", "+13 L",
        ];
        assert_eq!(d.diff, expected_diff.join("\n"));
        let expected_patch = [
            "--- f.txt",
            "+++ f.txt",
            "@@ -1,6 +1,7 @@",
            " a",
            "-b",
            "+b1",
            "+b2",
            " c",
            " d",
            " e",
            " f",
            "@@ -8,5 +9,5 @@",
            " h",
            " i",
            " j",
            " k",
            "-l",
            "\\ No newline at end of file",
            "+L",
            "\\ No newline at end of file",
            "",
        ];
        assert_eq!(d.patch, expected_patch.join("\n"));
    }

    #[test]
    fn pure_deletion_reports_the_line_now_in_its_place() {
        let d = diff_of("a\nb\nc\n", &[("b\n", "")]);
        assert_eq!(d.first_changed_line, 2);
        assert_eq!(d.diff, " 1 a\n-2 b\n 3 c");
        assert_eq!(
            d.patch,
            "--- f.txt\n+++ f.txt\n@@ -1,3 +1,2 @@\n a\n-b\n c\n"
        );
    }
}
