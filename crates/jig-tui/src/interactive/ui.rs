//! An extension's `ui/select`, `ui/confirm` and `ui/input` as a question in the live region
//! (`ui/notify` is a line, answered at once).

use crate::select::{Outcome, Select};
use crate::view::{Line, Style};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use jig_extensions::UiRequest;
use serde_json::Value;
use tokio::sync::oneshot;

/// The extension's name for the screen: the last part of its path.
pub(super) fn short_name(extension: &str) -> &str {
    extension
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(extension)
}

/// A question an extension asked, waiting for the user.
pub(super) struct ExtensionQuestion {
    extension: String,
    request: UiRequest,
    reply: oneshot::Sender<Value>,
    /// The choices, for `select` and `confirm`.
    select: Option<Select>,
    /// What is typed, for `input`.
    text: String,
}

impl ExtensionQuestion {
    pub(super) fn new(
        extension: String,
        request: UiRequest,
        reply: oneshot::Sender<Value>,
    ) -> Self {
        let select = match &request {
            UiRequest::Select { title, options } => Some(Select::new(title, options.clone())),
            UiRequest::Confirm { title, message } => {
                let title = match message {
                    Some(message) => format!("{title}\n{message}"),
                    None => title.clone(),
                };
                Some(Select::new(&title, vec!["Yes".to_owned(), "No".to_owned()]))
            }
            UiRequest::Input { .. } | UiRequest::Notify { .. } => None,
        };
        Self {
            extension,
            request,
            reply,
            select,
            text: String::new(),
        }
    }

    /// The question as drawn on a terminal `width` columns wide.
    pub(super) fn lines(&self, width: usize) -> Vec<Line> {
        let mut lines = vec![Line::styled(
            format!("{} asks:", short_name(&self.extension)),
            Style::Dim,
        )];
        if let Some(select) = &self.select {
            lines.extend(select.lines());
            return lines;
        }
        if let UiRequest::Input { title, placeholder } = &self.request {
            lines.push(Line::styled(format!("? {title}"), Style::Prompt));
            if self.text.is_empty() {
                lines.push(Line::styled(
                    format!("› {}", placeholder.as_deref().unwrap_or("")),
                    Style::Dim,
                ));
            } else {
                lines.extend(crate::wrap::field(
                    &Line::styled("› ", Style::Accent).with(&self.text, Style::Plain),
                    width,
                    super::FIELD_ROWS,
                ));
            }
            lines.push(Line::styled("  Enter sends · Esc cancels", Style::Dim));
        }
        lines
    }

    /// Applies a key; the answer once the question is answered or dismissed.
    pub(super) fn on_key(&mut self, key: KeyEvent) -> Option<Value> {
        let dismissed = self.request.no_ui_answer();
        if let Some(select) = &mut self.select {
            return match select.on_key(key) {
                Outcome::Pending => None,
                Outcome::Dismissed => Some(dismissed),
                Outcome::Chosen(index) => Some(match &self.request {
                    UiRequest::Select { options, .. } => options
                        .get(index)
                        .map_or(Value::Null, |option| Value::String(option.clone())),
                    _ => Value::Bool(index == 0),
                }),
            };
        }
        let control = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('c' | 'd') if control => Some(dismissed),
            KeyCode::Esc => Some(dismissed),
            KeyCode::Enter => Some(Value::String(std::mem::take(&mut self.text))),
            KeyCode::Backspace => {
                self.text.pop();
                None
            }
            KeyCode::Char(c) if !control => {
                self.text.push(c);
                None
            }
            _ => None,
        }
    }

    /// What was answered, as a finished line.
    pub(super) fn answer_line(&self, answer: &Value) -> Line {
        let title = match &self.request {
            UiRequest::Select { title, .. }
            | UiRequest::Confirm { title, .. }
            | UiRequest::Input { title, .. } => title.lines().next().unwrap_or("").to_owned(),
            UiRequest::Notify { message } => message.clone(),
        };
        let answer = match answer {
            Value::Null => "(cancelled)".to_owned(),
            Value::Bool(true) => "yes".to_owned(),
            Value::Bool(false) => "no".to_owned(),
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        Line::styled(
            format!("  {}: {title} › ", short_name(&self.extension)),
            Style::Dim,
        )
        .with(answer, Style::Plain)
    }

    /// Sends the answer to the extension.
    pub(super) fn answer(self, answer: Value) {
        let _ = self.reply.send(answer);
    }
}
