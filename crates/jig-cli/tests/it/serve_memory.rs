//! `jig env serve` keeps big files out of its memory: a write and a read of a file of
//! hundreds of MB, through a confined view (the tools' default) and on the served env itself,
//! leave the server's peak resident memory (`VmHWM`) far below the file's size.
//!
//! The client side here speaks the protocol frame by frame and never holds the file either.
//! The last test is the client's side: `RemoteEnv::write_chunks` and `read_chunks` of such a
//! file over a `jig env serve` child leave this process's own peak resident memory far below
//! the file's size. `JIG_SERVE_MEMORY_MB` sets the file's size (default 256).
#![expect(
    clippy::expect_used,
    reason = "set-up helpers of tests: a failed step is a failed test"
)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use jig_env::Bytes;
use jig_env_remote::protocol::{Frame, Message, Op, WirePath, read_frame, write_frame};
use tokio::io::{AsyncWriteExt as _, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// `jig env serve` as a child, spoken to frame by frame.
pub(crate) struct Server {
    child: Child,
    input: BufWriter<ChildStdin>,
    output: BufReader<ChildStdout>,
}

impl Server {
    pub(crate) async fn start() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_jig"))
            .args(["env", "serve"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start jig env serve");
        let input = BufWriter::with_capacity(1 << 20, child.stdin.take().expect("stdin"));
        let mut output = BufReader::with_capacity(1 << 20, child.stdout.take().expect("stdout"));
        let hello = read_frame(&mut output)
            .await
            .expect("read")
            .expect("a greeting");
        assert!(matches!(hello.message, Message::Hello(_)), "{hello:?}");
        Self {
            child,
            input,
            output,
        }
    }

    pub(crate) async fn send(&mut self, frame: Frame) {
        write_frame(&mut self.input, &frame).await.expect("send");
    }

    pub(crate) async fn flush(&mut self) {
        self.input.flush().await.expect("flush");
    }

    /// The next frame, skipping the server's `alive` frames (sent while a call runs quietly).
    pub(crate) async fn next(&mut self) -> Frame {
        loop {
            let frame = read_frame(&mut self.output)
                .await
                .expect("read")
                .expect("a frame");
            if !matches!(frame.message, Message::Alive) {
                return frame;
            }
        }
    }

    /// The server's peak resident memory so far, in KiB.
    pub(crate) fn peak_kib(&self) -> u64 {
        let pid = self.child.id().expect("running");
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))
            .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM in /proc/PID/status")
    }

    pub(crate) async fn stop(mut self) {
        drop(self.input);
        let status = self.child.wait().await.expect("wait");
        assert!(status.success(), "jig env serve ended with {status}");
    }
}

/// The byte at `offset` of the test file: a pattern that repeats every 4 MiB, in which no
/// MiB, page or byte matches its neighbours (a misplaced chunk would show).
fn byte_at(offset: u64) -> u8 {
    u8::try_from(((offset >> 20) * 64 + (offset >> 12) * 7 + offset % 256) % 256).unwrap_or(0)
}

fn pattern_chunk(start: u64, len: usize) -> Bytes {
    (0..len as u64).map(|i| byte_at(start + i)).collect()
}

/// Writes then reads a `size`-byte file at `path` (in view `view` when given), checking every
/// byte read; returns the seconds each took.
async fn write_and_read(
    server: &mut Server,
    view: Option<u64>,
    path: &Path,
    size: u64,
) -> (f64, f64) {
    const CHUNK: usize = 1 << 20;
    // A few distinct chunks, reused: the client side stays small too.
    let chunks: Vec<Bytes> = (0..4)
        .map(|i| pattern_chunk(i * CHUNK as u64, CHUNK))
        .collect();
    assert_eq!(size % (4 * CHUNK as u64), 0, "a size of whole 4 MiB blocks");
    let cycle = 4 * CHUNK as u64;
    assert!(
        (0..cycle).all(|i| byte_at(i) == byte_at(i + cycle)),
        "the pattern repeats every 4 MiB"
    );
    // Two cycles: any chunk read back is a slice of this.
    let twice = pattern_chunk(0, 2 * 4 * CHUNK);

    let started = Instant::now();
    server
        .send(Frame::new(Message::Call {
            id: 1,
            view,
            op: Op::Write {
                path: WirePath::from_path(path),
                size: Some(size),
            },
        }))
        .await;
    let mut sent = 0_u64;
    let mut index = 0;
    while sent < size {
        let chunk = chunks[index % chunks.len()].clone();
        sent += chunk.len() as u64;
        index += 1;
        server
            .send(Frame::with_payload(Message::Data { id: 1 }, chunk))
            .await;
    }
    server.send(Frame::new(Message::End { id: 1 })).await;
    server.flush().await;
    let answer = server.next().await;
    assert!(
        matches!(answer.message, Message::Ok { id: 1, .. }),
        "write: {answer:?}"
    );
    let wrote = started.elapsed().as_secs_f64();
    assert_eq!(std::fs::metadata(path).expect("written").len(), size);

    let started = Instant::now();
    server
        .send(Frame::new(Message::Call {
            id: 2,
            view,
            op: Op::Read {
                path: WirePath::from_path(path),
                window: None,
            },
        }))
        .await;
    server.flush().await;
    let mut received = 0_u64;
    loop {
        let frame = server.next().await;
        let start = usize::try_from(received % cycle).expect("small");
        assert!(frame.payload.len() <= CHUNK, "a payload of at most a chunk");
        assert!(
            frame.payload[..] == twice[start..start + frame.payload.len()],
            "the bytes from {received} differ"
        );
        received += frame.payload.len() as u64;
        match frame.message {
            Message::Data { id: 2 } => {}
            Message::Ok { id: 2, .. } => break,
            other => panic!("read: {other:?}"),
        }
    }
    assert_eq!(received, size, "the whole file came back");
    (wrote, started.elapsed().as_secs_f64())
}

fn size_mb() -> u64 {
    std::env::var("JIG_SERVE_MEMORY_MB")
        .ok()
        .and_then(|mb| mb.parse().ok())
        .unwrap_or(256)
}

async fn peak_for(view: bool) -> (u64, u64, f64, f64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root: PathBuf = dir.path().canonicalize().expect("canonical");
    let size = size_mb() << 20;
    let mut server = Server::start().await;
    let baseline = server.peak_kib();
    let view = if view {
        server
            .send(Frame::new(Message::Call {
                id: 100,
                view: None,
                op: Op::Beneath {
                    view: 1,
                    roots: vec![WirePath::from_path(&root)],
                },
            }))
            .await;
        Some(1)
    } else {
        None
    };
    let (wrote, read) = write_and_read(&mut server, view, &root.join("big.bin"), size).await;
    let peak = server.peak_kib();
    server.stop().await;
    (baseline, peak, wrote, read)
}

async fn check(view: bool) {
    let size_kib = size_mb() << 10;
    let (baseline, peak, wrote, read) = peak_for(view).await;
    let label = if view {
        "confined view"
    } else {
        "served env itself"
    };
    let mb = f64::from(u32::try_from(size_mb()).expect("a size in MB"));
    let _ = writeln!(
        std::io::stderr(),
        "jig env serve, {label}: {} MB written at {:.0} MB/s, read at {:.0} MB/s; peak RSS \
         {} MiB (at start {} MiB)",
        size_mb(),
        mb / wrote,
        mb / read,
        peak >> 10,
        baseline >> 10
    );
    // Far below the file: a few chunks in flight plus the program itself.
    assert!(
        peak < size_kib / 4,
        "peak RSS {peak} KiB for a {size_kib} KiB file ({label})"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_big_file_through_a_confined_view_stays_out_of_the_servers_memory() {
    check(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_big_file_of_the_served_env_stays_out_of_the_servers_memory() {
    check(false).await;
}

/// This process's peak resident memory so far, in KiB.
fn own_peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/self/status")
}

/// The test file's content in chunks of a few sizes (not the protocol's), each a slice of two
/// cycles of the pattern, so the source itself holds 8 MiB whatever the file's size.
struct PatternSource {
    twice: Bytes,
    size: u64,
    sent: u64,
}

#[async_trait::async_trait]
impl jig_env::ChunkSource for PatternSource {
    async fn next_chunk(&mut self) -> jig_env::EnvResult<Option<Bytes>> {
        const SIZES: [usize; 3] = [(1 << 20) + 4096, 300_000, 2 << 20];
        if self.sent == self.size {
            return Ok(None);
        }
        let cycle = self.twice.len() as u64 / 2;
        let start = usize::try_from(self.sent % cycle).expect("small");
        let len = SIZES[usize::try_from(self.sent % 3).expect("small")]
            .min(usize::try_from(self.size - self.sent).expect("small"));
        self.sent += len as u64;
        Ok(Some(self.twice.slice(start..start + len)))
    }
}

/// Checks each chunk against the pattern, holding none.
struct PatternCheck {
    twice: Bytes,
    received: u64,
    largest: usize,
}

#[async_trait::async_trait]
impl jig_env::ChunkSink for PatternCheck {
    async fn chunk(&mut self, chunk: Bytes) -> jig_env::EnvResult<()> {
        let cycle = self.twice.len() as u64 / 2;
        let start = usize::try_from(self.received % cycle).expect("small");
        assert!(
            chunk[..] == self.twice[start..start + chunk.len()],
            "the bytes from {} differ",
            self.received
        );
        self.received += chunk.len() as u64;
        self.largest = self.largest.max(chunk.len());
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_big_file_streamed_by_remote_env_stays_out_of_the_clients_memory() {
    use jig_env::ExecutionEnv as _;

    let dir = tempfile::tempdir().expect("temp dir");
    let root: PathBuf = dir.path().canonicalize().expect("canonical");
    let path = root.join("big.bin");
    let size = size_mb() << 20;
    // Two 4 MiB cycles of the pattern: chunks of any size are slices of it.
    let twice = pattern_chunk(0, 8 << 20);
    let mut child = Command::new(env!("CARGO_BIN_EXE_jig"))
        .args(["env", "serve"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start jig env serve");
    let input = child.stdin.take().expect("stdin");
    let output = child.stdout.take().expect("stdout");
    let env = jig_env_remote::RemoteEnv::connect(
        "jig env serve",
        output,
        input,
        None,
        Some(Box::new(child)),
    )
    .await
    .expect("connect");
    let env = std::sync::Arc::new(env)
        .beneath(std::slice::from_ref(&root))
        .expect("a view");
    // Warm up the machinery with a small file, then measure from here.
    let mut source = PatternSource {
        twice: twice.clone(),
        size: 3 << 20,
        sent: 0,
    };
    env.write_chunks(&path, &mut source).await.expect("write");
    let baseline = own_peak_kib();

    let started = Instant::now();
    let mut source = PatternSource {
        twice: twice.clone(),
        size,
        sent: 0,
    };
    let outcome = env.write_chunks(&path, &mut source).await.expect("write");
    assert!(!outcome.created);
    let wrote = started.elapsed().as_secs_f64();
    assert_eq!(std::fs::metadata(&path).expect("written").len(), size);
    let started = Instant::now();
    let mut sink = PatternCheck {
        twice,
        received: 0,
        largest: 0,
    };
    let read = env.read_chunks(&path, &mut sink).await.expect("read");
    let read_secs = started.elapsed().as_secs_f64();
    assert_eq!(read, size);
    assert_eq!(sink.received, size);
    assert!(sink.largest <= jig_env::FILE_CHUNK, "{}", sink.largest);
    let peak = own_peak_kib();
    let mb = f64::from(u32::try_from(size_mb()).expect("a size in MB"));
    let _ = writeln!(
        std::io::stderr(),
        "RemoteEnv over jig env serve: {} MB written at {:.0} MB/s, read at {:.0} MB/s; this \
         process's peak RSS {} MiB (before {} MiB, growth {} MiB)",
        size_mb(),
        mb / wrote,
        mb / read_secs,
        peak >> 10,
        baseline >> 10,
        (peak - baseline) >> 10
    );
    let size_kib = size_mb() << 10;
    assert!(
        peak - baseline < size_kib / 8,
        "peak RSS grew by {} KiB for a {size_kib} KiB file",
        peak - baseline
    );
}
