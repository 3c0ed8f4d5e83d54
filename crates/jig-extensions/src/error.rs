use std::fmt;
use std::time::Duration;

/// The hint printed after a load failure.
pub const LOAD_ERROR_HINT: &str = "Hint: Start without extensions using \"jig -ne\".";

/// The answer to any action call an extension makes before the runtime is bound.
pub const NOT_INITIALIZED: &str =
    "Extension runtime not initialized. Action methods cannot be called during extension loading.";

/// An extension could not be loaded: `Failed to load extension "<path>": <reason>`.
///
/// Load errors stop startup (exit 1) and are followed by [`LOAD_ERROR_HINT`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Failed to load extension \"{path}\": {reason}")]
pub struct LoadError {
    /// The extension's path as it was given.
    pub path: String,
    /// What went wrong.
    pub reason: String,
}

impl LoadError {
    /// A load error for `path`.
    pub fn new(path: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            reason: reason.into(),
        }
    }
}

/// A loaded extension failed while handling an event:
/// `Extension "<path>" <event> error: <message>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Extension \"{path}\" {event} error: {message}")]
pub struct ExtensionError {
    /// The extension's path.
    pub path: String,
    /// The event (or `tool:<name>`, `register_provider`, `command:<name>`) being handled.
    pub event: String,
    /// What went wrong.
    pub message: String,
}

/// How one call into an extension failed, as a transport reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandlerError {
    /// The handler ran and failed (it threw, answered a JSON-RPC error, or a hook exited with an
    /// unexpected status). The extension stays loaded.
    Failed(String),
    /// The extension can no longer be reached (it crashed, wrote invalid JSON or an over-long
    /// line, or was stopped after a timeout). Its handlers drop out.
    Gone(String),
}

impl HandlerError {
    /// The message.
    pub fn message(&self) -> &str {
        match self {
            Self::Failed(message) | Self::Gone(message) => message,
        }
    }
}

impl fmt::Display for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

/// `1.5s`, `30s`, `250ms`.
pub(crate) fn format_duration(duration: Duration) -> String {
    if duration.as_millis() < 1000 {
        format!("{}ms", duration.as_millis())
    } else if duration.subsec_millis() == 0 {
        format!("{}s", duration.as_secs())
    } else {
        format!("{:.1}s", duration.as_secs_f64())
    }
}
