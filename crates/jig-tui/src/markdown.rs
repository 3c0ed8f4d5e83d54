//! A reply's Markdown as terminal lines, one source line at a time as the reply streams.
//!
//! Each line the model wrote stays one line (the terminal word-wraps it, see [`crate::wrap`]), so
//! copied text keeps the model's own line breaks. Block structure is followed line by line:
//! headings, block quotes, list items and task items, rules, fenced code blocks (highlighted
//! with `syntect`, line by line, keeping the highlighter's state across lines) and tables
//! (collected until they end, then drawn with aligned columns). Inline markup — emphasis,
//! strong, strike-through, code spans, links — is parsed with `pulldown-cmark`. Anything the
//! inline parser would read as a block of its own is shown as written.
//!
//! Highlighting has a time budget per frame ([`Markdown::new_frame`]): a stream faster than the
//! highlighter (a flood no model produces, or a huge pasted block) shows the rest of that code
//! block plain rather than slowing the screen down. The first lines of each frame are always
//! highlighted (a model's few lines a frame never lose their colours to the highlighter's
//! one-time start-up cost).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme, ThemeSet};
use syntect::parsing::SyntaxSet;
use unicode_width::UnicodeWidthStr as _;

use crate::line::{Color, Line, Rich, Span, Style};

/// Code lines longer than this are shown without highlighting (minified code would be slow).
const HIGHLIGHT_MAX: usize = 2_000;
/// Table rows collected before the table is drawn anyway (a table the model never ends).
const TABLE_MAX_ROWS: usize = 200;
/// Time spent highlighting per frame before the current code block goes on plain.
const HIGHLIGHT_BUDGET: Duration = Duration::from_millis(6);
/// Code lines of a frame highlighted whatever the time they take.
const HIGHLIGHT_ALWAYS: usize = 16;

/// The streaming renderer's state between lines.
pub struct Markdown {
    fence: Option<Fence>,
    table: Vec<String>,
    /// Highlighting time and code lines since the frame began, and the most time it may take.
    spent: Duration,
    lines: usize,
    budget: Duration,
}

impl Default for Markdown {
    fn default() -> Self {
        Self {
            fence: None,
            table: Vec::new(),
            spent: Duration::ZERO,
            lines: 0,
            budget: HIGHLIGHT_BUDGET,
        }
    }
}

impl std::fmt::Debug for Markdown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Markdown")
            .field("in_code", &self.fence.is_some())
            .field("table_rows", &self.table.len())
            .field("spent", &self.spent)
            .field("lines", &self.lines)
            .field("budget", &self.budget)
            .finish()
    }
}

struct Fence {
    marker: char,
    length: usize,
    highlighter: Option<HighlightLines<'static>>,
}

impl Markdown {
    /// A renderer at the start of a reply.
    pub fn new() -> Self {
        Self::default()
    }

    /// A new frame begins: the highlighting budget is whole again.
    pub fn new_frame(&mut self) {
        self.spent = Duration::ZERO;
        self.lines = 0;
    }

    /// Sets the highlighting time a frame may spend (the default is 6 ms).
    pub fn set_budget(&mut self, budget: Duration) {
        self.budget = budget;
    }

    /// Renders one complete line of the reply (without its line break) for a terminal `width`
    /// columns wide, appending what is finished to `out`. Table rows are held back until the
    /// table ends ([`Markdown::pending`] has them meanwhile).
    pub fn line(&mut self, source: &str, width: usize, out: &mut Vec<Line>) {
        let expanded;
        let source = if source.contains('\t') {
            expanded = source.replace('\t', "    ");
            expanded.as_str()
        } else {
            source
        };
        if let Some(fence) = &mut self.fence {
            if fence.closes(source) {
                out.push(Line::styled(source, Style::Dim));
                self.fence = None;
            } else if self.lines >= HIGHLIGHT_ALWAYS && self.spent >= self.budget {
                // Out of time this frame: the rest of the block is plain (the highlighter's
                // state would be wrong after a skipped line).
                fence.highlighter = None;
                out.push(Line::plain(source));
            } else {
                let started = Instant::now();
                out.push(fence.render(source));
                self.spent += started.elapsed();
                self.lines += 1;
            }
            return;
        }
        if source.trim_start().starts_with('|') && self.table.len() < TABLE_MAX_ROWS {
            self.table.push(source.to_owned());
            return;
        }
        self.flush_table(width, out);
        if source.trim_start().starts_with('|') {
            self.table.push(source.to_owned());
            return;
        }
        if let Some(fence) = Fence::opens(source) {
            out.push(Line::styled(source, Style::Dim));
            self.fence = Some(fence);
            return;
        }
        out.push(block(source, width));
    }

    /// The reply ended: draws a table still being collected and forgets an unclosed code block.
    pub fn finish(&mut self, width: usize, out: &mut Vec<Line>) {
        self.flush_table(width, out);
        self.fence = None;
    }

    /// Table rows waiting for the table's end, as written.
    pub fn pending(&self) -> &[String] {
        &self.table
    }

    fn flush_table(&mut self, width: usize, out: &mut Vec<Line>) {
        if self.table.is_empty() {
            return;
        }
        let rows = std::mem::take(&mut self.table);
        match table(&rows, width) {
            Some(lines) => out.extend(lines),
            None => out.extend(rows.iter().map(|row| block(row, width))),
        }
    }
}

impl Fence {
    /// A fence that opens a code block: three or more backticks or tildes, then the language.
    fn opens(source: &str) -> Option<Self> {
        let trimmed = source.trim_start();
        if source.len() - trimmed.len() > 3 {
            return None;
        }
        let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
        let length = trimmed.chars().take_while(|c| *c == marker).count();
        if length < 3 {
            return None;
        }
        let info = trimmed[length..].trim();
        if marker == '`' && info.contains('`') {
            return None;
        }
        let language = info.split([' ', ',', '{']).next().unwrap_or_default();
        let highlighter = (!language.is_empty())
            .then(|| {
                let (syntaxes, theme) = assets();
                syntaxes
                    .find_syntax_by_token(language)
                    .map(|syntax| HighlightLines::new(syntax, theme))
            })
            .flatten();
        Some(Self {
            marker,
            length,
            highlighter,
        })
    }

    fn closes(&self, source: &str) -> bool {
        let trimmed = source.trim();
        trimmed.len() >= self.length && trimmed.chars().all(|c| c == self.marker)
    }

    fn render(&mut self, source: &str) -> Line {
        let Some(highlighter) = self
            .highlighter
            .as_mut()
            .filter(|_| source.len() <= HIGHLIGHT_MAX)
        else {
            return Line::plain(source);
        };
        let (syntaxes, _) = assets();
        // The default syntaxes expect each line with its line break.
        let with_break = format!("{source}\n");
        let Ok(ranges) = highlighter.highlight_line(&with_break, syntaxes) else {
            return Line::plain(source);
        };
        let mut spans: Vec<Span> = Vec::with_capacity(ranges.len());
        for (style, text) in ranges {
            let text = text.trim_end_matches('\n');
            if text.is_empty() {
                continue;
            }
            let rich = Rich {
                bold: style.font_style.contains(FontStyle::BOLD),
                italic: style.font_style.contains(FontStyle::ITALIC),
                underline: style.font_style.contains(FontStyle::UNDERLINE),
                color: Some(Color::Rgb(
                    style.foreground.r,
                    style.foreground.g,
                    style.foreground.b,
                )),
                ..Rich::default()
            };
            match spans.last_mut() {
                Some(last) if last.style == Style::Rich(rich) => last.text.push_str(text),
                _ => spans.push(Span {
                    text: text.to_owned(),
                    style: Style::Rich(rich),
                }),
            }
        }
        Line(spans)
    }
}

/// The syntax definitions and colour theme, loaded at the first code block.
fn assets() -> &'static (SyntaxSet, Theme) {
    static ASSETS: OnceLock<(SyntaxSet, Theme)> = OnceLock::new();
    ASSETS.get_or_init(|| {
        let syntaxes = SyntaxSet::load_defaults_newlines();
        let mut themes = ThemeSet::load_defaults().themes;
        let theme = themes
            .remove("base16-ocean.dark")
            .or_else(|| themes.into_values().next())
            .unwrap_or_default();
        (syntaxes, theme)
    })
}

/// One line outside code blocks and tables.
fn block(source: &str, width: usize) -> Line {
    let rest = source.trim_start();
    let indent = &source[..source.len() - rest.len()];
    let mut line = Line(Vec::new());
    if !indent.is_empty() {
        push(&mut line, indent, Rich::default());
    }
    // A heading: one to six `#`, then a space or nothing.
    let hashes = rest.chars().take_while(|c| *c == '#').count();
    if (1..=6).contains(&hashes) && rest[hashes..].chars().next().is_none_or(|c| c == ' ') {
        let text = rest[hashes..].trim().trim_end_matches('#').trim_end();
        let base = Rich {
            bold: true,
            underline: hashes == 1,
            color: Some(Color::Magenta),
            ..Rich::default()
        };
        inline(text, base, &mut line);
        return line;
    }
    if is_rule(rest) {
        let columns = width.saturating_sub(1 + indent.width()).clamp(3, 60);
        line.0.push(Span {
            text: "─".repeat(columns),
            style: Style::Dim,
        });
        return line;
    }
    if let Some(inner) = rest.strip_prefix('>') {
        let inner = inner.strip_prefix(' ').unwrap_or(inner);
        line.0.push(Span {
            text: "│ ".to_owned(),
            style: Style::Dim,
        });
        let nested = block(inner, width.saturating_sub(2));
        for span in nested.0 {
            let style = match span.style {
                Style::Plain => Style::Rich(Rich {
                    italic: true,
                    ..Rich::default()
                }),
                Style::Rich(rich) => Style::Rich(Rich {
                    italic: true,
                    ..rich
                }),
                other => other,
            };
            line.0.push(Span { style, ..span });
        }
        return line;
    }
    if let Some((marker, text)) = list_item(rest) {
        line.0.push(Span {
            text: marker,
            style: Style::Rich(Rich {
                color: Some(Color::Cyan),
                ..Rich::default()
            }),
        });
        inline(text, Rich::default(), &mut line);
        return line;
    }
    inline(rest, Rich::default(), &mut line);
    line
}

/// `---`, `***` or `___` (three or more, spaces allowed between).
fn is_rule(text: &str) -> bool {
    let marks: Vec<char> = text.chars().filter(|c| *c != ' ').collect();
    marks.len() >= 3 && matches!(marks[0], '-' | '*' | '_') && marks.iter().all(|c| *c == marks[0])
}

/// A list item's marker as drawn, and its text.
fn list_item(text: &str) -> Option<(String, &str)> {
    if let Some(rest) = text
        .strip_prefix("- ")
        .or_else(|| text.strip_prefix("* "))
        .or_else(|| text.strip_prefix("+ "))
    {
        for (task, mark) in [("[ ] ", "☐ "), ("[x] ", "☑ "), ("[X] ", "☑ ")] {
            if let Some(rest) = rest.strip_prefix(task) {
                return Some((mark.to_owned(), rest));
            }
        }
        return Some(("• ".to_owned(), rest));
    }
    let digits = text.chars().take_while(char::is_ascii_digit).count();
    if (1..=9).contains(&digits) {
        let after = &text[digits..];
        if let Some(rest) = after
            .strip_prefix(". ")
            .or_else(|| after.strip_prefix(") "))
        {
            return Some((format!("{}. ", &text[..digits]), rest));
        }
    }
    None
}

/// Appends `text`'s inline Markdown to `line`, each span's attributes added to `base`. What
/// the parser reads as a block (an indented code block, a link definition, HTML) is kept as
/// written.
fn inline(text: &str, base: Rich, line: &mut Line) {
    let mut spans = Line(Vec::new());
    let mut stack = vec![base];
    let mut links: Vec<String> = Vec::new();
    let mut as_written = false;
    for event in Parser::new_ext(text, Options::ENABLE_STRIKETHROUGH) {
        let top = *stack.last().unwrap_or(&base);
        match event {
            Event::Start(Tag::Paragraph) | Event::End(TagEnd::Paragraph) => {}
            Event::Start(Tag::Emphasis) => stack.push(Rich {
                italic: true,
                ..top
            }),
            Event::Start(Tag::Strong) => stack.push(Rich { bold: true, ..top }),
            Event::Start(Tag::Strikethrough) => stack.push(Rich {
                strike: true,
                ..top
            }),
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                links.push(dest_url.into_string());
                stack.push(Rich {
                    underline: true,
                    color: Some(Color::Cyan),
                    ..top
                });
            }
            Event::End(TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough) => {
                stack.pop();
            }
            Event::End(TagEnd::Link | TagEnd::Image) => {
                stack.pop();
                let url = links.pop().unwrap_or_default();
                let shown = spans.text();
                if !url.is_empty() && !shown.ends_with(url.as_str()) {
                    spans.0.push(Span {
                        text: format!(" ({url})"),
                        style: Style::Dim,
                    });
                }
            }
            Event::Text(text) | Event::Html(text) | Event::InlineHtml(text) => {
                push(&mut spans, &text, top);
            }
            Event::Code(code) => push(
                &mut spans,
                &code,
                Rich {
                    color: Some(Color::Cyan),
                    ..top
                },
            ),
            Event::SoftBreak | Event::HardBreak => push(&mut spans, " ", top),
            _ => {
                as_written = true;
                break;
            }
        }
    }
    if as_written || (spans.0.is_empty() && !text.trim().is_empty()) {
        push(line, text, base);
    } else {
        line.0.extend(spans.0);
    }
}

/// Appends `text` in `rich` (plain when it has no attributes), merging with a last span of the
/// same style.
fn push(line: &mut Line, text: &str, rich: Rich) {
    let style = if rich == Rich::default() {
        Style::Plain
    } else {
        Style::Rich(rich)
    };
    match line.0.last_mut() {
        Some(last) if last.style == style => last.text.push_str(text),
        _ => line.0.push(Span {
            text: text.to_owned(),
            style,
        }),
    }
}

/// A column's alignment, from the table's delimiter row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Align {
    Left,
    Center,
    Right,
}

/// The cells of a table row (`| a | b |`), split at unescaped pipes outside code spans.
fn cells(row: &str) -> Vec<String> {
    let trimmed = row.trim();
    let inner = trimmed.strip_prefix('|').unwrap_or(trimmed);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut out = Vec::new();
    let mut cell = String::new();
    let mut in_code = false;
    let mut escaped = false;
    for c in inner.chars() {
        match c {
            '|' if !escaped && !in_code => out.push(std::mem::take(&mut cell).trim().to_owned()),
            _ => {
                if c == '`' && !escaped {
                    in_code = !in_code;
                }
                if escaped && c == '|' {
                    cell.pop();
                }
                cell.push(c);
            }
        }
        escaped = c == '\\' && !escaped;
    }
    out.push(cell.trim().to_owned());
    out
}

/// The alignments of a delimiter row (`|:--|--:|`), or `None` when `row` is not one.
fn delimiter(row: &str) -> Option<Vec<Align>> {
    cells(row)
        .iter()
        .map(|cell| {
            let dashes = cell.trim_matches(':');
            if dashes.is_empty() || !dashes.chars().all(|c| c == '-') {
                return None;
            }
            Some(match (cell.starts_with(':'), cell.ends_with(':')) {
                (true, true) => Align::Center,
                (false, true) => Align::Right,
                _ => Align::Left,
            })
        })
        .collect()
}

/// A table's rows drawn with aligned columns and box-drawing rules, cells cut to fit `width`;
/// `None` when the rows are not a table (no delimiter row).
fn table(rows: &[String], width: usize) -> Option<Vec<Line>> {
    let aligns = delimiter(rows.get(1)?)?;
    let columns = aligns.len();
    let rendered: Vec<Vec<Line>> = rows
        .iter()
        .enumerate()
        .filter(|(index, _)| *index != 1)
        .map(|(index, row)| {
            let base = Rich {
                bold: index == 0,
                ..Rich::default()
            };
            let mut cells: Vec<Line> = cells(row)
                .iter()
                .map(|cell| {
                    let mut line = Line(Vec::new());
                    inline(cell, base, &mut line);
                    line
                })
                .collect();
            cells.resize(columns, Line::default());
            cells.truncate(columns);
            cells
        })
        .collect();
    let mut widths: Vec<usize> = (0..columns)
        .map(|column| {
            rendered
                .iter()
                .map(|row| row[column].width())
                .max()
                .unwrap_or(0)
                .max(1)
        })
        .collect();
    // `│ a │ b │`: two columns of border and padding per cell, plus one.
    let room = width.saturating_sub(1 + 3 * columns + 1);
    while widths.iter().sum::<usize>() > room {
        let Some(widest) = widths.iter_mut().filter(|w| **w > 3).max_by_key(|w| **w) else {
            break;
        };
        *widest -= 1;
    }
    let rule = |left: &str, middle: &str, right: &str| {
        let parts: Vec<String> = widths.iter().map(|w| "─".repeat(w + 2)).collect();
        Line::styled(format!("{left}{}{right}", parts.join(middle)), Style::Dim)
    };
    let mut out = vec![rule("┌", "┬", "┐")];
    for (index, row) in rendered.iter().enumerate() {
        let mut line = Line::styled("│", Style::Dim);
        for (column, cell) in row.iter().enumerate() {
            let cell = cell.truncated(widths[column]);
            let gap = widths[column].saturating_sub(cell.width());
            let (before, after) = match aligns[column] {
                Align::Left => (0, gap),
                Align::Right => (gap, 0),
                Align::Center => (gap / 2, gap - gap / 2),
            };
            line.0.push(Span {
                text: " ".repeat(before + 1),
                style: Style::Plain,
            });
            line.0.extend(cell.0);
            line.0.push(Span {
                text: " ".repeat(after + 1),
                style: Style::Plain,
            });
            line.0.push(Span {
                text: "│".to_owned(),
                style: Style::Dim,
            });
        }
        out.push(line);
        if index == 0 {
            out.push(rule("├", "┼", "┤"));
        }
    }
    out.push(rule("└", "┴", "┘"));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(source: &str, width: usize) -> Vec<Line> {
        let mut markdown = Markdown::new();
        let mut out = Vec::new();
        for line in source.lines() {
            markdown.line(line, width, &mut out);
        }
        markdown.finish(width, &mut out);
        out
    }

    fn text(lines: &[Line]) -> String {
        lines.iter().map(|l| l.text() + "\n").collect()
    }

    fn rich(line: &Line, part: &str) -> Rich {
        let span = line
            .0
            .iter()
            .find(|s| s.text.contains(part))
            .unwrap_or_else(|| panic!("{part:?} not in {line:?}"));
        match span.style {
            Style::Rich(rich) => rich,
            other => panic!("{part:?} is {other:?}"),
        }
    }

    #[test]
    fn blocks_are_rendered_line_by_line() {
        let source = "# Title\n\
                      Some **bold**, *em*, ~~gone~~ and `code`.\n\
                      > quoted *words*\n\
                      - item one\n  - nested\n1. first\n- [ ] todo\n- [x] done\n\
                      ---\n\
                      A [link](https://example.com) and <https://jig.dev>.";
        let lines = render(source, 40);
        insta::assert_snapshot!(text(&lines), @r"
        Title
        Some bold, em, gone and code.
        │ quoted words
        • item one
          • nested
        1. first
        ☐ todo
        ☑ done
        ───────────────────────────────────────
        A link (https://example.com) and https://jig.dev.
        ");
        let title = rich(&lines[0], "Title");
        assert!(title.bold && title.underline);
        assert!(rich(&lines[1], "bold").bold);
        assert!(rich(&lines[1], "em").italic);
        assert!(rich(&lines[1], "gone").strike);
        assert_eq!(rich(&lines[1], "code").color, Some(Color::Cyan));
        let quoted = rich(&lines[2], "words");
        assert!(quoted.italic);
        assert!(rich(&lines[9], "link").underline);
    }

    #[test]
    fn code_blocks_are_highlighted_and_keep_their_text() {
        let source = "```rust\nfn main() {\n    let x = \"# not a heading\";\n}\n```\nafter";
        let lines = render(source, 80);
        insta::assert_snapshot!(text(&lines), @r##"
        ```rust
        fn main() {
            let x = "# not a heading";
        }
        ```
        after
        "##);
        // `fn` and the string differ in colour.
        let keyword = rich(&lines[1], "fn");
        let string = rich(&lines[2], "not a heading");
        assert_ne!(keyword.color, string.color);
        assert!(keyword.color.is_some());
        // An unknown language is shown plain, and so is a block without one.
        let plain = render("```nosuchlang\nx = 1\n```\n```\n# y\n```", 80);
        assert_eq!(plain[1], Line::plain("x = 1"));
        assert_eq!(plain[4], Line::plain("# y"));
    }

    #[test]
    fn out_of_highlighting_time_the_block_goes_on_plain() {
        let mut markdown = Markdown::new();
        markdown.set_budget(Duration::ZERO);
        let mut out = Vec::new();
        markdown.line("```rust", 80, &mut out);
        for _ in 0..HIGHLIGHT_ALWAYS + 2 {
            markdown.line("fn a() {}", 80, &mut out);
        }
        markdown.line("```", 80, &mut out);
        // The frame's first lines are highlighted whatever they cost; then the block is plain.
        assert!(matches!(out[1].0[0].style, Style::Rich(_)), "{:?}", out[1]);
        assert_eq!(out[HIGHLIGHT_ALWAYS + 1], Line::plain("fn a() {}"));
        assert_eq!(out[HIGHLIGHT_ALWAYS + 2], Line::plain("fn a() {}"));
        // A new frame and a new block: highlighted again.
        markdown.new_frame();
        for line in ["```rust", "fn c() {}", "```"] {
            markdown.line(line, 80, &mut out);
        }
        let last = &out[out.len() - 2];
        assert!(matches!(last.0[0].style, Style::Rich(_)), "{last:?}");
    }

    #[test]
    fn tables_are_aligned_and_fit_the_width() {
        let source = "| Name | Size | Note |\n|:--|--:|:-:|\n| a.rs | 12 | `x` |\n| longer.rs | 3400 | ok |\nafter";
        let lines = render(source, 80);
        insta::assert_snapshot!(text(&lines), @r"
        ┌───────────┬──────┬──────┐
        │ Name      │ Size │ Note │
        ├───────────┼──────┼──────┤
        │ a.rs      │   12 │  x   │
        │ longer.rs │ 3400 │  ok  │
        └───────────┴──────┴──────┘
        after
        ");
        assert!(rich(&lines[1], "Name").bold);
        let narrow = render(
            "| a | b |\n|---|---|\n| a very long cell indeed | another long cell here |",
            30,
        );
        assert!(narrow.iter().all(|l| l.width() < 30), "{}", text(&narrow));
        // Pipe-led lines without a delimiter row are not a table.
        assert_eq!(text(&render("| just a line |", 80)), "| just a line |\n");
    }

    #[test]
    fn what_the_inline_parser_reads_as_a_block_is_kept_as_written() {
        assert_eq!(
            text(&render("[ref]: https://x.y", 80)),
            "[ref]: https://x.y\n"
        );
        assert_eq!(text(&render("<div>", 80)), "<div>\n");
        assert_eq!(text(&render("    indented", 80)), "    indented\n");
        assert_eq!(text(&render("#hashtag", 80)), "#hashtag\n");
    }

    #[test]
    fn pending_table_rows_wait_for_the_end_of_the_table() {
        let mut markdown = Markdown::new();
        let mut out = Vec::new();
        markdown.line("| a | b |", 80, &mut out);
        markdown.line("|---|---|", 80, &mut out);
        assert!(out.is_empty());
        assert_eq!(markdown.pending().len(), 2);
        markdown.finish(80, &mut out);
        assert_eq!(out.len(), 4);
    }
}
