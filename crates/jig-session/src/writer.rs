//! A live session's writer: messages and compactions are appended as they complete (as an
//! [`AgentObserver`]), and a face reaches the session in between turns (model and thinking
//! changes, its path, the tool variables). Extensions' entries (`appendEntry`) and the messages
//! they sent (with their `customType` and `display`) are written here too.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use jig_agent::{AgentEvent, AgentObserver, Session, SessionError};
use serde_json::Value;

use crate::extensions::{EntrySink, Sent};

/// Writes the session synchronously; the first error met is kept until read.
#[derive(Debug)]
pub struct SessionWriter {
    session: Mutex<Session>,
    error: Mutex<Option<SessionError>>,
}

impl SessionWriter {
    /// A writer of `session`.
    pub fn new(session: Session) -> Arc<Self> {
        Arc::new(Self {
            session: Mutex::new(session),
            error: Mutex::new(None),
        })
    }

    /// The session being written.
    pub fn session(&self) -> MutexGuard<'_, Session> {
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends a message an extension sent, with its type tag and whether it is shown.
    pub fn append_sent(&self, message: &jig_protocol::Message, sent: &Sent) {
        let display = (!sent.display).then_some(false);
        let written =
            self.session()
                .append_tagged_message(message, sent.custom_type.clone(), display);
        self.keep_error(written);
    }

    fn keep_error(&self, written: Result<(), SessionError>) {
        if let Err(error) = written {
            self.error
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get_or_insert(error);
        }
    }

    /// The first error met while writing the session since the last call.
    pub fn session_error(&self) -> Option<SessionError> {
        self.error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

impl AgentObserver for SessionWriter {
    fn on_event(&self, event: &AgentEvent) {
        let written = match event {
            AgentEvent::MessageEnd { message } => Some(self.session().append_message(message)),
            AgentEvent::Compaction {
                reason,
                summary,
                tokens_before,
                kept_messages,
                ..
            } => Some(self.session().append_compaction(
                *reason,
                summary,
                *kept_messages,
                *tokens_before,
            )),
            _ => None,
        };
        if let Some(written) = written {
            self.keep_error(written);
        }
    }
}

impl EntrySink for SessionWriter {
    fn append_custom(&self, custom_type: &str, data: Value) -> Result<(), SessionError> {
        self.session().append_custom(custom_type, data)
    }
}
