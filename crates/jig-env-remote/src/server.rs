//! The server side: serves one [`ExecutionEnv`] over a byte stream (`jig env serve`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use bytes::{Bytes, BytesMut};
use jig_env::{
    CancellationToken, ChunkSink, ChunkSource, EnvError, EnvResult, ErrorKind, ExecRequest,
    ExecSink, ExecutionEnv, FileLock, LineWindow, Recursive,
};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader, BufWriter};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinHandle;

use crate::protocol::{
    CHUNK, Frame, Hello, KEEPALIVE_INTERVAL, MAX_APPEND, MAX_READ_REPLY, MAX_REQUEST_HEADER,
    MAX_WINDOW_BYTES, MAX_WINDOW_LINES, Message, Op, PROTOCOL_VERSION, RECORD_CHUNK, RecordError,
    WireDirEntry, WireError, WireHead, WireInfo, WireLine, WireLines, WireOutcome, WirePath,
    encode_search, encode_walk, read_frame_within, write_frame,
};

/// Writes bigger than this are handed to the env in a stream
/// ([`ExecutionEnv::write_chunks`]) instead of whole.
const STREAM_MIN: u64 = MAX_APPEND;

/// How the server treats the env it serves (nothing to choose yet).
#[derive(Debug, Clone, Copy, Default)]
pub struct ServeOptions {}

/// Why serving stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Reading or writing the stream failed.
    #[error("env protocol stream: {0}")]
    Io(#[from] std::io::Error),
}

/// How many frames of bulk bytes (a read's chunks, a big result's pieces) may wait to be
/// written, over all calls of a connection: a client slower than the disk holds a read back
/// instead of letting its chunks pile up in memory.
const BULK_IN_FLIGHT: usize = 4;

/// The queue of frames to the client.
#[derive(Clone)]
struct Out {
    tx: mpsc::Sender<Queued>,
    bulk: Arc<Semaphore>,
}

/// A queued frame; a bulk frame holds its place in the budget until it is written.
struct Queued {
    frame: Frame,
    _permit: Option<OwnedSemaphorePermit>,
}

/// The client is gone.
struct Closed;

impl Out {
    async fn send(&self, frame: Frame) -> Result<(), Closed> {
        self.tx
            .send(Queued {
                frame,
                _permit: None,
            })
            .await
            .map_err(|_| Closed)
    }

    /// Queues a frame of bulk bytes once fewer than [`BULK_IN_FLIGHT`] wait.
    async fn send_bulk(&self, frame: Frame) -> Result<(), Closed> {
        let permit = Arc::clone(&self.bulk)
            .acquire_owned()
            .await
            .map_err(|_| Closed)?;
        self.tx
            .send(Queued {
                frame,
                _permit: Some(permit),
            })
            .await
            .map_err(|_| Closed)
    }
}

#[derive(Debug)]
enum BodyPart {
    Chunk(Bytes),
    End,
}

struct Call {
    cancel: CancellationToken,
    task: JoinHandle<()>,
    /// Exec calls stop through their token (the process group is killed); others are aborted.
    exec: bool,
    /// A write or append: when the client goes, its body is cut off and the call ends by
    /// itself (removing its temp file) rather than being aborted.
    takes_body: bool,
    body: Option<mpsc::Sender<BodyPart>>,
    /// A `read` with a window: one permit per `data` frame it may still send before an `ack`.
    credit: Option<Arc<Semaphore>>,
}

type Calls = Arc<Mutex<HashMap<u64, Call>>>;
type Locks = Arc<Mutex<HashMap<u64, FileLock>>>;

fn locked<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Serves `env` on `reader`/`writer` until the client closes the stream; then every running
/// process is killed and the env cleaned up.
#[expect(
    clippy::too_many_lines,
    reason = "one loop dispatching every message type"
)]
pub async fn serve<R, W>(
    env: Arc<dyn ExecutionEnv>,
    _options: ServeOptions,
    reader: R,
    writer: W,
) -> Result<(), ServeError>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, mut queue) = mpsc::channel::<Queued>(64);
    let out = Out {
        tx,
        bulk: Arc::new(Semaphore::new(BULK_IN_FLIGHT)),
    };
    let calls: Calls = Arc::default();
    let running = Arc::clone(&calls);
    let writer_task = tokio::spawn(async move {
        let mut writer = BufWriter::with_capacity(256 << 10, writer);
        loop {
            let queued = match tokio::time::timeout(KEEPALIVE_INTERVAL, queue.recv()).await {
                Ok(Some(queued)) => queued,
                Ok(None) => break,
                Err(_) => {
                    // Quiet for a while: while calls run, say so, so the client does not take
                    // a long quiet call (a command without output) for a stalled far side.
                    if !locked(&running).is_empty() {
                        write_frame(&mut writer, &Frame::new(Message::Alive)).await?;
                        writer.flush().await?;
                    }
                    continue;
                }
            };
            // A payload bigger than the buffer goes straight through: once this returns, a
            // bulk frame's bytes have left this process and its place is free.
            write_frame(&mut writer, &queued.frame).await?;
            drop(queued);
            // Flush only when nothing else is waiting: many small frames share one write.
            if queue.is_empty() {
                writer.flush().await?;
            }
        }
        writer.flush().await?;
        Ok::<(), std::io::Error>(())
    });
    let hello = Hello {
        protocol: PROTOCOL_VERSION,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        env: env.name().to_owned(),
        home: env.home_dir().as_deref().map(WirePath::from_path),
        arch: std::env::consts::ARCH.to_owned(),
    };
    let _ = out.send(Frame::new(Message::Hello(hello))).await;

    let locks: Locks = Arc::default();
    let mut views: HashMap<u64, Result<Arc<dyn ExecutionEnv>, WireError>> = HashMap::new();
    // Frame headers are small reads: served from the buffer, not one system call each.
    let mut reader = BufReader::with_capacity(256 << 10, reader);
    let result = loop {
        let frame = match read_frame_within(&mut reader, MAX_REQUEST_HEADER).await {
            Ok(Some(frame)) => frame,
            Ok(None) => break Ok(()),
            Err(error) => break Err(error),
        };
        match frame.message {
            Message::Call { id, view, op } => {
                match op {
                    Op::Beneath {
                        view: new_view,
                        roots,
                    } => {
                        let roots: Vec<PathBuf> = roots.iter().map(WirePath::to_path).collect();
                        // A view of a view is confined by both.
                        let base = match view {
                            None => Ok(Arc::clone(&env)),
                            Some(view) => views.get(&view).cloned().unwrap_or_else(|| {
                                Err(WireError::from(&EnvError::new(
                                    ErrorKind::Invalid,
                                    "beneath",
                                    format!("no view {view} on this connection"),
                                )))
                            }),
                        };
                        let made = base.and_then(|base| {
                            base.beneath(&roots)
                                .map_err(|error| WireError::from(&error))
                        });
                        views.insert(new_view, made);
                        continue;
                    }
                    Op::DropView { view } => {
                        views.remove(&view);
                        continue;
                    }
                    Op::Unlock { lock } => {
                        locked(&locks).remove(&lock);
                        continue;
                    }
                    _ => {}
                }
                let target = match view {
                    None => Ok(Arc::clone(&env)),
                    Some(view) => match views.get(&view) {
                        Some(Ok(view)) => Ok(Arc::clone(view)),
                        Some(Err(error)) => Err(error.clone()),
                        None => Err(WireError::from(&EnvError::new(
                            ErrorKind::Invalid,
                            "remote",
                            format!("no view {view} on this connection"),
                        ))),
                    },
                };
                let target = match target {
                    Ok(target) => target,
                    Err(error) => {
                        let _ = out.send(Frame::new(Message::Err { id, error })).await;
                        continue;
                    }
                };
                start_call(
                    CallContext {
                        env: target,
                        id,
                        out: out.clone(),
                        locks: Arc::clone(&locks),
                        calls: Arc::clone(&calls),
                    },
                    op,
                );
            }
            Message::Data { id } => {
                let body = locked(&calls).get(&id).and_then(|call| call.body.clone());
                if let Some(body) = body {
                    let _ = body.send(BodyPart::Chunk(frame.payload)).await;
                }
            }
            Message::End { id } => {
                let body = locked(&calls)
                    .get_mut(&id)
                    .and_then(|call| call.body.take());
                if let Some(body) = body {
                    let _ = body.send(BodyPart::End).await;
                }
            }
            Message::Ack { id } => {
                if let Some(credit) = locked(&calls)
                    .get(&id)
                    .and_then(|call| call.credit.as_ref())
                {
                    credit.add_permits(1);
                }
            }
            Message::Cancel { id } => {
                if let Some(call) = locked(&calls).get_mut(&id) {
                    call.cancel.cancel();
                    if call.takes_body && call.body.is_some() {
                        // A body still arriving is cut off: the write ends by itself, its
                        // temp file removed, before its answer goes out.
                        call.body = None;
                    } else if !call.exec {
                        call.task.abort();
                    }
                }
                locked(&locks).remove(&id);
            }
            Message::Hello(_) | Message::Ok { .. } | Message::Err { .. } | Message::Alive => {
                tracing::warn!("ignoring a server-to-client message sent by the client");
            }
        }
    };
    // The client is gone (or the stream broke): stop everything it started.
    let mut running: Vec<Call> = locked(&calls).drain().map(|(_, call)| call).collect();
    for call in &mut running {
        call.cancel.cancel();
        // A body that was not complete never will be: the write sees it cut off.
        call.body = None;
        if !call.exec && !call.takes_body {
            call.task.abort();
        }
    }
    for call in running {
        let _ = call.task.await;
    }
    locked(&locks).clear();
    drop(views);
    env.cleanup().await;
    drop(out);
    let _ = writer_task.await;
    result.map_err(ServeError::Io)
}

struct CallContext {
    env: Arc<dyn ExecutionEnv>,
    id: u64,
    out: Out,
    locks: Locks,
    calls: Calls,
}

fn start_call(ctx: CallContext, op: Op) {
    let cancel = CancellationToken::new();
    let exec = matches!(op, Op::Exec(_));
    let takes_body = matches!(op, Op::Write { .. } | Op::Append { .. });
    let (body_tx, body_rx) = if takes_body {
        let (tx, rx) = mpsc::channel(8);
        (Some(tx), Some(rx))
    } else {
        (None, None)
    };
    let credit = match &op {
        Op::Read {
            window: Some(window),
            ..
        } => Some(Arc::new(Semaphore::new((*window).max(1)))),
        _ => None,
    };
    let id = ctx.id;
    let calls = Arc::clone(&ctx.calls);
    // Hold the map lock while spawning so the task cannot finish (and remove itself) before it
    // is inserted.
    let mut map = locked(&calls);
    let token = cancel.clone();
    let call_credit = credit.clone();
    let task = tokio::spawn(async move {
        let out = ctx.out.clone();
        let reply = match run_op(&ctx, op, token, body_rx, call_credit).await {
            Ok((value, payload)) => Frame::with_payload(Message::Ok { id, value }, payload),
            Err(error) => Frame::new(Message::Err {
                id,
                error: WireError::from(&error),
            }),
        };
        locked(&ctx.calls).remove(&id);
        let _ = out.send(reply).await;
    });
    map.insert(
        id,
        Call {
            cancel,
            task,
            exec,
            takes_body,
            body: body_tx,
            credit,
        },
    );
}

type Reply = (Value, Bytes);

/// A big result (`walk`, `search`): its counts in `value`, its records in the payload; more
/// than a record chunk goes as `data` frames first.
async fn bulk<T: serde::Serialize>(
    ctx: &CallContext,
    operation: &'static str,
    encoded: Result<(T, Bytes), RecordError>,
) -> EnvResult<Reply> {
    let (summary, records) = encoded.map_err(|error| {
        EnvError::new(
            ErrorKind::Other,
            operation,
            format!("cannot encode the result: {error}"),
        )
    })?;
    // The last chunk goes with the answer.
    let mut offset = 0;
    while records.len() - offset > RECORD_CHUNK {
        send_data(
            &ctx.out,
            ctx.id,
            records.slice(offset..offset + RECORD_CHUNK),
        )
        .await?;
        offset += RECORD_CHUNK;
    }
    Ok((value(&summary), records.slice(offset..)))
}

fn value<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

#[expect(clippy::too_many_lines, reason = "one arm per operation")]
async fn run_op(
    ctx: &CallContext,
    op: Op,
    cancel: CancellationToken,
    body: Option<mpsc::Receiver<BodyPart>>,
    credit: Option<Arc<Semaphore>>,
) -> EnvResult<Reply> {
    let env = &*ctx.env;
    let none = Bytes::new();
    Ok(match op {
        Op::CanonicalPath { path } => (
            value(&WirePath::from_path(
                &env.canonical_path(&path.to_path()).await?,
            )),
            none,
        ),
        Op::CanonicalPathLenient { path } => (
            value(&WirePath::from_path(
                &env.canonical_path_lenient(&path.to_path()).await?,
            )),
            none,
        ),
        Op::FileInfo { path } => (
            value(&WireInfo::from(&env.file_info(&path.to_path()).await?)),
            none,
        ),
        Op::Stat { path } => (
            value(&WireInfo::from(&env.stat(&path.to_path()).await?)),
            none,
        ),
        Op::ReadLink { path } => (
            value(&WirePath::from_path(&env.read_link(&path.to_path()).await?)),
            none,
        ),
        Op::Exists { path } => (json!(env.exists(&path.to_path()).await?), none),
        Op::Read { path, .. } => read(ctx, &path.to_path(), credit).await?,
        Op::ReadStart { path, max_bytes } => {
            let path = path.to_path();
            check_reply_size(&path, max_bytes)?;
            (
                Value::Null,
                Bytes::from(env.read_start(&path, max_bytes).await?),
            )
        }
        Op::ReadHead { path, max_bytes } => {
            let path = path.to_path();
            check_reply_size(&path, max_bytes)?;
            let (head, bytes) = WireHead::split(env.read_head(&path, max_bytes).await?);
            (value(&head), bytes)
        }
        Op::ReadLines {
            path,
            start_line,
            max_lines,
            max_bytes,
        } => {
            check_window(&path.to_path(), max_lines, max_bytes)?;
            let read = env
                .read_lines(
                    &path.to_path(),
                    LineWindow {
                        start_line,
                        max_lines,
                        max_bytes,
                    },
                )
                .await?;
            let mut payload = BytesMut::new();
            let lines = read
                .lines
                .iter()
                .map(|line| {
                    payload.extend_from_slice(&line.bytes);
                    WireLine {
                        number: line.number,
                        len: line.bytes.len(),
                        full_len: line.full_len,
                    }
                })
                .collect();
            (
                value(&WireLines {
                    lines,
                    total_lines: read.total_lines,
                    total_bytes: read.total_bytes,
                }),
                payload.freeze(),
            )
        }
        Op::Write { path, size } => {
            let path = path.to_path();
            let Some(body) = body else {
                return Err(EnvError::new(ErrorKind::Invalid, "write", "no body"));
            };
            if size.is_none_or(|size| size > STREAM_MIN) {
                let mut source = BodySource {
                    operation: "write",
                    path: &path,
                    size,
                    received: 0,
                    body,
                };
                let outcome = env.write_chunks(&path, &mut source).await?;
                (json!({ "created": outcome.created }), none)
            } else {
                let data = collect_body("write", &path, size.unwrap_or(0), body).await?;
                let outcome = env.write(&path, data).await?;
                (json!({ "created": outcome.created }), none)
            }
        }
        Op::Append { path, size } => {
            let path = path.to_path();
            if size > MAX_APPEND {
                return Err(EnvError::new(
                    ErrorKind::Invalid,
                    "append",
                    format!(
                        "an append of {size} bytes is over the env protocol's limit of \
                         {MAX_APPEND} bytes per call; send it as several appends"
                    ),
                )
                .with_path(&path));
            }
            let Some(body) = body else {
                return Err(EnvError::new(ErrorKind::Invalid, "append", "no body"));
            };
            let data = collect_body("append", &path, size, body).await?;
            env.append(&path, data).await?;
            (Value::Null, none)
        }
        Op::Rename { from, to } => {
            env.rename(&from.to_path(), &to.to_path()).await?;
            (Value::Null, none)
        }
        Op::Remove { path, recursive } => {
            env.remove(&path.to_path(), recursive_of(recursive)).await?;
            (Value::Null, none)
        }
        Op::CreateDir { path, recursive } => {
            env.create_dir(&path.to_path(), recursive_of(recursive))
                .await?;
            (Value::Null, none)
        }
        Op::ReadDir { path } => {
            let entries: Vec<WireDirEntry> = env
                .read_dir(&path.to_path())
                .await?
                .iter()
                .map(WireDirEntry::from)
                .collect();
            (value(&entries), none)
        }
        Op::CreateTempFile { prefix, suffix } => (
            value(&WirePath::from_path(
                &env.create_temp_file(&prefix, &suffix).await?,
            )),
            none,
        ),
        Op::CreateTempDir { prefix } => (
            value(&WirePath::from_path(&env.create_temp_dir(&prefix).await?)),
            none,
        ),
        Op::Exec(exec) => {
            let sandbox = match exec.sandbox {
                Some(wire) => {
                    let mut policy = wire.into_policy().map_err(|error| {
                        EnvError::new(ErrorKind::Invalid, "exec", error.to_string())
                    })?;
                    // The far side's own secrets are protected too, whatever the near side sent.
                    if let Some(home) = std::env::var_os(jig_protocol::EnvVars::HOME)
                        .filter(|home| !home.is_empty())
                    {
                        let home = PathBuf::from(home);
                        for path in jig_env::PROTECTED_HOME_PATHS {
                            let path = home.join(path);
                            if !policy.protected.contains(&path) {
                                policy.protected.push(path);
                            }
                        }
                    }
                    policy
                }
                None => jig_env::SandboxPolicy::off(),
            };
            let request = ExecRequest {
                program: exec.program,
                args: exec.args,
                cwd: exec.cwd.to_path(),
                env: exec.env,
                env_remove: exec.env_remove,
                timeout: exec.timeout_ms.map(Duration::from_millis),
                kill_grace: Duration::from_millis(exec.kill_grace_ms),
                idle_grace: Duration::from_millis(exec.idle_grace_ms),
                cancel,
                sandbox,
            };
            let mut sink = FrameSink {
                id: ctx.id,
                out: ctx.out.clone(),
            };
            let outcome = env.exec(request, &mut sink).await?;
            (value(&WireOutcome::from(&outcome)), none)
        }
        Op::Walk(walk) => {
            let mut request = walk.into_request();
            request.cancel = cancel;
            let result = env.walk(request).await?;
            bulk(ctx, "walk", encode_walk(&result)).await?
        }
        Op::Search(search) => {
            let mut request = search.into_request();
            request.cancel = cancel;
            let result = env.search(request).await?;
            bulk(ctx, "search", encode_search(&result)).await?
        }
        Op::Cleanup => {
            env.cleanup().await;
            (Value::Null, none)
        }
        Op::KeepWarm { roots } => {
            let roots: Vec<PathBuf> = roots.iter().map(WirePath::to_path).collect();
            env.keep_warm(&roots).await;
            (Value::Null, none)
        }
        Op::LockFile { path } => {
            let lock = env.lock_file(&path.to_path()).await?;
            locked(&ctx.locks).insert(ctx.id, lock);
            (json!({ "lock": ctx.id }), none)
        }
        Op::Beneath { .. } | Op::DropView { .. } | Op::Unlock { .. } => (Value::Null, none),
    })
}

/// A `read_start`/`read_head` may ask for at most [`MAX_READ_REPLY`] bytes: its answer is one
/// frame, and the server holds it whole.
fn check_reply_size(path: &Path, max_bytes: usize) -> EnvResult<()> {
    if max_bytes > MAX_READ_REPLY {
        return Err(EnvError::new(
            ErrorKind::Invalid,
            "read",
            format!(
                "asked for up to {max_bytes} bytes in one answer; the env protocol carries at most \
                 {MAX_READ_REPLY} (read a longer start with a streamed `read`)"
            ),
        )
        .with_path(path));
    }
    Ok(())
}

/// A `read_lines` window may ask for at most [`MAX_WINDOW_LINES`] lines and
/// [`MAX_WINDOW_BYTES`] bytes.
fn check_window(path: &Path, max_lines: usize, max_bytes: usize) -> EnvResult<()> {
    if max_lines > MAX_WINDOW_LINES || max_bytes > MAX_WINDOW_BYTES {
        return Err(EnvError::new(
            ErrorKind::Invalid,
            "read",
            format!(
                "a window of {max_lines} lines and {max_bytes} bytes is over the env protocol's \
                 limit of {MAX_WINDOW_LINES} lines and {MAX_WINDOW_BYTES} bytes per answer; read \
                 the file in smaller windows"
            ),
        )
        .with_path(path));
    }
    Ok(())
}

fn recursive_of(recursive: bool) -> Recursive {
    if recursive {
        Recursive::Yes
    } else {
        Recursive::No
    }
}

struct FrameSink {
    id: u64,
    out: Out,
}

#[async_trait]
impl ExecSink for FrameSink {
    async fn output(&mut self, chunk: &[u8]) {
        let _ = self
            .out
            .send(Frame::with_payload(
                Message::Data { id: self.id },
                Bytes::copy_from_slice(chunk),
            ))
            .await;
    }
}

fn short_body(operation: &'static str, path: &Path) -> EnvError {
    EnvError::new(
        ErrorKind::Aborted,
        operation,
        "the client stopped sending the data; nothing was written",
    )
    .with_path(path)
}

/// The whole body of a write or append, checked against the announced size.
async fn collect_body(
    operation: &'static str,
    path: &Path,
    size: u64,
    mut body: mpsc::Receiver<BodyPart>,
) -> EnvResult<Bytes> {
    let mut data = BytesMut::with_capacity(usize::try_from(size.min(STREAM_MIN)).unwrap_or(0));
    loop {
        match body.recv().await {
            // More than announced is refused as it arrives, never collected.
            Some(BodyPart::Chunk(chunk)) if (data.len() + chunk.len()) as u64 > size => {
                return Err(EnvError::new(
                    ErrorKind::Invalid,
                    operation,
                    format!(
                        "announced {size} bytes, received more ({})",
                        data.len() + chunk.len()
                    ),
                )
                .with_path(path));
            }
            Some(BodyPart::Chunk(chunk)) => data.extend_from_slice(&chunk),
            Some(BodyPart::End) => break,
            None => return Err(short_body(operation, path)),
        }
    }
    if data.len() as u64 != size {
        return Err(EnvError::new(
            ErrorKind::Invalid,
            operation,
            format!("announced {size} bytes, received {}", data.len()),
        )
        .with_path(path));
    }
    Ok(data.freeze())
}

/// Reads a file through the env in chunks ([`ExecutionEnv::read_chunks`]): each goes out as a
/// `data` frame as soon as it is read, the last one in the `ok` payload (for a small file, the
/// only frame). The env decides how much it holds at once (a `LocalEnv` and its views a few
/// chunks).
///
/// With `credit` (a `read` asked with a `window`), each `data` frame takes one permit, given
/// back by the client's `ack` once it consumed the frame: a client slower than the file holds
/// the read back, and never has more than the window waiting.
async fn read(ctx: &CallContext, path: &Path, credit: Option<Arc<Semaphore>>) -> EnvResult<Reply> {
    let mut sink = DataFrames {
        out: &ctx.out,
        id: ctx.id,
        held: None,
        credit,
    };
    let size = ctx.env.read_chunks(path, &mut sink).await?;
    Ok((json!({ "size": size }), sink.held.unwrap_or_default()))
}

/// Sends a read's chunks as `data` frames, one behind: the last is kept for the answer.
struct DataFrames<'a> {
    out: &'a Out,
    id: u64,
    held: Option<Bytes>,
    credit: Option<Arc<Semaphore>>,
}

#[async_trait]
impl ChunkSink for DataFrames<'_> {
    async fn chunk(&mut self, chunk: Bytes) -> EnvResult<()> {
        // The protocol's chunk size bounds a payload, whatever size the env hands out.
        let mut offset = 0;
        while offset < chunk.len() {
            let end = (offset + CHUNK).min(chunk.len());
            if let Some(previous) = self.held.replace(chunk.slice(offset..end)) {
                if let Some(credit) = &self.credit {
                    credit
                        .acquire()
                        .await
                        .map_err(|_| EnvError::aborted("read"))?
                        .forget();
                }
                send_data(self.out, self.id, previous).await?;
            }
            offset = end;
        }
        Ok(())
    }
}

/// The body of a write as it arrives, for [`ExecutionEnv::write_chunks`]: it ends with the
/// client's `end` and exactly the announced size (any size when none was announced), else it
/// fails (and nothing is written).
struct BodySource<'a> {
    operation: &'static str,
    path: &'a Path,
    /// None: whatever arrives before `end`.
    size: Option<u64>,
    received: u64,
    body: mpsc::Receiver<BodyPart>,
}

#[async_trait]
impl ChunkSource for BodySource<'_> {
    async fn next_chunk(&mut self) -> EnvResult<Option<Bytes>> {
        match self.body.recv().await {
            Some(BodyPart::Chunk(chunk)) => {
                self.received += chunk.len() as u64;
                if self.size.is_some_and(|size| self.received > size) {
                    return Err(self.size_mismatch());
                }
                Ok(Some(chunk))
            }
            Some(BodyPart::End) if self.size.is_none_or(|size| self.received == size) => Ok(None),
            Some(BodyPart::End) => Err(self.size_mismatch()),
            None => Err(short_body(self.operation, self.path)),
        }
    }
}

impl BodySource<'_> {
    fn size_mismatch(&self) -> EnvError {
        EnvError::new(
            ErrorKind::Invalid,
            self.operation,
            format!(
                "announced {} bytes, received {}",
                self.size.unwrap_or_default(),
                self.received
            ),
        )
        .with_path(self.path)
    }
}

async fn send_data(out: &Out, id: u64, chunk: Bytes) -> EnvResult<()> {
    out.send_bulk(Frame::with_payload(Message::Data { id }, chunk))
        .await
        .map_err(|_| EnvError::aborted("read"))
}
