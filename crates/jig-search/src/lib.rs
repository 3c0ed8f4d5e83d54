//! The search engine behind [`ExecutionEnv::walk`](jig_env::ExecutionEnv::walk) and
//! [`ExecutionEnv::search`](jig_env::ExecutionEnv::search): ripgrep's libraries (`grep-regex`,
//! `grep-searcher`, `ignore`, `globset`) wrapped so that every env returns the same answer.
//!
//! `jig-env` holds the requests, results and the contract (see [`jig_env::search`]); this crate
//! holds the machinery, shared by every implementation:
//!
//! - [`walk_with_env`] / [`search_with_env`]: the generic implementation on an env's own file
//!   operations (`stat`, `read_dir`, `read`). Envs with nothing faster (`MemoryEnv`) call these
//!   from their `walk`/`search`; faster backends must return the same results.
//! - [`PathGlob`], [`IgnoreDir`] / [`IgnoreStack`], [`is_skipped_name`]: what a walk keeps.
//! - [`CompiledSearch`] → [`FileSearcher`] (one per thread) → [`SearchAssembler`]: searching the
//!   bytes of each file (BOM handling, binary detection, long lines) and assembling per-file
//!   outcomes, given in path order, into a result that keeps exactly the first `limit` matches.
//! - [`compare_paths`] / [`path_sort_key`] / [`finish_walk`]: the one order of every result.
//!
//! Backends that walk faster than `read_dir` (`LocalEnv`'s parallel walk of the host disk, a
//! remote host) build on these parts, which is what makes their results identical to the
//! generic implementation's; the conformance suite checks that they are.
//!
//! ```
//! use jig_env::{FileKind, SearchRequest};
//! use jig_search::{CompiledSearch, FileOutcome, PathGlob};
//!
//! let request = SearchRequest::new("/ws", "needle");
//! let compiled = CompiledSearch::new(&request).unwrap();
//! let outcome = compiled.file_searcher().search_reader(&b"hay\nneedle\n"[..]).unwrap();
//! assert_eq!(outcome.match_count(), 1);
//! assert!(PathGlob::new("*.rs").unwrap().is_match("src/lib.rs".as_ref(), FileKind::File));
//! assert!(jig_search::validate(&SearchRequest::new("/ws", "(")).is_err());
//! # let _ = FileOutcome::Binary;
//! ```
//!
//! This crate does no host I/O itself: it reads files through an env or through a reader the
//! caller opened.

mod file_search;
mod generic;
mod glob;
mod ignore_rules;
mod order;

pub use file_search::{CompiledSearch, FileOutcome, FileSearcher, SearchAssembler, validate};
pub use generic::{search_with_env, walk_with_env};
pub use glob::PathGlob;
pub use ignore_rules::{IgnoreDir, IgnoreStack, is_skipped_name};
pub use order::{compare_paths, finish_walk, path_sort_key};
