//! Fault containment: crashes, hangs, floods, garbage and early exits name the extension and
//! the event, drop its handlers, and never take the host down or make it wait past a timeout.

use std::time::{Duration, Instant};

use jig_extensions::{ToolCallOutcome, events, load_process};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::{fixture, options, python_fixture, runner};

/// Loads `ext.py MODE` plus a well-behaved extension after it, asks for one tool_call, and
/// returns the outcome and the time it took; then checks the faulty one dropped out.
async fn fault(mode: &str) -> (ToolCallOutcome, Duration, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture("ext.py");
    let faulty = load_process(&path, &python_fixture(mode), &options(dir.path()))
        .await
        .unwrap();
    let quiet = load_process(
        std::path::Path::new("quiet"),
        &python_fixture("quiet"),
        &options(dir.path()),
    )
    .await
    .unwrap();
    let runner = runner(vec![faulty, quiet]);
    let started = Instant::now();
    let outcome = runner
        .tool_call("c1", "bash", &json!({"command": "ls"}))
        .await;
    let took = started.elapsed();
    // The run goes on: the faulty extension dropped out, the other one still answers.
    assert!(
        runner.extensions()[0].failure().is_some(),
        "{mode}: still loaded"
    );
    assert!(runner.extensions()[1].failure().is_none());
    assert_eq!(
        runner.tool_call("c2", "bash", &json!({})).await,
        ToolCallOutcome::Allow { input: None }
    );
    let errors = runner.take_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].path, path.display().to_string());
    assert_eq!(errors[0].event, events::TOOL_CALL);
    runner.shutdown().await;
    (outcome, took, errors[0].message.clone())
}

fn reason(outcome: &ToolCallOutcome) -> &str {
    match outcome {
        ToolCallOutcome::Block {
            reason: Some(reason),
        } => reason,
        other => panic!("expected a block, got {other:?}"),
    }
}

#[tokio::test]
async fn a_crash_mid_handler_blocks_the_call_and_names_the_extension() {
    let (outcome, _, message) = fault("crash").await;
    assert_eq!(
        message,
        "the process exited (exit status: 1); stderr: segfault in handler; its handlers are disabled"
    );
    assert_eq!(
        reason(&outcome),
        format!(
            "Extension \"{}\" tool_call error: {message}",
            fixture("ext.py").display()
        )
    );
}

#[tokio::test]
async fn a_hang_past_the_timeout_blocks_and_stops_the_extension() {
    let (outcome, took, message) = fault("hang").await;
    assert_eq!(message, "no answer within 1.5s; its handlers are disabled");
    assert!(reason(&outcome).ends_with(&message));
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[tokio::test]
async fn a_flood_of_100_mb_on_stdout_is_cut_off_without_buffering_it() {
    let (outcome, took, message) = fault("flood").await;
    assert_eq!(
        message,
        "the process wrote more than 32.0MB without a newline on stdout; its handlers are disabled"
    );
    assert!(reason(&outcome).ends_with(&message));
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[tokio::test]
async fn invalid_json_on_stdout_drops_the_extension() {
    let (outcome, _, message) = fault("garbage").await;
    assert!(message.starts_with("invalid JSON on stdout: "), "{message}");
    assert!(
        message.ends_with("; its handlers are disabled"),
        "{message}"
    );
    assert!(reason(&outcome).ends_with(&message));
}

#[tokio::test]
async fn exiting_during_initialize_is_a_load_error_with_its_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture("ext.py");
    let error = load_process(&path, &python_fixture("exit-init"), &options(dir.path()))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "Failed to load extension \"{}\": during initialize: the process exited (exit status: 3); stderr: cannot start: missing config",
            path.display()
        )
    );
}

#[tokio::test]
async fn a_bad_initialize_is_a_load_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture("ext.py");
    let garbage = load_process(&path, &python_fixture("invalid-init"), &options(dir.path()))
        .await
        .unwrap_err();
    assert!(
        garbage
            .reason
            .starts_with("during initialize: invalid JSON on stdout: "),
        "{garbage}"
    );
    let version = load_process(&path, &python_fixture("bad-version"), &options(dir.path()))
        .await
        .unwrap_err();
    assert_eq!(
        version.reason,
        "unsupported protocol version 99 (this host speaks 1)"
    );
    let mut quick = options(dir.path());
    quick.initialize_timeout = Duration::from_millis(800);
    let started = Instant::now();
    let hang = load_process(&path, &python_fixture("hang-init"), &quick)
        .await
        .unwrap_err();
    assert_eq!(hang.reason, "no answer to initialize within 800ms");
    assert!(started.elapsed() < Duration::from_secs(3));
    let missing = load_process(
        std::path::Path::new("/nonexistent/ext"),
        &["/nonexistent/ext".into()],
        &options(dir.path()),
    )
    .await
    .unwrap_err();
    assert!(
        missing.to_string().starts_with(
            "Failed to load extension \"/nonexistent/ext\": cannot start /nonexistent/ext: "
        ),
        "{missing}"
    );
}
