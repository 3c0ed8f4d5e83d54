use std::fmt;
use std::time::Duration;

/// The hint printed after a load failure.
pub const LOAD_ERROR_HINT: &str = "Hint: Start without extensions using \"jig -ne\".";

/// The answer to any action call an extension makes before the runtime is bound.
pub const NOT_INITIALIZED: &str =
    "Extension runtime not initialized. Action methods cannot be called during extension loading.";

/// Why an action an extension asked for (`sendMessage`, `setActiveTools`, `registerTool`, …)
/// was not done. Its text is what the extension receives: the JSON-RPC error's message, or
/// the text of an in-process handler's [`crate::HandlerContext::action`] error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActionError {
    /// The runtime is not bound yet: actions cannot be called while extensions load.
    #[error("{NOT_INITIALIZED}")]
    NotInitialized,
    /// The method is not part of the action API.
    #[error("Unknown method: {0}")]
    UnknownMethod(String),
    /// The parameters are not what the method takes.
    #[error("invalid params for {method}: {reason}")]
    Params {
        /// The method.
        method: String,
        /// What did not fit.
        reason: String,
    },
    /// The host does not implement the action.
    #[error("{action} is not supported in this mode")]
    Unsupported {
        /// The action (`sendMessage`, `registerTool after loading`, …).
        action: String,
    },
    /// The action needs what this mode does not have (a session in `jig mcp` or `jig tool`, a
    /// user interface, a next prompt).
    #[error("{action} is not available in jig {mode} mode")]
    Unavailable {
        /// The action.
        action: String,
        /// The mode (`print`, `interactive`, `mcp`, `tool`).
        mode: String,
    },
    /// A provider registered once the extensions are bound, which only the loading phase may
    /// do.
    #[error(
        "registerProvider after loading is not available in jig {mode} mode: register providers in the initialize reply or during initialize"
    )]
    ProviderAfterLoading {
        /// The mode.
        mode: String,
    },
    /// A provider registration without the `name` that registering by name requires.
    #[error("Provider config is required when registering by name")]
    ProviderWithoutName,
    /// The session the action would change has ended (the run is over, the file is closed).
    #[error("{action}: {reason}")]
    Ended {
        /// The action.
        action: String,
        /// What ended.
        reason: &'static str,
    },
    /// The action's arguments cannot be used (an unknown tool name, a tool offered twice, an
    /// unknown `deliverAs`).
    #[error("{action}: {reason}")]
    Invalid {
        /// The action.
        action: String,
        /// What is wrong, and what would do.
        reason: String,
    },
    /// A tool registration whose parameters schema cannot be used.
    #[error("Tool \"{name}\" has an invalid parameters schema: {reason}")]
    InvalidSchema {
        /// The tool's name.
        name: String,
        /// Why the schema cannot be used.
        reason: String,
    },
    /// The host failed doing it (writing the session file).
    #[error("{action}: {reason}")]
    Failed {
        /// The action.
        action: String,
        /// What failed.
        reason: String,
    },
}

impl ActionError {
    /// An action the host does not implement.
    pub fn unsupported(action: impl Into<String>) -> Self {
        Self::Unsupported {
            action: action.into(),
        }
    }

    /// An action whose arguments cannot be used.
    pub fn invalid(action: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::Invalid {
            action: action.into(),
            reason: reason.into(),
        }
    }
}

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
