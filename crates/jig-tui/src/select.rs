//! A question with a few choices, drawn inline: ↑/↓ (or `k`/`j`) move, Enter or a choice's
//! number chooses, Esc or Ctrl-C dismisses. [`Select`] is the state and its lines;
//! [`Select::run`] asks in the terminal (raw mode for the question's lifetime, then the question
//! and the answer stay in the scrollback).

use std::io::{self, Write};

use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use crossterm::terminal;

use crate::screen::Screen;
use crate::view::{Line, Style};

/// What a key did to the question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Still asking.
    Pending,
    /// The choice at this index was taken.
    Chosen(usize),
    /// Esc or Ctrl-C: no answer.
    Dismissed,
}

/// A question and its choices.
#[derive(Debug, Clone)]
pub struct Select {
    title: Vec<String>,
    options: Vec<String>,
    selected: usize,
}

impl Select {
    /// A question: `title` (its first line is the question, the others explain) and the
    /// `options` in order; the first is selected.
    pub fn new(title: &str, options: Vec<String>) -> Self {
        Self {
            title: title.lines().map(str::to_owned).collect(),
            options,
            selected: 0,
        }
    }

    /// The selected choice.
    pub fn selected(&self) -> usize {
        self.selected
    }

    /// The question's title lines.
    fn title_lines(&self) -> Vec<Line> {
        self.title
            .iter()
            .enumerate()
            .map(|(index, line)| {
                if index == 0 {
                    Line::styled(format!("? {line}"), Style::Prompt)
                } else {
                    Line::styled(format!("  {line}"), Style::Plain)
                }
            })
            .collect()
    }

    /// The question as it is drawn while asking.
    pub fn lines(&self) -> Vec<Line> {
        let mut lines = self.title_lines();
        for (index, option) in self.options.iter().enumerate() {
            let text = format!("{}. {option}", index + 1);
            lines.push(if index == self.selected {
                Line::styled("› ", Style::Accent).with(text, Style::Accent)
            } else {
                Line::plain(format!("  {text}"))
            });
        }
        lines.push(Line::styled(
            "  ↑↓ move · Enter chooses · Esc cancels",
            Style::Dim,
        ));
        lines
    }

    /// The question and its answer, as they stay in the scrollback.
    pub fn answered_lines(&self, outcome: Option<usize>) -> Vec<Line> {
        let mut lines = self.title_lines();
        lines.push(match outcome.and_then(|index| self.options.get(index)) {
            Some(option) => Line::styled("› ", Style::Accent).with(option, Style::Plain),
            None => Line::styled("› (cancelled)", Style::Dim),
        });
        lines
    }

    /// Applies one key.
    pub fn on_key(&mut self, key: KeyEvent) -> Outcome {
        let count = self.options.len();
        if key.modifiers.contains(KeyModifiers::CONTROL)
            && matches!(key.code, KeyCode::Char('c' | 'C' | 'd' | 'D'))
        {
            return Outcome::Dismissed;
        }
        match key.code {
            KeyCode::Esc => Outcome::Dismissed,
            KeyCode::Enter if count > 0 => Outcome::Chosen(self.selected),
            KeyCode::Up | KeyCode::Char('k') if count > 0 => {
                self.selected = (self.selected + count - 1) % count;
                Outcome::Pending
            }
            KeyCode::Down | KeyCode::Tab | KeyCode::Char('j') if count > 0 => {
                self.selected = (self.selected + 1) % count;
                Outcome::Pending
            }
            KeyCode::Char(digit @ '1'..='9') => {
                let index = usize::from(digit as u8 - b'1');
                if index < count {
                    Outcome::Chosen(index)
                } else {
                    Outcome::Pending
                }
            }
            _ => Outcome::Pending,
        }
    }

    /// Asks in the terminal: raw mode while the question is on screen, keys read with
    /// crossterm. Returns the chosen index, `None` when dismissed. The question and the answer
    /// are left in the scrollback.
    pub fn run<W: Write>(mut self, screen: &mut Screen<W>) -> io::Result<Option<usize>> {
        let _raw = RawMode::enable()?;
        let answer = loop {
            screen.draw(&[], &self.lines())?;
            match event::read()? {
                Event::Key(key) if key.kind != KeyEventKind::Release => match self.on_key(key) {
                    Outcome::Pending => {}
                    Outcome::Chosen(index) => break Some(index),
                    Outcome::Dismissed => break None,
                },
                Event::Resize(width, _) => screen.resize(width),
                _ => {}
            }
        };
        screen.draw(&self.answered_lines(answer), &[])?;
        screen.finish()?;
        Ok(answer)
    }
}

/// Raw mode until dropped (restored however the question ends).
struct RawMode;

impl RawMode {
    fn enable() -> io::Result<Self> {
        terminal::enable_raw_mode()?;
        Ok(Self)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = terminal::disable_raw_mode();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn text(lines: &[Line]) -> String {
        lines.iter().map(Line::text).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn arrows_move_enter_chooses_numbers_choose_and_escape_dismisses() {
        let mut select = Select::new("Pick?\nwhy", vec!["a".into(), "b".into(), "c".into()]);
        assert_eq!(select.on_key(key(KeyCode::Down)), Outcome::Pending);
        assert_eq!(select.on_key(key(KeyCode::Down)), Outcome::Pending);
        assert_eq!(select.on_key(key(KeyCode::Down)), Outcome::Pending);
        assert_eq!(select.selected(), 0, "wraps around");
        assert_eq!(select.on_key(key(KeyCode::Up)), Outcome::Pending);
        assert_eq!(select.on_key(key(KeyCode::Enter)), Outcome::Chosen(2));
        assert_eq!(select.on_key(key(KeyCode::Char('2'))), Outcome::Chosen(1));
        assert_eq!(select.on_key(key(KeyCode::Char('9'))), Outcome::Pending);
        assert_eq!(select.on_key(key(KeyCode::Esc)), Outcome::Dismissed);
        assert_eq!(
            select.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Outcome::Dismissed
        );
    }

    #[test]
    fn the_question_and_its_answer() {
        let mut select = Select::new(
            "Trust project folder?\n/src/app",
            vec!["Trust".into(), "Do not trust".into()],
        );
        select.on_key(key(KeyCode::Down));
        insta::assert_snapshot!(text(&select.lines()), @r"
        ? Trust project folder?
          /src/app
          1. Trust
        › 2. Do not trust
          ↑↓ move · Enter chooses · Esc cancels
        ");
        insta::assert_snapshot!(text(&select.answered_lines(Some(1))), @r"
        ? Trust project folder?
          /src/app
        › Do not trust
        ");
        assert!(text(&select.answered_lines(None)).ends_with("› (cancelled)"));
    }
}
