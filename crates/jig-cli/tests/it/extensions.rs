//! Extensions end to end with the examples in `examples/extensions/`: the permission gate in
//! `jig run` and `jig mcp`, an extension's tool in `jig tools`, `jig tool` and `jig mcp`, and
//! extensions that fail to load stopping every mode.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers panic when the setup fails"
)]

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use jig_llm::scripted::ScriptedReply;
use jig_llm::testing::{ReplayResponse, ReplayServer, openai_sse};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

pub(crate) fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/extensions")
        .join(name)
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

pub(crate) fn reply(scripted: ScriptedReply) -> ReplayResponse {
    match scripted {
        ScriptedReply::Message(message) => ReplayResponse::sse(openai_sse(&message)),
        other => panic!("not a message: {other:?}"),
    }
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A workspace with a `victim/` directory that `rm -rf` would remove.
pub(crate) struct Workspace {
    _dir: tempfile::TempDir,
    pub(crate) root: PathBuf,
    pub(crate) ws: PathBuf,
}

impl Workspace {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let ws = root.join("ws");
        fs::create_dir_all(ws.join("victim")).unwrap();
        fs::write(ws.join("victim/file"), "keep me\n").unwrap();
        Self {
            _dir: dir,
            root,
            ws,
        }
    }

    /// An extension directory `name` under the root holding `file` with `body`.
    pub(crate) fn extension(&self, name: &str, file: &str, body: &str) -> PathBuf {
        let dir = self.root.join(name);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(file), body).unwrap();
        dir
    }

    pub(crate) fn jig(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_jig"));
        command
            .args(args)
            .current_dir(&self.ws)
            .env("XDG_CONFIG_HOME", self.root.join("config"))
            .env("XDG_DATA_HOME", self.root.join("data"))
            .env_remove("JIG_TIMING")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("ANTHROPIC_BASE_URL")
            .stdin(Stdio::null());
        command
    }

    /// `jig mcp ARGS…` fed `requests` (after the handshake), then end of input; the replies by
    /// id.
    pub(crate) fn mcp(&self, args: &[&str], requests: &[Value]) -> (Output, Vec<Value>) {
        let mut all = vec!["mcp"];
        all.extend_from_slice(args);
        let mut child = self
            .jig(&all)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut lines = vec![
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "extensions-test", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ];
        lines.extend_from_slice(requests);
        for line in lines {
            let _ = writeln!(stdin, "{line}");
        }
        drop(stdin);
        let output = child.wait_with_output().unwrap();
        let replies = text(&output.stdout)
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        (output, replies)
    }
}

fn by_id(replies: &[Value], id: u64) -> &Value {
    replies
        .iter()
        .find(|reply| reply["id"] == id)
        .unwrap_or_else(|| panic!("no reply {id} in {replies:?}"))
}

const GATE_REASON: &str =
    "Blocked by permission-gate: recursive forced deletion (rm -rf) is not allowed";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_permission_gate_blocks_rm_rf_in_run_and_the_model_reads_why() {
    let workspace = Workspace::new();
    let server = ReplayServer::start(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "bash",
            json!({"command": "rm -rf victim"}),
        )),
        reply(ScriptedReply::text("could not delete")),
    ])
    .await
    .unwrap();
    let base_url = format!("{}/v1", server.url());
    let gate = example("permission-gate");
    let mut command = workspace.jig(&[
        "run",
        "--base-url",
        &base_url,
        "--model",
        "m",
        "--no-session",
        "-e",
        &gate,
        "delete victim",
    ]);
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "could not delete\n");
    assert!(workspace.ws.join("victim/file").exists(), "rm -rf ran");
    let messages = server.requests()[1].json()["messages"].clone();
    let result = messages
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert_eq!(result["content"], GATE_REASON);
}

#[test]
fn the_permission_gate_blocks_rm_rf_over_mcp_and_word_count_is_served() {
    let workspace = Workspace::new();
    let gate = example("permission-gate");
    let words = example("word-count");
    let (output, replies) = workspace.mcp(
        &["-e", &gate, "-e", &words],
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "bash", "arguments": {"command": "rm -rf victim"}}}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
                "name": "word_count", "arguments": {"text": "one two three"}}}),
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
                "name": "bash", "arguments": {"command": "echo allowed"}}}),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let blocked = &by_id(&replies, 1)["result"];
    assert_eq!(blocked["isError"], true);
    assert_eq!(blocked["content"][0]["text"], GATE_REASON);
    assert!(workspace.ws.join("victim/file").exists(), "rm -rf ran");
    let names: Vec<&str> = by_id(&replies, 2)["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"word_count"), "{names:?}");
    let counted = &by_id(&replies, 3)["result"];
    assert_eq!(counted["isError"], false, "{counted}");
    assert!(
        counted["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("3 words"),
        "{counted}"
    );
    assert_eq!(
        by_id(&replies, 4)["result"]["content"][0]["text"],
        "allowed\n"
    );
}

#[test]
fn an_extension_tool_is_listed_by_tools_and_runs_with_tool() {
    let workspace = Workspace::new();
    let words = example("word-count");
    let listed = workspace.jig(&["tools", "-e", &words]).output().unwrap();
    assert_eq!(listed.status.code(), Some(0), "{}", text(&listed.stderr));
    assert!(text(&listed.stdout).contains("word_count"));
    let json_listed = workspace
        .jig(&["tools", "--json", "-e", &words])
        .output()
        .unwrap();
    let tools: Vec<Value> = serde_json::from_slice(&json_listed.stdout).unwrap();
    let tool = tools.iter().find(|t| t["name"] == "word_count").unwrap();
    assert_eq!(tool["inputSchema"]["type"], "object");
    // Without the extension it is not there.
    let plain = workspace.jig(&["tools", "--json"]).output().unwrap();
    assert!(!text(&plain.stdout).contains("word_count"));

    let ran = workspace
        .jig(&[
            "tool",
            "word_count",
            "-e",
            &words,
            "--args",
            r#"{"text":"a b"}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(ran.status.code(), Some(0), "{}", text(&ran.stderr));
    assert_eq!(text(&ran.stdout), "1 lines, 2 words, 3 characters\n");

    let gate = example("permission-gate");
    let blocked = workspace
        .jig(&[
            "tool",
            "bash",
            "-e",
            &gate,
            "--args",
            r#"{"command":"rm -rf victim"}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(blocked.status.code(), Some(1));
    assert_eq!(text(&blocked.stdout), format!("{GATE_REASON}\n"));
    assert!(workspace.ws.join("victim/file").exists(), "rm -rf ran");
}

#[test]
fn a_command_hook_gets_the_flags_its_manifest_declares() {
    let workspace = Workspace::new();
    fs::write(workspace.ws.join(".env"), "TOKEN=1\n").unwrap();
    let guard = example("protected-paths");
    let read_env = |flags: &[&str]| {
        let mut args = vec!["tool", "read", "-e", &guard, "--args", r#"{"path":".env"}"#];
        args.extend_from_slice(flags);
        workspace.jig(&args).output().unwrap()
    };
    // The default (false): reads pass.
    let read = read_env(&[]);
    assert_eq!(read.status.code(), Some(0), "{}", text(&read.stderr));
    assert_eq!(text(&read.stdout), "   1│ TOKEN=1\n");
    for flags in [
        &["--protect-reads"][..],
        &["--flag", "protect-reads=true"][..],
    ] {
        let blocked = read_env(flags);
        assert_eq!(blocked.status.code(), Some(1), "{flags:?}");
        assert_eq!(
            text(&blocked.stdout),
            "Blocked by protected-paths: read may not touch .env files or .git/ (.env)\n"
        );
    }
    let read = read_env(&["--protect-reads=false"]);
    assert_eq!(read.status.code(), Some(0), "{}", text(&read.stderr));

    // A declared flag is checked like a process's registration.
    let bad = workspace.extension(
        "bad-flag",
        "extension.toml",
        "[hooks]\ntool_call = [\"true\"]\n[flags.level]\ntype = \"string\"\ndefault = 3\n",
    );
    let output = workspace
        .jig(&["tool", "ls", "-e", &bad.display().to_string()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        format!(
            "jig: error: Failed to load extension \"{}\": Invalid default for flag \"level\": expected string, got number\n\
             Hint: Start without extensions using \"jig -ne\".\n",
            bad.display()
        )
    );
}

#[test]
fn malformed_extensions_or_hooks_in_project_settings_are_warnings() {
    let workspace = Workspace::new();
    fs::create_dir_all(workspace.ws.join(".jig")).unwrap();
    for (settings, problem) in [
        (
            r#"{"hooks": 5}"#,
            "hooks: expected an object of event names to commands; none of its hooks run",
        ),
        (
            r#"{"extensions": "x"}"#,
            "extensions: expected an array of paths",
        ),
        (r#"{"extensions": [5]}"#, "extensions: 5 is not a path"),
    ] {
        fs::write(workspace.ws.join(".jig/settings.json"), settings).unwrap();
        let output = workspace.jig(&["tool", "ls", "-a"]).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        assert_eq!(
            text(&output.stderr),
            format!(
                "jig: warning: Invalid settings file {}/.jig/settings.json: {problem}\n",
                workspace.ws.display()
            )
        );
    }
}

/// A Python extension answering `initialize` with `result` (a Python literal) and every other
/// request with `null`.
fn answering_initialize(result: &str) -> String {
    format!(
        r#"import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    result = None
    if m["method"] == "initialize":
        result = {result}
    sys.stdout.write(json.dumps({{"jsonrpc": "2.0", "id": m["id"], "result": result}}) + "\n")
    sys.stdout.flush()
"#
    )
}

pub(crate) fn executable(path: &Path, body: &str) {
    fs::write(path, body).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crashing_or_garbage_extensions_stop_run_mcp_and_tool_with_the_hint() {
    let workspace = Workspace::new();
    let crash = workspace.root.join("crash.sh");
    executable(&crash, "#!/bin/sh\nread line\necho boom >&2\nexit 3\n");
    let garbage = workspace.root.join("garbage.sh");
    executable(&garbage, "#!/bin/sh\nread line\necho garbage\nsleep 5\n");
    let hint = "Hint: Start without extensions using \"jig -ne\".\n";
    let cases = [
        (
            crash.display().to_string(),
            format!(
                "jig: error: Failed to load extension \"{}\": during initialize: the process exited (exit status: 3); stderr: boom\n{hint}",
                crash.display()
            ),
        ),
        (
            garbage.display().to_string(),
            format!(
                "jig: error: Failed to load extension \"{}\": during initialize: invalid JSON on stdout: expected value at line 1 column 1\n{hint}",
                garbage.display()
            ),
        ),
    ];
    for (path, expected) in &cases {
        let run = workspace
            .jig(&["run", "--no-session", "-e", path, "hi"])
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(1));
        assert_eq!(&text(&run.stderr), expected);
        let tool = workspace.jig(&["tool", "ls", "-e", path]).output().unwrap();
        assert_eq!(tool.status.code(), Some(1));
        assert_eq!(&text(&tool.stderr), expected);
        assert_eq!(text(&tool.stdout), "");
        let (mcp, replies) = workspace.mcp(&["-e", path], &[]);
        assert_eq!(mcp.status.code(), Some(1));
        assert_eq!(&text(&mcp.stderr), expected);
        assert_eq!(replies, Vec::<Value>::new());
    }
}

#[test]
fn an_extension_tool_named_like_a_builtin_is_a_conflict() {
    let workspace = Workspace::new();
    let dir = workspace.extension(
        "shadow",
        "index.py",
        &answering_initialize(
            r#"{"protocolVersion": 1, "name": "shadow", "tools": [
            {"name": "bash", "description": "not bash", "parameters": {"type": "object"}}]}"#,
        ),
    );
    let path = dir.display().to_string();
    let tools = workspace.jig(&["tools", "-e", &path]).output().unwrap();
    assert_eq!(tools.status.code(), Some(1));
    assert_eq!(
        text(&tools.stderr),
        format!(
            "jig: error: Failed to load extension \"{path}\": Tool \"bash\" conflicts with the built-in tool\nHint: Start without extensions using \"jig -ne\".\n"
        )
    );
}

/// The events this jig sends, as the unknown-event messages list them.
const KNOWN_EVENTS: &str = "project_trust, tool_call, tool_result, input, before_agent_start, \
    context, message_end, session_start, session_shutdown, session_before_switch, \
    session_before_fork, session_before_compact, session_before_tree, agent_start, agent_end, \
    turn_start, turn_end, message_start, message_update, tool_execution_start, \
    tool_execution_update, tool_execution_end";

#[test]
fn an_unknown_hook_event_is_a_load_error_and_an_unknown_subscription_a_warning() {
    let workspace = Workspace::new();
    // A typo in a manifest's [hooks] would switch the guard off: it does not load.
    let typo = workspace.extension(
        "typo",
        "extension.toml",
        "[hooks]\ntool_calls = [\"sh\", \"-c\", \"exit 2\"]\n",
    );
    let output = workspace
        .jig(&["tool", "ls", "-e", &typo.display().to_string()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        format!(
            "jig: error: Failed to load extension \"{}\": extension.toml: `hooks.tool_calls`: unknown event \"tool_calls\" (known events: {KNOWN_EVENTS})\n\
             Hint: Start without extensions using \"jig -ne\".\n",
            typo.display()
        )
    );

    // The same typo in the trusted project's settings.
    fs::create_dir_all(workspace.ws.join(".jig")).unwrap();
    let settings = workspace.ws.join(".jig/settings.json");
    fs::write(
        &settings,
        r#"{"hooks": {"tool_call": ["true"], "tool_calls": ["sh", "-c", "exit 2"]}}"#,
    )
    .unwrap();
    // A settings problem is a warning, which says that the file's hooks do not run.
    let output = workspace.jig(&["tool", "ls", "-a"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        text(&output.stderr),
        format!(
            "jig: warning: Invalid settings file {}: hooks: unknown event \"tool_calls\" (known events: {KNOWN_EVENTS}); none of its hooks run\n",
            settings.display()
        )
    );
    fs::remove_file(&settings).unwrap();

    // A process may subscribe to events of a newer host: it loads, with a warning.
    let newer = workspace.extension(
        "newer",
        "index.py",
        &answering_initialize(r#"{"protocolVersion": 1, "events": ["tool_call", "agent_dream"]}"#),
    );
    let output = workspace
        .jig(&["tool", "ls", "-e", &newer.display().to_string()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        text(&output.stderr),
        format!(
            "jig: warning: Extension \"{}\": unknown event \"agent_dream\", which this jig never sends (known events: {KNOWN_EVENTS})\n",
            newer.display()
        )
    );
    assert!(text(&output.stdout).contains("victim/"));
}

#[test]
fn an_invalid_extension_timeout_is_a_warning_and_the_default_is_used() {
    let workspace = Workspace::new();
    for bad in ["abc", "0", "-1", "1e3"] {
        let output = workspace
            .jig(&["tool", "ls"])
            .env("JIG_EXTENSION_TIMEOUT", bad)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{bad}");
        assert_eq!(
            text(&output.stderr),
            format!(
                "jig: warning: JIG_EXTENSION_TIMEOUT=\"{bad}\" is not a timeout: expected a positive number of seconds, such as 60 or 2.5; using the default of 30 s\n"
            )
        );
        assert!(text(&output.stdout).contains("victim/"));
    }
    let output = workspace
        .jig(&["tool", "ls"])
        .env("JIG_EXTENSION_TIMEOUT", "2.5")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(text(&output.stderr), "");
}

/// An extension that takes 10.5 s to answer `initialize`.
const SLOW_TO_START: &str = r#"import json, sys, time
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        if message.get("method") == "shutdown":
            break
        continue
    result = None
    if message["method"] == "initialize":
        time.sleep(10.5)
        result = {"protocolVersion": 1, "name": "slow", "events": []}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
    sys.stdout.flush()
"#;

/// Starting waits 10 s by default; `JIG_EXTENSION_TIMEOUT` longer than that lets a slow
/// extension start.
#[test]
fn a_longer_extension_timeout_lets_a_slow_extension_start() {
    let workspace = Workspace::new();
    let slow = workspace.extension("slow", "index.py", SLOW_TO_START);
    let slow = slow.display().to_string();
    let output = workspace
        .jig(&["-e", &slow, "tool", "ls"])
        .env("JIG_EXTENSION_TIMEOUT", "30")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(text(&output.stderr), "");
    assert!(text(&output.stdout).contains("victim/"));
}
