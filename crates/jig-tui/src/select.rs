//! A question with choices, drawn inline: ↑/↓ (or `k`/`j`) move, Enter or a choice's number
//! chooses, Esc or Ctrl-C dismisses. Choices may be grouped under headings, and a list taller
//! than the terminal scrolls with the selection. [`Select`] is the state and its lines;
//! [`Select::run`] asks in the terminal (raw mode for the question's lifetime, then the question
//! and the answer stay in the scrollback).

use std::io::{self, Write};

use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use crossterm::terminal;

use crate::line::{Line, Style};
use crate::screen::Screen;

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
    /// Headings drawn before the option at their index (the name of a group of options).
    headings: Vec<(usize, String)>,
}

impl Select {
    /// A question: `title` (its first line is the question, the others explain) and the
    /// `options` in order; the first is selected.
    pub fn new(title: &str, options: Vec<String>) -> Self {
        Self {
            title: title.lines().map(str::to_owned).collect(),
            options,
            selected: 0,
            headings: Vec::new(),
        }
    }

    /// The same question with the option at `index` selected at first (the first when there
    /// is no such option).
    #[must_use]
    pub fn with_selected(mut self, index: usize) -> Self {
        self.selected = if index < self.options.len() { index } else { 0 };
        self
    }

    /// The same question with its options grouped: each `(index, heading)` is drawn as a line
    /// before the option at `index`.
    #[must_use]
    pub fn with_headings(mut self, headings: Vec<(usize, String)>) -> Self {
        self.headings = headings;
        self
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
        self.lines_within(usize::MAX)
    }

    /// The question drawn in at most `rows` lines (the title, one option and the footer at
    /// least): when the options and their headings do not fit, a window of them around the
    /// selected one, with how many more are above and below.
    pub fn lines_within(&self, rows: usize) -> Vec<Line> {
        let mut lines = self.title_lines();
        let body = self.body();
        let room = rows.saturating_sub(lines.len() + 1).max(1);
        if body.len() <= room {
            lines.extend(body.into_iter().map(|(_, line)| line));
        } else {
            // Two rows go to the "more" lines.
            let shown = room.saturating_sub(2).max(1);
            let at = body
                .iter()
                .position(|(option, _)| *option == Some(self.selected))
                .unwrap_or(0);
            let start = at.saturating_sub(shown / 2).min(body.len() - shown);
            let end = start + shown;
            let options = |rows: &[(Option<usize>, Line)]| {
                rows.iter().filter(|(option, _)| option.is_some()).count()
            };
            let above = options(&body[..start]);
            if above > 0 {
                lines.push(Line::styled(format!("  ↑ {above} more"), Style::Dim));
            }
            let below = options(&body[end..]);
            lines.extend(body.into_iter().skip(start).take(shown).map(|(_, l)| l));
            if below > 0 {
                lines.push(Line::styled(format!("  ↓ {below} more"), Style::Dim));
            }
        }
        lines.push(Line::styled(
            "  ↑↓ move · Enter chooses · Esc cancels",
            Style::Dim,
        ));
        lines
    }

    /// The options and their headings, each option with its index.
    fn body(&self) -> Vec<(Option<usize>, Line)> {
        // Numbers are aligned once there are ten options or more.
        let digits = self.options.len().to_string().len();
        let mut body = Vec::new();
        for (index, option) in self.options.iter().enumerate() {
            for (_, heading) in self.headings.iter().filter(|(at, _)| *at == index) {
                body.push((None, Line::styled(format!("  {heading}"), Style::Dim)));
            }
            let text = format!("{:>digits$}. {option}", index + 1);
            body.push((
                Some(index),
                if index == self.selected {
                    Line::styled("› ", Style::Accent).with(text, Style::Accent)
                } else {
                    Line::plain(format!("  {text}"))
                },
            ));
        }
        body
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
            // Within the terminal's height: a taller live region could not be redrawn in place.
            let (_, height) = terminal::size().unwrap_or((80, 24));
            let rows = usize::from(height.saturating_sub(1)).max(1);
            screen.draw(&[], &self.lines_within(rows))?;
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

    #[test]
    fn grouped_options_under_headings_start_at_the_chosen_one() {
        let options = ["a1", "a2", "b1"].map(str::to_owned).to_vec();
        let mut select = Select::new("Model?", options)
            .with_headings(vec![(0, "alpha".into()), (2, "beta".into())])
            .with_selected(1);
        insta::assert_snapshot!(text(&select.lines()), @r"
        ? Model?
          alpha
          1. a1
        › 2. a2
          beta
          3. b1
          ↑↓ move · Enter chooses · Esc cancels
        ");
        assert_eq!(select.on_key(key(KeyCode::Down)), Outcome::Pending);
        assert_eq!(select.on_key(key(KeyCode::Enter)), Outcome::Chosen(2));
        assert_eq!(
            Select::new("?", vec!["x".into()])
                .with_selected(5)
                .selected(),
            0
        );
    }

    #[test]
    fn a_long_list_scrolls_with_the_selection() {
        let options: Vec<String> = (1..=12).map(|n| format!("m{n}")).collect();
        let mut select = Select::new("Model?", options).with_headings(vec![(0, "p".into())]);
        insta::assert_snapshot!(text(&select.lines_within(7)), @r"
        ? Model?
          p
        ›  1. m1
           2. m2
          ↓ 10 more
          ↑↓ move · Enter chooses · Esc cancels
        ");
        for _ in 0..6 {
            select.on_key(key(KeyCode::Down));
        }
        insta::assert_snapshot!(text(&select.lines_within(7)), @r"
        ? Model?
          ↑ 5 more
           6. m6
        ›  7. m7
           8. m8
          ↓ 4 more
          ↑↓ move · Enter chooses · Esc cancels
        ");
        select.on_key(key(KeyCode::Up));
        select.on_key(key(KeyCode::Up));
        select.on_key(key(KeyCode::Up));
        select.on_key(key(KeyCode::Up));
        select.on_key(key(KeyCode::Up));
        select.on_key(key(KeyCode::Up));
        select.on_key(key(KeyCode::Up));
        assert_eq!(select.selected(), 11, "wraps to the last");
        insta::assert_snapshot!(text(&select.lines_within(7)), @r"
        ? Model?
          ↑ 9 more
          10. m10
          11. m11
        › 12. m12
          ↑↓ move · Enter chooses · Esc cancels
        ");
        // Everything fits: no "more" lines.
        assert!(!text(&select.lines_within(40)).contains("more"));
    }
}
