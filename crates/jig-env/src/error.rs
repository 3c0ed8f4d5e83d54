use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// The result of every [`ExecutionEnv`](crate::ExecutionEnv) operation.
pub type EnvResult<T> = Result<T, EnvError>;

/// What kind of failure an [`EnvError`] is; tools branch on this, never on message strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The path (or a parent of it) does not exist.
    NotFound,
    /// The OS refused access.
    PermissionDenied,
    /// A path component that must be a directory is not one.
    NotADirectory,
    /// The path is a directory where a file was required.
    IsADirectory,
    /// The request itself is invalid (bad path, NUL byte, bad argument).
    Invalid,
    /// This environment cannot do that operation.
    Unsupported,
    /// The operation was cancelled.
    Aborted,
    /// The operation ran out of time.
    Timeout,
    /// The path leads outside the roots a confined view
    /// ([`ExecutionEnv::beneath`](crate::ExecutionEnv::beneath)) may reach: it is spelled
    /// outside them, or a symbolic link on the way points out of them. Nothing was touched.
    OutsideRoots,
    /// Anything else; the message says what.
    Other,
}

impl ErrorKind {
    /// The snake_case name used in logs and JSON (`not_found`, `permission_denied`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NotFound => "not_found",
            Self::PermissionDenied => "permission_denied",
            Self::NotADirectory => "not_a_directory",
            Self::IsADirectory => "is_a_directory",
            Self::Invalid => "invalid",
            Self::Unsupported => "unsupported",
            Self::Aborted => "aborted",
            Self::Timeout => "timeout",
            Self::OutsideRoots => "outside_roots",
            Self::Other => "other",
        }
    }

    /// Maps an OS error to a kind.
    pub fn from_io(error: &io::Error) -> Self {
        match error.kind() {
            io::ErrorKind::NotFound => Self::NotFound,
            io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
                Self::PermissionDenied
            }
            io::ErrorKind::NotADirectory => Self::NotADirectory,
            io::ErrorKind::IsADirectory => Self::IsADirectory,
            io::ErrorKind::InvalidInput | io::ErrorKind::InvalidFilename => Self::Invalid,
            io::ErrorKind::Unsupported => Self::Unsupported,
            io::ErrorKind::Interrupted => Self::Aborted,
            io::ErrorKind::TimedOut => Self::Timeout,
            _ => match error.raw_os_error() {
                Some(code) if code == libc_eloop() => Self::Invalid,
                _ => Self::Other,
            },
        }
    }
}

/// ELOOP on Linux and the BSDs; kept local so this crate needs no libc dependency.
const fn libc_eloop() -> i32 {
    if cfg!(target_os = "linux") { 40 } else { 62 }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed environment operation: its kind, the operation, the path involved and a message.
///
/// Displayed as `<operation> <path>: <message>` (or `<operation>: <message>` without a path).
#[derive(Debug, thiserror::Error)]
pub struct EnvError {
    kind: ErrorKind,
    operation: &'static str,
    path: Option<PathBuf>,
    message: String,
    #[source]
    source: Option<io::Error>,
}

impl EnvError {
    /// A new error of `kind` for `operation` with a human-readable message.
    pub fn new(kind: ErrorKind, operation: &'static str, message: impl Into<String>) -> Self {
        Self {
            kind,
            operation,
            path: None,
            message: message.into(),
            source: None,
        }
    }

    /// Wraps an OS error, keeping it as the source and naming the path.
    pub fn io(operation: &'static str, path: &Path, error: io::Error) -> Self {
        let kind = ErrorKind::from_io(&error);
        let message = match kind {
            ErrorKind::NotFound => "no such file or directory".to_owned(),
            ErrorKind::PermissionDenied => "permission denied".to_owned(),
            ErrorKind::NotADirectory => "not a directory".to_owned(),
            ErrorKind::IsADirectory => "is a directory".to_owned(),
            _ => error.to_string(),
        };
        Self {
            kind,
            operation,
            path: Some(path.to_path_buf()),
            message,
            source: Some(error),
        }
    }

    /// The operation was cancelled.
    pub fn aborted(operation: &'static str) -> Self {
        Self::new(ErrorKind::Aborted, operation, "operation aborted")
    }

    /// The environment does not support the operation.
    pub fn unsupported(operation: &'static str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unsupported, operation, message)
    }

    /// The same error naming `path`.
    #[must_use]
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The operation that failed (`read`, `write`, `exec`, …).
    pub fn operation(&self) -> &'static str {
        self.operation
    }

    /// The path involved, when there is one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The message without operation and path.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for EnvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(path) => write!(f, "{} {}: {}", self.operation, path.display(), self.message),
            None => write!(f, "{}: {}", self.operation, self.message),
        }
    }
}
