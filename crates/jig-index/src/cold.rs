//! Systems without inotify: no index. Every walk and search is answered cold, and the status
//! says why.

use std::path::{Path, PathBuf};
use std::time::Duration;

use jig_env::{EnvResult, SearchRequest, SearchResult, WalkRequest, WalkResult};

use crate::status::{IndexOptions, IndexState, IndexStatus};

const REASON: &str = "no change notifications the index can rely on on this system";

/// The index of one root; on this system it never answers.
#[derive(Debug)]
pub struct WarmIndex {
    root: PathBuf,
}

impl WarmIndex {
    /// An index that stays cold.
    pub fn start(root: PathBuf, options: IndexOptions) -> Self {
        let index = Self { root };
        if let Some(reporter) = &options.reporter {
            (reporter.0)(&index.status());
        }
        index
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Never ready.
    pub fn wait_ready(&self, timeout: Duration) -> bool {
        let _ = timeout;
        false
    }

    /// Cold, and why.
    pub fn status(&self) -> IndexStatus {
        IndexStatus {
            root: self.root.clone(),
            state: IndexState::Cold(REASON.to_owned()),
            entries: 0,
            files: 0,
            watches: 0,
            memory_bytes: 0,
            build_time: None,
            warm_answers: 0,
            cold_answers: 0,
            last_cold_reason: Some(REASON.to_owned()),
            rebuilds: 0,
            files_considered: 0,
            files_read: 0,
        }
    }

    /// Always cold.
    pub fn walk(&self, relative: &Path, request: &WalkRequest) -> Option<EnvResult<WalkResult>> {
        let _ = (relative, request);
        None
    }

    /// Always cold.
    pub fn search(
        &self,
        relative: &Path,
        request: &SearchRequest,
    ) -> Option<EnvResult<SearchResult>> {
        let _ = (relative, request);
        None
    }
}
