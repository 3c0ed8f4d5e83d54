//! `LocalEnv::exec` and `cleanup` through the public `ExecutionEnv` API, with real processes.
//! Survivors are checked in `/proc` (Linux).
#![expect(clippy::unwrap_used, reason = "test helpers fail loudly")]

use std::path::Path;
use std::time::{Duration, Instant};

use jig_env::{CollectSink, ErrorKind, ExecRequest, ExecutionEnv};
use jig_env_local::LocalEnv;

fn bash(script: &str) -> ExecRequest {
    let mut request = ExecRequest::new(
        "/bin/bash",
        vec!["-c".to_owned(), script.to_owned()],
        std::env::temp_dir(),
    );
    request.kill_grace = Duration::from_millis(300);
    request
}

async fn run(env: &LocalEnv, request: ExecRequest) -> (jig_env::ExecOutcome, String) {
    let mut sink = CollectSink::default();
    let outcome = env.exec(request, &mut sink).await.unwrap();
    (outcome, String::from_utf8(sink.0).unwrap())
}

fn pids(output: &str) -> Vec<i32> {
    output
        .lines()
        .filter_map(|line| line.strip_prefix("pid "))
        .map(|pid| pid.trim().parse().unwrap())
        .collect()
}

fn exists(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

async fn assert_gone(pids: &[i32]) {
    let until = Instant::now() + Duration::from_secs(2);
    while pids.iter().any(|&pid| exists(pid)) && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for &pid in pids {
        assert!(!exists(pid), "process {pid} survived");
    }
}

#[tokio::test]
async fn exit_codes_signals_and_merged_output() {
    let env = LocalEnv::new();
    let (outcome, output) = run(&env, bash("echo out; echo err >&2; exit 7")).await;
    assert_eq!(
        (outcome.exit_code, outcome.signal, output.as_str()),
        (7, None, "out\nerr\n")
    );
    let (outcome, _) = run(&env, bash("kill -TERM $$")).await;
    assert_eq!((outcome.exit_code, outcome.signal), (143, Some(15)));
}

#[tokio::test]
async fn timeout_leaves_no_process_of_the_command_alive() {
    let env = LocalEnv::new();
    // A background grandchild, one ignoring SIGTERM, and one that moved to its own session.
    let mut request = bash(
        "sleep 300 & echo pid $!; \
         sh -c 'trap \"\" TERM; echo pid $$; exec sleep 300' & \
         setsid sh -c 'echo pid $$; exec sleep 300' & \
         sleep 300",
    );
    request.timeout = Some(Duration::from_millis(600));
    let started = Instant::now();
    let (outcome, output) = run(&env, request).await;
    assert!(outcome.timed_out);
    assert!(started.elapsed() < Duration::from_millis(600 + 300 + 1500));
    let pids = pids(&output);
    assert_eq!(pids.len(), 3, "{output}");
    assert_gone(&pids).await;
}

#[tokio::test]
async fn cancellation_leaves_no_process_alive() {
    let env = LocalEnv::new();
    let request =
        bash("(setsid sh -c 'echo pid $$; exec sleep 300' &); sleep 300 & echo pid $!; wait");
    let cancel = request.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        cancel.cancel();
    });
    let (outcome, output) = run(&env, request).await;
    assert!(outcome.aborted);
    let pids = pids(&output);
    assert_eq!(pids.len(), 2, "{output}");
    assert_gone(&pids).await;
}

#[tokio::test]
async fn background_processes_outlive_the_command_until_cleanup() {
    let env = LocalEnv::new();
    let started = Instant::now();
    let (outcome, output) = run(
        &env,
        bash("sleep 300 & echo pid $!; nohup sleep 300 >/dev/null 2>&1 & echo pid $!; echo up"),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "a daemon holding the pipe must not hang completion"
    );
    assert_eq!(outcome.exit_code, 0);
    let pids = pids(&output);
    assert!(pids.iter().all(|&pid| exists(pid)));
    env.cleanup().await;
    assert_gone(&pids).await;
}

#[tokio::test]
async fn a_pre_cancelled_request_is_an_abort_error() {
    let env = LocalEnv::new();
    let request = bash("echo never");
    request.cancel.cancel();
    let error = env
        .exec(request, &mut CollectSink::default())
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Aborted);
}
