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

// ----- the same guarantees for sandboxed commands, under each mechanism ---------------------

/// Local envs that enforce a sandbox with each mechanism that works here; a mechanism that does
/// not is skipped with a printed reason, unless `JIG_REQUIRE_SANDBOX=1` makes that a failure.
fn sandboxed_envs(test: &str) -> Vec<(&'static str, LocalEnv)> {
    let mut envs = Vec::new();
    for name in ["bwrap", "landlock"] {
        let mechanism = jig_env_local::sandbox::Mechanism::forced(name);
        if mechanism.is_available() {
            envs.push((name, LocalEnv::new().with_sandbox_mechanism(mechanism)));
        } else {
            assert!(
                std::env::var("JIG_REQUIRE_SANDBOX").as_deref() != Ok("1"),
                "{test}: JIG_REQUIRE_SANDBOX=1 but {}",
                mechanism.describe()
            );
            #[expect(clippy::print_stderr, reason = "a skipped check says so")]
            {
                eprintln!("SKIPPED {test} under {name}: {}", mechanism.describe());
            }
        }
    }
    envs
}

/// `script` under a workspace-write policy whose only root is a fresh directory.
fn sandboxed_bash(script: &str, root: &Path) -> ExecRequest {
    let mut request = bash(script);
    request.cwd = root.to_path_buf();
    request.sandbox = jig_env::SandboxPolicy {
        mode: jig_env::SandboxMode::WorkspaceWrite,
        network: false,
        writable_roots: vec![root.to_path_buf()],
        protected: Vec::new(),
    };
    request
}

/// Processes whose command line holds `marker` (PIDs printed inside a PID namespace mean
/// nothing outside it, so sandboxed processes are found by what they run).
fn running(marker: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|line| String::from_utf8_lossy(&line).contains(marker))
        })
        .collect()
}

async fn assert_none_running(marker: &str, context: &str) {
    let until = Instant::now() + Duration::from_secs(3);
    while !running(marker).is_empty() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        running(marker).is_empty(),
        "{context}: processes running `{marker}` survived"
    );
}

/// A `sleep` argument unique to this test process and `salt`, to find its processes by.
fn marker(salt: u32) -> String {
    format!("{}.{salt}", 300 + std::process::id() % 1000)
}

#[tokio::test]
async fn a_sandboxed_timeout_leaves_no_process_alive() {
    for (name, env) in sandboxed_envs("a_sandboxed_timeout_leaves_no_process_alive") {
        let root = tempfile::tempdir().unwrap();
        let m = marker(1);
        let mut request = sandboxed_bash(
            &format!(
                "sleep {m} & sh -c 'trap \"\" TERM; exec sleep {m}' & \
                 setsid sh -c 'exec sleep {m}' & echo up; sleep {m}"
            ),
            root.path(),
        );
        request.timeout = Some(Duration::from_millis(800));
        let started = Instant::now();
        let (outcome, output) = run(&env, request).await;
        assert!(outcome.timed_out, "{name}: {outcome:?} {output}");
        assert!(output.contains("up"), "{name}: {output}");
        assert!(
            started.elapsed() < Duration::from_millis(800 + 300 + 2500),
            "{name}: {:?}",
            started.elapsed()
        );
        assert_none_running(&m, name).await;
    }
}

#[tokio::test]
async fn a_sandboxed_abort_leaves_no_process_alive() {
    for (name, env) in sandboxed_envs("a_sandboxed_abort_leaves_no_process_alive") {
        let root = tempfile::tempdir().unwrap();
        let m = marker(2);
        let request = sandboxed_bash(
            &format!("(setsid sh -c 'exec sleep {m}' &); sleep {m} & echo up; wait"),
            root.path(),
        );
        let cancel = request.cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(500)).await;
            cancel.cancel();
        });
        let (outcome, output) = run(&env, request).await;
        assert!(outcome.aborted, "{name}: {outcome:?} {output}");
        assert_none_running(&m, name).await;
    }
}

#[tokio::test]
async fn sandboxed_background_processes_end_at_cleanup() {
    for (name, env) in sandboxed_envs("sandboxed_background_processes_end_at_cleanup") {
        let root = tempfile::tempdir().unwrap();
        let m = marker(3);
        let (outcome, output) = run(
            &env,
            sandboxed_bash(
                &format!("nohup sleep {m} >/dev/null 2>&1 & echo up"),
                root.path(),
            ),
        )
        .await;
        assert_eq!(outcome.exit_code, 0, "{name}: {output}");
        env.cleanup().await;
        assert_none_running(&m, name).await;
    }
}
