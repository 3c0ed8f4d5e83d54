//! Context files (`AGENTS.md`, `CLAUDE.md`) that try to smuggle other files into the system
//! prompt, or to hang or exhaust startup: `jig run` against a scripted model, the request it
//! sends inspected.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test setup fails loudly"
)]

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use jig_llm::scripted::ScriptedReply;

use crate::run_cmd::{Setup, reply};

/// A value planted in jig's environment that must never reach the model.
const PLANTED: &str = "planted-secret-5f2c9a17";

fn text(output: &[u8]) -> String {
    String::from_utf8_lossy(output).into_owned()
}

/// stderr with the temporary paths written `[ROOT]`.
fn redacted(setup: &Setup, stderr: &[u8]) -> String {
    let root = setup.ws.parent().unwrap().display().to_string();
    text(stderr).replace(&root, "[ROOT]")
}

/// `command` run to its end, or killed after `limit` (then `None`).
async fn run_within(mut command: Command, limit: Duration) -> Option<Output> {
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    tokio::task::spawn_blocking(move || {
        let mut child = command.spawn().unwrap();
        let start = Instant::now();
        while start.elapsed() < limit {
            if child.try_wait().unwrap().is_some() {
                return Some(child.wait_with_output().unwrap());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    })
    .await
    .unwrap()
}

/// The whole body of the one request the model got.
fn request_body(setup: &Setup) -> String {
    let requests = setup.server.requests();
    assert_eq!(requests.len(), 1);
    requests[0].json().to_string()
}

fn system_prompt(setup: &Setup) -> String {
    setup.request_messages(0)[0]["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn run(setup: &Setup) -> Output {
    let mut command = setup.command(&["--model", "m", "hi"]);
    command.env("JIG_PLANTED_SECRET", PLANTED);
    run_within(command, Duration::from_mins(1))
        .await
        .expect("jig run finished")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_md_linked_to_proc_self_environ_never_sends_the_environment() {
    let setup = Setup::new(vec![reply(ScriptedReply::text("ok"))]).await;
    std::os::unix::fs::symlink("/proc/self/environ", setup.ws.join("AGENTS.md")).unwrap();
    let output = run(&setup).await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(!request_body(&setup).contains(PLANTED));
    assert!(!system_prompt(&setup).contains("AGENTS.md"));
    insta::assert_snapshot!(redacted(&setup, &output.stderr), @"jig: warning: context file [ROOT]/ws/AGENTS.md skipped: it is a symbolic link that leads outside [ROOT]/ws");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_md_linked_to_a_secret_outside_the_workspace_is_skipped() {
    let setup = Setup::new(vec![reply(ScriptedReply::text("ok"))]).await;
    let secret = setup.ws.parent().unwrap().join("id_ed25519");
    fs::write(
        &secret,
        "-----BEGIN OPENSSH PRIVATE KEY----- outside-secret",
    )
    .unwrap();
    std::os::unix::fs::symlink(&secret, setup.ws.join("AGENTS.md")).unwrap();
    // A link that stays inside is fine.
    fs::write(setup.ws.join("notes.md"), "Inside notes.").unwrap();
    std::os::unix::fs::symlink("notes.md", setup.ws.join("CLAUDE.md")).unwrap();
    let output = run(&setup).await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(!request_body(&setup).contains("outside-secret"));
    assert!(system_prompt(&setup).contains("Inside notes."));
    insta::assert_snapshot!(redacted(&setup, &output.stderr), @"jig: warning: context file [ROOT]/ws/AGENTS.md skipped: it is a symbolic link that leads outside [ROOT]/ws");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_or_a_device_named_agents_md_does_not_hang_startup() {
    let setup = Setup::new(vec![reply(ScriptedReply::text("ok"))]).await;
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        setup.ws.join("AGENTS.md"),
        rustix::fs::Mode::from_raw_mode(0o644),
    )
    .unwrap();
    std::os::unix::fs::symlink("/dev/zero", setup.ws.join("CLAUDE.md")).unwrap();
    let output = run(&setup).await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    insta::assert_snapshot!(redacted(&setup, &output.stderr), @r"
    jig: warning: context file [ROOT]/ws/AGENTS.md skipped: it is not a regular file (a FIFO, device or socket)
    jig: warning: context file [ROOT]/ws/CLAUDE.md skipped: it is a symbolic link that leads outside [ROOT]/ws
    ");
}

/// The peak resident memory of `pid` (`VmHWM`), in KiB.
fn peak_kib(pid: u32) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_1_gib_agents_md_is_cut_and_memory_stays_small() {
    // The reply arrives slowly, so jig is still alive once the request has been sent.
    let slow = reply(ScriptedReply::text("ok")).with_line_delay(Duration::from_millis(200));
    let setup = Setup::new(vec![slow]).await;
    let file = fs::File::create(setup.ws.join("AGENTS.md")).unwrap();
    file.set_len(1 << 30).unwrap();
    drop(file);
    let mut command = setup.command(&["--model", "m", "hi"]);
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let server = &setup.server;
    let mut child = command.spawn().unwrap();
    let start = Instant::now();
    let mut peak = None;
    while start.elapsed() < Duration::from_mins(1) {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if !server.requests().is_empty() {
            // The context file was read before the request was sent.
            peak = peak_kib(child.id());
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let output = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let peak = peak.expect("jig's memory was measured while the model answered");
    assert!(peak < 200 * 1024, "peak resident memory {peak} KiB");
    let system = system_prompt(&setup);
    assert!(
        system.len() < 260 * 1024,
        "system prompt of {} bytes",
        system.len()
    );
    insta::assert_snapshot!(redacted(&setup, &output.stderr), @"jig: warning: context file [ROOT]/ws/AGENTS.md cut to its first 256 KiB (it has 1024.0MB)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_md_in_a_parent_every_user_may_write_is_skipped() {
    let setup = Setup::new(vec![reply(ScriptedReply::text("ok"))]).await;
    let parent = setup.ws.parent().unwrap();
    fs::write(parent.join("AGENTS.md"), "Planted by another user.").unwrap();
    fs::write(setup.ws.join("AGENTS.md"), "The project's own rules.").unwrap();
    fs::set_permissions(parent, fs::Permissions::from_mode(0o1777)).unwrap();
    let mut command = setup.command(&["--model", "m", "--verbose", "hi"]);
    command.env("JIG_PLANTED_SECRET", PLANTED);
    let output = run_within(command, Duration::from_mins(1)).await.unwrap();
    fs::set_permissions(parent, fs::Permissions::from_mode(0o700)).unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let system = system_prompt(&setup);
    assert!(!system.contains("Planted by another user."), "{system}");
    assert!(system.contains("The project's own rules."), "{system}");
    let stderr = redacted(&setup, &output.stderr);
    let context_lines: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("context file"))
        .collect();
    insta::assert_snapshot!(context_lines.join("\n"), @r"
    jig: warning: context file [ROOT]/AGENTS.md skipped: [ROOT] is writable by every user (another user could have written it)
    jig: context files loaded: [ROOT]/ws/AGENTS.md
    ");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_env_the_same_rules_apply() {
    let setup = Setup::new(vec![reply(ScriptedReply::text("ok"))]).await;
    let parent = setup.ws.parent().unwrap();
    std::os::unix::fs::symlink("/proc/self/environ", setup.ws.join("AGENTS.md")).unwrap();
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        setup.ws.join("CLAUDE.md"),
        rustix::fs::Mode::from_raw_mode(0o644),
    )
    .unwrap();
    fs::write(parent.join("AGENTS.md"), "Planted by another user.").unwrap();
    fs::set_permissions(parent, fs::Permissions::from_mode(0o777)).unwrap();
    let url = format!("stdio:{} env serve", env!("CARGO_BIN_EXE_jig"));
    let ws = setup.ws.to_string_lossy().into_owned();
    let mut command = setup.command(&["--env", &url, "--cwd", &ws, "--model", "m", "hi"]);
    command.env("JIG_PLANTED_SECRET", PLANTED);
    let output = run_within(command, Duration::from_mins(1)).await;
    fs::set_permissions(parent, fs::Permissions::from_mode(0o700)).unwrap();
    let output = output.expect("startup does not hang");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let body = request_body(&setup);
    assert!(!body.contains(PLANTED));
    assert!(!body.contains("Planted by another user."));
    insta::assert_snapshot!(redacted(&setup, &output.stderr), @r"
    jig: warning: context file [ROOT]/AGENTS.md skipped: [ROOT] is writable by every user (another user could have written it)
    jig: warning: context file [ROOT]/ws/AGENTS.md skipped: it is a symbolic link that leads outside [ROOT]/ws
    jig: warning: context file [ROOT]/ws/CLAUDE.md skipped: it is not a regular file (a FIFO, device or socket)
    ");
}

/// A file of exactly one window: nothing is cut, nothing warned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_of_exactly_256_kib_is_whole() {
    let setup = Setup::new(vec![reply(ScriptedReply::text("ok"))]).await;
    fs::write(setup.ws.join("AGENTS.md"), "x".repeat(256 * 1024)).unwrap();
    let output = run(&setup).await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(text(&output.stderr), "");
    assert!(system_prompt(&setup).contains(&"x".repeat(256 * 1024)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_md_in_a_directory_of_another_user_is_skipped() {
    if !rustix::process::geteuid().is_root() {
        // Only root can give a directory to another user.
        return;
    }
    let setup = Setup::new(vec![reply(ScriptedReply::text("ok"))]).await;
    let parent = setup.ws.parent().unwrap();
    fs::write(parent.join("AGENTS.md"), "Written by uid 4242.").unwrap();
    std::os::unix::fs::chown(parent, Some(4242), Some(4242)).unwrap();
    let output = run(&setup).await;
    std::os::unix::fs::chown(parent, Some(0), Some(0)).unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(!system_prompt(&setup).contains("Written by uid 4242."));
    insta::assert_snapshot!(redacted(&setup, &output.stderr), @"jig: warning: context file [ROOT]/AGENTS.md skipped: [ROOT] belongs to another user (uid 4242) (another user could have written it)");
}
