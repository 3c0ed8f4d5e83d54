use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use tokio_util::sync::CancellationToken;

/// What a path is, as seen without following a final symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link (not followed).
    Symlink,
    /// A socket, FIFO or device.
    Other,
}

/// Metadata of one path (lstat semantics unless a method says otherwise).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    /// The absolute path this describes.
    pub path: PathBuf,
    /// File, directory, symlink or other.
    pub kind: FileKind,
    /// Size in bytes (for a symlink: the length of its target string).
    pub size: u64,
    /// Last modification time, when the env knows it.
    pub modified: Option<SystemTime>,
    /// Unix permission bits (`0o644`); `0o644`/`0o755` defaults on envs without modes.
    pub mode: u32,
    /// The file's identity (device and inode number) where the env has one: a file replaced by
    /// a rename gets a new identity even when its size and modification time are unchanged.
    pub file_id: Option<(u64, u64)>,
}

/// What [`ExecutionEnv::read_head`](crate::ExecutionEnv::read_head) found: the metadata of a
/// path and, for a regular file, the start of its content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHead {
    /// Metadata of what the path points to (symlinks followed), taken from the opened file when
    /// it was opened.
    pub info: FileInfo,
    /// At most the requested number of bytes from the start; empty unless `info.kind` is
    /// [`FileKind::File`].
    pub bytes: Vec<u8>,
    /// Whether `bytes` is the whole file: the end was reached within the requested limit.
    /// Always `false` for anything but a regular file.
    pub complete: bool,
}

/// One entry of a directory listing (lstat semantics: symlinks are reported as symlinks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// The entry's file name (no directory part).
    pub name: OsString,
    /// What the entry itself is; a symlink is not followed.
    pub kind: FileKind,
}

/// Whether an operation applies to a directory's contents too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Recursive {
    /// Only the named path (`mkdir`, `rm`/`rmdir` of an empty directory).
    #[default]
    No,
    /// Parents too (`mkdir -p`) or contents too (`rm -r`).
    Yes,
}

/// What `write` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOutcome {
    /// True when the file did not exist before.
    pub created: bool,
}

/// Which lines [`ExecutionEnv::read_lines`](crate::ExecutionEnv::read_lines) returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineWindow {
    /// 1-based number of the first line to return.
    pub start_line: u64,
    /// At most this many lines are returned.
    pub max_lines: usize,
    /// Byte budget: every returned line is cut to at most `max_bytes` bytes (see
    /// [`Line::full_len`]), and collecting stops once the returned bytes (without the `\n`s)
    /// reach `max_bytes` — the line that reaches it is still returned. So a first line longer
    /// than the budget comes back alone and cut, and the lines returned hold at most
    /// `2 * max_bytes` bytes in total.
    pub max_bytes: usize,
}

/// One line returned by `read_lines`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// 1-based line number.
    pub number: u64,
    /// The line's bytes without its `\n` (a `\r` before it is kept), cut to the window's byte
    /// budget when the line is longer.
    pub bytes: Vec<u8>,
    /// The full length of the line in bytes, without the `\n`.
    pub full_len: u64,
}

/// The answer of `read_lines`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinesRead {
    /// The lines of the window, in order.
    pub lines: Vec<Line>,
    /// Lines in the whole file: a final line without `\n` counts, a trailing `\n` adds none.
    pub total_lines: u64,
    /// Bytes in the whole file.
    pub total_bytes: u64,
}

/// A process to run with [`ExecutionEnv::exec`](crate::ExecutionEnv::exec).
#[derive(Debug, Clone)]
pub struct ExecRequest {
    /// The program (a path or a name looked up on the env's `PATH`).
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Working directory (absolute). It must exist.
    pub cwd: PathBuf,
    /// Variables set on top of the inherited environment.
    pub env: BTreeMap<String, String>,
    /// Inherited variables to remove before `env` is applied.
    pub env_remove: Vec<String>,
    /// Wall-clock limit; `None` means no timer.
    pub timeout: Option<Duration>,
    /// How long a process group gets between SIGTERM and SIGKILL on timeout or abort.
    pub kill_grace: Duration,
    /// After the main process exits, stop waiting for pipe output once none arrived for this long
    /// (a daemonised grandchild can hold the pipe open forever).
    pub idle_grace: Duration,
    /// Cancelling this aborts the process (see the trait's exec contract).
    pub cancel: CancellationToken,
    /// The sandbox the process runs in; an env that cannot enforce a policy that is on fails
    /// the call instead of running the process unsandboxed.
    pub sandbox: crate::SandboxPolicy,
}

impl ExecRequest {
    /// A request with defaults: no timeout, 2 s kill grace, 250 ms idle grace, a fresh token.
    pub fn new(program: impl Into<String>, args: Vec<String>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            args,
            cwd: cwd.into(),
            env: BTreeMap::new(),
            env_remove: Vec::new(),
            timeout: None,
            kill_grace: Duration::from_secs(2),
            idle_grace: Duration::from_millis(250),
            cancel: CancellationToken::new(),
            sandbox: crate::SandboxPolicy::off(),
        }
    }
}

/// How an executed process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOutcome {
    /// The exit code; for a process killed by signal `n` this is `128 + n`.
    pub exit_code: i32,
    /// The terminating signal number, when a signal ended the process.
    pub signal: Option<i32>,
    /// The conventional name of that signal on the system the process ran on (`SIGKILL`), or
    /// `SIG<n>` for a number without a name there. The env fills it in: signal numbers differ
    /// between systems, so only the env that ran the process can name it.
    pub signal_name: Option<String>,
    /// True when the timeout fired.
    pub timed_out: bool,
    /// True when the request's token was cancelled.
    pub aborted: bool,
    /// Wall time from spawn to completion.
    pub duration: Duration,
}
