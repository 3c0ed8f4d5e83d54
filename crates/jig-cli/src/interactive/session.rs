//! The interactive session's writer: messages and compactions are appended as they complete,
//! and the slash commands reach the session in between turns (model and thinking changes, its
//! path, the tool variables).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use jig_agent::{AgentEvent, AgentObserver, Session, SessionError};

/// Writes the session synchronously; the first error met is kept until read.
#[derive(Debug)]
pub(super) struct SessionWriter {
    session: Mutex<Session>,
    error: Mutex<Option<SessionError>>,
}

impl SessionWriter {
    pub(super) fn new(session: Session) -> Arc<Self> {
        Arc::new(Self {
            session: Mutex::new(session),
            error: Mutex::new(None),
        })
    }

    /// The session being written.
    pub(super) fn session(&self) -> MutexGuard<'_, Session> {
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The first error met while writing the session since the last call.
    pub(super) fn session_error(&self) -> Option<SessionError> {
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
        if let Some(Err(error)) = written {
            self.error
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get_or_insert(error);
        }
    }
}
