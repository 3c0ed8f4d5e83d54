//! Drawing [`Line`]s inline: finished lines are printed once, word-wrapped (see [`crate::wrap`]),
//! and scroll into the terminal's scrollback; the live region below them is redrawn in place
//! (cursor movement and clearing through crossterm). Nothing uses the alternate screen.

use std::io::{self, Write};

use crossterm::cursor::{MoveRight, MoveToColumn, MoveToPreviousLine};
use crossterm::style::{Attribute, Color, Print, ResetColor, SetAttribute, SetForegroundColor};
use crossterm::terminal::{Clear, ClearType};
use crossterm::{QueueableCommand as _, queue};

use crate::line::{self, Line, Rich, Style};
pub use crate::wrap::live_columns;
use crate::wrap::{Break, wrap};

/// True unless `NO_COLOR` is set to a non-empty value (<https://no-color.org>).
pub fn color_enabled() -> bool {
    std::env::var_os(jig_protocol::EnvVars::NO_COLOR).is_none_or(|value| value.is_empty())
}

/// An inline renderer writing to `out` (a terminal in raw mode, or any writer in tests and
/// benchmarks).
#[derive(Debug)]
pub struct Screen<W: Write> {
    out: W,
    color: bool,
    width: u16,
    /// Display widths of the live lines last drawn (to know how many rows they take).
    live_widths: Vec<usize>,
}

impl<W: Write> Screen<W> {
    /// A renderer for a terminal `width` columns wide.
    pub fn new(out: W, width: u16, color: bool) -> Self {
        Self {
            out,
            color,
            width: width.max(1),
            live_widths: Vec::new(),
        }
    }

    /// The writer.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// The terminal is now `width` columns wide: the live lines drawn before may have been
    /// re-wrapped, which the next clear takes into account.
    pub fn resize(&mut self, width: u16) {
        self.width = width.max(1);
    }

    /// Rows the live region takes now.
    fn live_rows(&self) -> usize {
        let width = usize::from(self.width);
        self.live_widths
            .iter()
            .map(|w| w.div_ceil(width).max(1))
            .sum()
    }

    /// Removes the live region (the cursor ends at the start of its first row).
    pub fn clear_live(&mut self) -> io::Result<()> {
        let rows = self.live_rows();
        if rows > 0 {
            self.out.queue(MoveToColumn(0))?;
            if rows > 1 {
                self.out.queue(MoveToPreviousLine(
                    u16::try_from(rows - 1).unwrap_or(u16::MAX),
                ))?;
            }
            self.out.queue(Clear(ClearType::FromCursorDown))?;
        }
        self.live_widths.clear();
        Ok(())
    }

    /// Prints `finished` above the live region, each line word-wrapped, and redraws the live
    /// region as `live`, each line word-wrapped into rows of at most [`live_columns`], each row
    /// a line of its own (so the region's height is known).
    /// Flushes.
    pub fn draw(&mut self, finished: &[Line], live: &[Line]) -> io::Result<()> {
        self.clear_live()?;
        let width = usize::from(self.width);
        for line in finished {
            for (row, end) in wrap(line, width) {
                self.print_line(&row)?;
                match end {
                    // The break's space goes in the last column, so the terminal wraps the row
                    // itself and a copy of the text joins the rows with that one space.
                    Break::Space => {
                        let gap = width.saturating_sub(1 + row.width());
                        if gap > 0 {
                            self.out
                                .queue(MoveRight(u16::try_from(gap).unwrap_or(u16::MAX)))?;
                        }
                        queue!(self.out, Print(" "))?;
                    }
                    Break::Full => {}
                    Break::End => queue!(self.out, Print("\r\n"))?,
                }
            }
        }
        let columns = live_columns(self.width);
        let rows = live.iter().flat_map(|line| wrap(line, columns));
        for (index, (row, _)) in rows.enumerate() {
            if index > 0 {
                queue!(self.out, Print("\r\n"))?;
            }
            self.live_widths.push(row.width());
            self.print_line(&row)?;
        }
        self.out.flush()
    }

    /// Removes the live region and leaves the cursor at the start of an empty line (before the
    /// prompt editor takes the terminal).
    pub fn finish(&mut self) -> io::Result<()> {
        self.clear_live()?;
        self.out.flush()
    }

    fn print_line(&mut self, line: &Line) -> io::Result<()> {
        for span in &line.0 {
            if span.text.is_empty() {
                continue;
            }
            if !self.color || span.style == Style::Plain {
                queue!(self.out, Print(&span.text))?;
                continue;
            }
            match span.style {
                Style::Dim => queue!(self.out, SetAttribute(Attribute::Dim))?,
                Style::Accent => queue!(
                    self.out,
                    SetAttribute(Attribute::Bold),
                    SetForegroundColor(Color::Cyan)
                )?,
                Style::Error | Style::Removed => queue!(self.out, SetForegroundColor(Color::Red))?,
                Style::Added => queue!(self.out, SetForegroundColor(Color::Green))?,
                Style::Prompt => queue!(
                    self.out,
                    SetAttribute(Attribute::Bold),
                    SetForegroundColor(Color::Yellow)
                )?,
                Style::Rich(rich) => self.set_rich(rich)?,
                Style::Plain => {}
            }
            queue!(
                self.out,
                Print(&span.text),
                SetAttribute(Attribute::Reset),
                ResetColor
            )?;
        }
        Ok(())
    }

    fn set_rich(&mut self, rich: Rich) -> io::Result<()> {
        for (on, attribute) in [
            (rich.bold, Attribute::Bold),
            (rich.italic, Attribute::Italic),
            (rich.underline, Attribute::Underlined),
            (rich.strike, Attribute::CrossedOut),
            (rich.dim, Attribute::Dim),
            (rich.reverse, Attribute::Reverse),
        ] {
            if on {
                self.out.queue(SetAttribute(attribute))?;
            }
        }
        if let Some(color) = rich.color {
            let color = match color {
                line::Color::Cyan => Color::Cyan,
                line::Color::Magenta => Color::Magenta,
                line::Color::Green => Color::Green,
                line::Color::Red => Color::Red,
                line::Color::Rgb(r, g, b) => Color::Rgb { r, g, b },
            };
            self.out.queue(SetForegroundColor(color))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(screen: &mut Screen<Vec<u8>>) -> String {
        String::from_utf8(std::mem::take(screen.get_mut())).unwrap()
    }

    #[test]
    fn without_colour_only_text_is_written() {
        let mut screen = Screen::new(Vec::new(), 40, false);
        screen
            .draw(
                &[Line::styled("done", Style::Error)],
                &[Line::styled("live", Style::Dim)],
            )
            .unwrap();
        assert_eq!(written(&mut screen), "done\r\nlive");
        // The next draw clears the one live row first.
        screen.draw(&[], &[]).unwrap();
        assert_eq!(written(&mut screen), "\u{1b}[1G\u{1b}[J");
    }

    #[test]
    fn colour_uses_escape_sequences() {
        let mut screen = Screen::new(Vec::new(), 40, true);
        screen
            .draw(&[Line::styled("x", Style::Added)], &[])
            .unwrap();
        assert!(written(&mut screen).contains("\u{1b}[38;5;10m"));
    }

    #[test]
    fn finished_lines_wrap_between_words_as_the_terminal_s_own_wrap() {
        let mut screen = Screen::new(Vec::new(), 13, false);
        screen
            .draw(&[Line::plain("the operator from minus")], &[])
            .unwrap();
        // `the operator` takes 12 of 13 columns: no gap to skip, the space sits in the last
        // column. The second row ends the line.
        assert_eq!(written(&mut screen), "the operator from minus\r\n");
        screen
            .draw(&[Line::plain("a bb cc dd ee ff")], &[])
            .unwrap();
        // `a bb cc dd` is 10 columns (`ee` would not fit before the last column): the cursor
        // skips two columns, then the space.
        assert_eq!(written(&mut screen), "a bb cc dd\u{1b}[2C ee ff\r\n");
    }

    #[test]
    fn a_narrower_terminal_clears_the_rewrapped_rows() {
        let mut screen = Screen::new(Vec::new(), 40, false);
        screen
            .draw(&[], &[Line::plain("a".repeat(30)), Line::plain("b")])
            .unwrap();
        let _ = written(&mut screen);
        screen.resize(10);
        screen.clear_live().unwrap();
        // 30 columns on a 10-column terminal are 3 rows, plus one: go up 3 rows.
        assert_eq!(written(&mut screen), "\u{1b}[1G\u{1b}[3F\u{1b}[J");
    }
}
