//! An [`ExecutionEnv`] decorator that records every operation as one JSON line.
//!
//! Every file operation and process of jig's tools passes the env port, so wrapping the env
//! instruments all of them, whatever env is below (local, remote, a confined view):
//!
//! ```json
//! {"time":"2026-12-01T23:40:12.345678Z","call":"toolu_01","op":"write","path":"/ws/a.txt","bytes":12,"duration_ms":0.41,"outcome":"ok"}
//! ```
//!
//! Fields: `time` (UTC, when the operation started), `call` (the tool call id, when the host
//! runs the operation inside [`with_call_id`]), `op` (the env method), `path` (and `to` for
//! `rename`; the program for `exec`, with `args` and `cwd`), `bytes` (read, written, or the
//! output of a process), `duration_ms`, `outcome` (`ok` or the error kind, with `error`
//! holding the message; an `exec` that ran reports its `exit_code`).
//!
//! The sink is any [`std::io::Write`]; each record is written with one `write_all` of a whole
//! line under a lock, so records never interleave. A failing sink is reported once on stderr
//! through `tracing` and otherwise ignored: auditing never changes what a tool does.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use async_trait::async_trait;
use jig_env::{
    Bytes, ChunkSink, ChunkSource, DirEntry, EnvResult, ExecOutcome, ExecRequest, ExecSink,
    ExecutionEnv, FileHead, FileInfo, FileLock, LineWindow, LinesRead, Recursive, SearchRequest,
    SearchResult, WalkRequest, WalkResult, WriteOutcome,
};
use serde_json::{Map, Value, json};

tokio::task_local! {
    static CALL_ID: String;
}

/// Runs `future` with `id` as the tool call id recorded for the env operations it makes.
pub async fn with_call_id<F: Future>(id: impl Into<String>, future: F) -> F::Output {
    CALL_ID.scope(id.into(), future).await
}

/// Where the records go.
#[derive(Clone)]
pub struct AuditLog {
    sink: Arc<Mutex<Box<dyn Write + Send>>>,
}

impl fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuditLog").finish_non_exhaustive()
    }
}

impl AuditLog {
    /// A log writing JSON lines to `sink` (a file opened for appending, a buffer).
    pub fn new(sink: impl Write + Send + 'static) -> Self {
        Self {
            sink: Arc::new(Mutex::new(Box::new(sink))),
        }
    }

    fn record(&self, mut fields: Map<String, Value>) {
        if let Ok(id) = CALL_ID.try_with(Clone::clone) {
            fields.insert("call".into(), Value::String(id));
        }
        let Ok(mut line) = serde_json::to_vec(&Value::Object(fields)) else {
            return;
        };
        line.push(b'\n');
        let mut sink = self.sink.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(error) = sink.write_all(&line).and_then(|()| sink.flush()) {
            tracing::warn!(%error, "cannot write the audit log");
        }
    }
}

/// `inner`, with every operation recorded in `log`.
#[derive(Debug, Clone)]
pub struct AuditEnv {
    inner: Arc<dyn ExecutionEnv>,
    log: AuditLog,
}

impl AuditEnv {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn ExecutionEnv>, log: AuditLog) -> Self {
        Self { inner, log }
    }
}

/// One operation being timed.
struct Op {
    started: Instant,
    fields: Map<String, Value>,
}

fn path_value(path: &Path) -> Value {
    Value::String(path.to_string_lossy().into_owned())
}

impl Op {
    fn new(op: &str, path: Option<&Path>) -> Self {
        let mut fields = Map::new();
        fields.insert(
            "time".into(),
            Value::String(jiff::Timestamp::now().to_string()),
        );
        fields.insert("op".into(), Value::String(op.to_owned()));
        if let Some(path) = path {
            fields.insert("path".into(), path_value(path));
        }
        Self {
            started: Instant::now(),
            fields,
        }
    }

    fn with(mut self, key: &str, value: Value) -> Self {
        self.fields.insert(key.to_owned(), value);
        self
    }

    fn finish<T>(
        mut self,
        log: &AuditLog,
        result: &EnvResult<T>,
        bytes: impl FnOnce(&T) -> Option<u64>,
    ) {
        let millis = self.started.elapsed().as_secs_f64() * 1000.0;
        match result {
            Ok(value) => {
                if let Some(count) = bytes(value) {
                    self.fields.insert("bytes".into(), json!(count));
                }
                self.fields.insert("outcome".into(), json!("ok"));
            }
            Err(error) => {
                self.fields
                    .insert("outcome".into(), json!(error.kind().as_str()));
                self.fields.insert("error".into(), json!(error.to_string()));
            }
        }
        self.fields.insert(
            "duration_ms".into(),
            json!((millis * 1000.0).round() / 1000.0),
        );
        log.record(self.fields);
    }
}

fn none<T>(_: &T) -> Option<u64> {
    None
}

/// Counts the bytes a process wrote while passing them on.
struct CountingSink<'a> {
    inner: &'a mut dyn ExecSink,
    bytes: u64,
}

#[async_trait]
impl ExecSink for CountingSink<'_> {
    async fn output(&mut self, chunk: &[u8]) {
        self.bytes += chunk.len() as u64;
        self.inner.output(chunk).await;
    }
}

/// Counts the bytes of a chunked read while passing them on.
struct CountingChunks<'a> {
    inner: &'a mut dyn ChunkSink,
    bytes: u64,
}

#[async_trait]
impl ChunkSink for CountingChunks<'_> {
    async fn chunk(&mut self, chunk: Bytes) -> EnvResult<()> {
        self.bytes += chunk.len() as u64;
        self.inner.chunk(chunk).await
    }
}

/// Counts the bytes of a chunked write while passing them on.
struct CountingSource<'a> {
    inner: &'a mut dyn ChunkSource,
    bytes: u64,
}

#[async_trait]
impl ChunkSource for CountingSource<'_> {
    async fn next_chunk(&mut self) -> EnvResult<Option<Bytes>> {
        let chunk = self.inner.next_chunk().await?;
        if let Some(chunk) = &chunk {
            self.bytes += chunk.len() as u64;
        }
        Ok(chunk)
    }
}

#[async_trait]
impl ExecutionEnv for AuditEnv {
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
        let op = Op::new("canonical_path", Some(path));
        let result = self.inner.canonical_path(path).await;
        op.finish(&self.log, &result, none);
        result
    }

    async fn canonical_path_lenient(&self, path: &Path) -> EnvResult<PathBuf> {
        let op = Op::new("canonical_path_lenient", Some(path));
        let result = self.inner.canonical_path_lenient(path).await;
        op.finish(&self.log, &result, none);
        result
    }

    async fn file_info(&self, path: &Path) -> EnvResult<FileInfo> {
        let op = Op::new("file_info", Some(path));
        let result = self.inner.file_info(path).await;
        op.finish(&self.log, &result, none);
        result
    }

    async fn stat(&self, path: &Path) -> EnvResult<FileInfo> {
        let op = Op::new("stat", Some(path));
        let result = self.inner.stat(path).await;
        op.finish(&self.log, &result, none);
        result
    }

    async fn read_link(&self, path: &Path) -> EnvResult<PathBuf> {
        let op = Op::new("read_link", Some(path));
        let result = self.inner.read_link(path).await;
        op.finish(&self.log, &result, none);
        result
    }

    async fn exists(&self, path: &Path) -> EnvResult<bool> {
        let op = Op::new("exists", Some(path));
        let result = self.inner.exists(path).await;
        op.finish(&self.log, &result, none);
        result
    }

    async fn read(&self, path: &Path) -> EnvResult<Vec<u8>> {
        let op = Op::new("read", Some(path));
        let result = self.inner.read(path).await;
        op.finish(&self.log, &result, |data| Some(data.len() as u64));
        result
    }

    async fn read_start(&self, path: &Path, max_bytes: usize) -> EnvResult<Vec<u8>> {
        let op = Op::new("read_start", Some(path));
        let result = self.inner.read_start(path, max_bytes).await;
        op.finish(&self.log, &result, |data| Some(data.len() as u64));
        result
    }

    async fn read_head(&self, path: &Path, max_bytes: usize) -> EnvResult<FileHead> {
        let op = Op::new("read_head", Some(path));
        let result = self.inner.read_head(path, max_bytes).await;
        op.finish(&self.log, &result, |head| Some(head.bytes.len() as u64));
        result
    }

    async fn read_lines(&self, path: &Path, window: LineWindow) -> EnvResult<LinesRead> {
        let op = Op::new("read_lines", Some(path)).with("start_line", json!(window.start_line));
        let result = self.inner.read_lines(path, window).await;
        op.finish(&self.log, &result, |read| {
            Some(read.lines.iter().map(|line| line.bytes.len() as u64).sum())
        });
        result
    }

    async fn write(&self, path: &Path, data: Bytes) -> EnvResult<WriteOutcome> {
        let op = Op::new("write", Some(path));
        let len = data.len() as u64;
        let result = self.inner.write(path, data).await;
        op.finish(&self.log, &result, |_| Some(len));
        result
    }

    async fn read_chunks(&self, path: &Path, sink: &mut dyn ChunkSink) -> EnvResult<u64> {
        let op = Op::new("read_chunks", Some(path));
        let mut counting = CountingChunks {
            inner: sink,
            bytes: 0,
        };
        let result = self.inner.read_chunks(path, &mut counting).await;
        let bytes = counting.bytes;
        op.finish(&self.log, &result, |_| Some(bytes));
        result
    }

    async fn write_chunks(
        &self,
        path: &Path,
        source: &mut dyn ChunkSource,
    ) -> EnvResult<WriteOutcome> {
        let op = Op::new("write_chunks", Some(path));
        let mut counting = CountingSource {
            inner: source,
            bytes: 0,
        };
        let result = self.inner.write_chunks(path, &mut counting).await;
        let bytes = counting.bytes;
        op.finish(&self.log, &result, |_| Some(bytes));
        result
    }

    async fn append(&self, path: &Path, data: Bytes) -> EnvResult<()> {
        let op = Op::new("append", Some(path));
        let len = data.len() as u64;
        let result = self.inner.append(path, data).await;
        op.finish(&self.log, &result, |()| Some(len));
        result
    }

    async fn rename(&self, from: &Path, to: &Path) -> EnvResult<()> {
        let op = Op::new("rename", Some(from)).with("to", path_value(to));
        let result = self.inner.rename(from, to).await;
        op.finish(&self.log, &result, none);
        result
    }

    async fn remove(&self, path: &Path, recursive: Recursive) -> EnvResult<()> {
        let op =
            Op::new("remove", Some(path)).with("recursive", json!(recursive == Recursive::Yes));
        let result = self.inner.remove(path, recursive).await;
        op.finish(&self.log, &result, none);
        result
    }

    async fn create_dir(&self, path: &Path, recursive: Recursive) -> EnvResult<()> {
        let op = Op::new("create_dir", Some(path));
        let result = self.inner.create_dir(path, recursive).await;
        op.finish(&self.log, &result, none);
        result
    }

    async fn read_dir(&self, path: &Path) -> EnvResult<Vec<DirEntry>> {
        let op = Op::new("read_dir", Some(path));
        let result = self.inner.read_dir(path).await;
        op.finish(&self.log, &result, none);
        result
    }

    async fn create_temp_file(&self, prefix: &str, suffix: &str) -> EnvResult<PathBuf> {
        let op = Op::new("create_temp_file", None);
        let result = self.inner.create_temp_file(prefix, suffix).await;
        let op = match &result {
            Ok(path) => op.with("path", path_value(path)),
            Err(_) => op,
        };
        op.finish(&self.log, &result, none);
        result
    }

    async fn create_temp_dir(&self, prefix: &str) -> EnvResult<PathBuf> {
        let op = Op::new("create_temp_dir", None);
        let result = self.inner.create_temp_dir(prefix).await;
        let op = match &result {
            Ok(path) => op.with("path", path_value(path)),
            Err(_) => op,
        };
        op.finish(&self.log, &result, none);
        result
    }

    async fn exec(&self, request: ExecRequest, sink: &mut dyn ExecSink) -> EnvResult<ExecOutcome> {
        let op = Op::new("exec", Some(Path::new(&request.program)))
            .with("args", json!(request.args))
            .with("cwd", path_value(&request.cwd));
        let mut counting = CountingSink {
            inner: sink,
            bytes: 0,
        };
        let result = self.inner.exec(request, &mut counting).await;
        let op = match &result {
            Ok(outcome) => op.with("exit_code", json!(outcome.exit_code)),
            Err(_) => op,
        };
        let bytes = counting.bytes;
        op.finish(&self.log, &result, |_| Some(bytes));
        result
    }

    async fn walk(&self, request: WalkRequest) -> EnvResult<WalkResult> {
        let op = Op::new("walk", Some(&request.root.clone()));
        let result = self.inner.walk(request).await;
        op.finish(&self.log, &result, none);
        result
    }

    async fn search(&self, request: SearchRequest) -> EnvResult<SearchResult> {
        let op =
            Op::new("search", Some(&request.root.clone())).with("pattern", json!(request.pattern));
        let result = self.inner.search(request).await;
        op.finish(&self.log, &result, none);
        result
    }

    async fn cleanup(&self) {
        let op = Op::new("cleanup", None);
        self.inner.cleanup().await;
        op.finish(&self.log, &Ok(()), none);
    }

    fn beneath(self: Arc<Self>, roots: &[PathBuf]) -> EnvResult<Arc<dyn ExecutionEnv>> {
        let view = Arc::clone(&self.inner).beneath(roots)?;
        Ok(Arc::new(Self {
            inner: view,
            log: self.log.clone(),
        }))
    }

    async fn lock_file(&self, path: &Path) -> EnvResult<FileLock> {
        let op = Op::new("lock_file", Some(path));
        let result = self.inner.lock_file(path).await;
        op.finish(&self.log, &result, none);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jig_env_memory::MemoryEnv;

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn every_operation_is_one_line() {
        let buffer = Shared::default();
        let env = AuditEnv::new(Arc::new(MemoryEnv::new()), AuditLog::new(buffer.clone()));
        with_call_id("call-1", async {
            env.write(Path::new("/ws/a.txt"), Bytes::from_static(b"hello"))
                .await
                .unwrap();
        })
        .await;
        assert!(env.read(Path::new("/ws/missing")).await.is_err());
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0]["op"], "write");
        assert_eq!(lines[0]["call"], "call-1");
        assert_eq!(lines[0]["bytes"], 5);
        assert_eq!(lines[0]["outcome"], "ok");
        assert_eq!(lines[1]["op"], "read");
        assert_eq!(lines[1]["outcome"], "not_found");
        assert!(lines[1].get("call").is_none());
        assert!(lines[1]["time"].as_str().unwrap().ends_with('Z'));
    }

    struct Pieces(Vec<Bytes>);

    #[async_trait]
    impl ChunkSource for Pieces {
        async fn next_chunk(&mut self) -> EnvResult<Option<Bytes>> {
            Ok((!self.0.is_empty()).then(|| self.0.remove(0)))
        }
    }

    #[derive(Default)]
    struct Collect(Vec<u8>, usize);

    #[async_trait]
    impl ChunkSink for Collect {
        async fn chunk(&mut self, chunk: Bytes) -> EnvResult<()> {
            self.0.extend_from_slice(&chunk);
            self.1 += 1;
            Ok(())
        }
    }

    #[tokio::test]
    async fn chunked_reads_and_writes_are_forwarded_and_recorded_once_with_their_total() {
        let buffer = Shared::default();
        let env = AuditEnv::new(Arc::new(MemoryEnv::new()), AuditLog::new(buffer.clone()));
        let big = vec![7_u8; jig_env::FILE_CHUNK * 2 + 10];
        let path = Path::new("/ws/big.bin");
        let pieces = big.chunks(300_000).map(Bytes::copy_from_slice).collect();
        env.write_chunks(path, &mut Pieces(pieces)).await.unwrap();
        let mut read = Collect::default();
        let size = env.read_chunks(path, &mut read).await.unwrap();
        assert_eq!(size, big.len() as u64);
        assert_eq!(read.0, big);
        assert_eq!(read.1, 3, "the inner env's chunks reach the sink");
        assert!(
            env.read_chunks(Path::new("/ws/missing"), &mut Collect::default())
                .await
                .is_err()
        );
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[0]["op"], "write_chunks");
        assert_eq!(lines[0]["bytes"], big.len());
        assert_eq!(lines[1]["op"], "read_chunks");
        assert_eq!(lines[1]["bytes"], big.len());
        assert_eq!(lines[2]["outcome"], "not_found");
    }
}
