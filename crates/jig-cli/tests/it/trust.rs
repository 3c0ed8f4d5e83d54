//! Project trust end to end: a project whose every trust-gated resource would leave a marker
//! file (and knock on a TCP port) if it ran. Nothing runs before trust resolves — in `jig run`,
//! `jig mcp` and `jig tool` — neither when the project is untrusted nor when `-a` trusts it
//! (then startup stops: this build has no extension runtime, and says so).
#![expect(
    clippy::unwrap_used,
    reason = "test helpers panic when the setup fails"
)]

use std::fs;
use std::io::Write as _;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use jig_llm::scripted::ScriptedReply;
use jig_llm::testing::{ReplayResponse, ReplayServer, openai_sse};
use pretty_assertions::assert_eq;
use serde_json::json;

/// The trap project, the user's config and data directories, a listener the traps would knock
/// on, and the model endpoint.
struct Trap {
    _dir: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
    config: PathBuf,
    data: PathBuf,
    markers: PathBuf,
    listener: TcpListener,
    server: ReplayServer,
}

fn executable(path: &Path, body: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, body).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

fn file(path: &Path, body: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, body).unwrap();
}

impl Trap {
    async fn new(replies: Vec<&str>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let ws = root.join("ws");
        let markers = root.join("markers");
        fs::create_dir_all(&markers).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let m = markers.display();
        // Each trap writes its own marker and connects to the listener.
        let knock = format!(
            "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}))' 2>/dev/null"
        );
        let shell = |name: &str| format!("#!/bin/sh\ntouch {m}/{name}\n{knock}\n");
        executable(
            &ws.join(".jig/extensions/marker.sh"),
            &shell("extension-executable"),
        );
        file(
            &ws.join(".jig/extensions/py/index.py"),
            &format!(
                "import socket, pathlib\npathlib.Path('{m}/extension-index').touch()\nsocket.create_connection(('127.0.0.1', {port}))\n"
            ),
        );
        file(
            &ws.join(".jig/extensions/manifested/extension.toml"),
            &format!(
                "command = [\"sh\", \"-c\", \"touch {m}/extension-manifest\"]\n[hooks]\ntool_call = [\"sh\", \"-c\", \"touch {m}/manifest-hook\"]\n"
            ),
        );
        executable(&ws.join(".jig/tools/lint"), &shell("project-tool"));
        file(
            &ws.join(".jig/settings.json"),
            &json!({
                "hooks": {"tool_call": [["sh", "-c", format!("touch {m}/settings-hook; {knock}")]]},
                "extensions": [format!("{}", ws.join("elsewhere.sh").display())],
                "thinking": "high",
            })
            .to_string(),
        );
        executable(&ws.join("elsewhere.sh"), &shell("settings-extension"));
        file(
            &ws.join("AGENTS.md"),
            "Context files are read regardless of trust.\n",
        );
        let responses: Vec<ReplayResponse> = replies
            .into_iter()
            .map(|text| match ScriptedReply::text(text) {
                ScriptedReply::Message(message) => ReplayResponse::sse(openai_sse(&message)),
                other => panic!("not a message: {other:?}"),
            })
            .collect();
        let server = ReplayServer::start(responses).await.unwrap();
        Self {
            _dir: dir,
            config: root.join("config"),
            data: root.join("data"),
            root,
            ws,
            markers,
            listener,
            server,
        }
    }

    /// `jig ARGS…` in the project with the trap's config and data directories.
    fn jig(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_jig"));
        command
            .args(args)
            .current_dir(&self.ws)
            .env("XDG_CONFIG_HOME", &self.config)
            .env("XDG_DATA_HOME", &self.data)
            .env_remove("JIG_TIMING")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("ANTHROPIC_BASE_URL")
            .stdin(Stdio::null());
        command
    }

    /// `jig run --base-url <server> --no-session EXTRA… hi`.
    async fn run(&self, extra: &[&str]) -> Output {
        let base_url = format!("{}/v1", self.server.url());
        let mut args = vec!["run", "--base-url", base_url.as_str(), "--no-session"];
        args.extend_from_slice(extra);
        args.push("hi");
        let mut command = self.jig(&args);
        tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap()
    }

    /// `jig tool read --args {"path":"AGENTS.md"} EXTRA…`.
    fn tool(&self, extra: &[&str]) -> Output {
        let mut args = vec!["tool", "read", "--args", r#"{"path":"AGENTS.md"}"#];
        args.extend_from_slice(extra);
        self.jig(&args).output().unwrap()
    }

    /// `jig mcp EXTRA…` fed initialize + tools/list, then end of input.
    fn mcp(&self, extra: &[&str]) -> Output {
        let mut args = vec!["mcp"];
        args.extend_from_slice(extra);
        let mut child = self
            .jig(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let lines = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "trust-test", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        ];
        for line in lines {
            // A server that already exited (trusted: startup stopped) closes the pipe.
            let _ = writeln!(stdin, "{line}");
        }
        drop(stdin);
        child.wait_with_output().unwrap()
    }

    /// Nothing project-sourced ran: no marker, no connection.
    fn assert_nothing_ran(&self) {
        let markers: Vec<String> = fs::read_dir(&self.markers)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(markers, Vec::<String>::new(), "project code ran");
        assert!(
            self.listener.accept().is_err(),
            "something project-sourced connected to the listener"
        );
    }

    fn redact(&self, text: &str) -> String {
        text.replace(&self.root.display().to_string(), "[ROOT]")
    }

    fn user_settings(&self, value: &serde_json::Value) {
        file(&self.config.join("jig/settings.json"), &value.to_string());
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The traps are real: run directly, they leave their markers (so their absence means
/// something).
#[test]
fn the_traps_work_when_run_directly() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let trap = runtime.block_on(Trap::new(vec![]));
    let status = Command::new(trap.ws.join(".jig/extensions/marker.sh"))
        .status()
        .unwrap();
    assert!(status.success());
    assert!(trap.markers.join("extension-executable").exists());
    assert!(trap.listener.accept().is_ok(), "the trap knocked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_project_runs_nothing_in_run_mcp_and_tool() {
    let trap = Trap::new(vec!["done"]).await;

    let run = trap.run(&[]).await;
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    assert_eq!(text(&run.stdout), "done\n");
    insta::assert_snapshot!(trap.redact(&text(&run.stderr)), @r#"jig: warning: project [ROOT]/ws: untrusted (no saved decision, defaultProjectTrust is "ask" and this mode cannot ask); not loading .jig/extensions/, .jig/tools/, .jig/settings.json (extensions, hooks). Trust it with -a/--approve, or see docs/trust.md"#);
    let request = trap.server.requests()[0].json();
    // Project settings were not applied (`thinking: high` would set a reasoning effort)...
    assert_eq!(request.get("reasoning_effort"), None);
    // ...but the context file is read as text.
    assert!(
        request
            .to_string()
            .contains("Context files are read regardless of trust."),
        "{request}"
    );
    trap.assert_nothing_ran();

    let tool = trap.tool(&[]);
    assert_eq!(tool.status.code(), Some(0), "{}", text(&tool.stderr));
    assert!(text(&tool.stdout).contains("Context files are read regardless"));
    trap.assert_nothing_ran();

    let mcp = trap.mcp(&[]);
    assert_eq!(mcp.status.code(), Some(0), "{}", text(&mcp.stderr));
    let stdout = text(&mcp.stdout);
    assert!(
        stdout.contains(r#""id":2"#) && stdout.contains(r#""name":"read""#),
        "{stdout}"
    );
    trap.assert_nothing_ran();

    // `-na` decides the same without a warning (it was asked for); `defaultProjectTrust:
    // never` says why.
    let tool = trap.tool(&["-na"]);
    assert_eq!(tool.status.code(), Some(0), "{}", text(&tool.stderr));
    assert_eq!(text(&tool.stderr), "");
    trap.user_settings(&json!({"defaultProjectTrust": "never"}));
    let tool = trap.tool(&[]);
    assert_eq!(tool.status.code(), Some(0), "{}", text(&tool.stderr));
    assert!(
        text(&tool.stderr).contains(r#"untrusted (defaultProjectTrust is "never")"#),
        "{}",
        text(&tool.stderr)
    );
    trap.assert_nothing_ran();
    assert_eq!(trap.server.requests().len(), 1);
}

/// The stderr of a trusted trap start: every project extension was started and failed its
/// `initialize` (the traps do not speak the protocol), in load order; the exact transport
/// reason depends on when the trap exited.
fn assert_trap_load_errors(trap: &Trap, stderr: &[u8]) {
    let stderr = trap.redact(&text(stderr));
    let lines: Vec<&str> = stderr.lines().collect();
    let expected_paths = [
        "[ROOT]/ws/.jig/extensions/manifested",
        "[ROOT]/ws/.jig/extensions/marker.sh",
        "[ROOT]/ws/.jig/extensions/py",
        "[ROOT]/ws/.jig/tools/lint",
        "[ROOT]/ws/elsewhere.sh",
    ];
    let errors: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|line| line.starts_with("jig: error: "))
        .collect();
    assert_eq!(errors.len(), expected_paths.len(), "{stderr}");
    assert_eq!(
        errors[0],
        "jig: error: Failed to load extension \"[ROOT]/ws/.jig/extensions/manifested\": extension.toml: give either `command` or `[hooks]`, not both"
    );
    for (line, path) in errors.iter().zip(expected_paths) {
        let prefix = format!("jig: error: Failed to load extension \"{path}\": ");
        assert!(
            line.starts_with(&prefix),
            "{line:?} does not start with {prefix:?}"
        );
    }
    assert_eq!(
        lines.last().copied(),
        Some("Hint: Start without extensions using \"jig -ne\"."),
        "{stderr}"
    );
}

impl Trap {
    /// The markers left so far.
    fn markers(&self) -> Vec<String> {
        let mut markers: Vec<String> = fs::read_dir(&self.markers)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        markers.sort();
        markers
    }

    fn clear_markers(&self) {
        fs::remove_dir_all(&self.markers).unwrap();
        fs::create_dir_all(&self.markers).unwrap();
        while self.listener.accept().is_ok() {}
    }
}

/// What the trusted trap's project code leaves: each extension ran (and failed its handshake)
/// but the manifested one, whose manifest is refused before anything runs (it names both a
/// command and hooks); the settings hook did not, as startup stopped before any tool call.
const TRUSTED_MARKERS: [&str; 4] = [
    "extension-executable",
    "extension-index",
    "project-tool",
    "settings-extension",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_project_loads_its_extensions_and_only_after_trust() {
    let trap = Trap::new(vec!["never sent"]).await;

    let run = trap.run(&["-a"]).await;
    assert_eq!(run.status.code(), Some(1));
    assert_trap_load_errors(&trap, &run.stderr);
    assert_eq!(text(&run.stdout), "");
    assert_eq!(trap.markers(), TRUSTED_MARKERS);
    trap.clear_markers();

    let tool = trap.tool(&["--approve"]);
    assert_eq!(tool.status.code(), Some(1));
    assert_trap_load_errors(&trap, &tool.stderr);
    assert_eq!(text(&tool.stdout), "", "the tool did not run");
    assert_eq!(trap.markers(), TRUSTED_MARKERS);
    trap.clear_markers();

    let mcp = trap.mcp(&["-a"]);
    assert_eq!(mcp.status.code(), Some(1));
    assert_trap_load_errors(&trap, &mcp.stderr);
    assert_eq!(text(&mcp.stdout), "", "nothing was served");
    assert_eq!(trap.markers(), TRUSTED_MARKERS);
    trap.clear_markers();

    // `defaultProjectTrust: always` and a saved decision trust it the same way.
    trap.user_settings(&json!({"defaultProjectTrust": "always"}));
    let tool = trap.tool(&[]);
    assert_eq!(tool.status.code(), Some(1));
    assert_trap_load_errors(&trap, &tool.stderr);
    assert_eq!(trap.markers(), TRUSTED_MARKERS);
    trap.clear_markers();
    trap.user_settings(&json!({}));
    file(
        &trap.config.join("jig/trust.json"),
        &json!({trap.root.display().to_string(): true}).to_string(),
    );
    let run = trap.run(&["-v"]).await;
    assert_eq!(run.status.code(), Some(1));
    assert_trap_load_errors(&trap, &run.stderr);
    assert_eq!(trap.markers(), TRUSTED_MARKERS);
    assert_eq!(trap.server.requests().len(), 0, "the model was never asked");
}

/// A pre-trust extension answering `project_trust` decides the trust, and sees no project code
/// having run when it is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_trust_extension_decides_trust_before_any_project_code_runs() {
    let trap = Trap::new(vec!["never sent"]).await;
    let judge = trap.root.join("judge.py");
    let seen = trap.root.join("seen-at-trust");
    file(
        &judge,
        &format!(
            r#"import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    result = None
    if m["method"] == "initialize":
        result = {{"protocolVersion": 1, "name": "judge", "events": ["project_trust"]}}
    elif m["method"] == "event" and m["params"]["event"] == "project_trust":
        open({seen:?}, "w").write(",".join(sorted(os.listdir({markers:?}))) + "|" + m["params"]["mode"])
        result = {{"trusted": "yes"}}
    sys.stdout.write(json.dumps({{"jsonrpc": "2.0", "id": m["id"], "result": result}}) + "\n")
    sys.stdout.flush()
"#,
            seen = seen.display().to_string(),
            markers = trap.markers.display().to_string(),
        ),
    );
    let dir = trap.root.join("judge");
    fs::create_dir_all(&dir).unwrap();
    fs::rename(&judge, dir.join("index.py")).unwrap();
    let dir = dir.display().to_string();
    let tool = trap.tool(&["-e", &dir]);
    assert_eq!(tool.status.code(), Some(1), "{}", text(&tool.stderr));
    assert_trap_load_errors(&trap, &tool.stderr);
    assert_eq!(
        fs::read_to_string(&seen).unwrap(),
        "|tool",
        "asked before anything ran"
    );
    assert_eq!(trap.markers(), TRUSTED_MARKERS, "trusted by the extension");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_extensions_starts_a_trusted_project_with_its_settings_but_without_its_code() {
    let trap = Trap::new(vec!["trusted, no extensions"]).await;
    let run = trap.run(&["-a", "-ne", "-v"]).await;
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    assert_eq!(text(&run.stdout), "trusted, no extensions\n");
    assert!(
        trap.redact(&text(&run.stderr))
            .starts_with("jig: project [ROOT]/ws: trusted (--approve)\n"),
        "{}",
        text(&run.stderr)
    );
    // The trusted project's settings apply (`thinking: high`).
    assert_eq!(trap.server.requests()[0].json()["reasoning_effort"], "high");
    trap.assert_nothing_ran();
}

#[test]
fn two_letter_flags_parse_before_and_after_the_subcommand() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let trap = runtime.block_on(Trap::new(vec![]));
    for args in [
        vec![
            "-ne",
            "-na",
            "tool",
            "read",
            "--args",
            r#"{"path":"AGENTS.md"}"#,
        ],
        vec![
            "tool",
            "-ne",
            "-na",
            "read",
            "--args",
            r#"{"path":"AGENTS.md"}"#,
        ],
        vec![
            "-na",
            "tool",
            "read",
            "--args",
            r#"{"path":"AGENTS.md"}"#,
            "-ne",
        ],
    ] {
        let output = trap.jig(&args).output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&output.stderr)
        );
        // Without `-na` the untrusted project would be warned about.
        assert_eq!(text(&output.stderr), "", "{args:?}");
    }
    let both = trap.jig(&["tool", "-a", "-na", "read"]).output().unwrap();
    assert_eq!(both.status.code(), Some(2), "-a and -na conflict");
    trap.assert_nothing_ran();
}

#[test]
fn an_explicit_extension_that_cannot_load_stops_every_mode_with_the_hint() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let trap = runtime.block_on(Trap::new(vec![]));
    let plain = trap.root.join("plain");
    fs::create_dir_all(&plain).unwrap();
    for mode in [
        vec!["tool", "-e", "missing.sh", "-ne", "ls"],
        vec!["mcp", "--extension", "missing.sh", "-ne"],
    ] {
        let mut command = trap.jig(&mode);
        command.current_dir(&plain);
        let output = command.output().unwrap();
        assert_eq!(output.status.code(), Some(1));
        assert_eq!(
            trap.redact(&text(&output.stderr)),
            "jig: error: Failed to load extension \"[ROOT]/plain/missing.sh\": Extension path does not exist: [ROOT]/plain/missing.sh\nHint: Start without extensions using \"jig -ne\".\n"
        );
    }
}

/// `--env` with `jig env serve` on the far end of a pipe: its workspace is this same trap
/// directory, reached through the env.
fn serve_url() -> String {
    format!("stdio:{} env serve", env!("CARGO_BIN_EXE_jig"))
}

/// With `--env` the project is the env's directory, never this machine's directory of the
/// same name: it is trusted under its URL (a saved decision for the local path does not
/// apply), what it brings is read through the env, and even trusted its extensions, tools and
/// hooks are not run here — a warning says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_env_the_project_is_the_remote_workspace_trusted_under_its_url() {
    let trap = Trap::new(vec!["untrusted", "trusted"]).await;
    let url = serve_url();
    let ws = trap.ws.display().to_string();
    let key = format!("{url} /{ws}");
    let redact = |stderr: &[u8]| {
        trap.redact(&text(stderr))
            .replace(env!("CARGO_BIN_EXE_jig"), "[JIG]")
    };

    // A decision saved for this machine's directory is not the remote workspace's.
    file(
        &trap.config.join("jig/trust.json"),
        &json!({ws.clone(): true}).to_string(),
    );
    let audit = trap.root.join("audit.jsonl");
    let audit_arg = audit.display().to_string();
    let run = trap
        .run(&["--env", &url, "--cwd", &ws, "--audit", &audit_arg])
        .await;
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    assert_eq!(text(&run.stdout), "untrusted\n");
    insta::assert_snapshot!(redact(&run.stderr), @r#"jig: warning: project stdio:[JIG] env serve /[ROOT]/ws: untrusted (no saved decision, defaultProjectTrust is "ask" and this mode cannot ask); not loading .jig/extensions/, .jig/tools/, .jig/settings.json (extensions, hooks). Trust it with -a/--approve, or see docs/trust.md"#);
    let request = trap.server.requests()[0].json();
    assert_eq!(request.get("reasoning_effort"), None);
    assert!(
        request
            .to_string()
            .contains("Context files are read regardless of trust."),
        "{request}"
    );
    trap.assert_nothing_ran();
    // The project's files were looked at through the env.
    let log = fs::read_to_string(&audit).unwrap();
    for path in [".jig/settings.json", ".jig/extensions", "AGENTS.md"] {
        assert!(
            log.contains(&format!("\"path\":\"{ws}/{path}\"")),
            "{path} not read through the env: {log}"
        );
    }

    // Trusted under its URL: its settings apply, read through the env; its code does not run.
    file(
        &trap.config.join("jig/trust.json"),
        &json!({key.clone(): true}).to_string(),
    );
    let run = trap.run(&["--env", &url, "--cwd", &ws]).await;
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    assert_eq!(text(&run.stdout), "trusted\n");
    insta::assert_snapshot!(redact(&run.stderr), @"jig: warning: project stdio:[JIG] env serve /[ROOT]/ws: .jig/extensions/, .jig/tools/, .jig/settings.json `extensions`, .jig/settings.json `hooks` not loaded: a project's extensions, tools and hooks are not supported over --env (they would run on this machine, not where the project is)");
    let request = trap.server.requests()[1].json();
    assert_eq!(
        request["reasoning_effort"], "high",
        "the project's settings apply"
    );
    trap.assert_nothing_ran();

    // `jig tool --env` and `jig mcp --env`, trusted with -a: the same.
    let tool = trap.tool(&["--env", &url, "--cwd", &ws, "-a"]);
    assert_eq!(tool.status.code(), Some(0), "{}", text(&tool.stderr));
    assert!(text(&tool.stdout).contains("Context files are read regardless"));
    insta::assert_snapshot!(redact(&tool.stderr), @"jig: warning: project stdio:[JIG] env serve /[ROOT]/ws: .jig/extensions/, .jig/tools/, .jig/settings.json `extensions`, .jig/settings.json `hooks` not loaded: a project's extensions, tools and hooks are not supported over --env (they would run on this machine, not where the project is)");
    trap.assert_nothing_ran();
    let mcp = trap.mcp(&["--env", &url, "--root", &ws, "-a"]);
    assert_eq!(mcp.status.code(), Some(0), "{}", text(&mcp.stderr));
    assert!(text(&mcp.stdout).contains(r#""name":"read""#));
    trap.assert_nothing_ran();
    assert_eq!(
        fs::read_to_string(trap.config.join("jig/trust.json")).unwrap(),
        json!({key: true}).to_string(),
        "nothing else was saved"
    );
}
