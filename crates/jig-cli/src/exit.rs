//! Exit codes and how failures are reported.

use std::io::{self, Write};
use std::process::ExitCode;

/// The tool ran and succeeded.
pub(crate) const SUCCESS: u8 = 0;
/// The tool ran and returned an error result (its text is on stdout as usual).
pub(crate) const TOOL_ERROR: u8 = 1;
/// The command line was wrong: unknown tool, invalid JSON, bad flag, missing directory.
pub(crate) const USAGE: u8 = 2;

/// Why a subcommand stopped before producing its normal output.
#[derive(Debug)]
pub(crate) enum CliError {
    /// The command line was wrong; exit 2 with the message on stderr.
    Usage(anyhow::Error),
    /// Something failed that the user cannot fix by changing the arguments (exit 1).
    Failure(anyhow::Error),
    /// Stop with this exit code; the reason was already printed (startup diagnostics).
    Reported(u8),
}

impl CliError {
    /// A usage error with `message`.
    pub(crate) fn usage(message: impl std::fmt::Display) -> Self {
        Self::Usage(anyhow::anyhow!("{message}"))
    }
}

/// Prints `error` to stderr and returns its exit code. Output that cannot be written because
/// the reader went away (a closed pipe) is not an error.
pub(crate) fn report(error: &CliError) -> ExitCode {
    let (code, error) = match error {
        CliError::Usage(error) => (USAGE, error),
        CliError::Failure(error) => (TOOL_ERROR, error),
        CliError::Reported(code) => return ExitCode::from(*code),
    };
    if is_broken_pipe(error) {
        return ExitCode::from(SUCCESS);
    }
    let _ = writeln!(io::stderr().lock(), "jig: {error:#}");
    ExitCode::from(code)
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .filter_map(|cause| cause.downcast_ref::<io::Error>())
        .any(|cause| cause.kind() == io::ErrorKind::BrokenPipe)
}

/// `jig: warning: …` on stderr.
pub(crate) fn warn(message: &str) {
    let _ = writeln!(io::stderr().lock(), "jig: warning: {message}");
}
