//! Warm search for long-lived sessions (`jig mcp`, `jig run`, the interactive session): a
//! per-root index that answers [`ExecutionEnv::walk`](jig_env::ExecutionEnv::walk) and
//! [`ExecutionEnv::search`](jig_env::ExecutionEnv::search) without walking the tree or reading
//! every file again, and answers exactly what the cold path would.
//!
//! - [`WarmIndex`]: one root. A background thread walks it once (every entry, ignored or not,
//!   with its own ignore decision made by `jig-search`'s ignore rules) and summarises each
//!   regular file's trigrams in a small Bloom filter; inotify then reports every change.
//! - [`IndexedEnv`]: the env decorator the session puts in front of `LocalEnv`; its views
//!   ([`ExecutionEnv::beneath`](jig_env::ExecutionEnv::beneath)) share the indexes.
//!   [`WarmIndexes`] holds a session's indexes and their [`IndexStatus`].
//!
//! # Exactness
//! A warm answer is the cold answer of the same tree at the same moment, by construction:
//! - **Current.** Before answering, the index reads the inotify queue until it would block
//!   and applies every change (re-listing directories, re-summarising files, re-deciding ignore
//!   rules below a changed ignore file). The kernel queues an event inside the system call
//!   that makes the change, so every change completed before the query began is applied —
//!   jig's own writes and other processes' alike, with no sleep and no write hook. Every
//!   directory is watched before it is listed, so changes during a build are queued too.
//! - **The same machinery.** A walk is a range scan of the tree in the one result order
//!   (`jig_search::path_sort_key`), filtered by the request's glob and ignore setting. A search
//!   reads the candidate files (all files but those whose summary lacks a trigram every match
//!   needs) with `jig-search`'s `FileSearcher` and assembles them in path order with its
//!   `SearchAssembler`: lines, limits, binary files and byte-order marks are the cold path's.
//!   A pattern whose literals cannot be bounded requires nothing (every file is a candidate).
//! - **Any doubt is cold.** An overflowed queue, more events at once than
//!   [`IndexOptions::max_events_per_drain`], a change to an ignore file above the root, the
//!   root moved, a network or FUSE filesystem, a watch limit, too many entries or too much
//!   memory: the call is answered by the env below, and the index rebuilds (or stays cold
//!   with a reason in its [`IndexStatus`]). A file with several hard links, larger than
//!   [`IndexOptions::max_file_bytes`], or starting with a byte-order mark is always read.
//!
//! Not covered: a file changed through a shared writable memory map sends no event (the
//! cold path would see the change). Only Linux has an index (inotify); elsewhere every call
//! is cold.
//!
//! # Where indexes start
//! [`IndexedEnv`]'s [`ExecutionEnv::keep_warm`](jig_env::ExecutionEnv::keep_warm) starts the
//! indexes of the roots it is given (once each). A session calls it on its env once its roots
//! and trust are known: locally that is an `IndexedEnv`; with `--env` the call crosses the env
//! protocol and the far side's `jig env serve`, an `IndexedEnv` over its own local env, indexes
//! the roots next to the files. Each index tells its [`IndexOptions::reporter`] (and the
//! `jig_index` log, at `info`) when it becomes ready or cold, as one line ([`IndexStatus`]'s
//! `Display`).
//!
//! # Costs
//! Memory only, nothing on disk: each entry's path and 10 bits per distinct trigram of each file
//! (at most 128 KiB a file), about 570 bytes per file of 40-line source files; one inotify watch
//! per directory. A query holds the index's lock while it applies changes and lists a chunk of
//! candidates; a search lists its candidates in growing chunks, so one that stops at its limit
//! lists little more than it reads. A query that needs every candidate checks every file's filter:
//! linear in the files under its root. The filters are checked a batch at a time, one required
//! trigram over the batch before the next (the loads do not wait on each other), on a second thread
//! while the tree is listed: 40–60 ms for 1,000,000 files through `jig mcp`; posting lists per
//! trigram would make it sublinear. `benches/warm_search.rs` measures build time, memory and warm
//! against cold latency on generated trees.
//!
//! ```no_run
//! use std::sync::Arc;
//! use jig_index::{IndexOptions, IndexedEnv, WarmIndexes};
//! # fn env() -> Arc<dyn jig_env::ExecutionEnv> { unimplemented!() }
//! let indexes = WarmIndexes::new(IndexOptions::default());
//! let env = IndexedEnv::new(env(), Arc::clone(&indexes));
//! indexes.start(&["/srv/repo".into()]);
//! // env.walk(…) and env.search(…) are warm once the index is built.
//! # let _ = env;
//! ```

mod env;
#[cfg(not(target_os = "linux"))]
#[path = "cold.rs"]
mod index;
#[cfg(target_os = "linux")]
mod index;
#[cfg(target_os = "linux")]
mod scan;
mod status;
#[cfg_attr(
    not(target_os = "linux"),
    expect(dead_code, reason = "only Linux has an index")
)]
mod tree;
#[cfg_attr(
    not(target_os = "linux"),
    expect(dead_code, reason = "only Linux has an index")
)]
mod trigram;
#[cfg(target_os = "linux")]
mod watch;

pub use env::{IndexedEnv, WarmIndexes};
pub use index::WarmIndex;
pub use status::{IndexOptions, IndexState, IndexStatus, Reporter};
