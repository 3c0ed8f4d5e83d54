//! The execution-environment contract: where jig's tools read, write and run things.
//!
//! The main type is the [`ExecutionEnv`] trait, used as `Arc<dyn ExecutionEnv>`. Tools depend
//! only on this crate, never on a concrete env; the `jig` binary picks one (`LocalEnv` from
//! `jig-env-local` for the host machine, [`MemoryEnv`] here for tests and dry runs).
//!
//! - [`EnvError`] / [`ErrorKind`]: every failure, typed, with the path involved.
//! - [`MemoryEnv`]: an in-memory filesystem (always compiled: the universal test double and a
//!   dry-run backend). It cannot run processes: `exec` is [`ErrorKind::Unsupported`].
//! - [`search`]: the requests and results of [`ExecutionEnv::walk`] and
//!   [`ExecutionEnv::search`] (ripgrep's ignore rules, deterministic order, exact limits), and the
//!   generic implementation on the env's file operations that faster backends must agree with.
//! - `conformance` (feature `test-support`): the suite every implementation runs.
//!
//! ```
//! use std::path::Path;
//! use jig_env::{ExecutionEnv, MemoryEnv};
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let env = MemoryEnv::new();
//! env.write(Path::new("/ws/task.txt"), "status: draft\n".into()).await.unwrap();
//! assert_eq!(env.read(Path::new("/ws/task.txt")).await.unwrap(), b"status: draft\n");
//! # });
//! ```
//!
//! This crate does no host I/O itself (`MemoryEnv` lives in memory).

mod env;
mod error;
mod memory;
pub mod search;
mod types;

#[cfg(feature = "test-support")]
pub mod conformance;

pub use bytes::Bytes;
pub use env::{
    CollectSink, DiscardSink, ExecSink, ExecutionEnv, FileLock, check_no_nul, check_path,
    check_temp_affix, normalize_path, outside_roots,
};
pub use error::{EnvError, EnvResult, ErrorKind};
pub use memory::{MemoryEnv, lines_window};
pub use search::{
    CaseSensitivity, EntryKinds, FileMatches, IgnoreRules, LineKind, PatternSyntax,
    SearchInputError, SearchLine, SearchRequest, SearchResult, WalkEntry, WalkRequest, WalkResult,
};
pub use tokio_util::sync::CancellationToken;
pub use types::{
    DirEntry, ExecOutcome, ExecRequest, FileHead, FileInfo, FileKind, Line, LineWindow, LinesRead,
    Recursive, WriteOutcome,
};
