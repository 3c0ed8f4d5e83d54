//! Command hooks: the answer is decided when the hook process exits, whatever it left running.
#![expect(
    clippy::disallowed_methods,
    reason = "the tests write hook manifests and look at processes on the host"
)]

use std::path::Path;
use std::time::{Duration, Instant};

use jig_extensions::{ToolCallOutcome, load_manifest_dir};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::{options, runner};

/// A hook extension in `dir` whose `tool_call` hook is `sh -c SCRIPT`.
async fn hook(dir: &Path, script: &str) -> jig_extensions::ExtensionRunner {
    let ext = dir.join("ext");
    std::fs::create_dir_all(&ext).unwrap();
    let script = serde_json::to_string(script).unwrap();
    std::fs::write(
        ext.join("extension.toml"),
        format!("[hooks]\ntool_call = [\"sh\", \"-c\", {script}]\n"),
    )
    .unwrap();
    runner(vec![load_manifest_dir(&ext, &options(dir)).await.unwrap()])
}

/// A `tool_call` of `bash ls` through `runner`, and how long its answer took.
async fn call(runner: &jig_extensions::ExtensionRunner) -> (ToolCallOutcome, Duration) {
    let started = Instant::now();
    let outcome = runner
        .tool_call("c", "bash", &json!({"command": "ls"}))
        .await;
    (outcome, started.elapsed())
}

/// Waits up to 2 s for the process whose pid is in `file` to be gone.
fn gone(file: &Path) -> bool {
    let pid = std::fs::read_to_string(file).unwrap();
    let proc = Path::new("/proc").join(pid.trim());
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        match std::fs::read_to_string(proc.join("stat")) {
            // A zombie waiting for its parent is gone too.
            Ok(stat) if !stat.contains(") Z") => {}
            _ => return true,
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[tokio::test]
async fn a_hook_that_exits_while_a_background_child_holds_its_stdout_has_answered() {
    let dir = tempfile::tempdir().unwrap();
    let runner = hook(
        dir.path(),
        "cat >/dev/null; sleep 20 & echo $! > bg.pid; exit 0",
    )
    .await;
    let (outcome, took) = call(&runner).await;
    assert_eq!(outcome, ToolCallOutcome::Allow { input: None });
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert!(runner.take_errors().is_empty());
    assert!(
        gone(&dir.path().join("bg.pid")),
        "the background child lingers"
    );
}

#[tokio::test]
async fn a_hook_that_answers_and_leaves_a_child_behind_is_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    // 200 000 bytes of reason: more than a pipe holds, so the reader must keep up while the hook
    // writes, and the tail is still in the pipe when it exits.
    let runner = hook(
        dir.path(),
        "cat >/dev/null; sleep 20 & echo $! > bg.pid; \
         printf '{\"block\": true, \"reason\": \"'; head -c 200000 /dev/zero | tr '\\0' x; \
         printf '\"}\\n'; exit 0",
    )
    .await;
    let (outcome, took) = call(&runner).await;
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert_eq!(
        outcome,
        ToolCallOutcome::Block {
            reason: Some("x".repeat(200_000))
        }
    );
    assert!(runner.take_errors().is_empty());
    assert!(
        gone(&dir.path().join("bg.pid")),
        "the background child lingers"
    );
}

#[tokio::test]
async fn a_blocking_hook_with_a_background_child_blocks_at_once_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let runner = hook(
        dir.path(),
        "cat >/dev/null; sleep 20 & echo $! > bg.pid; echo 'no rm here' >&2; exit 2",
    )
    .await;
    let (outcome, took) = call(&runner).await;
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert_eq!(
        outcome,
        ToolCallOutcome::Block {
            reason: Some("no rm here".to_owned())
        }
    );
    assert!(
        gone(&dir.path().join("bg.pid")),
        "the background child lingers"
    );
}

#[tokio::test]
async fn a_hook_that_does_not_exit_still_times_out_and_its_group_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let runner = hook(dir.path(), "sleep 20 & echo $! > bg.pid; wait").await;
    let (outcome, _) = call(&runner).await;
    assert!(
        matches!(outcome, ToolCallOutcome::Block { .. }),
        "{outcome:?}"
    );
    let errors = runner.take_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].message.contains("no answer within"), "{errors:?}");
    assert!(
        gone(&dir.path().join("bg.pid")),
        "the background child lingers"
    );
}

#[tokio::test]
async fn a_hook_flooding_stdout_is_cut_off_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let runner = hook(dir.path(), "cat >/dev/null; exec yes").await;
    let (outcome, took) = call(&runner).await;
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert!(
        matches!(outcome, ToolCallOutcome::Block { .. }),
        "{outcome:?}"
    );
    let errors = runner.take_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].message, "hook wrote more than 1.0MB on stdout");
}

#[tokio::test]
async fn a_hook_writing_a_long_stderr_before_exit_2_still_blocks() {
    let dir = tempfile::tempdir().unwrap();
    // 200 000 bytes on stderr from the shell itself, more than is kept: the rest must be
    // drained, or the hook dies of a closed pipe before its exit 2.
    let runner = hook(
        dir.path(),
        "cat >/dev/null; i=0; while [ $i -lt 4000 ]; do printf '%050d' 0 >&2; i=$((i+1)); done; \
         exit 2",
    )
    .await;
    let (outcome, _) = call(&runner).await;
    let ToolCallOutcome::Block {
        reason: Some(reason),
    } = outcome
    else {
        panic!("not blocked: {outcome:?}");
    };
    assert_eq!(reason, "0".repeat(64 * 1024));
    assert!(runner.take_errors().is_empty());
}
