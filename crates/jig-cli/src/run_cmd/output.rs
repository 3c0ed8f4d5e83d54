//! What `jig run` prints, and the session writer: both are agent observers.

use std::io::{self, Write as _};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use jig_agent::{AgentEvent, AgentObserver, Session, SessionError};
use serde_json::Value;

use super::OutputMode;

/// Writes messages to the session as they complete and, in JSON mode, every event to stdout.
#[derive(Debug)]
pub(crate) struct Printer {
    mode: OutputMode,
    /// Text mode: one stderr line per tool call and per retry.
    progress: bool,
    session: Mutex<Session>,
    session_error: Mutex<Option<SessionError>>,
}

impl Printer {
    pub(crate) fn new(mode: OutputMode, progress: bool, session: Session) -> Arc<Self> {
        Arc::new(Self {
            mode,
            progress,
            session: Mutex::new(session),
            session_error: Mutex::new(None),
        })
    }

    /// The session being written.
    pub(crate) fn session(&self) -> std::sync::MutexGuard<'_, Session> {
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The first error met while writing the session.
    pub(crate) fn session_error(&self) -> Option<SessionError> {
        self.session_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

impl AgentObserver for Printer {
    fn on_event(&self, event: &AgentEvent) {
        let written = match event {
            AgentEvent::MessageEnd { message } => Some(
                self.session
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .append_message(message),
            ),
            AgentEvent::Compaction {
                reason,
                summary,
                tokens_before,
                kept_messages,
                ..
            } => Some(
                self.session
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .append_compaction(*reason, summary, *kept_messages, *tokens_before),
            ),
            _ => None,
        };
        if let Some(Err(error)) = written {
            let mut slot = self
                .session_error
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            slot.get_or_insert(error);
        }
        if self.mode == OutputMode::Json {
            print_json(&serde_json::to_value(event).unwrap_or_default());
        } else if self.progress {
            match event {
                AgentEvent::ToolExecutionStart {
                    tool_name, args, ..
                } => progress(&format!("{tool_name} {}", brief(args))),
                AgentEvent::Compaction {
                    tokens_before,
                    summarised_messages,
                    kept_messages,
                    ..
                } => progress(&format!(
                    "compacted the conversation: {summarised_messages} older messages summarised, {kept_messages} kept{}",
                    tokens_before
                        .map(|tokens| format!(" ({tokens} input tokens before)"))
                        .unwrap_or_default()
                )),
                AgentEvent::Retry(notice) => progress(&format!(
                    "retrying in {:.1} s (retry {} of {}): {}",
                    Duration::from_millis(notice.delay_ms).as_secs_f64(),
                    notice.attempt,
                    notice.max_retries,
                    notice.reason
                )),
                _ => {}
            }
        }
    }
}

/// A tool call's arguments on one line: a single string argument as is, else compact JSON; at
/// most 100 characters.
fn brief(args: &Value) -> String {
    let text = match args.as_object() {
        Some(object) if object.len() == 1 => match object.values().next() {
            Some(Value::String(text)) => text.clone(),
            _ => args.to_string(),
        },
        _ => args.to_string(),
    };
    let line = text.replace(['\n', '\r'], " ");
    let cut: String = line.chars().take(100).collect();
    if cut.len() < line.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// `jig: …` on stderr, for progress.
fn progress(message: &str) {
    let _ = writeln!(io::stderr().lock(), "jig: {message}");
}

/// One JSON value as one line on stdout (a closed pipe is ignored: the run goes on and the
/// session is still written).
pub(crate) fn print_json(value: &Value) {
    let mut stdout = io::stdout().lock();
    let _ = writeln!(stdout, "{value}").and_then(|()| stdout.flush());
}

/// `jig: warning: …` on stderr.
pub(crate) fn warn(message: &str) {
    let _ = writeln!(io::stderr().lock(), "jig: warning: {message}");
}

/// `jig: …` on stderr.
pub(crate) fn error(message: &str) {
    let _ = writeln!(io::stderr().lock(), "jig: {message}");
}
