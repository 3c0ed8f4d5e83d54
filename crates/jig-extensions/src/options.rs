//! What every loaded extension is told, and how long loading may take.

use std::path::PathBuf;
use std::time::Duration;

/// Default time an extension gets to answer `initialize`: 10 s.
pub const DEFAULT_INITIALIZE_TIMEOUT: Duration = Duration::from_secs(10);

/// What every loaded extension is told, and how long loading may take.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// The session's working directory: extension processes and hooks run here.
    pub cwd: PathBuf,
    /// The mode (`tui`, `print`, `json`, `rpc`, `mcp`, `tool`), sent in `initialize`.
    pub mode: String,
    /// Whether a user interface can answer dialogs, sent in `initialize`.
    pub has_ui: bool,
    /// Time allowed for the `initialize` handshake.
    pub initialize_timeout: Duration,
}

impl LoadOptions {
    /// Options for `cwd` in print mode (no UI) with the default timeout.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            mode: "print".to_owned(),
            has_ui: false,
            initialize_timeout: DEFAULT_INITIALIZE_TIMEOUT,
        }
    }
}
