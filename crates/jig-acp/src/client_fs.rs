//! `--client-fs`: the env port backed by the editor. Reads and writes of files go through the
//! client's `fs/read_text_file` and `fs/write_text_file`, so the model reads the buffer the
//! person sees (unsaved changes included) and its edits land in that buffer; everything else
//! (listing, search, commands, locks) is the workspace's own env.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use jig_env::{
    Bytes, DirEntry, EnvError, EnvResult, ErrorKind, ExecOutcome, ExecRequest, ExecSink,
    ExecutionEnv, FileInfo, FileLock, LineWindow, LinesRead, Recursive, SearchRequest,
    SearchResult, WalkRequest, WalkResult, WriteOutcome,
};
use serde_json::{Value, json};

use crate::rpc::Peer;

/// The workspace's env with its file contents read and written by the editor.
pub(crate) struct ClientFs {
    inner: Arc<dyn ExecutionEnv>,
    peer: Arc<Peer>,
    session_id: String,
}

impl std::fmt::Debug for ClientFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientFs")
            .field("inner", &self.inner.name())
            .finish_non_exhaustive()
    }
}

impl ClientFs {
    pub(crate) fn new(inner: Arc<dyn ExecutionEnv>, peer: Arc<Peer>, session_id: String) -> Self {
        Self {
            inner,
            peer,
            session_id,
        }
    }

    /// The editor's text of `path`. A file the workspace does not have is `NotFound` as
    /// everywhere (the editor is not asked); one the editor cannot read fails with its words.
    async fn client_read(&self, path: &Path) -> EnvResult<Vec<u8>> {
        let info = self.inner.stat(path).await?;
        if info.kind == jig_env::FileKind::Directory {
            return Err(
                EnvError::new(ErrorKind::IsADirectory, "read", "is a directory").with_path(path),
            );
        }
        let response = self
            .peer
            .request(
                "fs/read_text_file",
                json!({"sessionId": self.session_id, "path": path}),
            )
            .await
            .map_err(|error| {
                EnvError::new(
                    ErrorKind::Other,
                    "read",
                    format!("the editor could not read it: {error}"),
                )
                .with_path(path)
            })?;
        match response.get("content").and_then(Value::as_str) {
            Some(content) => Ok(content.as_bytes().to_vec()),
            None => Err(EnvError::new(
                ErrorKind::Other,
                "read",
                "the editor's answer to fs/read_text_file has no content",
            )
            .with_path(path)),
        }
    }
}

#[async_trait]
impl ExecutionEnv for ClientFs {
    fn name(&self) -> &'static str {
        "acp-client"
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

    async fn read(&self, path: &Path) -> EnvResult<Vec<u8>> {
        self.client_read(path).await
    }

    async fn read_start(&self, path: &Path, max_bytes: usize) -> EnvResult<Vec<u8>> {
        let mut bytes = self.client_read(path).await?;
        bytes.truncate(max_bytes);
        Ok(bytes)
    }

    async fn read_lines(&self, path: &Path, window: LineWindow) -> EnvResult<LinesRead> {
        let bytes = self.client_read(path).await?;
        Ok(jig_env::lines_window(&bytes, &window))
    }

    async fn write(&self, path: &Path, data: Bytes) -> EnvResult<WriteOutcome> {
        let content = std::str::from_utf8(&data).map_err(|_| {
            EnvError::new(
                ErrorKind::Invalid,
                "write",
                "the editor takes text only (fs/write_text_file); this content is not UTF-8",
            )
            .with_path(path)
        })?;
        let created = !self.inner.exists(path).await?;
        self.peer
            .request(
                "fs/write_text_file",
                json!({"sessionId": self.session_id, "path": path, "content": content}),
            )
            .await
            .map_err(|error| {
                EnvError::new(
                    ErrorKind::Other,
                    "write",
                    format!("the editor could not write it: {error}"),
                )
                .with_path(path)
            })?;
        Ok(WriteOutcome { created })
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
        self.inner.walk(request).await
    }

    async fn search(&self, request: SearchRequest) -> EnvResult<SearchResult> {
        self.inner.search(request).await
    }

    async fn cleanup(&self) {
        self.inner.cleanup().await;
    }
    async fn keep_warm(&self, roots: &[PathBuf]) {
        self.inner.keep_warm(roots).await;
    }

    fn note_refused(&self, operation: &str, path: &Path, reason: &str) {
        self.inner.note_refused(operation, path, reason);
    }

    fn beneath(self: Arc<Self>, roots: &[PathBuf]) -> EnvResult<Arc<dyn ExecutionEnv>> {
        let view = Arc::clone(&self.inner).beneath(roots)?;
        Ok(Arc::new(Self::new(
            view,
            Arc::clone(&self.peer),
            self.session_id.clone(),
        )))
    }

    async fn lock_file(&self, path: &Path) -> EnvResult<FileLock> {
        self.inner.lock_file(path).await
    }
}
