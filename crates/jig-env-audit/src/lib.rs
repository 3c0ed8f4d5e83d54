//! An [`ExecutionEnv`] decorator that records every operation as one JSON line.
//!
//! Every file operation and process of jig's tools passes the env port, so wrapping the env
//! instruments all of them, whatever env is below (local, remote, a confined view):
//!
//! ```json
//! {"time":"2026-12-01T23:40:12.345678Z","call_id":"toolu_01","tool":"write","op":"write","path":"/ws/a.txt","bytes":12,"duration_ms":0.41,"outcome":"ok"}
//! ```
//!
//! Fields: `time` (UTC, when the operation started), `call_id` and `tool` (the tool call the
//! operation belongs to, when it goes through the call's view, [`AuditEnv::for_call`]), `op`
//! (the env method), `path` (and `to` for
//! `rename`; the program for `exec`, with `args` and `cwd`), `bytes` (read, written, or the
//! output of a process), `duration_ms`, `outcome` (`ok` or the error kind, with `error`
//! holding the message; `refused` for a path containment refused, by a confined view or by
//! the host before any operation ([`ExecutionEnv::note_refused`], `op` `resolve`); an `exec`
//! that ran reports its `exit_code`).
//!
//! Each record is written with one `write_all` of a whole line under a lock, so records never
//! interleave; to a file ([`AuditLog::file`]) a write that fails partway is undone (the file
//! is cut back to its length before it), so a partial line is never the last state.
//!
//! The log fails closed by default ([`Failure::Refuse`]): an operation whose record cannot be
//! written fails with an error naming the log (the operation itself ran), and from then on
//! every operation is refused before it runs, so nothing unrecorded happens. With
//! [`Failure::Warn`] (`--audit-best-effort`) each failure is reported through the log's
//! warning callback and the operation's own result is kept.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use async_trait::async_trait;
use jig_env::{
    Bytes, ChunkSink, ChunkSource, DirEntry, EnvError, EnvResult, ErrorKind, ExecOutcome,
    ExecRequest, ExecSink, ExecutionEnv, FileHead, FileInfo, FileLock, LineWindow, LinesRead,
    Recursive, SearchRequest, SearchResult, WalkRequest, WalkResult, WriteOutcome,
};
use serde_json::{Map, Value, json};

/// What an operation whose record cannot be written does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Failure {
    /// It fails with an error naming the log, and every later operation is refused before it
    /// runs (the default: nothing happens unrecorded).
    #[default]
    Refuse,
    /// The warning callback is told, and the operation's own result is kept.
    Warn,
}

/// A file records are appended to, which can be cut back after a failed write.
pub trait RecordFile: Write + Send {
    /// Its current length.
    fn current_len(&self) -> std::io::Result<u64>;
    /// Cuts it back to `len` bytes.
    fn set_len(&self, len: u64) -> std::io::Result<()>;
}

impl RecordFile for std::fs::File {
    /// The length of a regular file; anything else (a device, a pipe) cannot be cut back.
    fn current_len(&self) -> std::io::Result<u64> {
        let metadata = self.metadata()?;
        if !metadata.is_file() {
            return Err(std::io::Error::from(std::io::ErrorKind::Unsupported));
        }
        Ok(metadata.len())
    }

    fn set_len(&self, len: u64) -> std::io::Result<()> {
        std::fs::File::set_len(self, len)
    }
}

enum Sink {
    /// A file: a failed write is cut back.
    File(Box<dyn RecordFile>),
    /// Any writer (a buffer): one `write_all` per record.
    Writer(Box<dyn Write + Send>),
}

impl Sink {
    fn append(&mut self, line: &[u8]) -> std::io::Result<()> {
        match self {
            Self::Writer(writer) => writer.write_all(line).and_then(|()| writer.flush()),
            Self::File(file) => {
                // Not a regular file (a device, a pipe): nothing to cut back.
                let before = file.current_len().ok();
                let written = file.write_all(line).and_then(|()| file.flush());
                if let Err(error) = written {
                    // Undo a partial line; when even that fails, say so too.
                    if let Some(before) = before
                        && let Err(cut) = file.set_len(before)
                    {
                        return Err(std::io::Error::new(
                            error.kind(),
                            format!("{error}; a partial record may remain: {cut}"),
                        ));
                    }
                    return Err(error);
                }
                Ok(())
            }
        }
    }
}

struct State {
    sink: Sink,
    /// Set once a record could not be written under [`Failure::Refuse`].
    broken: Option<String>,
}

/// Reports a failure under [`Failure::Warn`].
pub type WarnFn = Arc<dyn Fn(&str) + Send + Sync>;

/// Where the records go.
#[derive(Clone)]
pub struct AuditLog {
    state: Arc<Mutex<State>>,
    /// Whether [`Failure::Refuse`] applies yet (see [`AuditLog::armed_later`]).
    armed: Arc<std::sync::atomic::AtomicBool>,
    /// How the log is named in errors (its path).
    name: String,
    failure: Failure,
    warn: WarnFn,
    /// The tool call every record of this handle names (`call_id`, `tool`).
    call: Option<Arc<CallTag>>,
}

/// The tool call a log handle's records belong to.
#[derive(Debug)]
struct CallTag {
    id: String,
    tool: String,
}

impl fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuditLog")
            .field("name", &self.name)
            .field("failure", &self.failure)
            .field("call", &self.call)
            .finish_non_exhaustive()
    }
}

impl AuditLog {
    /// A log writing JSON lines to `sink` (a buffer), failing closed.
    pub fn new(sink: impl Write + Send + 'static) -> Self {
        Self::with_sink(Sink::Writer(Box::new(sink)), "the audit log".into())
    }

    /// A log appending JSON lines to `file` (opened for appending), named `name` in errors,
    /// failing closed; a write that fails partway is cut back.
    pub fn file(file: impl RecordFile + 'static, name: impl Into<String>) -> Self {
        Self::with_sink(Sink::File(Box::new(file)), name.into())
    }

    fn with_sink(sink: Sink, name: String) -> Self {
        Self {
            state: Arc::new(Mutex::new(State { sink, broken: None })),
            armed: Arc::new(std::sync::atomic::AtomicBool::new(true)),
            name,
            failure: Failure::Refuse,
            warn: Arc::new(|message| tracing::warn!("{message}")),
            call: None,
        }
    }

    /// The same log, every record written through it naming the tool call `call_id` of
    /// `tool` (fields `call_id` and `tool`).
    #[must_use]
    pub fn for_call(&self, call_id: impl Into<String>, tool: impl Into<String>) -> Self {
        Self {
            call: Some(Arc::new(CallTag {
                id: call_id.into(),
                tool: tool.into(),
            })),
            ..self.clone()
        }
    }

    /// What a failed record does, and where a warning goes under [`Failure::Warn`].
    #[must_use]
    pub fn on_failure(mut self, failure: Failure, warn: WarnFn) -> Self {
        self.failure = failure;
        self.warn = warn;
        self
    }

    /// Until [`AuditArm::arm`] is called, a record that cannot be written is only a warning
    /// (as with [`Failure::Warn`]): for the host's own start-up operations (resolving the
    /// working directory, reading the project's settings), so that a server still starts and
    /// answers each tool call with the error.
    #[must_use]
    pub fn armed_later(self) -> (Self, AuditArm) {
        self.armed.store(false, std::sync::atomic::Ordering::SeqCst);
        let arm = AuditArm(Arc::clone(&self.armed));
        (self, arm)
    }

    /// An error when operations are refused because an earlier record failed.
    fn check(&self, op: &'static str) -> EnvResult<()> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.broken.as_ref().map_or(Ok(()), |broken| {
            Err(EnvError::new(
                ErrorKind::Other,
                op,
                format!(
                    "refused: the audit log {} cannot be written ({broken}); nothing runs unrecorded",
                    self.name
                ),
            ))
        })
    }

    /// Writes one record; `Err` (under [`Failure::Refuse`]) says why it could not be.
    fn record(&self, mut fields: Map<String, Value>) -> Result<(), RecordError> {
        if let Some(call) = &self.call {
            fields.insert("call_id".into(), Value::String(call.id.clone()));
            fields.insert("tool".into(), Value::String(call.tool.clone()));
        }
        let Ok(mut line) = serde_json::to_vec(&Value::Object(fields)) else {
            return Ok(());
        };
        line.push(b'\n');
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let Err(error) = state.sink.append(&line) else {
            return Ok(());
        };
        let failed = RecordError {
            log: self.name.clone(),
            reason: error.to_string(),
        };
        let armed = self.armed.load(std::sync::atomic::Ordering::SeqCst);
        match if armed { self.failure } else { Failure::Warn } {
            Failure::Warn => {
                drop(state);
                (self.warn)(&failed.to_string());
                Ok(())
            }
            Failure::Refuse => {
                state.broken = Some(failed.reason.clone());
                Err(failed)
            }
        }
    }

    /// Records an event of the host that is not an env operation (a tool call refused or
    /// denied before it reached the env, a hook's decision): `op` and `fields` as in an
    /// operation's record, with `time` added. `Err` under [`Failure::Refuse`] says why it
    /// could not be written.
    pub fn event(&self, op: &str, fields: Map<String, Value>) -> Result<(), RecordError> {
        let mut record = Map::new();
        record.insert(
            "time".into(),
            Value::String(jiff::Timestamp::now().to_string()),
        );
        record.insert("op".into(), Value::String(op.to_owned()));
        record.extend(fields);
        self.record(record)
    }
}

/// A record that could not be written to the audit log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot write the audit log {log}: {reason}")]
pub struct RecordError {
    /// The log's name (its file).
    pub log: String,
    /// Why the write failed.
    pub reason: String,
}

/// Makes an [`AuditLog::armed_later`] log fail closed from now on.
#[derive(Debug, Clone)]
pub struct AuditArm(Arc<std::sync::atomic::AtomicBool>);

impl AuditArm {
    /// From now on a record that cannot be written fails its operation.
    pub fn arm(&self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
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

    /// The log records go to.
    pub fn log(&self) -> &AuditLog {
        &self.log
    }

    /// The view of one tool call: the same env and log, every record naming the call
    /// `call_id` of `tool` (also through the views [`beneath`](ExecutionEnv::beneath) makes of
    /// it).
    #[must_use]
    pub fn for_call(&self, call_id: impl Into<String>, tool: impl Into<String>) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
            log: self.log.for_call(call_id, tool),
        }
    }
}

/// One operation being timed.
struct Op {
    name: &'static str,
    started: Instant,
    fields: Map<String, Value>,
}

fn path_value(path: &Path) -> Value {
    Value::String(path.to_string_lossy().into_owned())
}

impl Op {
    fn new(op: &'static str, path: Option<&Path>) -> Self {
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
            name: op,
            started: Instant::now(),
            fields,
        }
    }

    fn with(mut self, key: &str, value: Value) -> Self {
        self.fields.insert(key.to_owned(), value);
        self
    }

    /// Records the operation; its result, or under [`Failure::Refuse`] an error when the
    /// record could not be written.
    fn finish<T>(
        mut self,
        log: &AuditLog,
        result: EnvResult<T>,
        bytes: impl FnOnce(&T) -> Option<u64>,
    ) -> EnvResult<T> {
        let millis = self.started.elapsed().as_secs_f64() * 1000.0;
        match &result {
            Ok(value) => {
                if let Some(count) = bytes(value) {
                    self.fields.insert("bytes".into(), json!(count));
                }
                self.fields.insert("outcome".into(), json!("ok"));
            }
            // A confined view's refusal: on record as refused, like the host's own.
            Err(error) if error.kind() == ErrorKind::OutsideRoots => {
                self.fields.insert("outcome".into(), json!("refused"));
                self.fields.insert("error".into(), json!(error.to_string()));
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
        let op = self.name;
        match log.record(self.fields) {
            Ok(()) => result,
            Err(message) => Err(EnvError::new(
                ErrorKind::Other,
                op,
                format!("{message} (the operation ran; nothing more will run)"),
            )),
        }
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
        self.log.check("canonical_path")?;
        let op = Op::new("canonical_path", Some(path));
        let result = self.inner.canonical_path(path).await;
        op.finish(&self.log, result, none)
    }

    async fn canonical_path_lenient(&self, path: &Path) -> EnvResult<PathBuf> {
        self.log.check("canonical_path_lenient")?;
        let op = Op::new("canonical_path_lenient", Some(path));
        let result = self.inner.canonical_path_lenient(path).await;
        op.finish(&self.log, result, none)
    }

    async fn file_info(&self, path: &Path) -> EnvResult<FileInfo> {
        self.log.check("file_info")?;
        let op = Op::new("file_info", Some(path));
        let result = self.inner.file_info(path).await;
        op.finish(&self.log, result, none)
    }

    async fn stat(&self, path: &Path) -> EnvResult<FileInfo> {
        self.log.check("stat")?;
        let op = Op::new("stat", Some(path));
        let result = self.inner.stat(path).await;
        op.finish(&self.log, result, none)
    }

    async fn read_link(&self, path: &Path) -> EnvResult<PathBuf> {
        self.log.check("read_link")?;
        let op = Op::new("read_link", Some(path));
        let result = self.inner.read_link(path).await;
        op.finish(&self.log, result, none)
    }

    async fn exists(&self, path: &Path) -> EnvResult<bool> {
        self.log.check("exists")?;
        let op = Op::new("exists", Some(path));
        let result = self.inner.exists(path).await;
        op.finish(&self.log, result, none)
    }

    async fn read(&self, path: &Path) -> EnvResult<Vec<u8>> {
        self.log.check("read")?;
        let op = Op::new("read", Some(path));
        let result = self.inner.read(path).await;
        op.finish(&self.log, result, |data| Some(data.len() as u64))
    }

    async fn read_start(&self, path: &Path, max_bytes: usize) -> EnvResult<Vec<u8>> {
        self.log.check("read_start")?;
        let op = Op::new("read_start", Some(path));
        let result = self.inner.read_start(path, max_bytes).await;
        op.finish(&self.log, result, |data| Some(data.len() as u64))
    }

    async fn read_head(&self, path: &Path, max_bytes: usize) -> EnvResult<FileHead> {
        self.log.check("read_head")?;
        let op = Op::new("read_head", Some(path));
        let result = self.inner.read_head(path, max_bytes).await;
        op.finish(&self.log, result, |head| Some(head.bytes.len() as u64))
    }

    async fn read_lines(&self, path: &Path, window: LineWindow) -> EnvResult<LinesRead> {
        self.log.check("read_lines")?;
        let op = Op::new("read_lines", Some(path)).with("start_line", json!(window.start_line));
        let result = self.inner.read_lines(path, window).await;
        op.finish(&self.log, result, |read| {
            Some(read.lines.iter().map(|line| line.bytes.len() as u64).sum())
        })
    }

    async fn write(&self, path: &Path, data: Bytes) -> EnvResult<WriteOutcome> {
        self.log.check("write")?;
        let op = Op::new("write", Some(path));
        let len = data.len() as u64;
        let result = self.inner.write(path, data).await;
        op.finish(&self.log, result, |_| Some(len))
    }

    async fn read_chunks(&self, path: &Path, sink: &mut dyn ChunkSink) -> EnvResult<u64> {
        self.log.check("read_chunks")?;
        let op = Op::new("read_chunks", Some(path));
        let mut counting = CountingChunks {
            inner: sink,
            bytes: 0,
        };
        let result = self.inner.read_chunks(path, &mut counting).await;
        let bytes = counting.bytes;
        op.finish(&self.log, result, |_| Some(bytes))
    }

    async fn write_chunks(
        &self,
        path: &Path,
        source: &mut dyn ChunkSource,
    ) -> EnvResult<WriteOutcome> {
        self.log.check("write_chunks")?;
        let op = Op::new("write_chunks", Some(path));
        let mut counting = CountingSource {
            inner: source,
            bytes: 0,
        };
        let result = self.inner.write_chunks(path, &mut counting).await;
        let bytes = counting.bytes;
        op.finish(&self.log, result, |_| Some(bytes))
    }

    async fn append(&self, path: &Path, data: Bytes) -> EnvResult<()> {
        self.log.check("append")?;
        let op = Op::new("append", Some(path));
        let len = data.len() as u64;
        let result = self.inner.append(path, data).await;
        op.finish(&self.log, result, |()| Some(len))
    }

    async fn rename(&self, from: &Path, to: &Path) -> EnvResult<()> {
        self.log.check("rename")?;
        let op = Op::new("rename", Some(from)).with("to", path_value(to));
        let result = self.inner.rename(from, to).await;
        op.finish(&self.log, result, none)
    }

    async fn remove(&self, path: &Path, recursive: Recursive) -> EnvResult<()> {
        self.log.check("remove")?;
        let op =
            Op::new("remove", Some(path)).with("recursive", json!(recursive == Recursive::Yes));
        let result = self.inner.remove(path, recursive).await;
        op.finish(&self.log, result, none)
    }

    async fn create_dir(&self, path: &Path, recursive: Recursive) -> EnvResult<()> {
        self.log.check("create_dir")?;
        let op = Op::new("create_dir", Some(path));
        let result = self.inner.create_dir(path, recursive).await;
        op.finish(&self.log, result, none)
    }

    async fn read_dir(&self, path: &Path) -> EnvResult<Vec<DirEntry>> {
        self.log.check("read_dir")?;
        let op = Op::new("read_dir", Some(path));
        let result = self.inner.read_dir(path).await;
        op.finish(&self.log, result, none)
    }

    async fn create_temp_file(&self, prefix: &str, suffix: &str) -> EnvResult<PathBuf> {
        self.log.check("create_temp_file")?;
        let op = Op::new("create_temp_file", None);
        let result = self.inner.create_temp_file(prefix, suffix).await;
        let op = match &result {
            Ok(path) => op.with("path", path_value(path)),
            Err(_) => op,
        };
        op.finish(&self.log, result, none)
    }

    async fn create_temp_dir(&self, prefix: &str) -> EnvResult<PathBuf> {
        self.log.check("create_temp_dir")?;
        let op = Op::new("create_temp_dir", None);
        let result = self.inner.create_temp_dir(prefix).await;
        let op = match &result {
            Ok(path) => op.with("path", path_value(path)),
            Err(_) => op,
        };
        op.finish(&self.log, result, none)
    }

    async fn exec(&self, request: ExecRequest, sink: &mut dyn ExecSink) -> EnvResult<ExecOutcome> {
        self.log.check("exec")?;
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
        op.finish(&self.log, result, |_| Some(bytes))
    }

    async fn walk(&self, request: WalkRequest) -> EnvResult<WalkResult> {
        self.log.check("walk")?;
        let op = Op::new("walk", Some(&request.root.clone()));
        let result = self.inner.walk(request).await;
        op.finish(&self.log, result, none)
    }

    async fn search(&self, request: SearchRequest) -> EnvResult<SearchResult> {
        self.log.check("search")?;
        let op =
            Op::new("search", Some(&request.root.clone())).with("pattern", json!(request.pattern));
        let result = self.inner.search(request).await;
        op.finish(&self.log, result, none)
    }

    async fn cleanup(&self) {
        let op = Op::new("cleanup", None);
        self.inner.cleanup().await;
        let _ = op.finish(&self.log, Ok(()), none);
    }
    async fn keep_warm(&self, roots: &[PathBuf]) {
        // A hint about speed, not an operation on the files: not audited.
        self.inner.keep_warm(roots).await;
    }

    fn note_refused(&self, operation: &str, path: &Path, reason: &str) {
        let mut fields = Map::new();
        fields.insert("path".into(), path_value(path));
        fields.insert("outcome".into(), json!("refused"));
        fields.insert("error".into(), json!(reason));
        // A failure to record marks the log broken: every later operation is refused.
        let _ = self.log.event(operation, fields);
        self.inner.note_refused(operation, path, reason);
    }

    fn beneath(self: Arc<Self>, roots: &[PathBuf]) -> EnvResult<Arc<dyn ExecutionEnv>> {
        let view = Arc::clone(&self.inner).beneath(roots)?;
        Ok(Arc::new(Self {
            inner: view,
            log: self.log.clone(),
        }))
    }

    async fn lock_file(&self, path: &Path) -> EnvResult<FileLock> {
        self.log.check("lock_file")?;
        let op = Op::new("lock_file", Some(path));
        let result = self.inner.lock_file(path).await;
        op.finish(&self.log, result, none)
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
        let call: Arc<dyn ExecutionEnv> = Arc::new(env.for_call("call-1", "write"));
        call.write(Path::new("/ws/a.txt"), Bytes::from_static(b"hello"))
            .await
            .unwrap();
        let confined = Arc::clone(&call).beneath(&[PathBuf::from("/ws")]).unwrap();
        assert!(confined.read(Path::new("/ws/a.txt")).await.is_ok());
        assert!(env.read(Path::new("/ws/missing")).await.is_err());
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[0]["op"], "write");
        assert_eq!(lines[0]["call_id"], "call-1");
        assert_eq!(lines[0]["tool"], "write");
        assert_eq!(lines[0]["bytes"], 5);
        assert_eq!(lines[0]["outcome"], "ok");
        assert_eq!(lines[1]["op"], "read");
        assert_eq!(
            lines[1]["call_id"], "call-1",
            "a confined view keeps the call"
        );
        assert_eq!(lines[2]["op"], "read");
        assert_eq!(lines[2]["outcome"], "not_found");
        assert!(lines[2].get("call_id").is_none());
        assert!(lines[2].get("tool").is_none());
        assert!(lines[2]["time"].as_str().unwrap().ends_with('Z'));
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

    /// A file that fails after accepting `room` more bytes, like a disk filling up.
    struct Filling {
        data: Arc<Mutex<Vec<u8>>>,
        room: usize,
    }

    impl Write for Filling {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.room == 0 {
                return Err(std::io::Error::from(std::io::ErrorKind::StorageFull));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            self.data.lock().unwrap().extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl RecordFile for Filling {
        fn current_len(&self) -> std::io::Result<u64> {
            Ok(self.data.lock().unwrap().len() as u64)
        }
        fn set_len(&self, len: u64) -> std::io::Result<()> {
            self.data
                .lock()
                .unwrap()
                .truncate(usize::try_from(len).unwrap());
            Ok(())
        }
    }

    fn filling(room: usize) -> (Arc<Mutex<Vec<u8>>>, AuditLog) {
        let data = Arc::new(Mutex::new(Vec::new()));
        let file = Filling {
            data: Arc::clone(&data),
            room,
        };
        (data, AuditLog::file(file, "/var/log/jig.audit"))
    }

    #[tokio::test]
    async fn a_record_cut_by_a_full_disk_is_undone_and_later_operations_are_refused() {
        let (data, log) = filling(150);
        let memory = Arc::new(MemoryEnv::new());
        let env = AuditEnv::new(memory.clone(), log);
        env.write(Path::new("/ws/a.txt"), Bytes::from_static(b"one"))
            .await
            .unwrap();
        let first = data.lock().unwrap().clone();
        assert!(
            first.ends_with(b"\n") && first.len() < 150,
            "one whole record"
        );
        // The second record does not fit: the call fails, naming the log, and the file holds
        // only whole lines.
        let error = env
            .write(Path::new("/ws/b.txt"), Bytes::from_static(b"two"))
            .await
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "write: cannot write the audit log /var/log/jig.audit: no storage space (the operation ran; nothing more will run)"
        );
        assert_eq!(
            *data.lock().unwrap(),
            first,
            "the partial line was cut back"
        );
        // Nothing runs unrecorded from now on.
        let error = env
            .write(Path::new("/ws/c.txt"), Bytes::from_static(b"three"))
            .await
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "write: refused: the audit log /var/log/jig.audit cannot be written (no storage space); nothing runs unrecorded"
        );
        assert!(!memory.exists(Path::new("/ws/c.txt")).await.unwrap());
        assert_eq!(*data.lock().unwrap(), first);
    }

    #[tokio::test]
    async fn best_effort_warns_per_failure_and_goes_on() {
        let (data, log) = filling(0);
        let warnings = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&warnings);
        let log = log.on_failure(
            Failure::Warn,
            Arc::new(move |message: &str| seen.lock().unwrap().push(message.to_owned())),
        );
        let env = AuditEnv::new(Arc::new(MemoryEnv::new()), log);
        for name in ["/ws/a", "/ws/b"] {
            env.write(Path::new(name), Bytes::from_static(b"x"))
                .await
                .unwrap();
        }
        assert_eq!(
            *warnings.lock().unwrap(),
            vec![
                "cannot write the audit log /var/log/jig.audit: no storage space".to_owned(),
                "cannot write the audit log /var/log/jig.audit: no storage space".to_owned()
            ]
        );
        assert!(data.lock().unwrap().is_empty());
    }
}
