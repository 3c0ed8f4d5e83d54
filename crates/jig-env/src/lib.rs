//! The execution-environment contract: where jig's tools read, write and run things.
//!
//! The main type is the [`ExecutionEnv`] trait, used as `Arc<dyn ExecutionEnv>`. Tools depend
//! only on this crate, never on a concrete env; the `jig` binary picks one (`LocalEnv` from
//! `jig-env-local` for the host machine, `MemoryEnv` from `jig-env-memory` for tests and dry
//! runs).
//!
//! - [`EnvError`] / [`ErrorKind`]: every failure, typed, with the path involved.
//! - [`search`]: the requests and results of [`ExecutionEnv::walk`] and
//!   [`ExecutionEnv::search`] and their exact rules (ripgrep's ignore rules, deterministic order,
//!   exact limits). Data only: the engine that implements them is the `jig-search` crate.
//! - [`LineScanner`] / [`lines_window`]: the window of lines
//!   [`ExecutionEnv::read_lines`] returns, computed the same way by every env.
//! - `conformance` (feature `test-support`): the suite every implementation runs.
//!
//! ```
//! use jig_env::{LineWindow, lines_window};
//!
//! let window = LineWindow { start_line: 2, max_lines: 1, max_bytes: 100 };
//! let read = lines_window(b"status: draft\nowner: me\n", &window);
//! assert_eq!(read.lines[0].bytes, b"owner: me");
//! assert_eq!(read.total_lines, 2);
//! ```
//!
//! This crate does no I/O itself.

mod env;
mod error;
mod lines;
mod sandbox;
pub mod search;
mod types;

#[cfg(feature = "test-support")]
pub mod conformance;

pub use bytes::Bytes;
pub use env::{
    ChunkSink, ChunkSource, CollectSink, DiscardSink, ExecSink, ExecutionEnv, FILE_CHUNK, FileLock,
    check_no_nul, check_path, check_temp_affix, normalize_path, outside_roots,
};
pub use error::{EnvError, EnvResult, ErrorKind};
pub use lines::{LineScanner, lines_window};
pub use sandbox::{
    PROTECTED_HOME_PATHS, PROTECTED_NAMES, READ_ONLY_SUBDIRS, SandboxMode, SandboxPolicy,
    UnknownSandboxMode,
};
pub use search::{
    CaseSensitivity, EntryKinds, FileMatches, IgnoreRules, LineKind, PatternSyntax,
    SearchInputError, SearchLine, SearchRequest, SearchResult, WalkEntry, WalkRequest, WalkResult,
};
pub use tokio_util::sync::CancellationToken;
pub use types::{
    DirEntry, ExecOutcome, ExecRequest, FileHead, FileInfo, FileKind, Line, LineWindow, LinesRead,
    Recursive, WriteOutcome,
};
