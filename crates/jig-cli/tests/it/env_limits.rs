//! The env protocol's bounds, end to end: a request for a huge answer is refused by `jig env
//! serve` without it building one (its peak memory stays small), and a far side that stops
//! sending fails `jig tool` after the documented idle limit instead of hanging it, while a
//! long quiet command is not cut off.
#![expect(
    clippy::expect_used,
    reason = "set-up helpers of tests: a failed step is a failed test"
)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use jig_env_remote::protocol::{Frame, Message, Op, WirePath};
use serde_json::json;

use crate::serve_memory::Server;

/// Asks for `op` (call 1) and expects an error whose message names the protocol's limit.
async fn refused(server: &mut Server, op: Op) -> String {
    server
        .send(Frame::new(Message::Call {
            id: 1,
            view: None,
            op,
        }))
        .await;
    server.flush().await;
    let answer = server.next().await;
    match answer.message {
        Message::Err { id: 1, error } => {
            assert_eq!(error.kind, "invalid", "{error:?}");
            error.message
        }
        other => panic!(
            "expected a refusal, got {other:?} with {} bytes",
            answer.payload.len()
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_read_start_or_read_head_is_refused_and_the_server_stays_small() {
    let dir = tempfile::tempdir().expect("temp dir");
    let big = dir.path().join("big.bin");
    // 1 GiB, sparse: cheap to make, a gigabyte of zeros to read.
    std::fs::File::create(&big)
        .and_then(|file| file.set_len(1 << 30))
        .expect("a sparse file");
    let path = WirePath::from_path(&big);
    let mut server = Server::start().await;
    let message = refused(
        &mut server,
        Op::ReadStart {
            path: path.clone(),
            max_bytes: 1 << 30,
        },
    )
    .await;
    assert_eq!(
        message,
        "asked for up to 1073741824 bytes in one answer; the env protocol carries at most \
         16777216 (read a longer start with a streamed `read`)"
    );
    refused(
        &mut server,
        Op::ReadHead {
            path: path.clone(),
            max_bytes: usize::MAX,
        },
    )
    .await;
    refused(
        &mut server,
        Op::ReadLines {
            path: path.clone(),
            start_line: 1,
            max_lines: usize::MAX,
            max_bytes: 1 << 30,
        },
    )
    .await;
    // An append announced bigger than the limit is refused before its body is collected.
    refused(
        &mut server,
        Op::Append {
            path: WirePath::from_path(&dir.path().join("log")),
            size: 1 << 30,
        },
    )
    .await;
    // What fits is answered as before.
    server
        .send(Frame::new(Message::Call {
            id: 2,
            view: None,
            op: Op::ReadStart {
                path,
                max_bytes: 16 << 20,
            },
        }))
        .await;
    server.flush().await;
    let answer = server.next().await;
    assert!(
        matches!(answer.message, Message::Ok { id: 2, .. }),
        "{:?}",
        answer.message
    );
    assert_eq!(answer.payload.len(), 16 << 20);
    let peak = server.peak_kib();
    server.stop().await;
    // A 16 MiB answer and the program: nowhere near the gigabyte asked for.
    assert!(peak < 96 << 10, "jig env serve peaked at {peak} KiB");
}

/// A stand-in for `jig env serve` that greets like it, then either stops half way through its
/// first answer (`mid-frame`) or never answers (`silent`), and stays alive.
const STALLING_SERVER: &str = r#"
import json, struct, sys, time
mode = sys.argv[1]
out = sys.stdout.buffer
def frame(message):
    header = json.dumps(message).encode()
    out.write(struct.pack(">II", len(header), 0) + header)
    out.flush()
frame({"t": "hello", "protocol": PROTOCOL, "version": "0", "env": "stalling", "home": "/",
       "arch": "x86_64"})
def read_exact(n):
    data = b""
    while len(data) < n:
        more = sys.stdin.buffer.read(n - len(data))
        if not more:
            sys.exit(0)
        data += more
    return data
while True:
    header_len, payload_len = struct.unpack(">II", read_exact(8))
    message = json.loads(read_exact(header_len))
    read_exact(payload_len)
    if message.get("t") == "call" and mode == "mid-frame":
        header = json.dumps({"t": "ok", "id": message["id"], "value": None}).encode()
        out.write(struct.pack(">II", len(header), 0) + header[:5])
        out.flush()
        time.sleep(3600)
"#;

/// `jig tool ls` over `--env` to [`STALLING_SERVER`] in `mode`, with `JIG_ENV_IDLE_TIMEOUT`
/// set to `idle` (unset: the default); its output and how long it took.
fn tool_against_stalling_server(dir: &Path, mode: &str, idle: Option<&str>) -> (String, Duration) {
    let script = dir.join("stalling.py");
    std::fs::write(
        &script,
        STALLING_SERVER.replace(
            "PROTOCOL",
            &jig_env_remote::protocol::PROTOCOL_VERSION.to_string(),
        ),
    )
    .expect("script");
    let url = format!("stdio:python3 {} {mode}", script.display());
    let mut command = Command::new(env!("CARGO_BIN_EXE_jig"));
    command
        .args(["tool", "ls", "--env", &url, "--cwd", "/"])
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env_remove("JIG_ENV_IDLE_TIMEOUT");
    if let Some(idle) = idle {
        command.env("JIG_ENV_IDLE_TIMEOUT", idle);
    }
    let started = Instant::now();
    let output = command.output().expect("jig tool");
    let took = started.elapsed();
    assert_ne!(output.status.code(), Some(0), "jig tool succeeded");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (text, took)
}

#[test]
fn a_far_side_that_stalls_mid_frame_fails_jig_tool_after_the_default_15_s() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (text, took) = tool_against_stalling_server(dir.path(), "mid-frame", None);
    assert!(
        text.contains(
            "lost: nothing arrived for 15 s while a call waited: the far side stopped mid-frame \
             or does not answer (JIG_ENV_IDLE_TIMEOUT sets this limit)"
        ),
        "{text}"
    );
    assert!(
        took >= Duration::from_secs(15) && took < Duration::from_secs(25),
        "took {took:?}"
    );
}

#[test]
fn a_far_side_that_never_answers_fails_jig_tool_after_jig_env_idle_timeout() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (text, took) = tool_against_stalling_server(dir.path(), "silent", Some("2.5"));
    assert!(
        text.contains("lost: nothing arrived for 2.5 s while a call waited"),
        "{text}"
    );
    assert!(took < Duration::from_secs(8), "took {took:?}");
    // A value that is not a number of seconds is an error naming the variable.
    for value in ["soon", "1"] {
        let (text, _) = tool_against_stalling_server(dir.path(), "silent", Some(value));
        assert!(
            text.contains(&format!(
                "JIG_ENV_IDLE_TIMEOUT={value:?} is not an idle limit: expected a number of \
                 seconds of at least 2"
            )),
            "{text}"
        );
    }
}

#[test]
fn a_quiet_command_longer_than_the_idle_timeout_is_not_cut_off() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("stdio:{} env serve", env!("CARGO_BIN_EXE_jig"));
    let ws = dir.path().canonicalize().expect("canonical");
    let output = Command::new(env!("CARGO_BIN_EXE_jig"))
        .args(["tool", "bash", "--env", &url, "--cwd"])
        .arg(&ws)
        .arg("--args")
        .arg(json!({"command": "sleep 5; echo still here"}).to_string())
        .env("XDG_CONFIG_HOME", ws.join("config"))
        .env("XDG_DATA_HOME", ws.join("data"))
        .env("JIG_ENV_IDLE_TIMEOUT", "2")
        .output()
        .expect("jig tool");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), "still here\n");
}
