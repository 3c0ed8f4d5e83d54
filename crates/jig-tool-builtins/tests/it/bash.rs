//! `bash` on the real host (`LocalEnv`): real shells, real processes, real temp files.
#![expect(
    clippy::disallowed_methods,
    reason = "the tests inspect the host files the tool wrote"
)]
#![expect(clippy::unwrap_used, reason = "test helpers fail loudly")]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jig_env::ExecutionEnv;
use jig_env_local::LocalEnv;
use jig_tool::{DynTool, ErasedTool, Tool, ToolContext, ToolError, ToolResult};
use jig_tool_builtins::{
    BashConfig, BashInput, BashTool, CommandGuard, SharedSpawnHook, SpawnRequest,
};
use serde_json::{Value, json};

/// A workspace directory on the host with a `LocalEnv` rooted there.
struct Host {
    _dir: tempfile::TempDir,
    root: PathBuf,
    env: Arc<LocalEnv>,
}

impl Host {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let env = Arc::new(LocalEnv::new());
        Self {
            _dir: dir,
            root,
            env,
        }
    }

    fn ctx(&self) -> ToolContext {
        ToolContext::new(self.env.clone(), self.root.clone())
    }
}

async fn call(config: BashConfig, ctx: &ToolContext, args: Value) -> ToolResult {
    let tool = ErasedTool::new(BashTool::new(config));
    let result = tool.run(ctx, args).await;
    crate::support::assert_details_conform(&tool, &result);
    result
}

async fn bash(host: &Host, command: &str) -> ToolResult {
    call(
        BashConfig::default(),
        &host.ctx(),
        json!({ "command": command }),
    )
    .await
}

fn details(result: &ToolResult) -> &Value {
    &result.details
}

/// Details with the run-dependent fields replaced, for snapshots.
fn stable_details(result: &ToolResult) -> Value {
    let mut details = result.details.clone();
    if let Some(map) = details.as_object_mut() {
        if map.contains_key("durationMs") {
            map.insert("durationMs".into(), json!("[ms]"));
        }
        if map.contains_key("fullOutputPath") {
            map.insert("fullOutputPath".into(), json!("[path]"));
        }
    }
    details
}

macro_rules! assert_text_snapshot {
    ($name:expr, $text:expr) => {
        insta::with_settings!({ filters => vec![
            (r"/tmp/[^\s\]]+", "[TMP]"),
            (r"(/private)?/var/folders/[^\s\]]+", "[TMP]"),
        ]}, {
            insta::assert_snapshot!($name, $text);
        });
    };
}

fn alive(pid: i32) -> bool {
    // A zombie is dead for our purposes only once reaped; /proc/<pid> disappears then.
    Path::new(&format!("/proc/{pid}")).exists()
}

async fn assert_gone(pids: &[i32]) {
    let until = Instant::now() + Duration::from_secs(2);
    while pids.iter().any(|&pid| alive(pid)) && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for &pid in pids {
        assert!(!alive(pid), "process {pid} survived");
    }
}

fn pids(text: &str) -> Vec<i32> {
    text.lines()
        .filter_map(|line| line.strip_prefix("pid "))
        .map(|pid| pid.trim().parse().unwrap())
        .collect()
}

#[tokio::test]
async fn success_returns_the_output() {
    let host = Host::new();
    let result = bash(&host, "echo hello; echo to-stderr >&2").await;
    assert!(!result.is_error);
    assert_eq!(result.text_content(), "hello\nto-stderr\n");
    assert_eq!(details(&result)["exitCode"], 0);
    insta::assert_json_snapshot!("bash_success_details", stable_details(&result));
}

#[tokio::test]
async fn no_output_says_so() {
    let host = Host::new();
    let result = bash(&host, "true").await;
    assert_eq!(result.text_content(), "(no output)");
}

#[tokio::test]
async fn runs_in_the_workspace_directory() {
    let host = Host::new();
    let result = bash(&host, "pwd").await;
    assert_eq!(
        result.text_content().trim_end(),
        host.root.display().to_string()
    );
}

#[tokio::test]
async fn non_zero_exit_is_an_error_with_the_code() {
    let host = Host::new();
    let result = bash(&host, "echo building; echo 'error: it broke' >&2; exit 3").await;
    assert!(result.is_error);
    assert_text_snapshot!("bash_exit_code", result.text_content());
    assert_eq!(details(&result)["exitCode"], 3);
}

#[tokio::test]
async fn signal_death_is_a_failure_with_the_signal_name() {
    let host = Host::new();
    let result = bash(&host, "echo about to die; kill -KILL $$").await;
    assert!(result.is_error);
    assert_text_snapshot!("bash_signal", result.text_content());
    insta::assert_json_snapshot!("bash_signal_details", stable_details(&result));
}

#[tokio::test]
async fn timeout_keeps_partial_output_and_kills_the_tree() {
    let host = Host::new();
    let started = Instant::now();
    let result = call(
        BashConfig {
            kill_grace: Duration::from_millis(300),
            ..BashConfig::default()
        },
        &host.ctx(),
        json!({"command": "echo partial; sleep 300 & echo pid $!; sleep 300", "timeout": 0.5}),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(result.is_error);
    let text = result.text_content();
    assert!(text.starts_with("partial\npid "), "{text}");
    assert!(
        text.ends_with("\n\nCommand timed out after 0.5 seconds"),
        "{text}"
    );
    assert_eq!(details(&result)["timedOut"], true);
    assert_gone(&pids(&text)).await;
    let shown = text.replace(&pids(&text)[0].to_string(), "[pid]");
    assert_text_snapshot!("bash_timeout", shown);
}

#[tokio::test]
async fn abort_before_spawn_runs_nothing() {
    let host = Host::new();
    let ctx = host.ctx();
    ctx.cancel.cancel();
    let marker = host.root.join("ran");
    let input = BashInput {
        command: format!("touch {}", marker.display()),
        timeout: None,
    };
    // An aborted exec is a cancellation, as for every other tool.
    let error = BashTool::default().call(&ctx, input).await.unwrap_err();
    assert!(matches!(error, ToolError::Cancelled), "{error:?}");
    // Through the registry the turn ends before the tool starts.
    let result = ErasedTool::new(BashTool::default())
        .run(&ctx, json!({"command": "touch ran"}))
        .await;
    assert!(result.is_error);
    assert!(!marker.exists());
}

#[tokio::test]
async fn abort_while_running_returns_the_output_so_far() {
    let host = Host::new();
    let ctx = host.ctx();
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        cancel.cancel();
    });
    let result = call(
        BashConfig::default(),
        &ctx,
        json!({"command": "echo working; sleep 300 & echo pid $!; wait"}),
    )
    .await;
    assert!(result.is_error);
    let text = result.text_content();
    assert!(text.starts_with("working\n"), "{text}");
    assert!(text.ends_with("\n\nCommand aborted"), "{text}");
    assert_eq!(details(&result)["aborted"], true);
    assert_gone(&pids(&text)).await;
}

#[tokio::test]
async fn a_daemon_holding_the_output_pipe_does_not_hang_and_dies_with_the_env() {
    let host = Host::new();
    let started = Instant::now();
    let result = bash(&host, "sleep 300 & echo pid $!; echo server started").await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert!(!result.is_error);
    let pids = pids(&result.text_content());
    assert!(
        alive(pids[0]),
        "a deliberate background process keeps running"
    );
    host.env.cleanup().await;
    assert_gone(&pids).await;
}

#[tokio::test]
async fn split_utf8_characters_survive_chunking() {
    let host = Host::new();
    let result = bash(
        &host,
        r"printf '\xc3'; sleep 0.2; printf '\xa9t\xe2\x82'; sleep 0.2; printf '\xac\n'",
    )
    .await;
    assert_eq!(result.text_content(), "ét€\n");
}

#[tokio::test]
async fn ansi_codes_and_progress_lines_are_cleaned() {
    let host = Host::new();
    let result = bash(
        &host,
        r"printf 'downloading  10%%\rdownloading  55%%\rdownloading 100%%\n'; printf '\033[1;32mok\033[0m \033]0;title\007done\r\n'; printf 'abcdef\rxy\n'",
    )
    .await;
    assert_text_snapshot!("bash_cleaned", result.text_content());
}

#[tokio::test]
async fn large_output_shows_head_and_tail_within_the_budget_and_keeps_the_raw_bytes() {
    let host = Host::new();
    let result = bash(
        &host,
        "seq 1 200000; printf '\\033[31mfinal error line\\033[0m\\n' >&2",
    )
    .await;
    let text = result.text_content();
    assert!(text.len() <= 50 * 1024, "{} bytes", text.len());
    assert!(text.lines().count() <= 2000);
    assert!(text.starts_with("1\n2\n3\n"));
    assert!(
        text.contains("final error line\n\n[Showing lines 1-"),
        "{}",
        &text[text.len() - 300..]
    );
    let truncation = &details(&result)["truncation"];
    assert_eq!(truncation["totalLines"], 200_001);
    // Every line is accounted for: head + omitted + tail.
    assert_eq!(
        truncation["headLines"].as_u64().unwrap()
            + truncation["omittedLines"].as_u64().unwrap()
            + truncation["tailLines"].as_u64().unwrap(),
        200_001
    );
    let path = PathBuf::from(details(&result)["fullOutputPath"].as_str().unwrap());
    let raw = std::fs::read(&path).unwrap();
    let mut expected: Vec<u8> = (1..=200_000)
        .flat_map(|n| format!("{n}\n").into_bytes())
        .collect();
    expected.extend_from_slice(b"\x1b[31mfinal error line\x1b[0m\n");
    assert!(raw == expected, "the file holds the raw bytes");
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let lines: Vec<&str> = text.lines().collect();
    let marker = lines
        .iter()
        .position(|line| line.starts_with("[... "))
        .unwrap();
    let mut shown = lines[..3].join("\n");
    shown.push_str("\n(...)\n");
    shown.push_str(lines[marker]);
    shown.push_str("\n(...)\n");
    shown.push_str(&lines[lines.len() - 5..].join("\n"));
    assert_text_snapshot!("bash_truncated", shown);
    host.env.cleanup().await;
    assert!(
        !path.exists(),
        "the full-output file is removed with the env"
    );
}

#[tokio::test]
async fn a_flood_of_output_passes_through_with_a_bounded_result() {
    // The 1 GB memory bound is asserted on the accumulator's retained sizes (unit test
    // `memory_stays_bounded_for_a_gigabyte`); this runs the whole path with 200 MB.
    let host = Host::new();
    let config = BashConfig {
        keep_full_output: false,
        ..BashConfig::default()
    };
    let result = call(config, &host.ctx(), json!({"command": "head -c 200000000 /dev/zero | tr '\\0' 'y' | fold -w 99; echo; echo last line"})).await;
    let text = result.text_content();
    assert!(
        !result.is_error,
        "{}",
        &text[text.len().saturating_sub(500)..]
    );
    assert!(text.len() <= 50 * 1024);
    assert!(text.contains("last line\n\n[Showing lines 1-"));
    assert!(
        text.ends_with("Full output not kept.]"),
        "{}",
        &text[text.len() - 200..]
    );
    assert!(details(&result).get("fullOutputPath").is_none());
    assert_eq!(
        details(&result)["truncation"]["totalBytes"],
        200_000_000 + 200_000_000 / 99 + 1 + 10
    );
}

#[tokio::test]
async fn the_full_output_is_not_offered_when_not_kept() {
    let host = Host::new();
    let config = BashConfig {
        keep_full_output: false,
        ..BashConfig::default()
    }
    .with_limits(10, 4096);
    let result = call(config, &host.ctx(), json!({"command": "seq 1 100"})).await;
    assert_text_snapshot!("bash_truncated_not_kept", result.text_content());
    assert!(details(&result).get("fullOutputPath").is_none());
}

#[tokio::test]
async fn session_variables_replace_inherited_ones() {
    let host = Host::new();
    let mut ctx = host.ctx();
    ctx.session_env = BTreeMap::from([
        ("JIG_SESSION_ID".to_owned(), "s-123".to_owned()),
        ("JIG_MODEL".to_owned(), "model-x".to_owned()),
    ]);
    let seen = Arc::new(Mutex::new(None));
    let seen_by_hook = seen.clone();
    let config = BashConfig {
        spawn_hook: Some(SharedSpawnHook::new(move |spawn: &mut SpawnRequest| {
            *seen_by_hook.lock().unwrap() = Some(spawn.env_remove.clone());
        })),
        ..BashConfig::default()
    };
    let result = call(
        config,
        &ctx,
        json!({"command": "echo \"$JIG_SESSION_ID $JIG_MODEL [${JIG_PROVIDER-unset}]\""}),
    )
    .await;
    assert_eq!(result.text_content(), "s-123 model-x [unset]\n");
    let removed = seen.lock().unwrap().clone().unwrap();
    for name in [
        "JIG_SESSION_ID",
        "JIG_SESSION_FILE",
        "JIG_PROVIDER",
        "JIG_MODEL",
        "JIG_REASONING_LEVEL",
    ] {
        assert!(
            removed.iter().any(|removed| removed == name),
            "{name} is removed from the inherited env"
        );
    }
    let hidden = BashConfig {
        expose_session_env: false,
        ..BashConfig::default()
    };
    let result = call(
        hidden,
        &ctx,
        json!({"command": "echo \"[${JIG_SESSION_ID-unset}]\""}),
    )
    .await;
    assert_eq!(result.text_content(), "[unset]\n");
}

#[tokio::test]
async fn the_spawn_hook_rewrites_command_cwd_and_env() {
    let host = Host::new();
    std::fs::create_dir(host.root.join("sub")).unwrap();
    let sub = host.root.join("sub");
    let config = BashConfig {
        spawn_hook: Some(SharedSpawnHook::new(move |spawn: &mut SpawnRequest| {
            spawn.env.insert("CI".into(), "1".into());
            spawn.cwd = sub.clone();
            spawn.command = format!("echo hooked; {}", spawn.command);
        })),
        command_prefix: Some("echo prefix".into()),
        ..BashConfig::default()
    };
    let result = call(
        config,
        &host.ctx(),
        json!({"command": "echo CI=$CI; basename \"$PWD\""}),
    )
    .await;
    assert_eq!(result.text_content(), "hooked\nprefix\nCI=1\nsub\n");
}

#[tokio::test]
async fn non_interactive_defaults_make_git_fail_fast_instead_of_waiting() {
    let host = Host::new();
    let started = Instant::now();
    let result = bash(
        &host,
        "git init -q . && git config user.email t@example.com && git config user.name t && echo x > f \
         && git add f && git commit; echo \"commit exit $?\"; git log --oneline | wc -l; \
         read answer; echo \"read exit $? [$answer]\"; echo \"$PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT $DEBIAN_FRONTEND\"",
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    let text = result.text_content();
    assert!(
        text.contains("Aborting commit due to empty commit message."),
        "{text}"
    );
    assert!(text.contains("commit exit 1\n"), "{text}");
    assert!(text.contains("read exit 1 []\n"), "{text}");
    assert!(text.contains("cat cat 0 noninteractive\n"), "{text}");
}

#[tokio::test]
async fn streaming_updates_are_throttled() {
    let host = Host::new();
    let mut ctx = host.ctx();
    let updates: Arc<Mutex<Vec<(Instant, String)>>> = Arc::default();
    let sink = updates.clone();
    ctx.updates = Some(Arc::new(move |update: ToolResult| {
        sink.lock()
            .unwrap()
            .push((Instant::now(), update.text_content()));
    }));
    let result = call(
        BashConfig::default(),
        &ctx,
        json!({"command": "for i in $(seq 1 30); do echo tick $i; sleep 0.02; done"}),
    )
    .await;
    assert!(!result.is_error);
    let updates = updates.lock().unwrap();
    assert!(updates.len() >= 2, "{} updates", updates.len());
    assert!(
        updates.len() < 30,
        "updates are throttled, got {}",
        updates.len()
    );
    for pair in updates.windows(2) {
        assert!(pair[1].0.duration_since(pair[0].0) >= Duration::from_millis(100));
    }
    assert!(updates.last().unwrap().1.starts_with("tick 1\n"));
}

#[tokio::test]
async fn the_guard_refuses_paths_outside_the_workspace() {
    let host = Host::new();
    let config = BashConfig {
        guard: CommandGuard::Workspace,
        ..BashConfig::default()
    };
    let result = call(
        config.clone(),
        &host.ctx(),
        json!({"command": "cat /etc/passwd"}),
    )
    .await;
    assert!(result.is_error);
    let text = result
        .text_content()
        .replace(&host.root.display().to_string(), "[ROOT]");
    assert_text_snapshot!("bash_guard_refusal", text);
    let result = call(
        config,
        &host.ctx(),
        json!({"command": "ls /usr/bin > /dev/null && echo ok"}),
    )
    .await;
    assert_eq!(result.text_content(), "ok\n");
}

#[tokio::test]
async fn setup_errors_are_one_clear_sentence() {
    let host = Host::new();
    let missing_cwd = ToolContext::new(host.env.clone(), host.root.join("gone"));
    let result = bash_in(&missing_cwd, BashConfig::default(), "echo hi").await;
    let text = result
        .text_content()
        .replace(&host.root.display().to_string(), "[ROOT]");
    assert_text_snapshot!("bash_missing_cwd", text);

    let config = BashConfig {
        shell: Some(PathBuf::from("/no/such/shell")),
        ..BashConfig::default()
    };
    let result = bash_in(&host.ctx(), config, "echo hi").await;
    assert_text_snapshot!("bash_missing_shell", result.text_content());

    for (timeout, name) in [
        (json!(-1), "bash_timeout_negative"),
        (json!(0), "bash_timeout_zero"),
        (json!(1e9), "bash_timeout_too_big"),
    ] {
        let result = call(
            BashConfig::default(),
            &host.ctx(),
            json!({"command": "true", "timeout": timeout}),
        )
        .await;
        assert!(result.is_error);
        assert_text_snapshot!(name, result.text_content());
    }
}

async fn bash_in(ctx: &ToolContext, config: BashConfig, command: &str) -> ToolResult {
    call(config, ctx, json!({ "command": command })).await
}

#[tokio::test]
async fn zero_timeout_runs_without_a_timer_when_allowed() {
    let host = Host::new();
    let config = BashConfig {
        allow_no_timeout: true,
        ..BashConfig::default()
    };
    let result = call(
        config,
        &host.ctx(),
        json!({"command": "echo fine", "timeout": 0}),
    )
    .await;
    assert_eq!(result.text_content(), "fine\n");
}

#[test]
fn description_is_honest_about_the_shell() {
    let tool = BashTool::default();
    insta::assert_snapshot!("bash_description", tool.description());
    let guarded = BashTool::new(BashConfig {
        guard: CommandGuard::Workspace,
        keep_full_output: false,
        ..BashConfig::default()
    });
    insta::assert_snapshot!("bash_description_guarded", guarded.description());
    insta::assert_json_snapshot!(
        "bash_schema",
        ErasedTool::new(BashTool::default()).input_schema()
    );
}

#[tokio::test]
async fn one_huge_line_shows_its_end() {
    let host = Host::new();
    let result = bash(
        &host,
        "echo first; head -c 300000 /dev/zero | tr '\\0' x; echo END",
    )
    .await;
    let text = result.text_content();
    assert!(text.len() <= 50 * 1024);
    assert!(
        text.contains("xxxxEND\n\n[Showing"),
        "{}",
        &text[text.len() - 300..]
    );
    assert_eq!(details(&result)["truncation"]["lastLinePartial"], true);
    let notice = text.lines().last().unwrap().to_owned();
    assert_text_snapshot!("bash_partial_line_notice", notice);
}

/// `LocalEnv`, except that the full-output file cannot be created.
#[derive(Debug)]
struct NoTempFiles(Arc<LocalEnv>);

#[async_trait::async_trait]
impl ExecutionEnv for NoTempFiles {
    fn name(&self) -> &'static str {
        "no-temp-files"
    }
    fn home_dir(&self) -> Option<PathBuf> {
        self.0.home_dir()
    }
    async fn canonical_path(&self, path: &Path) -> jig_env::EnvResult<PathBuf> {
        self.0.canonical_path(path).await
    }
    async fn file_info(&self, path: &Path) -> jig_env::EnvResult<jig_env::FileInfo> {
        self.0.file_info(path).await
    }
    async fn stat(&self, path: &Path) -> jig_env::EnvResult<jig_env::FileInfo> {
        self.0.stat(path).await
    }
    async fn read_link(&self, path: &Path) -> jig_env::EnvResult<PathBuf> {
        self.0.read_link(path).await
    }
    async fn read(&self, path: &Path) -> jig_env::EnvResult<Vec<u8>> {
        self.0.read(path).await
    }
    async fn read_start(&self, path: &Path, max_bytes: usize) -> jig_env::EnvResult<Vec<u8>> {
        self.0.read_start(path, max_bytes).await
    }
    async fn read_lines(
        &self,
        path: &Path,
        window: jig_env::LineWindow,
    ) -> jig_env::EnvResult<jig_env::LinesRead> {
        self.0.read_lines(path, window).await
    }
    async fn write(
        &self,
        path: &Path,
        data: jig_env::Bytes,
    ) -> jig_env::EnvResult<jig_env::WriteOutcome> {
        self.0.write(path, data).await
    }
    async fn append(&self, path: &Path, data: jig_env::Bytes) -> jig_env::EnvResult<()> {
        self.0.append(path, data).await
    }
    async fn rename(&self, from: &Path, to: &Path) -> jig_env::EnvResult<()> {
        self.0.rename(from, to).await
    }
    async fn remove(&self, path: &Path, recursive: jig_env::Recursive) -> jig_env::EnvResult<()> {
        self.0.remove(path, recursive).await
    }
    async fn create_dir(
        &self,
        path: &Path,
        recursive: jig_env::Recursive,
    ) -> jig_env::EnvResult<()> {
        self.0.create_dir(path, recursive).await
    }
    async fn read_dir(&self, path: &Path) -> jig_env::EnvResult<Vec<jig_env::DirEntry>> {
        self.0.read_dir(path).await
    }
    async fn create_temp_file(&self, _prefix: &str, _suffix: &str) -> jig_env::EnvResult<PathBuf> {
        Err(jig_env::EnvError::new(
            jig_env::ErrorKind::PermissionDenied,
            "tempfile",
            "disk quota exceeded",
        ))
    }
    async fn create_temp_dir(&self, prefix: &str) -> jig_env::EnvResult<PathBuf> {
        self.0.create_temp_dir(prefix).await
    }
    async fn exec(
        &self,
        request: jig_env::ExecRequest,
        sink: &mut dyn jig_env::ExecSink,
    ) -> jig_env::EnvResult<jig_env::ExecOutcome> {
        self.0.exec(request, sink).await
    }
    async fn walk(&self, request: jig_env::WalkRequest) -> jig_env::EnvResult<jig_env::WalkResult> {
        jig_search::walk_with_env(self, request).await
    }
    async fn search(
        &self,
        request: jig_env::SearchRequest,
    ) -> jig_env::EnvResult<jig_env::SearchResult> {
        jig_search::search_with_env(self, request).await
    }
    async fn cleanup(&self) {
        self.0.cleanup().await;
    }
}

#[tokio::test]
async fn a_full_output_file_that_cannot_be_written_is_reported_and_the_command_completes() {
    let host = Host::new();
    let env = Arc::new(NoTempFiles(host.env.clone()));
    let ctx = ToolContext::new(env, host.root.clone());
    let config = BashConfig::default().with_limits(10, 4096);
    let result = call(config, &ctx, json!({"command": "seq 1 50; exit 2"})).await;
    assert!(result.is_error);
    assert_text_snapshot!("bash_full_output_failed", result.text_content());
    assert_eq!(details(&result)["truncation"]["fullOutput"], "failed");
    assert!(details(&result).get("fullOutputPath").is_none());
}

#[tokio::test]
async fn output_that_only_grows_past_the_limit_when_cleaned_still_keeps_the_raw_bytes() {
    // 20,000 invalid bytes are under the byte limit raw, but 60,000 bytes once each becomes
    // U+FFFD; they form one unfinished line, which only reaches the text at the end.
    let host = Host::new();
    let result = bash(&host, "head -c 20000 /dev/zero | tr '\\0' '\\377'").await;
    let text = result.text_content();
    assert!(text.len() <= 50 * 1024);
    assert_eq!(details(&result)["truncation"]["lastLinePartial"], true);
    let path = PathBuf::from(details(&result)["fullOutputPath"].as_str().unwrap());
    assert_eq!(std::fs::read(&path).unwrap(), vec![0xff; 20_000]);
}

#[tokio::test]
async fn full_output_files_are_bounded_each_and_in_total() {
    let host = Host::new();
    let config = BashConfig {
        full_output_max_bytes: 4096,
        full_outputs_total_max_bytes: 10_000,
        ..BashConfig::default()
    };
    let tool = ErasedTool::new(BashTool::new(config));
    let mut paths = Vec::new();
    for _ in 0..4 {
        let result = tool
            .run(&host.ctx(), json!({ "command": "seq 1 100000" }))
            .await;
        let path = PathBuf::from(details(&result)["fullOutputPath"].as_str().unwrap());
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size < 4096 + 256, "{size}");
        assert!(details(&result)["truncation"]["fullOutputDroppedBytes"].as_u64() > Some(500_000));
        paths.push(path);
    }
    let kept: Vec<&PathBuf> = paths.iter().filter(|path| path.exists()).collect();
    assert!(!paths[0].exists(), "the oldest file was not removed");
    assert!(paths[3].exists(), "the newest file was removed");
    let total: u64 = kept
        .iter()
        .map(|path| std::fs::metadata(path).unwrap().len())
        .sum();
    assert!(total <= 10_000, "{total} bytes in {kept:?}");
    let newest = std::fs::read_to_string(&paths[3]).unwrap();
    assert!(newest.starts_with("1\n2\n3\n") && newest.ends_with("99999\n100000\n"));
    assert!(newest.contains("left out here"));
    host.env.cleanup().await;
}
