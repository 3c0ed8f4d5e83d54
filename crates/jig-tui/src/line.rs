//! A terminal line as styled spans: what the view produces and the screen draws.

use unicode_width::{UnicodeWidthChar as _, UnicodeWidthStr as _};

/// How a span is drawn (colours only when colour is on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Terminal default.
    Plain,
    /// Secondary text (thinking, output tails, the status line).
    Dim,
    /// Tool names and headings.
    Accent,
    /// Errors.
    Error,
    /// Added diff lines.
    Added,
    /// Removed diff lines.
    Removed,
    /// Questions waiting for the user.
    Prompt,
    /// Rendered Markdown and highlighted code: attributes and a colour.
    Rich(Rich),
}

/// Attributes of rendered Markdown; they combine (bold inside a link inside a heading).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent terminal attributes, each on or off"
)]
pub struct Rich {
    /// Bold.
    pub bold: bool,
    /// Italic.
    pub italic: bool,
    /// Underlined.
    pub underline: bool,
    /// Struck through.
    pub strike: bool,
    /// Faint.
    pub dim: bool,
    /// Foreground and background swapped (the changed part of a diff line).
    pub reverse: bool,
    /// Foreground colour.
    pub color: Option<Color>,
}

/// A foreground colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    /// Code spans and links.
    Cyan,
    /// Headings.
    Magenta,
    /// Added text.
    Green,
    /// Removed text.
    Red,
    /// Syntax highlighting.
    Rgb(u8, u8, u8),
}

/// A piece of one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// The text (no line breaks).
    pub text: String,
    /// How it is drawn.
    pub style: Style,
}

/// One terminal line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Line(pub Vec<Span>);

impl Line {
    /// A line of one span.
    pub fn styled(text: impl Into<String>, style: Style) -> Self {
        Self(vec![Span {
            text: text.into(),
            style,
        }])
    }

    /// A plain line.
    pub fn plain(text: impl Into<String>) -> Self {
        Self::styled(text, Style::Plain)
    }

    /// Appends a span.
    #[must_use]
    pub fn with(mut self, text: impl Into<String>, style: Style) -> Self {
        self.0.push(Span {
            text: text.into(),
            style,
        });
        self
    }

    /// The text without styles.
    pub fn text(&self) -> String {
        self.0.iter().map(|span| span.text.as_str()).collect()
    }

    /// Display columns.
    pub fn width(&self) -> usize {
        self.0.iter().map(|span| span.text.width()).sum()
    }

    /// The line cut to at most `columns` display columns (an ellipsis marks the cut).
    #[must_use]
    pub fn truncated(&self, columns: usize) -> Self {
        if self.width() <= columns {
            return self.clone();
        }
        let mut left = columns.saturating_sub(1);
        let mut out = Vec::new();
        for span in &self.0 {
            let mut text = String::new();
            for c in span.text.chars() {
                let w = c.width().unwrap_or(0);
                if w > left {
                    left = 0;
                    break;
                }
                left -= w;
                text.push(c);
            }
            out.push(Span {
                text,
                style: span.style,
            });
            if left == 0 {
                break;
            }
        }
        out.push(Span {
            text: "…".to_owned(),
            style: Style::Dim,
        });
        Self(out)
    }
}
