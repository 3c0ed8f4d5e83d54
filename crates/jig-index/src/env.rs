//! [`IndexedEnv`]: an env decorator answering `walk` and `search` from warm indexes when they
//! can answer exactly, and from the env below otherwise.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use jig_env::{
    Bytes, ChunkSink, ChunkSource, DirEntry, EnvResult, ExecOutcome, ExecRequest, ExecSink,
    ExecutionEnv, FileHead, FileInfo, FileLock, LineWindow, LinesRead, Recursive, SearchRequest,
    SearchResult, WalkRequest, WalkResult, WriteOutcome,
};

use crate::index::WarmIndex;
use crate::status::{IndexOptions, IndexStatus};

/// The warm indexes of a session, one per workspace root, started once the roots are known.
#[derive(Debug)]
pub struct WarmIndexes {
    options: IndexOptions,
    indexes: Mutex<Vec<Arc<WarmIndex>>>,
}

impl WarmIndexes {
    /// No index yet; [`start`](Self::start) adds them.
    pub fn new(options: IndexOptions) -> Arc<Self> {
        Arc::new(Self {
            options,
            indexes: Mutex::new(Vec::new()),
        })
    }

    /// Starts indexing each canonical directory of `roots` not indexed yet (in the background).
    pub fn start(&self, roots: &[PathBuf]) {
        let mut indexes = self.indexes.lock().unwrap_or_else(PoisonError::into_inner);
        for root in roots {
            if indexes.iter().any(|index| index.root() == root) {
                continue;
            }
            indexes.push(Arc::new(WarmIndex::start(
                root.clone(),
                self.options.clone(),
            )));
        }
    }

    /// The indexes started.
    pub fn indexes(&self) -> Vec<Arc<WarmIndex>> {
        self.indexes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Each index's status.
    pub fn status(&self) -> Vec<IndexStatus> {
        self.indexes().iter().map(|index| index.status()).collect()
    }

    /// The index whose root holds the canonical `path` (the deepest), and `path` relative to it.
    fn for_path(&self, path: &Path) -> Option<(Arc<WarmIndex>, PathBuf)> {
        let indexes = self.indexes.lock().unwrap_or_else(PoisonError::into_inner);
        indexes
            .iter()
            .filter_map(|index| {
                let relative = path.strip_prefix(index.root()).ok()?;
                Some((Arc::clone(index), relative.to_path_buf()))
            })
            .max_by_key(|(index, _)| index.root().as_os_str().len())
    }
}

/// An env whose `walk` and `search` are answered by warm indexes when one covers the request's
/// root and is current, and by the env below (the cold path) otherwise; every other operation
/// is the env below's. Views ([`ExecutionEnv::beneath`]) share the indexes.
#[derive(Debug, Clone)]
pub struct IndexedEnv {
    inner: Arc<dyn ExecutionEnv>,
    indexes: Arc<WarmIndexes>,
}

impl IndexedEnv {
    /// `inner` with `indexes` in front of its `walk` and `search`.
    pub fn new(inner: Arc<dyn ExecutionEnv>, indexes: Arc<WarmIndexes>) -> Self {
        Self { inner, indexes }
    }

    /// The indexes this env answers from.
    pub fn indexes(&self) -> &Arc<WarmIndexes> {
        &self.indexes
    }

    /// The index covering the request's root and the root relative to it, when the root
    /// resolves (through the env below, so a view's containment applies) inside one.
    async fn covering(&self, root: &Path) -> Option<(Arc<WarmIndex>, PathBuf)> {
        if self.indexes.indexes().is_empty() {
            return None;
        }
        let canonical = self.inner.canonical_path(root).await.ok()?;
        self.indexes.for_path(&canonical)
    }
}

#[async_trait]
impl ExecutionEnv for IndexedEnv {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn home_dir(&self) -> Option<PathBuf> {
        self.inner.home_dir()
    }
    fn absolute_path(&self, cwd: &Path, path: &Path) -> PathBuf {
        self.inner.absolute_path(cwd, path)
    }
    async fn canonical_path(&self, path: &Path) -> EnvResult<PathBuf> {
        self.inner.canonical_path(path).await
    }
    async fn canonical_path_lenient(&self, path: &Path) -> EnvResult<PathBuf> {
        self.inner.canonical_path_lenient(path).await
    }
    async fn file_info(&self, path: &Path) -> EnvResult<FileInfo> {
        self.inner.file_info(path).await
    }
    async fn stat(&self, path: &Path) -> EnvResult<FileInfo> {
        self.inner.stat(path).await
    }
    async fn read_link(&self, path: &Path) -> EnvResult<PathBuf> {
        self.inner.read_link(path).await
    }
    async fn exists(&self, path: &Path) -> EnvResult<bool> {
        self.inner.exists(path).await
    }
    async fn read(&self, path: &Path) -> EnvResult<Vec<u8>> {
        self.inner.read(path).await
    }
    async fn read_start(&self, path: &Path, max_bytes: usize) -> EnvResult<Vec<u8>> {
        self.inner.read_start(path, max_bytes).await
    }
    async fn read_head(&self, path: &Path, max_bytes: usize) -> EnvResult<FileHead> {
        self.inner.read_head(path, max_bytes).await
    }
    async fn read_lines(&self, path: &Path, window: LineWindow) -> EnvResult<LinesRead> {
        self.inner.read_lines(path, window).await
    }
    async fn write(&self, path: &Path, data: Bytes) -> EnvResult<WriteOutcome> {
        self.inner.write(path, data).await
    }
    async fn read_chunks(&self, path: &Path, sink: &mut dyn ChunkSink) -> EnvResult<u64> {
        self.inner.read_chunks(path, sink).await
    }
    async fn write_chunks(
        &self,
        path: &Path,
        source: &mut dyn ChunkSource,
    ) -> EnvResult<WriteOutcome> {
        self.inner.write_chunks(path, source).await
    }
    async fn append(&self, path: &Path, data: Bytes) -> EnvResult<()> {
        self.inner.append(path, data).await
    }
    async fn rename(&self, from: &Path, to: &Path) -> EnvResult<()> {
        self.inner.rename(from, to).await
    }
    async fn remove(&self, path: &Path, recursive: Recursive) -> EnvResult<()> {
        self.inner.remove(path, recursive).await
    }
    async fn create_dir(&self, path: &Path, recursive: Recursive) -> EnvResult<()> {
        self.inner.create_dir(path, recursive).await
    }
    async fn read_dir(&self, path: &Path) -> EnvResult<Vec<DirEntry>> {
        self.inner.read_dir(path).await
    }
    async fn create_temp_file(&self, prefix: &str, suffix: &str) -> EnvResult<PathBuf> {
        self.inner.create_temp_file(prefix, suffix).await
    }
    async fn create_temp_dir(&self, prefix: &str) -> EnvResult<PathBuf> {
        self.inner.create_temp_dir(prefix).await
    }
    async fn exec(&self, request: ExecRequest, sink: &mut dyn ExecSink) -> EnvResult<ExecOutcome> {
        self.inner.exec(request, sink).await
    }

    async fn walk(&self, request: WalkRequest) -> EnvResult<WalkResult> {
        if !request.cancel.is_cancelled()
            && let Some((index, relative)) = self.covering(&request.root).await
        {
            let warm_request = request.clone();
            let answer =
                tokio::task::spawn_blocking(move || index.walk(&relative, &warm_request)).await;
            if let Ok(Some(answer)) = answer {
                return answer;
            }
        }
        self.inner.walk(request).await
    }

    async fn search(&self, request: SearchRequest) -> EnvResult<SearchResult> {
        if !request.cancel.is_cancelled()
            && let Some((index, relative)) = self.covering(&request.root).await
        {
            let warm_request = request.clone();
            let answer =
                tokio::task::spawn_blocking(move || index.search(&relative, &warm_request)).await;
            if let Ok(Some(answer)) = answer {
                return answer;
            }
        }
        self.inner.search(request).await
    }

    async fn cleanup(&self) {
        self.inner.cleanup().await;
    }
    /// Starts the indexes of `roots` not indexed yet (and passes the hint on).
    async fn keep_warm(&self, roots: &[PathBuf]) {
        self.indexes.start(roots);
        self.inner.keep_warm(roots).await;
    }
    fn note_refused(&self, operation: &str, path: &Path, reason: &str) {
        self.inner.note_refused(operation, path, reason);
    }
    fn beneath(self: Arc<Self>, roots: &[PathBuf]) -> EnvResult<Arc<dyn ExecutionEnv>> {
        let view = Arc::clone(&self.inner).beneath(roots)?;
        Ok(Arc::new(Self {
            inner: view,
            indexes: Arc::clone(&self.indexes),
        }))
    }
    async fn lock_file(&self, path: &Path) -> EnvResult<FileLock> {
        self.inner.lock_file(path).await
    }
}
