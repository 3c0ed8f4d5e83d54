//! The client side: [`RemoteEnv`], an [`ExecutionEnv`] whose every operation runs on the far
//! side of a byte stream.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use jig_env::{
    ChunkSink, ChunkSource, DirEntry, EnvError, EnvResult, ErrorKind, ExecOutcome, ExecRequest,
    ExecSink, ExecutionEnv, FileHead, FileInfo, FileKind, FileLock, Line, LineWindow, LinesRead,
    Recursive, SearchRequest, SearchResult, WalkRequest, WalkResult, WriteOutcome,
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader, BufWriter, ReadBuf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinHandle;

use crate::protocol::{
    CHUNK, Frame, Hello, MAX_APPEND, MAX_READ_REPLY, MAX_WINDOW_BYTES, MAX_WINDOW_LINES, Message,
    Op, PROTOCOL_VERSION, RecordError, SearchDecoder, WireDirEntry, WireError, WireExec, WireHead,
    WireInfo, WireLines, WireOutcome, WirePath, WireSearch, WireSearchSummary, WireWalk,
    WireWalkSummary, decode_walk, read_frame, write_frame,
};

/// Why a connection could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The stream failed or ended before the server greeted.
    #[error("{target}: no answer from `jig env serve`: {reason}")]
    NoHello {
        /// What was connected to.
        target: String,
        /// What happened instead.
        reason: String,
    },
    /// The server speaks another protocol version.
    #[error(
        "{target}: the far side speaks env protocol {theirs}, this jig speaks {PROTOCOL_VERSION}; \
         install the same jig version there"
    )]
    Version {
        /// What was connected to.
        target: String,
        /// The server's version.
        theirs: u32,
    },
    /// Starting the transport failed.
    #[error("{target}: {reason}")]
    Transport {
        /// What was connected to.
        target: String,
        /// What failed.
        reason: String,
    },
    /// Starting the server in a container failed.
    #[error("{target}: {error}")]
    Container {
        /// What was connected to.
        target: String,
        /// What failed: a `container::ContainerError` (boxed as an error, so that the
        /// connection does not depend on the container transport that wraps it).
        error: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Extra words for a "connection lost" message (e.g. the transport's stderr).
pub type Diagnostics = Arc<dyn Fn() -> String + Send + Sync>;

enum Incoming {
    Data(Bytes),
    Ok(Value, Bytes),
    Err(WireError),
}

/// How many `data` frames of a streamed read ([`ExecutionEnv::read_chunks`]) the server may
/// send ahead of the client's `ack`s: what a read holds on the client at most, besides the
/// chunk its sink is working on.
const READ_WINDOW: usize = 8;

/// How many `data` frames of a streamed write ([`ExecutionEnv::write_chunks`]) may wait to be
/// written to the stream, over all calls of a connection: a stream slower than the source
/// holds the source back instead of letting its chunks pile up in memory.
const WRITE_IN_FLIGHT: usize = 4;

/// How long a call waits while nothing at all arrives from the far side before the connection
/// is given up: 15 s. A running call is never silent for long (its `data` frames, or the
/// server's `alive` frame every [`crate::protocol::KEEPALIVE_INTERVAL`] while any call runs), so
/// this only fires when the far side stalls (mid-frame or not answering) or the link is dead;
/// a command that runs for ten minutes without output is not cut off. `JIG_ENV_IDLE_TIMEOUT`
/// changes it (see [`RemoteEnv::set_idle_timeout`]).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(15);

/// A frame waiting to be written; a streamed write's `data` frame holds its place in the
/// budget until it is written.
struct Queued {
    frame: Frame,
    _permit: Option<OwnedSemaphorePermit>,
}

/// One connection to a server; shared by the env and its views.
struct Connection {
    target: String,
    hello: Hello,
    out: mpsc::UnboundedSender<Queued>,
    bulk: Arc<Semaphore>,
    pending: Mutex<HashMap<u64, mpsc::UnboundedSender<Incoming>>>,
    next_id: AtomicU64,
    closed: Mutex<Option<String>>,
    diagnostics: Option<Diagnostics>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    keep_alive: Mutex<Option<Box<dyn std::any::Any + Send>>>,
    /// When bytes last arrived from the far side, and how long a call waits without any.
    progress: Arc<Progress>,
}

/// When the far side last sent a byte (milliseconds since `epoch`), and the idle limit.
struct Progress {
    epoch: Instant,
    last_millis: AtomicU64,
    /// The idle limit in milliseconds; 0: none.
    idle_millis: AtomicU64,
}

impl Progress {
    fn new(idle: Option<Duration>) -> Self {
        let progress = Self {
            epoch: Instant::now(),
            last_millis: AtomicU64::new(0),
            idle_millis: AtomicU64::new(0),
        };
        progress.set_idle(idle);
        progress
    }

    fn set_idle(&self, idle: Option<Duration>) {
        let millis = idle.map_or(0, |idle| {
            u64::try_from(idle.as_millis()).unwrap_or(u64::MAX).max(1)
        });
        self.idle_millis.store(millis, Ordering::Relaxed);
    }

    fn idle(&self) -> Option<Duration> {
        match self.idle_millis.load(Ordering::Relaxed) {
            0 => None,
            millis => Some(Duration::from_millis(millis)),
        }
    }

    fn touch(&self) {
        let now = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_millis.store(now, Ordering::Relaxed);
    }

    fn last(&self) -> Instant {
        self.epoch + Duration::from_millis(self.last_millis.load(Ordering::Relaxed))
    }
}

/// The far side's byte stream, stamping [`Progress`] whenever bytes arrive (a frame that
/// crosses slowly is progress too; one that stops half way is not).
struct Stamped<R> {
    inner: R,
    progress: Arc<Progress>,
}

impl<R: AsyncRead + Unpin> AsyncRead for Stamped<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.progress.touch();
        }
        polled
    }
}

fn locked<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Connection {
    fn fail(&self, reason: String) {
        {
            let mut closed = locked(&self.closed);
            if closed.is_none() {
                *closed = Some(reason);
            }
        }
        locked(&self.pending).clear();
    }

    fn lost(&self, operation: &'static str) -> EnvError {
        let reason = locked(&self.closed)
            .clone()
            .unwrap_or_else(|| "the connection closed".to_owned());
        let extra = self
            .diagnostics
            .as_ref()
            .map(|diagnostics| diagnostics())
            .filter(|text| !text.trim().is_empty())
            .map(|text| format!("; the transport said: {}", text.trim()))
            .unwrap_or_default();
        EnvError::new(
            ErrorKind::Other,
            operation,
            format!(
                "connection to the remote environment {} lost: {reason}{extra}",
                self.target
            ),
        )
    }

    fn send(&self, frame: Frame) -> bool {
        self.out
            .send(Queued {
                frame,
                _permit: None,
            })
            .is_ok()
    }

    fn is_closed(&self) -> bool {
        locked(&self.closed).is_some()
    }

    fn id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Gives the connection up after `idle` without a byte from the far side while a call
    /// waited: every open call fails, and the transport is dropped (an `ssh` child killed), so
    /// a far side that is still there sees the end of its input and stops what it started.
    fn stalled(&self, idle: Duration) {
        self.fail(format!(
            "nothing arrived for {} while a call waited: the far side stopped mid-frame or does \
             not answer (JIG_ENV_IDLE_TIMEOUT sets this limit)",
            seconds(idle)
        ));
        locked(&self.keep_alive).take();
    }
}

/// `15 s`, `2.5 s`.
fn seconds(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis.is_multiple_of(1000) {
        format!("{} s", millis / 1000)
    } else {
        format!("{} s", duration.as_secs_f64())
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        for task in locked(&self.tasks).drain(..) {
            task.abort();
        }
    }
}

/// An open call; dropping it before its answer cancels it on the far side.
struct Pending<'a> {
    conn: &'a Connection,
    id: u64,
    operation: &'static str,
    rx: mpsc::UnboundedReceiver<Incoming>,
    done: bool,
    /// When the call was sent: the far side is not idle before it had a chance to answer.
    sent: Instant,
}

impl Pending<'_> {
    /// An answer that already arrived, without waiting (a streamed write checks for an early
    /// error between chunks).
    fn try_next(&mut self) -> Option<EnvResult<Incoming>> {
        match self.rx.try_recv() {
            Ok(incoming) => {
                if matches!(incoming, Incoming::Ok(..) | Incoming::Err(_)) {
                    self.done = true;
                }
                Some(Ok(incoming))
            }
            Err(mpsc::error::TryRecvError::Empty) => None,
            Err(mpsc::error::TryRecvError::Disconnected) => {
                self.done = true;
                Some(Err(self.conn.lost(self.operation)))
            }
        }
    }

    /// The call's next frame. With an idle limit, waiting fails (and the connection is given
    /// up) once nothing at all arrived from the far side for that long since the call was sent.
    async fn next(&mut self) -> EnvResult<Incoming> {
        let received = match self.conn.progress.idle() {
            None => self.rx.recv().await,
            Some(idle) => loop {
                let quiet_since = self.conn.progress.last().max(self.sent);
                tokio::select! {
                    biased;
                    incoming = self.rx.recv() => break incoming,
                    () = tokio::time::sleep_until((quiet_since + idle).into()) => {
                        // Bytes may have arrived meanwhile (for this or another call).
                        if self.conn.progress.last().max(self.sent) + idle <= Instant::now() {
                            self.conn.stalled(idle);
                            break None;
                        }
                    }
                }
            },
        };
        let Some(incoming) = received else {
            self.done = true;
            return Err(self.conn.lost(self.operation));
        };
        if matches!(incoming, Incoming::Ok(..) | Incoming::Err(_)) {
            self.done = true;
        }
        Ok(incoming)
    }

    /// Waits for the answer, collecting data frames before it in front of its payload (the
    /// chunks are joined once at the end, into a buffer of the exact size).
    async fn finish(mut self) -> EnvResult<(Value, Bytes)> {
        let mut chunks: Vec<Bytes> = Vec::new();
        loop {
            match self.next().await? {
                Incoming::Data(chunk) => chunks.push(chunk),
                Incoming::Ok(value, payload) => {
                    if chunks.is_empty() {
                        return Ok((value, payload));
                    }
                    chunks.push(payload);
                    return Ok((value, Bytes::from(chunks.concat())));
                }
                Incoming::Err(error) => return Err(error.into_env_error()),
            }
        }
    }

    fn cancel(&self) {
        self.conn.send(Frame::new(Message::Cancel { id: self.id }));
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if !self.done {
            locked(&self.conn.pending).remove(&self.id);
            self.cancel();
        }
    }
}

/// An [`ExecutionEnv`] served by `jig env serve` on the other end of a byte stream.
///
/// Every operation is one call on the stream; many calls run at once. A broken stream makes
/// every open and later call fail with [`ErrorKind::Other`] ("connection to the remote
/// environment … lost"); nothing ever falls back to the local machine.
pub struct RemoteEnv {
    conn: Arc<Connection>,
    view: Option<u64>,
}

impl fmt::Debug for RemoteEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteEnv")
            .field("target", &self.conn.target)
            .field("view", &self.view)
            .finish_non_exhaustive()
    }
}

impl Drop for RemoteEnv {
    fn drop(&mut self) {
        if let Some(view) = self.view {
            self.conn.send(Frame::new(Message::Call {
                id: 0,
                view: None,
                op: Op::DropView { view },
            }));
        }
    }
}

/// How long to wait for the server's greeting.
const HELLO_TIMEOUT: Duration = Duration::from_mins(1);

impl RemoteEnv {
    /// Connects over `reader`/`writer` (whatever reaches `jig env serve`): waits for the
    /// server's greeting and checks the protocol version. `target` names the far side in
    /// messages; `diagnostics` adds words to a "connection lost" error; `keep_alive` lives as
    /// long as the connection (a child process, a temp dir).
    pub async fn connect<R, W>(
        target: impl Into<String>,
        reader: R,
        writer: W,
        diagnostics: Option<Diagnostics>,
        keep_alive: Option<Box<dyn std::any::Any + Send>>,
    ) -> Result<Self, ConnectError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let target = target.into();
        let progress = Arc::new(Progress::new(Some(DEFAULT_IDLE_TIMEOUT)));
        // Frame headers are small reads: served from the buffer, not one system call each.
        let mut reader = BufReader::with_capacity(
            256 << 10,
            Stamped {
                inner: reader,
                progress: Arc::clone(&progress),
            },
        );
        let no_hello = |reason: String| {
            let extra = diagnostics
                .as_ref()
                .map(|diagnostics| diagnostics())
                .filter(|text| !text.trim().is_empty())
                .map(|text| format!("; the transport said: {}", text.trim()))
                .unwrap_or_default();
            ConnectError::NoHello {
                target: target.clone(),
                reason: format!("{reason}{extra}"),
            }
        };
        let first = match tokio::time::timeout(HELLO_TIMEOUT, read_frame(&mut reader)).await {
            Err(_) => return Err(no_hello("timed out".to_owned())),
            Ok(Err(error)) => return Err(no_hello(error.to_string())),
            Ok(Ok(None)) => return Err(no_hello("the stream ended".to_owned())),
            Ok(Ok(Some(frame))) => frame,
        };
        let Message::Hello(hello) = first.message else {
            return Err(no_hello("the first message was not a greeting".to_owned()));
        };
        if hello.protocol != PROTOCOL_VERSION {
            return Err(ConnectError::Version {
                target,
                theirs: hello.protocol,
            });
        }
        let (out, queue) = mpsc::unbounded_channel::<Queued>();
        let conn = Arc::new(Connection {
            target,
            hello,
            out,
            bulk: Arc::new(Semaphore::new(WRITE_IN_FLIGHT)),
            pending: Mutex::default(),
            next_id: AtomicU64::new(1),
            closed: Mutex::default(),
            diagnostics,
            tasks: Mutex::default(),
            keep_alive: Mutex::new(keep_alive),
            progress,
        });
        let weak = Arc::downgrade(&conn);
        let writer_task = tokio::spawn(write_loop(weak.clone(), writer, queue));
        let reader_task = tokio::spawn(read_loop(weak, reader));
        locked(&conn.tasks).extend([writer_task, reader_task]);
        Ok(Self { conn, view: None })
    }

    /// How long a call waits while nothing at all arrives from the far side (default
    /// [`DEFAULT_IDLE_TIMEOUT`]); then the connection is given up: that call and every other
    /// open or later call fail with "connection … lost: nothing arrived for …", and the
    /// transport is dropped. `None`: wait forever. Applies to the env and all its views.
    ///
    /// This is a limit on silence, not on a call's length: a running call's far side sends its
    /// data or an `alive` frame every [`crate::protocol::KEEPALIVE_INTERVAL`] (1 s), so a
    /// command that runs quietly for ten minutes is not cut off, as long as the limit is well
    /// above that interval (a limit under 2 s may cut a quiet call off).
    pub fn set_idle_timeout(&self, idle: Option<Duration>) {
        self.conn.progress.set_idle(idle);
    }

    /// The server's jig version.
    pub fn server_version(&self) -> &str {
        &self.conn.hello.version
    }

    /// The server's CPU architecture (`x86_64`, `aarch64`, …).
    pub fn server_arch(&self) -> &str {
        &self.conn.hello.arch
    }

    /// Drops what keeps the transport alive (e.g. kills the `ssh` child): for tests of a lost
    /// connection.
    pub fn close_transport(&self) {
        locked(&self.conn.keep_alive).take();
    }

    fn start(&self, operation: &'static str, op: Op) -> EnvResult<Pending<'_>> {
        let id = self.conn.id();
        let (tx, rx) = mpsc::unbounded_channel();
        locked(&self.conn.pending).insert(id, tx);
        if locked(&self.conn.closed).is_some()
            || !self.conn.send(Frame::new(Message::Call {
                id,
                view: self.view,
                op,
            }))
        {
            locked(&self.conn.pending).remove(&id);
            return Err(self.conn.lost(operation));
        }
        Ok(Pending {
            conn: &self.conn,
            id,
            operation,
            rx,
            done: false,
            sent: Instant::now(),
        })
    }

    async fn call(&self, operation: &'static str, op: Op) -> EnvResult<(Value, Bytes)> {
        self.start(operation, op)?.finish().await
    }

    async fn call_value<T: DeserializeOwned>(
        &self,
        operation: &'static str,
        op: Op,
    ) -> EnvResult<T> {
        let (value, _) = self.call(operation, op).await?;
        decode(operation, value)
    }

    async fn call_path(&self, operation: &'static str, op: Op) -> EnvResult<PathBuf> {
        Ok(self.call_value::<WirePath>(operation, op).await?.to_path())
    }

    async fn call_info(&self, operation: &'static str, op: Op) -> EnvResult<FileInfo> {
        Ok(self.call_value::<WireInfo>(operation, op).await?.into())
    }

    /// A call that sends `data` as its body.
    async fn call_with_body(
        &self,
        operation: &'static str,
        op: Op,
        data: &Bytes,
    ) -> EnvResult<Value> {
        let pending = self.start(operation, op)?;
        let id = pending.id;
        let mut offset = 0;
        while offset < data.len() {
            let end = (offset + CHUNK).min(data.len());
            self.conn.send(Frame::with_payload(
                Message::Data { id },
                data.slice(offset..end),
            ));
            offset = end;
        }
        self.conn.send(Frame::new(Message::End { id }));
        Ok(pending.finish().await?.0)
    }

    /// The first `max_bytes` of a file through a streamed `read` (a window of acknowledged
    /// chunks), cancelled far side once enough arrived: a long start crosses in chunks, never in
    /// one frame.
    async fn read_prefix(&self, path: &Path, max_bytes: usize) -> EnvResult<Vec<u8>> {
        let op = Op::Read {
            path: wire(path),
            window: Some(READ_WINDOW),
        };
        let mut pending = self.start("read", op)?;
        let id = pending.id;
        let mut bytes = Vec::new();
        loop {
            let (chunk, last) = match pending.next().await? {
                Incoming::Data(chunk) => (chunk, false),
                Incoming::Ok(_, chunk) => (chunk, true),
                Incoming::Err(error) => return Err(error.into_env_error()),
            };
            let take = chunk.len().min(max_bytes - bytes.len());
            bytes.extend_from_slice(&chunk[..take]);
            // Enough: dropping the open call cancels the rest of the read far side.
            if last || bytes.len() == max_bytes {
                return Ok(bytes);
            }
            self.conn.send(Frame::new(Message::Ack { id }));
        }
    }

    /// Like [`Self::call_cancellable`] for a call whose answer is bulk bytes (`data` frames,
    /// then the payload), which come back joined after the answer's `value`.
    async fn call_cancellable_bulk(
        &self,
        operation: &'static str,
        op: Op,
        cancel: &jig_env::CancellationToken,
    ) -> EnvResult<(Value, Bytes)> {
        let finish = self.start(operation, op)?.finish();
        tokio::pin!(finish);
        tokio::select! {
            result = &mut finish => result,
            // The open call is dropped on return, which sends the cancel: the server stops the
            // walk or search.
            () = cancel.cancelled() => Err(EnvError::aborted(operation)),
        }
    }

    /// Waits for a call's answer, sending a cancel when `cancel` fires first.
    async fn call_cancellable(
        &self,
        operation: &'static str,
        op: Op,
        cancel: &jig_env::CancellationToken,
        sink: Option<&mut dyn ExecSink>,
    ) -> EnvResult<Value> {
        let mut pending = self.start(operation, op)?;
        let mut sink = sink;
        let mut cancel_sent = false;
        loop {
            tokio::select! {
                incoming = pending.next() => match incoming? {
                    Incoming::Data(chunk) => {
                        if let Some(sink) = sink.as_deref_mut() {
                            sink.output(&chunk).await;
                        }
                    }
                    Incoming::Ok(value, _) => return Ok(value),
                    Incoming::Err(error) => return Err(error.into_env_error()),
                },
                () = cancel.cancelled(), if !cancel_sent => {
                    cancel_sent = true;
                    pending.cancel();
                }
            }
        }
    }
}

/// A result whose records are unreadable (`walk`, `search`).
fn bad_records(operation: &'static str, error: &RecordError) -> EnvError {
    EnvError::new(
        ErrorKind::Other,
        operation,
        format!("unexpected answer from the remote environment: {error}"),
    )
}

fn decode<T: DeserializeOwned>(operation: &'static str, value: Value) -> EnvResult<T> {
    serde_json::from_value(value).map_err(|error| {
        EnvError::new(
            ErrorKind::Other,
            operation,
            format!("unexpected answer from the remote environment: {error}"),
        )
    })
}

async fn write_loop<W: AsyncWrite + Unpin>(
    conn: std::sync::Weak<Connection>,
    writer: W,
    mut queue: mpsc::UnboundedReceiver<Queued>,
) {
    let mut writer = BufWriter::with_capacity(256 << 10, writer);
    while let Some(queued) = queue.recv().await {
        // A payload bigger than the buffer goes straight through: once this returns, a bulk
        // frame's bytes have left this process and its place is free.
        let mut result = write_frame(&mut writer, &queued.frame).await;
        drop(queued);
        if result.is_ok() && queue.is_empty() {
            result = writer.flush().await;
        }
        if let Err(error) = result {
            if let Some(conn) = conn.upgrade() {
                conn.fail(format!("writing to the stream failed: {error}"));
            }
            return;
        }
    }
}

async fn read_loop<R: AsyncRead + Unpin>(conn: std::sync::Weak<Connection>, mut reader: R) {
    loop {
        let frame = read_frame(&mut reader).await;
        let Some(conn) = conn.upgrade() else { return };
        let frame = match frame {
            Ok(Some(frame)) => frame,
            Ok(None) => {
                conn.fail("the server closed the connection".to_owned());
                return;
            }
            Err(error) => {
                conn.fail(format!("reading from the stream failed: {error}"));
                return;
            }
        };
        let (id, incoming, last) = match frame.message {
            Message::Data { id } => (id, Incoming::Data(frame.payload), false),
            Message::Ok { id, value } => (id, Incoming::Ok(value, frame.payload), true),
            Message::Err { id, error } => (id, Incoming::Err(error), true),
            _ => continue,
        };
        let mut pending = locked(&conn.pending);
        if let Some(tx) = pending.get(&id) {
            let _ = tx.send(incoming);
        }
        if last {
            pending.remove(&id);
        }
    }
}

/// Releases a remote update lock when dropped.
struct RemoteLock {
    conn: Arc<Connection>,
    id: u64,
}

impl Drop for RemoteLock {
    fn drop(&mut self) {
        self.conn.send(Frame::new(Message::Call {
            id: 0,
            view: None,
            op: Op::Unlock { lock: self.id },
        }));
    }
}

fn wire(path: &Path) -> WirePath {
    WirePath::from_path(path)
}

#[async_trait]
impl ExecutionEnv for RemoteEnv {
    fn name(&self) -> &'static str {
        "remote"
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.conn.hello.home.as_ref().map(WirePath::to_path)
    }

    async fn canonical_path(&self, path: &Path) -> EnvResult<PathBuf> {
        self.call_path("canonicalize", Op::CanonicalPath { path: wire(path) })
            .await
    }

    async fn canonical_path_lenient(&self, path: &Path) -> EnvResult<PathBuf> {
        self.call_path(
            "canonicalize",
            Op::CanonicalPathLenient { path: wire(path) },
        )
        .await
    }

    async fn file_info(&self, path: &Path) -> EnvResult<FileInfo> {
        self.call_info("stat", Op::FileInfo { path: wire(path) })
            .await
    }

    async fn stat(&self, path: &Path) -> EnvResult<FileInfo> {
        self.call_info("stat", Op::Stat { path: wire(path) }).await
    }

    async fn read_link(&self, path: &Path) -> EnvResult<PathBuf> {
        self.call_path("readlink", Op::ReadLink { path: wire(path) })
            .await
    }

    async fn exists(&self, path: &Path) -> EnvResult<bool> {
        self.call_value("stat", Op::Exists { path: wire(path) })
            .await
    }

    async fn read(&self, path: &Path) -> EnvResult<Vec<u8>> {
        let op = Op::Read {
            path: wire(path),
            window: None,
        };
        let (_, bytes) = self.call("read", op).await?;
        Ok(bytes.into())
    }

    /// Up to [`MAX_READ_REPLY`] bytes in one answer; a longer start is read as a stream of
    /// chunks (`read_prefix`), so no frame is ever bigger.
    async fn read_start(&self, path: &Path, max_bytes: usize) -> EnvResult<Vec<u8>> {
        if max_bytes > MAX_READ_REPLY {
            return self.read_prefix(path, max_bytes).await;
        }
        let (_, bytes) = self
            .call(
                "read",
                Op::ReadStart {
                    path: wire(path),
                    max_bytes,
                },
            )
            .await?;
        Ok(bytes.into())
    }

    /// One call for up to [`MAX_READ_REPLY`] bytes; a longer head of a longer file is then
    /// read as a stream of chunks (`read_prefix`).
    async fn read_head(&self, path: &Path, max_bytes: usize) -> EnvResult<FileHead> {
        let (value, bytes) = self
            .call(
                "read",
                Op::ReadHead {
                    path: wire(path),
                    max_bytes: max_bytes.min(MAX_READ_REPLY),
                },
            )
            .await?;
        let head: WireHead = decode("read", value)?;
        let mut head = FileHead {
            info: head.info.into(),
            bytes: bytes.into(),
            complete: head.complete,
        };
        if max_bytes > MAX_READ_REPLY && !head.complete && head.info.kind == FileKind::File {
            // One byte more than asked tells a file of exactly `max_bytes` from a longer one.
            let mut bytes = self.read_prefix(path, max_bytes.saturating_add(1)).await?;
            head.complete = bytes.len() <= max_bytes;
            bytes.truncate(max_bytes);
            head.bytes = bytes;
        }
        Ok(head)
    }

    /// A window of at most [`MAX_WINDOW_LINES`] lines and [`MAX_WINDOW_BYTES`] bytes (one
    /// answer): a bigger `window` is asked for within those limits, so it comes back as a byte
    /// budget would cut it (fewer lines; a line longer than the limit cut, its `full_len`
    /// telling its length) and the caller pages on.
    async fn read_lines(&self, path: &Path, window: LineWindow) -> EnvResult<LinesRead> {
        let window = LineWindow {
            max_lines: window.max_lines.min(MAX_WINDOW_LINES),
            max_bytes: window.max_bytes.min(MAX_WINDOW_BYTES),
            ..window
        };
        let (value, bytes) = self
            .call(
                "read",
                Op::ReadLines {
                    path: wire(path),
                    start_line: window.start_line,
                    max_lines: window.max_lines,
                    max_bytes: window.max_bytes,
                },
            )
            .await?;
        let read: WireLines = decode("read", value)?;
        let mut offset = 0;
        let mut lines = Vec::with_capacity(read.lines.len());
        for line in read.lines {
            let end = offset + line.len;
            let Some(text) = bytes.get(offset..end) else {
                return Err(EnvError::new(
                    ErrorKind::Other,
                    "read",
                    "the remote environment sent fewer line bytes than it announced",
                ));
            };
            lines.push(Line {
                number: line.number,
                bytes: text.to_vec(),
                full_len: line.full_len,
            });
            offset = end;
        }
        Ok(LinesRead {
            lines,
            total_lines: read.total_lines,
            total_bytes: read.total_bytes,
        })
    }

    async fn write(&self, path: &Path, data: Bytes) -> EnvResult<WriteOutcome> {
        let op = Op::Write {
            path: wire(path),
            size: Some(data.len() as u64),
        };
        let value = self.call_with_body("write", op, &data).await?;
        Ok(WriteOutcome {
            created: value
                .get("created")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })
    }

    /// Streamed: the server sends the file as `data` frames at most eight chunks ahead of what
    /// `sink` consumed (each consumed frame is acknowledged), so the client holds a few chunks,
    /// never the file. A sink error cancels the read far side.
    async fn read_chunks(&self, path: &Path, sink: &mut dyn ChunkSink) -> EnvResult<u64> {
        let op = Op::Read {
            path: wire(path),
            window: Some(READ_WINDOW),
        };
        let mut pending = self.start("read", op)?;
        let id = pending.id;
        let mut size = 0_u64;
        loop {
            match pending.next().await? {
                Incoming::Data(chunk) => {
                    size += chunk.len() as u64;
                    if !chunk.is_empty() {
                        sink.chunk(chunk).await?;
                    }
                    self.conn.send(Frame::new(Message::Ack { id }));
                }
                Incoming::Ok(_, last) => {
                    size += last.len() as u64;
                    if !last.is_empty() {
                        sink.chunk(last).await?;
                    }
                    return Ok(size);
                }
                Incoming::Err(error) => return Err(error.into_env_error()),
            }
        }
    }

    /// Streamed: each chunk of `source` goes out as `data` frames (at most 1 MiB each) as soon
    /// as it is supplied, with at most a few frames waiting for the stream, so the client
    /// never holds the file. The far side writes a temp file and renames it over the target
    /// only after `end`; a failing `source` (its error is returned once the far side dropped
    /// the write and its temp file), a dropped future (the call is cancelled) or a lost
    /// connection leaves the target untouched.
    async fn write_chunks(
        &self,
        path: &Path,
        source: &mut dyn ChunkSource,
    ) -> EnvResult<WriteOutcome> {
        let op = Op::Write {
            path: wire(path),
            size: None,
        };
        let mut pending = self.start("write", op)?;
        let id = pending.id;
        let outcome = |value: Value| WriteOutcome {
            created: value
                .get("created")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        };
        // An answer before `end` can only be an error (the target is refused, the
        // connection is lost); anything else is ignored.
        let early = |incoming: EnvResult<Incoming>| -> Option<EnvResult<WriteOutcome>> {
            match incoming {
                Err(error) => Some(Err(error)),
                Ok(Incoming::Err(error)) => Some(Err(error.into_env_error())),
                Ok(Incoming::Ok(value, _)) => Some(Ok(outcome(value))),
                Ok(Incoming::Data(_)) => None,
            }
        };
        // Returning before `end` drops `pending`, which cancels the call: the server drops
        // the write and its temp file.
        loop {
            let chunk = match source.next_chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(error) => {
                    // The server cuts the body off and drops the write; waiting for its answer
                    // means the temp file is gone when this returns.
                    pending.cancel();
                    while !pending.done {
                        if pending.next().await.is_err() {
                            break;
                        }
                    }
                    return Err(error);
                }
            };
            let mut offset = 0;
            while offset < chunk.len() {
                let permit = tokio::select! {
                    permit = Arc::clone(&self.conn.bulk).acquire_owned() => {
                        permit.map_err(|_| self.conn.lost("write"))?
                    }
                    incoming = pending.next() => match early(incoming) {
                        Some(result) => return result,
                        None => continue,
                    },
                };
                if let Some(result) = pending.try_next().and_then(early) {
                    return result;
                }
                if self.conn.is_closed() {
                    return Err(self.conn.lost("write"));
                }
                let end = (offset + CHUNK).min(chunk.len());
                let queued = Queued {
                    frame: Frame::with_payload(Message::Data { id }, chunk.slice(offset..end)),
                    _permit: Some(permit),
                };
                if self.conn.out.send(queued).is_err() {
                    return Err(self.conn.lost("write"));
                }
                offset = end;
            }
        }
        self.conn.send(Frame::new(Message::End { id }));
        let (value, _) = pending.finish().await?;
        Ok(outcome(value))
    }

    /// At most [`MAX_APPEND`] bytes per call: a longer `data` is appended in several calls, in
    /// order (a failure part way leaves the parts before it appended).
    async fn append(&self, path: &Path, data: Bytes) -> EnvResult<()> {
        let part = usize::try_from(MAX_APPEND).unwrap_or(usize::MAX);
        let mut offset = 0;
        loop {
            let end = (offset + part).min(data.len());
            let op = Op::Append {
                path: wire(path),
                size: (end - offset) as u64,
            };
            self.call_with_body("append", op, &data.slice(offset..end))
                .await?;
            offset = end;
            if offset >= data.len() {
                return Ok(());
            }
        }
    }

    async fn rename(&self, from: &Path, to: &Path) -> EnvResult<()> {
        self.call(
            "rename",
            Op::Rename {
                from: wire(from),
                to: wire(to),
            },
        )
        .await?;
        Ok(())
    }

    async fn remove(&self, path: &Path, recursive: Recursive) -> EnvResult<()> {
        self.call(
            "remove",
            Op::Remove {
                path: wire(path),
                recursive: recursive == Recursive::Yes,
            },
        )
        .await?;
        Ok(())
    }

    async fn create_dir(&self, path: &Path, recursive: Recursive) -> EnvResult<()> {
        self.call(
            "mkdir",
            Op::CreateDir {
                path: wire(path),
                recursive: recursive == Recursive::Yes,
            },
        )
        .await?;
        Ok(())
    }

    async fn read_dir(&self, path: &Path) -> EnvResult<Vec<DirEntry>> {
        let entries: Vec<WireDirEntry> = self
            .call_value("read_dir", Op::ReadDir { path: wire(path) })
            .await?;
        Ok(entries.into_iter().map(DirEntry::from).collect())
    }

    async fn create_temp_file(&self, prefix: &str, suffix: &str) -> EnvResult<PathBuf> {
        self.call_path(
            "temp",
            Op::CreateTempFile {
                prefix: prefix.to_owned(),
                suffix: suffix.to_owned(),
            },
        )
        .await
    }

    async fn create_temp_dir(&self, prefix: &str) -> EnvResult<PathBuf> {
        self.call_path(
            "temp",
            Op::CreateTempDir {
                prefix: prefix.to_owned(),
            },
        )
        .await
    }

    async fn exec(&self, request: ExecRequest, sink: &mut dyn ExecSink) -> EnvResult<ExecOutcome> {
        let millis = |duration: Duration| u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
        let op = Op::Exec(WireExec {
            program: request.program.clone(),
            args: request.args.clone(),
            cwd: wire(&request.cwd),
            env: request.env.clone(),
            env_remove: request.env_remove.clone(),
            timeout_ms: request.timeout.map(millis),
            kill_grace_ms: millis(request.kill_grace),
            idle_grace_ms: millis(request.idle_grace),
            sandbox: crate::protocol::WireSandbox::from_policy(&request.sandbox),
        });
        let value = self
            .call_cancellable("exec", op, &request.cancel, Some(sink))
            .await?;
        Ok(decode::<WireOutcome>("exec", value)?.into())
    }

    async fn walk(&self, request: WalkRequest) -> EnvResult<WalkResult> {
        if request.cancel.is_cancelled() {
            return Err(EnvError::aborted("walk"));
        }
        let op = Op::Walk(WireWalk::from(&request));
        let (value, records) = self
            .call_cancellable_bulk("walk", op, &request.cancel)
            .await?;
        let summary: WireWalkSummary = decode("walk", value)?;
        decode_walk(summary, &records).map_err(|error| bad_records("walk", &error))
    }

    async fn search(&self, request: SearchRequest) -> EnvResult<SearchResult> {
        if request.cancel.is_cancelled() {
            return Err(EnvError::aborted("search"));
        }
        let op = Op::Search(WireSearch::from(&request));
        let mut pending = self.start("search", op)?;
        // The lines of each chunk are decoded while the next crosses.
        let mut decoder = SearchDecoder::default();
        let bad = |error: RecordError| bad_records("search", &error);
        loop {
            tokio::select! {
                incoming = pending.next() => match incoming? {
                    Incoming::Data(chunk) => decoder.feed(&chunk).map_err(bad)?,
                    Incoming::Ok(value, records) => {
                        decoder.feed(&records).map_err(bad)?;
                        let summary: WireSearchSummary = decode("search", value)?;
                        return decoder.finish(summary).map_err(bad);
                    }
                    Incoming::Err(error) => return Err(error.into_env_error()),
                },
                // The open call is dropped on return, which sends the cancel: the server
                // stops the search.
                () = request.cancel.cancelled() => return Err(EnvError::aborted("search")),
            }
        }
    }

    async fn cleanup(&self) {
        if let Err(error) = self.call("cleanup", Op::Cleanup).await {
            tracing::warn!(%error, "remote cleanup failed");
        }
    }

    /// Asks the far side to keep `roots` warm: its `jig env serve` indexes them next to the
    /// files.
    async fn keep_warm(&self, roots: &[PathBuf]) {
        let op = Op::KeepWarm {
            roots: roots.iter().map(|root| wire(root)).collect(),
        };
        if let Err(error) = self.call("keep_warm", op).await {
            tracing::debug!(%error, "the far side cannot keep the roots warm");
        }
    }

    fn beneath(self: Arc<Self>, roots: &[PathBuf]) -> EnvResult<Arc<dyn ExecutionEnv>> {
        let view = self.conn.id();
        let sent = self.conn.send(Frame::new(Message::Call {
            id: 0,
            view: self.view,
            op: Op::Beneath {
                view,
                roots: roots.iter().map(|root| wire(root)).collect(),
            },
        }));
        if !sent {
            return Err(self.conn.lost("beneath"));
        }
        Ok(Arc::new(Self {
            conn: Arc::clone(&self.conn),
            view: Some(view),
        }))
    }

    async fn lock_file(&self, path: &Path) -> EnvResult<FileLock> {
        let value = self
            .call_value::<Value>("lock", Op::LockFile { path: wire(path) })
            .await?;
        let id = value.get("lock").and_then(Value::as_u64).unwrap_or(0);
        Ok(FileLock::new(RemoteLock {
            conn: Arc::clone(&self.conn),
            id,
        }))
    }
}
