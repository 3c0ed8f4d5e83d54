use std::path::Path;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use jig_env::{CollectSink, ErrorKind, ExecRequest, ExecSink};

use super::*;

fn bash(script: &str) -> ExecRequest {
    let mut request = ExecRequest::new(
        "/bin/bash",
        vec!["-c".to_owned(), script.to_owned()],
        std::env::temp_dir(),
    );
    request.kill_grace = Duration::from_millis(300);
    request
}

async fn run(tracker: &ProcessTracker, request: ExecRequest) -> (ExecOutcome, String) {
    let mut sink = CollectSink::default();
    let outcome = tracker.run(request, &mut sink).await.unwrap();
    (outcome, String::from_utf8(sink.0).unwrap())
}

/// Whether a process with this pid exists (zombies count: they were not reaped).
fn exists(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

fn pids(output: &str) -> Vec<i32> {
    output
        .lines()
        .filter_map(|line| line.strip_prefix("pid "))
        .map(|p| p.trim().parse().unwrap())
        .collect()
}

/// Waits briefly for the kernel to finish tearing processes down.
async fn assert_gone(pids: &[i32]) {
    let until = Instant::now() + Duration::from_secs(2);
    while pids.iter().any(|&pid| exists(pid)) && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for &pid in pids {
        assert!(
            !exists(pid),
            "process {pid} survived: {:?}",
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
        );
    }
}

#[tokio::test]
async fn output_is_merged_in_order_and_exit_code_reported() {
    let tracker = ProcessTracker::new();
    let (outcome, output) = run(&tracker, bash("echo one; echo two >&2; echo three; exit 3")).await;
    assert_eq!(output, "one\ntwo\nthree\n");
    assert_eq!(outcome.exit_code, 3);
    assert_eq!(outcome.signal, None);
    assert!(!outcome.timed_out && !outcome.aborted);
}

#[tokio::test]
async fn stdin_is_at_eof_and_there_is_no_controlling_terminal() {
    let tracker = ProcessTracker::new();
    let (outcome, output) =
        run(&tracker, bash("read line; echo \"read=$? [$line]\"; (exec 3</dev/tty) 2>/dev/null && echo tty || echo no-tty; ps -o sid= -p $$ | tr -d ' '; echo $$")).await;
    assert_eq!(outcome.exit_code, 0);
    let lines: Vec<&str> = output.lines().collect();
    assert_eq!(lines[0], "read=1 []");
    assert_eq!(lines[1], "no-tty");
    assert_eq!(lines[2], lines[3], "the shell leads its own session");
}

#[tokio::test]
async fn a_signal_death_is_128_plus_n() {
    let tracker = ProcessTracker::new();
    let (outcome, _) = run(&tracker, bash("kill -KILL $$")).await;
    assert_eq!((outcome.exit_code, outcome.signal), (137, Some(9)));
}

#[tokio::test]
async fn timeout_keeps_partial_output_and_kills_the_group() {
    let tracker = ProcessTracker::new();
    let mut request = bash("echo started; sleep 300 & echo pid $!; sleep 300");
    request.timeout = Some(Duration::from_millis(500));
    let started = Instant::now();
    let (outcome, output) = run(&tracker, request).await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert!(outcome.timed_out);
    assert!(!outcome.aborted);
    assert_eq!((outcome.exit_code, outcome.signal), (143, Some(15)));
    assert!(output.starts_with("started\n"), "{output}");
    assert_gone(&pids(&output)).await;
    assert_eq!(tracker.background_count(), 0);
}

#[tokio::test]
async fn abort_before_spawn_runs_nothing() {
    let tracker = ProcessTracker::new();
    let marker = std::env::temp_dir().join(format!("jig-abort-{}", new_tag()));
    let request = bash(&format!("touch {}", marker.display()));
    request.cancel.cancel();
    let error = tracker
        .run(request, &mut CollectSink::default())
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Aborted);
    assert!(!marker.exists());
}

#[tokio::test]
async fn abort_while_running_kills_everything() {
    let tracker = ProcessTracker::new();
    let request = bash("sleep 300 & echo pid $!; echo pid $$; sleep 300");
    let cancel = request.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let (outcome, output) = run(&tracker, request).await;
    assert!(outcome.aborted && !outcome.timed_out);
    assert_eq!(pids(&output).len(), 2);
    assert_gone(&pids(&output)).await;
}

#[tokio::test]
async fn a_grandchild_ignoring_sigterm_is_killed_after_the_grace() {
    let tracker = ProcessTracker::new();
    let mut request = bash("sh -c 'trap \"\" TERM; echo pid $$; exec sleep 300' & sleep 300");
    request.timeout = Some(Duration::from_millis(400));
    request.kill_grace = Duration::from_millis(300);
    let started = Instant::now();
    let (outcome, output) = run(&tracker, request).await;
    assert!(outcome.timed_out);
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(700),
        "SIGKILL came before the grace: {elapsed:?}"
    );
    assert_eq!(pids(&output).len(), 1, "{output}");
    assert_gone(&pids(&output)).await;
}

#[tokio::test]
async fn a_grandchild_that_moved_to_a_new_session_is_killed() {
    let tracker = ProcessTracker::new();
    let mut request = bash("setsid sh -c 'echo pid $$; exec sleep 300' & sleep 300");
    request.timeout = Some(Duration::from_millis(400));
    let (outcome, output) = run(&tracker, request).await;
    assert!(outcome.timed_out);
    assert_eq!(pids(&output).len(), 1, "{output}");
    assert_gone(&pids(&output)).await;
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn an_orphan_in_a_new_session_is_found_through_the_subreaper() {
    // The subshell exits at once, so the setsid'd process is orphaned (to jig, the subreaper)
    // before any scan sees its parent.
    let tracker = ProcessTracker::new();
    let mut request =
        bash("(setsid sh -c 'trap \"\" TERM; exec sleep 300' > /dev/null &); sleep 300");
    request.timeout = Some(Duration::from_millis(600));
    let (outcome, output) = run(&tracker, request).await;
    assert!(outcome.timed_out);
    // The orphan's pid is not printed to us (its output goes to /dev/null); find it by tag.
    let own = std::process::id().cast_signed();
    let orphans: Vec<i32> = procfs::scan()
        .into_iter()
        .filter(|info| info.ppid == own && !info.zombie)
        .filter(|info| {
            std::fs::read_to_string(format!("/proc/{}/cmdline", info.pid))
                .is_ok_and(|c| c.starts_with("sleep\x00300"))
        })
        .map(|info| info.pid)
        .collect();
    assert!(
        orphans.is_empty(),
        "orphans survived: {orphans:?} ({output})"
    );
}

#[tokio::test]
async fn a_daemon_holding_the_pipe_does_not_hang_completion_and_is_tracked() {
    let tracker = ProcessTracker::new();
    let started = Instant::now();
    let (outcome, output) = run(&tracker, bash("sleep 300 & echo pid $!; echo done")).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(outcome.exit_code, 0);
    assert!(output.ends_with("done\n"));
    let pids = pids(&output);
    assert!(
        exists(pids[0]),
        "a background process keeps running after a normal end"
    );
    assert_eq!(tracker.background_count(), 1);
    tracker.kill_all().await;
    assert_gone(&pids).await;
    assert_eq!(tracker.background_count(), 0);
}

#[tokio::test]
async fn a_setsid_background_process_is_tracked_and_killed_on_cleanup() {
    let tracker = ProcessTracker::new();
    let (outcome, output) = run(
        &tracker,
        bash("setsid sh -c 'echo pid $$; exec sleep 300' > /dev/null & echo pid $!"),
    )
    .await;
    assert_eq!(outcome.exit_code, 0);
    let pids = pids(&output);
    assert!(exists(pids[0]));
    tracker.kill_all().await;
    assert_gone(&pids).await;
}

#[tokio::test]
async fn dropping_the_tracker_kills_background_processes() {
    let tracker = ProcessTracker::new();
    let (_, output) = run(
        &tracker,
        bash("nohup sleep 300 > /dev/null 2>&1 & echo pid $!"),
    )
    .await;
    let pids = pids(&output);
    assert!(exists(pids[0]));
    drop(tracker);
    assert_gone(&pids).await;
}

#[tokio::test]
async fn missing_cwd_and_program_are_errors() {
    let tracker = ProcessTracker::new();
    let request = ExecRequest::new("/bin/sh", vec![], "/definitely/not/here");
    let error = tracker
        .run(request, &mut CollectSink::default())
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound);
    assert!(
        error
            .to_string()
            .contains("working directory does not exist"),
        "{error}"
    );
    let request = ExecRequest::new("/no/such/shell", vec![], std::env::temp_dir());
    let error = tracker
        .run(request, &mut CollectSink::default())
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound);
    assert!(error.to_string().contains("program not found"), "{error}");
}

#[tokio::test]
async fn environment_is_set_and_removed() {
    let tracker = ProcessTracker::new();
    let mut request = bash("echo \"[$JIG_T_SET] [${HOME:-unset}]\"");
    request.env.insert("JIG_T_SET".into(), "yes".into());
    request.env_remove.push("HOME".into());
    let (_, output) = run(&tracker, request).await;
    assert_eq!(output, "[yes] [unset]\n");
}

#[tokio::test]
async fn a_large_flood_arrives_complete() {
    let tracker = ProcessTracker::new();
    let (outcome, output) = run(
        &tracker,
        bash("head -c 20000000 /dev/zero | tr '\\0' 'x'; echo; echo end >&2"),
    )
    .await;
    assert_eq!(outcome.exit_code, 0);
    assert_eq!(output.len(), 20_000_000 + 1 + 4);
    assert!(output.ends_with("x\nend\n"));
}

/// Counts bytes without keeping them.
#[derive(Default)]
struct Count(u64);

#[async_trait]
impl ExecSink for Count {
    async fn output(&mut self, chunk: &[u8]) {
        self.0 += chunk.len() as u64;
    }
}

#[tokio::test]
async fn a_flood_does_not_starve_the_timeout() {
    let tracker = ProcessTracker::new();
    let mut request = bash("yes flood");
    request.timeout = Some(Duration::from_millis(400));
    let started = Instant::now();
    let mut sink = Count::default();
    let outcome = tracker.run(request, &mut sink).await.unwrap();
    assert!(outcome.timed_out);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert!(sink.0 > 0);
}

#[tokio::test]
async fn a_flood_does_not_starve_an_abort() {
    let tracker = ProcessTracker::new();
    let request = bash("yes flood");
    let cancel = request.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let outcome = tracker.run(request, &mut Count::default()).await.unwrap();
    assert!(outcome.aborted);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
}

/// Live processes whose command line is exactly `sleep <seconds>`.
#[cfg(target_os = "linux")]
fn sleeping(seconds: &str) -> Vec<i32> {
    let wanted = format!("sleep\0{seconds}\0");
    procfs::scan()
        .into_iter()
        .filter(|info| !info.zombie)
        .filter(|info| {
            std::fs::read(format!("/proc/{}/cmdline", info.pid))
                .is_ok_and(|cmdline| cmdline == wanted.as_bytes())
        })
        .map(|info| info.pid)
        .collect()
}

#[cfg(target_os = "linux")]
async fn assert_none_sleeping(seconds: &str) {
    let until = Instant::now() + Duration::from_secs(2);
    while !sleeping(seconds).is_empty() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(sleeping(seconds), Vec::<i32>::new(), "survived");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn an_orphan_that_cleared_its_environment_is_killed_at_timeout() {
    // setsid leaves the session, env -i drops the tag, and the subshell exits at once: the
    // sleep is an untagged orphan of jig before any scan sees it.
    let tracker = ProcessTracker::new();
    let mut request = bash("( setsid env -i sleep 300.77 > /dev/null 2>&1 & ); sleep 300");
    request.timeout = Some(Duration::from_millis(600));
    let (outcome, _) = run(&tracker, request).await;
    assert!(outcome.timed_out);
    assert_none_sleeping("300.77").await;
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn an_orphan_that_cleared_its_environment_is_killed_at_cleanup() {
    let tracker = ProcessTracker::new();
    let request = bash("( setsid env -i sleep 300.88 > /dev/null 2>&1 & ); echo started");
    let (outcome, output) = run(&tracker, request).await;
    assert_eq!(outcome.exit_code, 0, "{output}");
    let until = Instant::now() + Duration::from_secs(2);
    while sleeping("300.88").is_empty() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(sleeping("300.88").len(), 1, "the daemon did not start");
    tracker.kill_all().await;
    assert_none_sleeping("300.88").await;
}
