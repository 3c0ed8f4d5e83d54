//! What an index may hold ([`IndexOptions`]) and what it reports ([`IndexStatus`]).

use std::path::PathBuf;
use std::time::Duration;

/// Bounds of one index. Beyond any of them the root is answered cold, and its status says why.
#[derive(Debug, Clone)]
pub struct IndexOptions {
    /// Most entries (files, directories, symlinks) indexed.
    pub max_entries: usize,
    /// Most memory the index may hold (paths and content summaries, estimated).
    pub max_memory_bytes: usize,
    /// Files larger than this are not summarised (every search reads them).
    pub max_file_bytes: u64,
    /// More events than this in one read of the queue make the index rebuild (as an overflow
    /// of the kernel's queue does).
    pub max_events_per_drain: usize,
    /// Rebuilds allowed within a minute before the root is left cold for a minute: a tree
    /// that changes this fast is cheaper to search cold.
    pub max_rebuilds_per_minute: usize,
    /// Threads that summarise files and search candidates.
    pub threads: usize,
    /// Apply changes as they arrive, between queries (so the kernel's queue stays short and a
    /// query has little to apply); without it only queries apply them.
    pub follow_between_queries: bool,
}

impl Default for IndexOptions {
    fn default() -> Self {
        Self {
            max_entries: 2_000_000,
            max_memory_bytes: 1 << 30,
            max_file_bytes: 8 << 20,
            max_events_per_drain: 100_000,
            max_rebuilds_per_minute: 5,
            threads: std::thread::available_parallelism()
                .map_or(2, std::num::NonZero::get)
                .min(8),
            follow_between_queries: true,
        }
    }
}

/// Where an index is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexState {
    /// Being built: searches are cold until it is ready.
    Building,
    /// Answering.
    Ready,
    /// Not answering, for this reason (too large, a network filesystem, no notifications).
    Cold(String),
}

/// What an index holds and how it has answered.
#[derive(Debug, Clone)]
pub struct IndexStatus {
    /// The canonical root.
    pub root: PathBuf,
    /// Building, ready or cold.
    pub state: IndexState,
    /// Entries indexed (files, directories, symlinks).
    pub entries: usize,
    /// Regular files indexed.
    pub files: usize,
    /// Directories watched.
    pub watches: usize,
    /// Memory held (estimate).
    pub memory_bytes: usize,
    /// How long the last build took.
    pub build_time: Option<Duration>,
    /// Walks and searches answered warm.
    pub warm_answers: u64,
    /// Walks and searches left to the cold path.
    pub cold_answers: u64,
    /// Why the last one went cold.
    pub last_cold_reason: Option<String>,
    /// Rebuilds after losing track of the tree.
    pub rebuilds: u64,
    /// Files a warm search would have read without the content summaries.
    pub files_considered: u64,
    /// Files warm searches read.
    pub files_read: u64,
}
