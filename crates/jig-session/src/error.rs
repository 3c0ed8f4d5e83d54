//! Why starting or running a session stopped, and the warnings it prints on the way.

use std::io::Write as _;

/// Why a stage of the harness stopped before its result. Each face maps it to its own
/// outcome (`jig` exits 2 for [`StartError::Usage`], 1 for [`StartError::Failure`]).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The request was wrong (a flag, a name, a path): the user fixes it by changing it.
    #[error("{0:#}")]
    Usage(anyhow::Error),
    /// Something failed that changing the request cannot fix.
    #[error("{0:#}")]
    Failure(anyhow::Error),
    /// Stop with this exit code; the reason was already printed (startup diagnostics).
    #[error("stopped (exit {0}); the reason was reported")]
    Reported(u8),
}

impl StartError {
    /// A usage error with `message`.
    pub fn usage(message: impl std::fmt::Display) -> Self {
        Self::Usage(anyhow::anyhow!("{message}"))
    }
}

/// `jig: warning: …` on stderr: something the user should know that does not stop the
/// session (the same text in every mode).
pub fn warn(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "jig: warning: {message}");
}

/// `jig: …` on stderr, for information (`--verbose`).
pub fn note(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "jig: {message}");
}
