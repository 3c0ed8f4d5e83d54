//! Word wrap of a [`Line`] into terminal rows, never inside a word unless the word is wider than
//! the terminal.
//!
//! The rows of one line are printed as the terminal's own soft wrap, not as separate lines: a
//! row broken at a space ends with that space in the terminal's last column (the gap before it
//! is skipped with a cursor movement, not filled), so the terminal marks the row as wrapped.
//! Copying the text, or tmux's joined capture, then gives one line per line of the model's text,
//! with its words whole.

use unicode_width::UnicodeWidthChar as _;

use crate::line::{Line, Span, Style};

/// How a row ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Break {
    /// At a space, which the row's printer puts in the last column (it is part of the text).
    Space,
    /// Inside a word wider than the terminal: the row is full and the terminal wraps it.
    Full,
    /// The line's last row.
    End,
}

/// `line` in rows of at most `columns` display columns, each with how it ends. A row that ends
/// at a [`Break::Space`] holds at most `columns - 1` columns (the space takes the last one).
/// Always at least one row.
pub fn wrap(line: &Line, columns: usize) -> Vec<(Line, Break)> {
    let columns = columns.max(2);
    if line.width() < columns {
        return vec![(line.clone(), Break::End)];
    }
    let mut rows = Vec::new();
    // The row being built, as (char, style index) so a break can split it anywhere.
    let mut row: Vec<(char, usize)> = Vec::new();
    let mut row_width = 0;
    // Where in `row` the last space to break at is (never the row's first character).
    let mut space: Option<usize> = None;
    let styles: Vec<_> = line.0.iter().map(|span| span.style).collect();
    for (index, span) in line.0.iter().enumerate() {
        for c in span.text.chars() {
            let width = c.width().unwrap_or(0);
            if c == ' ' && row_width < columns {
                space = Some(row.len()).filter(|&at| at > 0);
                row.push((c, index));
                row_width += 1;
                continue;
            }
            if row_width + width > columns {
                if let Some(at) = space.take() {
                    let rest = row.split_off(at + 1);
                    row.pop();
                    rows.push((spans(&row, &styles), Break::Space));
                    row = rest;
                } else {
                    rows.push((spans(&row, &styles), Break::Full));
                    row.clear();
                }
                row_width = row.iter().map(|(c, _)| c.width().unwrap_or(0)).sum();
                // What was carried over may itself hold a space to break at later.
                space = row
                    .iter()
                    .enumerate()
                    .rev()
                    .find(|(at, (c, _))| *c == ' ' && *at > 0)
                    .map(|(at, _)| at);
            }
            if c == ' ' {
                // A space at the start of a full row's successor: kept as text.
                space = Some(row.len()).filter(|&at| at > 0);
            }
            row.push((c, index));
            row_width += width;
        }
    }
    rows.push((spans(&row, &styles), Break::End));
    rows
}

/// `text` (one line, no styles) in rows of at most `columns` display columns, broken between
/// words as [`wrap`] breaks them, each row without the space it was broken at.
pub fn text_rows(text: &str, columns: usize) -> Vec<String> {
    wrap(&Line::plain(text), columns)
        .into_iter()
        .map(|(row, _)| row.text())
        .collect()
}

/// The columns a live row may take on a terminal `width` columns wide: a tenth less than the
/// width. A window dragged narrower re-wraps the live rows a moment before the program hears
/// of the new width (and two quick steps may arrive as one); rows that still fit keep their
/// count, so clearing them still clears exactly them (a row as wide as the window would leave
/// a copy of itself behind).
pub fn live_columns(width: u16) -> usize {
    let width = usize::from(width.max(1));
    width.saturating_sub(1 + width / 10).max(1)
}

/// An input field being typed in: `line` (a label, then the text so far) with a cursor at its
/// end, word-wrapped into live rows of a terminal `width` columns wide
/// ([`live_columns`]). When that takes more than `max_rows` rows, the last ones
/// are shown (the field scrolls with the cursor), the first of them led by `…`.
pub fn field(line: &Line, width: usize, max_rows: usize) -> Vec<Line> {
    let line = line.clone().with("▌", Style::Dim);
    let columns = live_columns(u16::try_from(width).unwrap_or(u16::MAX)).max(2);
    let mut rows: Vec<Line> = wrap(&line, columns)
        .into_iter()
        .map(|(row, _)| row)
        .collect();
    let max_rows = max_rows.max(1);
    if rows.len() > max_rows {
        rows.drain(..rows.len() - max_rows);
        if let Some(first) = rows.first_mut() {
            first.0.insert(
                0,
                Span {
                    text: "…".to_owned(),
                    style: Style::Dim,
                },
            );
            *first = first.truncated(columns);
        }
    }
    rows
}

fn spans(row: &[(char, usize)], styles: &[Style]) -> Line {
    let mut out: Vec<Span> = Vec::new();
    let mut current = usize::MAX;
    for &(c, index) in row {
        if index != current || out.is_empty() {
            out.push(Span {
                text: String::new(),
                style: styles[index],
            });
            current = index;
        }
        if let Some(span) = out.last_mut() {
            span.text.push(c);
        }
    }
    Line(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn texts(rows: &[(Line, Break)]) -> Vec<String> {
        rows.iter().map(|(line, _)| line.text()).collect()
    }

    /// The text as a terminal's joined copy gives it: a space row's break is a space.
    fn joined(rows: &[(Line, Break)]) -> String {
        rows.iter()
            .map(|(line, end)| match end {
                Break::Space => line.text() + " ",
                _ => line.text(),
            })
            .collect()
    }

    #[test]
    fn short_lines_are_one_row() {
        let rows = wrap(&Line::plain("hello world"), 80);
        assert_eq!(rows, vec![(Line::plain("hello world"), Break::End)]);
    }

    #[test]
    fn long_lines_break_between_words() {
        let text = "the operator from minus to plus changes the sign";
        let rows = wrap(&Line::plain(text), 20);
        assert_eq!(
            texts(&rows),
            ["the operator from", "minus to plus", "changes the sign"]
        );
        assert_eq!(rows[0].1, Break::Space);
        assert_eq!(rows[2].1, Break::End);
        assert_eq!(joined(&rows), text);
    }

    #[test]
    fn a_word_wider_than_the_terminal_fills_rows() {
        let rows = wrap(&Line::plain(format!("ab {}", "x".repeat(25))), 10);
        assert_eq!(texts(&rows), ["ab", "xxxxxxxxxx", "xxxxxxxxxx", "xxxxx"]);
        assert_eq!(
            rows.iter().map(|r| r.1).collect::<Vec<_>>(),
            [Break::Space, Break::Full, Break::Full, Break::End]
        );
    }

    #[test]
    fn styles_are_kept_across_rows() {
        let line = Line::styled("bold words here", Style::Accent).with(" and plain", Style::Plain);
        let rows = wrap(&line, 12);
        assert_eq!(texts(&rows), ["bold words", "here and", "plain"]);
        assert_eq!(rows[1].0.0[0].style, Style::Accent);
        assert_eq!(rows[1].0.0[1].style, Style::Plain);
    }

    #[test]
    fn wide_characters_count_two_columns() {
        let rows = wrap(&Line::plain("日本語 日本語 日本語"), 10);
        assert_eq!(texts(&rows), ["日本語", "日本語", "日本語"]);
    }

    #[test]
    fn a_field_wraps_and_scrolls_with_the_cursor() {
        let label = Line::styled("reason: ", Style::Prompt);
        let rows = field(&label.clone().with("too slow", Style::Plain), 40, 3);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].text(), "reason: too slow▌");
        let long = "word ".repeat(30);
        let rows = field(&label.with(long.trim_end(), Style::Plain), 20, 3);
        assert_eq!(rows.len(), 3);
        assert!(rows[0].text().starts_with('…'));
        assert!(rows[2].text().ends_with("word▌"));
        assert!(rows.iter().all(|r| r.width() < 20));
    }

    proptest! {
        /// Whatever the text and width, the rows hold the text exactly, fit the width, and
        /// break inside a word only when the word does not fit on a row of its own.
        #[test]
        fn rows_hold_the_text_and_fit(
            text in "[a-z ]{0,200}|[a-zé日 ]{0,80}",
            columns in 2usize..40,
        ) {
            let rows = wrap(&Line::plain(text.clone()), columns);
            prop_assert_eq!(joined(&rows), text.clone());
            for (row, end) in &rows {
                let limit = if *end == Break::Space { columns - 1 } else { columns };
                prop_assert!(row.width() <= limit, "{:?} wider than {}", row.text(), limit);
            }
            for pair in rows.windows(2) {
                if pair[0].1 == Break::Full {
                    // Broken inside a word only if the row has no space to break at.
                    prop_assert!(!pair[0].0.text().trim_start().contains(' '));
                }
            }
        }
    }
}
