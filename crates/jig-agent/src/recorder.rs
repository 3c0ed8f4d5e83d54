//! [`SessionRecorder`]: a session written by a task of its own, fed through a channel.

use jig_protocol::Message;
use tokio::sync::{mpsc, oneshot};

use crate::compaction::CompactionReason;
use crate::event::AgentEvent;
use crate::session::{Session, SessionError};

/// What the writer is asked to do.
enum Command {
    Message(Message),
    Tagged {
        message: Message,
        custom_type: Option<String>,
        display: Option<bool>,
    },
    Compaction {
        reason: CompactionReason,
        summary: String,
        kept_messages: usize,
        tokens_before: Option<u64>,
    },
    Custom {
        custom_type: String,
        data: serde_json::Value,
    },
    Shutdown(oneshot::Sender<Result<(), SessionError>>),
}

/// Records a run into its [`Session`] without blocking the caller: entries go through a channel
/// to a writer on the blocking pool that owns the session and its file, in the order they were
/// recorded. An observer can call [`SessionRecorder::record_event`] from any thread.
///
/// [`SessionRecorder::shutdown`] waits until every entry recorded before it is written and the
/// file is synced, and returns the first error met while writing (later entries are still
/// attempted after an error).
#[derive(Debug, Clone)]
pub struct SessionRecorder {
    commands: mpsc::UnboundedSender<Command>,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Message(_) => "Message",
            Self::Tagged { .. } => "Tagged",
            Self::Compaction { .. } => "Compaction",
            Self::Custom { .. } => "Custom",
            Self::Shutdown(_) => "Shutdown",
        })
    }
}

impl SessionRecorder {
    /// Starts the writer for `session`. Must be called within a Tokio runtime.
    pub fn start(session: Session) -> Self {
        let (commands, receiver) = mpsc::unbounded_channel();
        tokio::task::spawn_blocking(move || write_loop(session, receiver));
        Self { commands }
    }

    /// Records what `event` adds to the session: a completed message or a compaction; other
    /// events add nothing.
    pub fn record_event(&self, event: &AgentEvent) {
        match event {
            AgentEvent::MessageEnd { message } => self.send(Command::Message(message.clone())),
            AgentEvent::Compaction {
                reason,
                summary,
                tokens_before,
                kept_messages,
                ..
            } => self.send(Command::Compaction {
                reason: *reason,
                summary: summary.clone(),
                kept_messages: *kept_messages,
                tokens_before: *tokens_before,
            }),
            _ => {}
        }
    }

    /// Records a message.
    pub fn record_message(&self, message: &Message) {
        self.send(Command::Message(message.clone()));
    }

    /// Records a message an extension sent, with its type tag and whether it is shown (see
    /// [`Session::append_tagged_message`]).
    pub fn record_tagged_message(
        &self,
        message: Message,
        custom_type: Option<String>,
        display: Option<bool>,
    ) {
        self.send(Command::Tagged {
            message,
            custom_type,
            display,
        });
    }

    /// Records an extension's entry (see [`Session::append_custom`]).
    pub fn record_custom(&self, custom_type: String, data: serde_json::Value) {
        self.send(Command::Custom { custom_type, data });
    }

    fn send(&self, command: Command) {
        if let Err(error) = self.commands.send(command) {
            tracing::warn!(command = ?error.0, "the session was already closed; entry not written");
        }
    }

    /// Writes everything recorded so far, syncs the file and stops the writer. Returns the
    /// first error met while writing.
    pub async fn shutdown(&self) -> Result<(), SessionError> {
        let (done, result) = oneshot::channel();
        self.send(Command::Shutdown(done));
        result.await.unwrap_or(Ok(()))
    }
}

fn write_loop(mut session: Session, mut commands: mpsc::UnboundedReceiver<Command>) {
    let mut first_error: Option<SessionError> = None;
    while let Some(command) = commands.blocking_recv() {
        let written = match command {
            Command::Message(message) => session.append_message(&message),
            Command::Tagged {
                message,
                custom_type,
                display,
            } => session.append_tagged_message(&message, custom_type, display),
            Command::Compaction {
                reason,
                summary,
                kept_messages,
                tokens_before,
            } => session.append_compaction(reason, &summary, kept_messages, tokens_before),
            Command::Custom { custom_type, data } => session.append_custom(&custom_type, data),
            Command::Shutdown(done) => {
                if let Err(error) = session.sync() {
                    first_error.get_or_insert(error);
                }
                let _ = done.send(first_error.take().map_or(Ok(()), Err));
                return;
            }
        };
        if let Err(error) = written {
            first_error.get_or_insert(error);
        }
    }
}
