//! Fault cases: the connection drops mid-write (the file is old or new, never partial) or
//! mid-exec (the process tree is killed), and the server dies (a clear error, no hang).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use jig_env::{DiscardSink, ErrorKind, ExecRequest, ExecutionEnv};
use jig_env_local::LocalEnv;
use jig_env_remote::protocol::{Frame, Message, Op, WireExec, WirePath, read_frame, write_frame};
use jig_env_remote::{ServeOptions, serve};
use tokio::io::{AsyncWriteExt as _, DuplexStream};

/// A server on an in-process pipe and the raw client end, greeting already read.
async fn raw_server() -> (DuplexStream, tokio::task::JoinHandle<()>) {
    let (mut client, server) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server);
    let served: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new());
    let task = tokio::spawn(async move {
        let _ = serve(served, ServeOptions::default(), server_read, server_write).await;
    });
    let hello = read_frame(&mut client).await.unwrap().unwrap();
    assert!(matches!(hello.message, Message::Hello(_)));
    (client, task)
}

async fn send(client: &mut DuplexStream, frame: Frame) {
    write_frame(client, &frame).await.unwrap();
    client.flush().await.unwrap();
}

fn leftovers(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().contains("jig-tmp"))
        .collect()
}

/// Sends half of a `size`-byte write of a file that holds "old content", then drops the
/// connection; the file must still be the old one. `confined`: the write goes through a
/// confined view of the file's directory (the tools' default), else to the served env itself.
async fn drop_mid_write(size: usize, confined: bool) {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("file.bin");
    std::fs::write(&target, b"old content").unwrap();
    let (mut client, server) = raw_server().await;
    let view = confined.then_some(7);
    if confined {
        send(
            &mut client,
            Frame::new(Message::Call {
                id: 100,
                view: None,
                op: Op::Beneath {
                    view: 7,
                    roots: vec![WirePath::from_path(&dir.path().canonicalize().unwrap())],
                },
            }),
        )
        .await;
    }
    send(
        &mut client,
        Frame::new(Message::Call {
            id: 1,
            view,
            op: Op::Write {
                path: WirePath::from_path(&target),
                size: Some(size as u64),
            },
        }),
    )
    .await;
    // Half the body, then the connection is gone.
    let chunk = Bytes::from(vec![b'n'; 1 << 20]);
    let mut sent = 0;
    while sent < size / 2 {
        let part = chunk.slice(..(size / 2 - sent).min(chunk.len()));
        sent += part.len();
        send(
            &mut client,
            Frame::with_payload(Message::Data { id: 1 }, part),
        )
        .await;
    }
    drop(client);
    tokio::time::timeout(Duration::from_secs(30), server)
        .await
        .expect("the server ends when the client is gone")
        .unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), b"old content");
    assert_eq!(leftovers(dir.path()), Vec::<PathBuf>::new());
}

#[tokio::test]
async fn a_small_write_cut_off_leaves_the_old_file() {
    drop_mid_write(64 << 10, false).await;
}

#[tokio::test]
async fn a_streamed_write_cut_off_leaves_the_old_file_and_no_temp_file() {
    drop_mid_write(40 << 20, false).await;
}

#[tokio::test]
async fn a_small_write_in_a_confined_view_cut_off_leaves_the_old_file() {
    drop_mid_write(64 << 10, true).await;
}

#[tokio::test]
async fn a_streamed_write_in_a_confined_view_cut_off_leaves_the_old_file_and_no_temp_file() {
    drop_mid_write(40 << 20, true).await;
}

fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // A zombie has exited; only its parent has not collected it yet.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_lost_mid_exec_kills_the_process_tree() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let (mut client, server) = raw_server().await;
    let script = format!(
        "sleep 300 & echo $! > {p}.tmp; sh -c 'sleep 300' & echo $! >> {p}.tmp; echo $$ >> {p}.tmp; mv {p}.tmp {p}; wait",
        p = pids.display()
    );
    send(
        &mut client,
        Frame::new(Message::Call {
            id: 1,
            view: None,
            op: Op::Exec(WireExec {
                program: "/bin/sh".into(),
                args: vec!["-c".into(), script],
                cwd: WirePath::from_path(dir.path()),
                env: std::collections::BTreeMap::new(),
                env_remove: Vec::new(),
                timeout_ms: None,
                kill_grace_ms: 500,
                idle_grace_ms: 250,
                sandbox: None,
            }),
        }),
    )
    .await;
    let mut waited = 0;
    while !pids.exists() {
        tokio::time::sleep(Duration::from_millis(20)).await;
        waited += 1;
        assert!(waited < 500, "the command never started");
    }
    let pids: Vec<i32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|line| line.trim().parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 3);
    assert!(pids.iter().all(|pid| !gone(*pid)), "all running before");
    drop(client);
    tokio::time::timeout(Duration::from_secs(30), server)
        .await
        .expect("the server ends when the client is gone")
        .unwrap();
    for _ in 0..100 {
        if pids.iter().all(|pid| gone(*pid)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("processes still running after the connection was lost: {pids:?}");
}

#[tokio::test]
async fn a_dead_server_is_a_clear_error_not_a_hang() {
    let (env, kill) = crate::support::killable().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.txt");
    env.write(&path, Bytes::from_static(b"a")).await.unwrap();
    // A command that would run for minutes is waiting when the server goes.
    let request = ExecRequest::new("/bin/sh", vec!["-c".into(), "sleep 300".into()], dir.path());
    let mut sink = DiscardSink;
    let exec = env.exec(request, &mut sink);
    let kill = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        tokio::task::spawn_blocking(kill).await.unwrap();
    };
    let (result, ()) =
        tokio::time::timeout(Duration::from_secs(20), async { tokio::join!(exec, kill) })
            .await
            .expect("no hang");
    let error = result.expect_err("a lost connection is an error");
    assert_eq!(error.kind(), ErrorKind::Other);
    assert!(
        error
            .to_string()
            .contains("connection to the remote environment"),
        "{error}"
    );
    // Every later call fails the same way, promptly, and never reaches the local disk.
    let error = tokio::time::timeout(Duration::from_secs(5), env.read(&path))
        .await
        .expect("no hang")
        .expect_err("no fallback to the local file");
    assert!(error.to_string().contains("lost"), "{error}");
}

/// What a [`Chunks`] source does once it supplied its chunks.
#[derive(Clone, Copy)]
enum Then {
    /// Fails: the content is not complete.
    Fail,
    /// Never answers (the write is cancelled by dropping it).
    Hang,
    /// Cuts the connection, then keeps supplying chunks.
    Cut,
}

/// `count` chunks of 1 MiB, then `then`.
struct Chunks {
    env: Arc<jig_env_remote::RemoteEnv>,
    count: usize,
    sent: usize,
    then: Then,
}

#[async_trait::async_trait]
impl jig_env::ChunkSource for Chunks {
    async fn next_chunk(&mut self) -> jig_env::EnvResult<Option<Bytes>> {
        if self.sent == self.count {
            match self.then {
                Then::Fail => return Err(jig_env::EnvError::aborted("source")),
                Then::Hang => std::future::pending::<()>().await,
                Then::Cut => self.env.close_transport(),
            }
        }
        self.sent += 1;
        Ok(Some(Bytes::from(vec![b'n'; 1 << 20])))
    }
}

/// Waits until no temp file is left beside the target (a cancelled write's blocking writer
/// may still be removing its own).
async fn settled(dir: &Path) {
    for _ in 0..200 {
        if leftovers(dir).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("temp files left: {:?}", leftovers(dir));
}

/// A streamed write through `RemoteEnv::write_chunks` (into a confined view when `confined`)
/// whose source stops as `then` says after 20 MiB: the target keeps its old content.
async fn chunked_write_stopped(then: Then, confined: bool) {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("file.bin");
    std::fs::write(&target, b"old content").unwrap();
    let (env, server) = crate::support::cuttable().await;
    let env = Arc::new(env);
    let writer: Arc<dyn ExecutionEnv> = if confined {
        Arc::clone(&env)
            .beneath(&[dir.path().canonicalize().unwrap()])
            .unwrap()
    } else {
        Arc::clone(&env) as Arc<dyn ExecutionEnv>
    };
    let mut source = Chunks {
        env: Arc::clone(&env),
        count: 20,
        sent: 0,
        then,
    };
    // A hanging source is given a second, then the write is dropped; the others must end.
    let limit = Duration::from_secs(if matches!(then, Then::Hang) { 1 } else { 30 });
    let result = tokio::time::timeout(limit, writer.write_chunks(&target, &mut source)).await;
    match then {
        Then::Hang => assert!(result.is_err(), "the write waits for its source"),
        Then::Fail => {
            let error = result.expect("no hang").expect_err("a failed source fails");
            assert_eq!(error.kind(), ErrorKind::Aborted, "{error}");
            assert_eq!(
                error.operation(),
                "source",
                "the source's own error: {error}"
            );
            // The far side dropped the write before the error came back.
            assert_eq!(leftovers(dir.path()), Vec::<PathBuf>::new());
            assert_eq!(std::fs::read(&target).unwrap(), b"old content");
        }
        Then::Cut => {
            let error = result
                .expect("no hang")
                .expect_err("a lost connection fails");
            assert!(error.to_string().contains("lost"), "{error}");
        }
    }
    if matches!(then, Then::Cut) {
        assert!(source.sent >= 20);
    } else {
        assert_eq!(source.sent, 20);
    }
    settled(dir.path()).await;
    assert_eq!(std::fs::read(&target).unwrap(), b"old content");
    if matches!(then, Then::Cut) {
        tokio::time::timeout(Duration::from_secs(30), server)
            .await
            .expect("the server ends when the client is gone")
            .unwrap();
    } else {
        // The connection is still good: a whole write afterwards lands.
        writer
            .write(&target, Bytes::from_static(b"new"))
            .await
            .unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
    }
    assert_eq!(leftovers(dir.path()), Vec::<PathBuf>::new());
}

#[tokio::test]
async fn a_chunked_write_whose_source_fails_leaves_the_old_file() {
    chunked_write_stopped(Then::Fail, false).await;
}

#[tokio::test]
async fn a_chunked_write_in_a_confined_view_whose_source_fails_leaves_the_old_file() {
    chunked_write_stopped(Then::Fail, true).await;
}

#[tokio::test]
async fn a_cancelled_chunked_write_leaves_the_old_file() {
    chunked_write_stopped(Then::Hang, false).await;
}

#[tokio::test]
async fn a_cancelled_chunked_write_in_a_confined_view_leaves_the_old_file() {
    chunked_write_stopped(Then::Hang, true).await;
}

#[tokio::test]
async fn a_chunked_write_cut_off_by_a_lost_connection_leaves_the_old_file() {
    chunked_write_stopped(Then::Cut, false).await;
}

#[tokio::test]
async fn a_chunked_write_in_a_confined_view_cut_off_leaves_the_old_file() {
    chunked_write_stopped(Then::Cut, true).await;
}

/// A sink that fails after `ok` chunks.
struct FailingSink {
    ok: usize,
    seen: usize,
}

#[async_trait::async_trait]
impl jig_env::ChunkSink for FailingSink {
    async fn chunk(&mut self, _chunk: Bytes) -> jig_env::EnvResult<()> {
        if self.seen == self.ok {
            return Err(jig_env::EnvError::aborted("sink"));
        }
        self.seen += 1;
        Ok(())
    }
}

#[tokio::test]
async fn a_chunked_read_whose_sink_fails_stops_and_the_connection_stays_usable() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.bin");
    std::fs::write(&file, vec![b'x'; 40 << 20]).unwrap();
    let (env, _server) = crate::support::in_process().await;
    let mut sink = FailingSink { ok: 3, seen: 0 };
    let error = tokio::time::timeout(Duration::from_secs(20), env.read_chunks(&file, &mut sink))
        .await
        .expect("no hang")
        .expect_err("the sink's error");
    assert_eq!(error.kind(), ErrorKind::Aborted);
    assert_eq!(sink.seen, 3);
    let small = dir.path().join("small.txt");
    std::fs::write(&small, b"still here").unwrap();
    assert_eq!(env.read(&small).await.unwrap(), b"still here");
}

/// A far side that greets, then answers its first call with half a frame and goes quiet
/// (`mid_frame`), or never answers at all; it keeps the stream open.
async fn stalling_server(mid_frame: bool) -> jig_env_remote::RemoteEnv {
    let (client, mut server) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let hello = Frame::new(Message::Hello(jig_env_remote::protocol::Hello {
            protocol: jig_env_remote::protocol::PROTOCOL_VERSION,
            version: "0".to_owned(),
            env: "stalling".to_owned(),
            home: None,
            arch: "x86_64".to_owned(),
        }));
        write_frame(&mut server, &hello).await.unwrap();
        server.flush().await.unwrap();
        while let Ok(Some(frame)) = read_frame(&mut server).await {
            if let (Message::Call { id, .. }, true) = (frame.message, mid_frame) {
                // A frame announcing a 100-byte header, of which 5 bytes come.
                let mut half = Vec::from(100_u32.to_be_bytes());
                half.extend_from_slice(&0_u32.to_be_bytes());
                half.extend_from_slice(format!("{{\"t\":\"ok\",\"id\":{id}").as_bytes());
                half.truncate(13);
                server.write_all(&half).await.unwrap();
                server.flush().await.unwrap();
            }
        }
        // Keep the stream open: the far side is stuck, not gone.
        std::future::pending::<()>().await;
    });
    let (client_read, client_write) = tokio::io::split(client);
    jig_env_remote::RemoteEnv::connect("stalling", client_read, client_write, None, None)
        .await
        .unwrap()
}

async fn stalled_call_fails_after_the_idle_limit(mid_frame: bool) {
    let env = stalling_server(mid_frame).await;
    env.set_idle_timeout(Some(Duration::from_millis(500)));
    let started = std::time::Instant::now();
    let error = tokio::time::timeout(Duration::from_secs(10), env.stat("/".as_ref()))
        .await
        .expect("no hang")
        .expect_err("a stalled far side is an error");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(500) && took < Duration::from_secs(3),
        "took {took:?}"
    );
    assert_eq!(error.kind(), ErrorKind::Other);
    // Two tests reach this one snapshot; `cargo test` runs them in one process.
    insta::allow_duplicates! {
        insta::assert_snapshot!(
            error.to_string(),
            @"stat: connection to the remote environment stalling lost: nothing arrived for 0.5 s while a call waited: the far side stopped mid-frame or does not answer (JIG_ENV_IDLE_TIMEOUT sets this limit)"
        );
    }
    // The connection is given up: later calls fail at once.
    let error = tokio::time::timeout(Duration::from_millis(200), env.stat("/".as_ref()))
        .await
        .expect("no wait")
        .expect_err("the connection was given up");
    assert!(error.to_string().contains("nothing arrived"), "{error}");
}

#[tokio::test]
async fn a_far_side_that_stalls_mid_frame_fails_the_call_after_the_idle_limit() {
    stalled_call_fails_after_the_idle_limit(true).await;
}

#[tokio::test]
async fn a_far_side_that_never_answers_fails_the_call_after_the_idle_limit() {
    stalled_call_fails_after_the_idle_limit(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_command_longer_than_the_idle_limit_is_kept_alive() {
    let (env, _server) = crate::support::in_process().await;
    env.set_idle_timeout(Some(Duration::from_millis(2500)));
    let dir = tempfile::tempdir().unwrap();
    let request = ExecRequest::new(
        "/bin/sh",
        vec!["-c".into(), "sleep 6; echo done".into()],
        dir.path(),
    );
    let mut sink = DiscardSink;
    let outcome = env.exec(request, &mut sink).await.expect("not cut off");
    assert_eq!(outcome.exit_code, 0);
}
