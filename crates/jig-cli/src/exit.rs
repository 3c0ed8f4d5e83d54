//! Exit codes and how failures are reported.

use std::io::{self, Write};
use std::process::ExitCode;

/// The tool ran and succeeded.
pub(crate) const SUCCESS: u8 = 0;
/// The tool ran and returned an error result (its text is on stdout as usual).
pub(crate) const TOOL_ERROR: u8 = 1;
/// The command line was wrong: unknown tool, invalid JSON, bad flag, missing directory.
pub(crate) const USAGE: u8 = 2;

/// Why a subcommand stopped before producing its normal output: the harness's error.
pub(crate) use jig_session::StartError as CliError;

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

pub(crate) use jig_session::warn;
