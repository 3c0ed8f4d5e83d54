//! `jig run` end to end: the real binary against a local server replaying OpenAI-compatible SSE
//! streams, with real tools on a temp workspace and sessions in a temp data directory.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers panic when the setup fails"
)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use jig_agent::Session;
use jig_llm::scripted::ScriptedReply;
use jig_llm::testing::{ReplayResponse, ReplayServer, openai_sse};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// A workspace, a data directory for sessions, and the replay server.
pub(crate) struct Setup {
    _dir: tempfile::TempDir,
    pub(crate) ws: PathBuf,
    pub(crate) data: PathBuf,
    pub(crate) server: ReplayServer,
}

pub(crate) fn reply(scripted: ScriptedReply) -> ReplayResponse {
    match scripted {
        ScriptedReply::Message(message) => ReplayResponse::sse(openai_sse(&message)),
        other => panic!("not a message: {other:?}"),
    }
}

impl Setup {
    pub(crate) async fn new(responses: Vec<ReplayResponse>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let ws = root.join("ws");
        fs::create_dir(&ws).unwrap();
        let data = root.join("data");
        let server = ReplayServer::start(responses).await.unwrap();
        Self {
            _dir: dir,
            ws,
            data,
            server,
        }
    }

    /// `jig run --base-url <server>/v1 …` in the workspace, sessions under `data`.
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let base_url = format!("{}/v1", self.server.url());
        let mut all = vec!["--base-url", base_url.as_str()];
        all.extend_from_slice(args);
        self.bare_command(&all)
    }

    /// `jig run …` in the workspace, sessions under `data`, no keys or endpoints from the
    /// environment.
    fn bare_command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_jig"));
        command
            .arg("run")
            .args(args)
            .current_dir(&self.ws)
            .env("XDG_DATA_HOME", &self.data)
            .env("XDG_CONFIG_HOME", self.data.with_file_name("config"))
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("ANTHROPIC_BASE_URL")
            .stdin(Stdio::null());
        command
    }

    pub(crate) async fn run(&self, args: &[&str]) -> Output {
        let mut command = self.command(args);
        tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap()
    }

    /// Runs with `input` written to a piped stdin.
    async fn run_with_stdin(&self, args: &[&str], input: &[u8]) -> Output {
        let mut command = self.command(args);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let input = input.to_vec();
        tokio::task::spawn_blocking(move || {
            let mut child = command.spawn().unwrap();
            std::io::Write::write_all(&mut child.stdin.take().unwrap(), &input).unwrap();
            child.wait_with_output().unwrap()
        })
        .await
        .unwrap()
    }

    fn session_files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = fs::read_dir(self.data.join("jig/sessions"))
            .into_iter()
            .flatten()
            .flat_map(|dir| fs::read_dir(dir.unwrap().path()).unwrap())
            .map(|entry| entry.unwrap().path())
            .collect();
        files.sort();
        files
    }

    pub(crate) fn request_messages(&self, index: usize) -> Vec<Value> {
        self.server.requests()[index].json()["messages"]
            .as_array()
            .unwrap()
            .clone()
    }
}

async fn output_of(mut command: Command) -> Output {
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

fn text(output: &[u8]) -> String {
    String::from_utf8_lossy(output).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_prints_the_final_reply_and_saves_a_session() {
    let setup = Setup::new(vec![reply(ScriptedReply::text("Hello from the model"))]).await;
    fs::write(setup.ws.join("AGENTS.md"), "Always run the tests.\n").unwrap();
    let output = setup.run(&["-p", "--model", "m", "say hi"]).await;
    assert_eq!(text(&output.stderr), "");
    assert_eq!(text(&output.stdout), "Hello from the model\n");
    assert_eq!(output.status.code(), Some(0));

    let requests = setup.server.requests();
    assert_eq!(requests.len(), 1);
    let body = requests[0].json();
    assert_eq!(body["model"], "m");
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains(&format!(
            "Current working directory: {}",
            setup.ws.display()
        )),
        "{system}"
    );
    assert!(system.contains("Always run the tests."), "{system}");
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, vec!["read", "write", "edit", "bash"]);
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": "say hi"})
    );

    let files = setup.session_files();
    assert_eq!(files.len(), 1);
    let dir_name = files[0]
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        dir_name,
        format!(
            "--{}--",
            setup
                .ws
                .display()
                .to_string()
                .trim_start_matches('/')
                .replace('/', "-")
        )
    );
    let session = Session::open(&files[0]).unwrap();
    let roles: Vec<&str> = session
        .messages()
        .iter()
        .map(jig_protocol::Message::role)
        .collect();
    assert_eq!(roles, vec!["user", "assistant"]);
    assert_eq!(session.model(), Some(("openai".into(), "m".into())));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_resumes_the_latest_session_even_after_its_last_line_was_cut() {
    let setup = Setup::new(vec![
        reply(ScriptedReply::text("first reply")),
        reply(ScriptedReply::text("second reply")),
    ])
    .await;
    let first = setup.run(&["--model", "m", "first prompt"]).await;
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let file = setup.session_files().pop().unwrap();
    // A crash in the middle of writing the last entry.
    let content = fs::read_to_string(&file).unwrap();
    fs::write(&file, &content[..content.len() - 20]).unwrap();

    // No --model: the session's provider and model are used again.
    let second = setup.run(&["--continue", "second prompt"]).await;
    assert_eq!(text(&second.stdout), "second reply\n");
    assert_eq!(second.status.code(), Some(0));
    assert!(
        text(&second.stderr).contains("skipped 1 damaged line(s)"),
        "{}",
        text(&second.stderr)
    );

    let messages = setup.request_messages(1);
    let users: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(users, vec!["first prompt", "second prompt"]);
    assert_eq!(setup.server.requests()[1].json()["model"], "m");

    assert_eq!(
        setup.session_files(),
        vec![file.clone()],
        "the same file was continued"
    );
    let session = Session::open(&file).unwrap();
    assert_eq!(session.skipped_lines(), 1);
    let texts: Vec<String> = session
        .messages()
        .iter()
        .map(|m| match m {
            jig_protocol::Message::User(u) => u.content[0].as_text().unwrap().to_owned(),
            jig_protocol::Message::Assistant(a) => a.text(),
            jig_protocol::Message::ToolResult(r) => r.text(),
        })
        .collect();
    assert_eq!(texts, vec!["first prompt", "second prompt", "second reply"]);
    for line in fs::read_to_string(&file)
        .unwrap()
        .lines()
        .skip(1)
        .filter(|l| !l.contains("first reply"))
    {
        serde_json::from_str::<Value>(line).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prompt_comes_from_stdin_and_json_mode_prints_one_event_per_line() {
    let setup = Setup::new(vec![reply(ScriptedReply::text("ok"))]).await;
    let mut command = setup.command(&["--model", "m", "--mode", "json", "--no-session"]);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = tokio::task::spawn_blocking(move || {
        let mut child = command.spawn().unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"prompt from stdin\n")
            .unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let events: Vec<Value> = text(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(events[0]["type"], "session");
    assert_eq!(events[1]["type"], "agent_start");
    let end = events.last().unwrap();
    assert_eq!(end["type"], "agent_end");
    assert_eq!(end["end"], json!({"reason": "completed"}));
    assert_eq!(end["finalText"], "ok");
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "message_update" && e["delta"]["type"] == "textDelta")
    );
    assert_eq!(
        setup.request_messages(0)[1]["content"],
        "prompt from stdin\n"
    );
    assert!(
        setup.session_files().is_empty(),
        "--no-session writes nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn piped_stdin_follows_the_prompt_argument_and_dash_reads_the_prompt_from_stdin() {
    let setup = Setup::new(vec![
        reply(ScriptedReply::text("reviewed")),
        reply(ScriptedReply::text("answered")),
        reply(ScriptedReply::text("plain")),
    ])
    .await;
    let diff = b"diff --git a/x b/x\n-old\n+new\n";
    let joined = setup
        .run_with_stdin(&["--model", "m", "--no-session", "review this diff"], diff)
        .await;
    assert_eq!(
        text(&joined.stdout),
        "reviewed\n",
        "{}",
        text(&joined.stderr)
    );
    assert_eq!(
        setup.request_messages(0)[1]["content"],
        "review this diff\n\ndiff --git a/x b/x\n-old\n+new"
    );

    let dash = setup
        .run_with_stdin(&["--model", "m", "--no-session", "-"], b"what is 2+2?\n")
        .await;
    assert_eq!(text(&dash.stdout), "answered\n", "{}", text(&dash.stderr));
    assert_eq!(setup.request_messages(1)[1]["content"], "what is 2+2?\n");

    // An empty pipe adds nothing to an argument, and is no prompt on its own.
    let empty_pipe = setup
        .run_with_stdin(&["--model", "m", "--no-session", "just this"], b"")
        .await;
    assert_eq!(text(&empty_pipe.stdout), "plain\n");
    assert_eq!(setup.request_messages(2)[1]["content"], "just this");
    let nothing = setup
        .run_with_stdin(&["--model", "m", "--no-session", "-"], b"  \n")
        .await;
    assert_eq!(nothing.status.code(), Some(2));
    assert_eq!(text(&nothing.stderr), "jig: the prompt is empty\n");
    let binary = setup
        .run_with_stdin(&["--model", "m", "--no-session", "x"], b"\xff\xfe")
        .await;
    assert_eq!(binary.status.code(), Some(2));
    assert!(text(&binary.stderr).contains("stdin is not UTF-8 text"));
    assert_eq!(setup.server.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_file_is_created_where_asked_and_bash_sees_the_session_variables() {
    let command = r#"printf '%s|%s|%s|%s|%s' "$JIG_SESSION_ID" "$JIG_SESSION_FILE" "$JIG_PROVIDER" "$JIG_MODEL" "$JIG_REASONING_LEVEL""#;
    let setup = Setup::new(vec![
        reply(ScriptedReply::tool_call(
            "call_1",
            "bash",
            json!({"command": command}),
        )),
        reply(ScriptedReply::text("done")),
        reply(ScriptedReply::text("resumed")),
    ])
    .await;
    let file = setup.ws.join("sessions/mine.jsonl");
    let output = setup
        .run(&[
            "--model",
            "m",
            "--session",
            "sessions/mine.jsonl",
            "which session?",
        ])
        .await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let session = Session::open(&file).unwrap();
    let tool_message = setup
        .request_messages(1)
        .into_iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert_eq!(tool_message["tool_call_id"], "call_1");
    assert_eq!(
        tool_message["content"],
        format!("{}|{}|openai|m|off", session.id(), file.display())
    );
    let roles: Vec<&str> = session
        .messages()
        .iter()
        .map(jig_protocol::Message::role)
        .collect();
    assert_eq!(roles, vec!["user", "assistant", "toolResult", "assistant"]);

    // The same file is resumed when it exists.
    let again = setup
        .run(&["--session", "sessions/mine.jsonl", "and again?"])
        .await;
    assert_eq!(text(&again.stdout), "resumed\n", "{}", text(&again.stderr));
    let resumed = Session::open(&file).unwrap();
    assert_eq!(resumed.id(), session.id());
    assert_eq!(resumed.messages().len(), 6);
    assert!(
        setup.session_files().is_empty(),
        "nothing written to the data directory"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_turns_stops_a_model_that_keeps_calling_tools() {
    let setup = Setup::new(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "read",
            json!({"path": "a.txt"}),
        )),
        reply(ScriptedReply::text("never")),
    ])
    .await;
    fs::write(setup.ws.join("a.txt"), "a\n").unwrap();
    let output = setup
        .run(&["--model", "m", "--max-turns", "1", "read a.txt"])
        .await;
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        "jig: stopped after --max-turns 1: the model was still calling tools\n"
    );
    assert_eq!(setup.server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_error_exits_1_with_the_status_and_message() {
    let setup = Setup::new(vec![ReplayResponse::status(
        401,
        r#"{"error":{"message":"Invalid API key","type":"invalid_request_error"}}"#,
    )])
    .await;
    let output = setup.run(&["--model", "m", "hi"]).await;
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(text(&output.stdout), "");
    assert_eq!(
        text(&output.stderr),
        "jig: openai returned HTTP 401: Invalid API key (invalid_request_error)\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_errors_exit_2() {
    let setup = Setup::new(vec![]).await;
    let unknown = setup
        .run(&["--provider", "nope", "--model", "m", "hi"])
        .await;
    assert_eq!(unknown.status.code(), Some(2));
    insta::assert_snapshot!(text(&unknown.stderr), @"jig: --provider nope: unknown provider; known providers: openai, anthropic, openrouter, ollama, lmstudio, llamacpp, vllm, openai-compatible (use openai-compatible with --base-url for any other OpenAI-compatible server)");
    let tools = setup
        .run(&["--model", "m", "--tools", "read,frobnicate", "hi"])
        .await;
    assert_eq!(tools.status.code(), Some(2));
    assert!(
        text(&tools.stderr)
            .starts_with("jig: --tools: unknown tool `frobnicate`; available tools: read,"),
        "{}",
        text(&tools.stderr)
    );
    let no_model = setup.run(&["--provider", "ollama", "hi"]).await;
    assert_eq!(no_model.status.code(), Some(2));
    insta::assert_snapshot!(text(&no_model.stderr), @"jig: --provider ollama needs --model (the id of a model the server has loaded)");
    let no_url =
        output_of(setup.bare_command(&["--provider", "openai-compatible", "--model", "m", "hi"]))
            .await;
    assert_eq!(no_url.status.code(), Some(2));
    insta::assert_snapshot!(text(&no_url.stderr), @"jig: --provider openai-compatible needs --base-url (e.g. http://localhost:8080/v1)");
    let key = tokio::task::spawn_blocking(|| {
        // Without --base-url: the hosted API needs its key.
        let mut command = Command::new(env!("CARGO_BIN_EXE_jig"));
        command
            .args(["run", "--no-session", "--provider", "anthropic", "hi"])
            .env("XDG_CONFIG_HOME", "/nonexistent-jig-test-config");
        for (name, _) in std::env::vars() {
            if name.ends_with("_API_KEY") {
                command.env_remove(name);
            }
        }
        command.output().unwrap()
    })
    .await
    .unwrap();
    assert_eq!(key.status.code(), Some(2));
    insta::assert_snapshot!(text(&key.stderr), @"jig: no API key for anthropic: set ANTHROPIC_API_KEY or pass --api-key");
    assert!(setup.server.requests().is_empty());
}

fn wait_for(path: &Path, timeout: Duration) -> String {
    let start = Instant::now();
    loop {
        if let Ok(content) = fs::read_to_string(path)
            && content.ends_with('\n')
        {
            return content;
        }
        assert!(
            start.elapsed() < timeout,
            "{} did not appear",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_during_bash_kills_its_processes_and_leaves_a_well_formed_session() {
    // Found by what they run, not by PID: under the default sandbox (bubblewrap) the command
    // sees PIDs of its own namespace.
    let marker = format!("300.{}", std::process::id());
    let command = format!("sleep {marker} & echo started > bg.pid; sleep {marker}");
    let setup = Setup::new(vec![
        reply(ScriptedReply::tool_calls(&[
            ("call_sleep", "bash", json!({"command": command})),
            ("call_read", "read", json!({"path": "missing.txt"})),
        ])),
        reply(ScriptedReply::text("never requested")),
    ])
    .await;
    let mut jig = setup.command(&["--model", "m", "wait a long time"]);
    jig.stdout(Stdio::piped()).stderr(Stdio::piped());
    let ws = setup.ws.clone();
    let running_marker = marker.clone();
    let (output, elapsed) = tokio::task::spawn_blocking(move || {
        let child = jig.spawn().unwrap();
        wait_for(&ws.join("bg.pid"), Duration::from_secs(30));
        assert!(
            crate::extension_processes::running(&running_marker).len() >= 2,
            "the sleeps run"
        );
        let pid = rustix::process::Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
        let start = Instant::now();
        rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
        let output = child.wait_with_output().unwrap();
        (output, start.elapsed())
    })
    .await
    .unwrap();

    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert!(elapsed < Duration::from_secs(15), "abort took {elapsed:?}");
    let stderr = text(&output.stderr);
    assert!(stderr.contains("aborting"), "{stderr}");
    assert!(stderr.ends_with("jig: the run was aborted\n"), "{stderr}");
    assert_eq!(text(&output.stdout), "");
    if let Err(survivors) = crate::extension_processes::gone_within(&marker, Duration::from_secs(5))
    {
        panic!("the sleeps survived the abort: {survivors:?}");
    }
    assert_eq!(
        setup.server.requests().len(),
        1,
        "no request after the abort"
    );

    // The session is complete and every call is paired, in call order.
    let file = setup.session_files().pop().unwrap();
    for line in fs::read_to_string(&file).unwrap().lines() {
        serde_json::from_str::<Value>(line).unwrap();
    }
    let session = Session::open(&file).unwrap();
    assert_eq!(session.skipped_lines(), 0);
    let messages = session.messages();
    let roles: Vec<&str> = messages.iter().map(jig_protocol::Message::role).collect();
    assert_eq!(roles, vec!["user", "assistant", "toolResult", "toolResult"]);
    let calls: Vec<String> = messages[1]
        .as_assistant()
        .unwrap()
        .tool_calls()
        .map(|c| c.id.clone())
        .collect();
    let results: Vec<String> = messages[2..]
        .iter()
        .map(|m| m.as_tool_result().unwrap().tool_call_id.clone())
        .collect();
    assert_eq!(calls, results);
    let bash = messages[2].as_tool_result().unwrap();
    assert!(bash.is_error, "{}", bash.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_session_id_is_an_error_and_an_id_prefix_resumes() {
    let setup = Setup::new(vec![
        reply(ScriptedReply::text("one")),
        reply(ScriptedReply::text("two")),
    ])
    .await;
    let typo = setup
        .run(&["--model", "m", "--session", "feature-42", "start"])
        .await;
    assert_eq!(typo.status.code(), Some(2));
    insta::assert_snapshot!(text(&typo.stderr), @"jig: --session feature-42: no session has this id or id prefix (`jig sessions` lists this directory's sessions; to start a new session in a file, pass a path such as ./feature-42.jsonl)");
    assert!(setup.session_files().is_empty());
    assert!(setup.server.requests().is_empty());

    let first = setup.run(&["--model", "m", "start"]).await;
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let files = setup.session_files();
    assert_eq!(files.len(), 1);
    let id = Session::open(&files[0]).unwrap().id().to_owned();

    let second = setup.run(&["--session", &id[..8], "go on"]).await;
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    assert_eq!(setup.session_files(), files);
    assert_eq!(Session::open(&files[0]).unwrap().messages().len(), 4);
    let users: Vec<Value> = setup
        .request_messages(1)
        .into_iter()
        .filter(|m| m["role"] == "user")
        .collect();
    assert_eq!(users.len(), 2);
}

#[test]
fn run_help() {
    let output = Command::new(env!("CARGO_BIN_EXE_jig"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    insta::assert_snapshot!("help_run", text(&output.stdout));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_ends_the_run_with_a_timeout_in_the_configured_time() {
    // Accepts connections, reads the request, and never writes a byte.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    timed_out_after_1_5_s(
        address,
        "--idle-timeout",
        &format!(
            "jig: openai at http://{address}/v1/chat/completions sent nothing for 1.5 s (--idle-timeout): the server is stuck or overloaded\n"
        ),
    )
    .await;
}

/// Runs `jig run --base-url http://{address}/v1 {flag} 1.5 hi` and checks that it fails with
/// `expected` on stderr after 1.5 s (and well before 6 s).
async fn timed_out_after_1_5_s(address: std::net::SocketAddr, flag: &str, expected: &str) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_jig"));
    command
        .args(["run", "--no-session", "--base-url"])
        .arg(format!("http://{address}/v1"))
        .args(["--model", "m", flag, "1.5", "hi"])
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env("XDG_CONFIG_HOME", "/nonexistent-jig-test-config")
        .stdin(Stdio::null());
    let (output, elapsed) = tokio::task::spawn_blocking(move || {
        let start = Instant::now();
        let output = command.output().unwrap();
        (output, start.elapsed())
    })
    .await
    .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(text(&output.stderr), expected);
    assert!(
        elapsed >= Duration::from_millis(1500) && elapsed < Duration::from_secs(6),
        "{elapsed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_stalls_midway_ends_with_a_timeout() {
    let mut body = openai_sse(&match ScriptedReply::text("never finished") {
        ScriptedReply::Message(message) => message,
        other => panic!("{other:?}"),
    });
    // The first event arrives, then the server stalls for a minute.
    body.insert_str(
        0,
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\n",
    );
    let stalled = ReplayResponse::sse(body).with_line_delay(Duration::from_mins(1));
    let setup = Setup::new(vec![stalled]).await;
    let start = Instant::now();
    let output = setup
        .run(&["--model", "m", "--idle-timeout", "1", "--no-session", "hi"])
        .await;
    let elapsed = start.elapsed();
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("sent nothing for 1 s (--idle-timeout)"),
        "{stderr}"
    );
    assert!(elapsed < Duration::from_secs(6), "{elapsed:?}");
    assert_eq!(setup.server.requests().len(), 1, "a timeout is not retried");
}

const ANTHROPIC_TEXT: &str = include_str!("../../../jig-llm/tests/fixtures/anthropic/text.sse");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn base_url_variables_are_honoured_and_base_url_never_switches_the_provider() {
    let setup = Setup::new(vec![
        reply(ScriptedReply::text("from openai")),
        ReplayResponse::sse(ANTHROPIC_TEXT),
        ReplayResponse::sse(ANTHROPIC_TEXT),
    ])
    .await;
    let url = setup.server.url();

    // OPENAI_BASE_URL: the default provider (openai) goes there; no key is needed off api.openai.com.
    let mut openai = setup.bare_command(&["--no-session", "--model", "m", "hi"]);
    openai.env("OPENAI_BASE_URL", format!("{url}/v1"));
    let openai = output_of(openai).await;
    assert_eq!(
        text(&openai.stdout),
        "from openai\n",
        "{}",
        text(&openai.stderr)
    );
    assert_eq!(setup.server.requests()[0].path, "/v1/chat/completions");

    // ANTHROPIC_API_KEY alone selects anthropic, and --base-url keeps it.
    let mut anthropic = setup.bare_command(&["--no-session", "--base-url", &url, "hi"]);
    anthropic.env("ANTHROPIC_API_KEY", "sk-ant-test");
    let anthropic = output_of(anthropic).await;
    assert_eq!(
        text(&anthropic.stdout),
        "Hello, world — ✓\n",
        "{}",
        text(&anthropic.stderr)
    );
    let request = &setup.server.requests()[1];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(request.json()["model"], "claude-sonnet-4-5");

    // ANTHROPIC_BASE_URL.
    let mut variable = setup.bare_command(&["--no-session", "--provider", "anthropic", "hi"]);
    variable
        .env("ANTHROPIC_BASE_URL", &url)
        .env("ANTHROPIC_API_KEY", "sk-ant-test");
    let variable = output_of(variable).await;
    assert_eq!(
        variable.status.code(),
        Some(0),
        "{}",
        text(&variable.stderr)
    );
    assert_eq!(setup.server.requests()[2].path, "/v1/messages");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_restores_the_provider_model_and_base_url() {
    let setup = Setup::new(vec![
        reply(ScriptedReply::text("one")),
        reply(ScriptedReply::text("two")),
    ])
    .await;
    let first = setup
        .run(&[
            "--provider",
            "openai-compatible",
            "--model",
            "local-7b",
            "start",
        ])
        .await;
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let file = setup.session_files().pop().unwrap();
    let session = Session::open(&file).unwrap();
    assert_eq!(
        session.model(),
        Some(("openai-compatible".into(), "local-7b".into()))
    );
    assert_eq!(
        session.base_url(),
        Some(format!("{}/v1", setup.server.url()))
    );

    // Neither --base-url nor --model nor a key: all of it comes from the session.
    let second = output_of(setup.bare_command(&["--continue", "go on"])).await;
    assert_eq!(text(&second.stdout), "two\n", "{}", text(&second.stderr));
    let request = &setup.server.requests()[1];
    assert_eq!(request.json()["model"], "local-7b");
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(setup.session_files(), vec![file]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_listed_and_a_failed_run_does_not_become_the_latest() {
    let unauthorized = || ReplayResponse::status(401, r#"{"error":{"message":"Invalid API key"}}"#);
    let setup = Setup::new(vec![
        reply(ScriptedReply::text("first")),
        unauthorized(),
        reply(ScriptedReply::text("second")),
        unauthorized(),
        reply(ScriptedReply::text("continued")),
    ])
    .await;
    let list = || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_jig"));
        command
            .arg("sessions")
            .current_dir(&setup.ws)
            .env("XDG_DATA_HOME", &setup.data);
        command.output().unwrap()
    };
    let empty = list();
    assert_eq!(empty.status.code(), Some(0));
    assert_eq!(text(&empty.stdout), "");
    assert_eq!(
        text(&empty.stderr),
        format!("jig: no sessions for {}\n", setup.ws.display())
    );

    let a = setup
        .run(&["--model", "m", "fix the parser\nin src/parse.rs"])
        .await;
    assert_eq!(a.status.code(), Some(0), "{}", text(&a.stderr));
    let a_file = setup.session_files().pop().unwrap();
    let a_id = Session::open(&a_file).unwrap().id().to_owned();
    // A new session whose first request fails leaves no file.
    let failed = setup.run(&["--model", "m", "doomed"]).await;
    assert_eq!(failed.status.code(), Some(1));
    assert_eq!(setup.session_files(), vec![a_file.clone()]);

    std::thread::sleep(Duration::from_millis(50));
    let b = setup.run(&["--model", "m", "write the docs"]).await;
    assert_eq!(b.status.code(), Some(0), "{}", text(&b.stderr));
    let b_file = setup
        .session_files()
        .into_iter()
        .find(|f| *f != a_file)
        .unwrap();
    let b_id = Session::open(&b_file).unwrap().id().to_owned();
    // Resuming the older session and failing keeps `b` the latest.
    std::thread::sleep(Duration::from_millis(50));
    let resumed = setup.run(&["--session", &a_id, "more"]).await;
    assert_eq!(resumed.status.code(), Some(1));
    assert_eq!(Session::open(&a_file).unwrap().messages().len(), 2);

    let listed = list();
    assert_eq!(listed.status.code(), Some(0), "{}", text(&listed.stderr));
    let lines: Vec<String> = text(&listed.stdout).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines[0].starts_with("ID "), "{}", lines[0]);
    assert!(
        lines[0].ends_with("CREATED               TURNS  FIRST PROMPT"),
        "{}",
        lines[0]
    );
    assert!(lines[1].starts_with(&b_id), "{}", lines[1]);
    assert!(lines[1].ends_with("    1  write the docs"), "{}", lines[1]);
    assert!(lines[2].starts_with(&a_id), "{}", lines[2]);
    assert!(lines[2].ends_with("    1  fix the parser…"), "{}", lines[2]);

    let continued = setup.run(&["--continue", "go on"]).await;
    assert_eq!(text(&continued.stdout), "continued\n");
    assert_eq!(Session::open(&b_file).unwrap().messages().len(), 4);
}

/// A resumed run whose model request fails, here at another endpoint (which records a model
/// change before the request), leaves the session file as it was: same bytes, same modification
/// time, so `jig sessions` and `--continue` still put the other session first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_a_failed_resume_at_another_endpoint_leaves_the_session_as_it_was() {
    let setup = Setup::new(vec![
        reply(ScriptedReply::text("reply A")),
        reply(ScriptedReply::text("reply B")),
        reply(ScriptedReply::text("continued")),
    ])
    .await;
    let failing = jig_llm::testing::ReplayServer::start(vec![ReplayResponse::status(
        401,
        r#"{"error":{"message":"Invalid API key"}}"#,
    )])
    .await
    .unwrap();
    let a = setup.run(&["--model", "m", "session A"]).await;
    assert_eq!(a.status.code(), Some(0), "{}", text(&a.stderr));
    let a_file = setup.session_files().pop().unwrap();
    let a_id = Session::open(&a_file).unwrap().id().to_owned();
    std::thread::sleep(Duration::from_millis(50));
    let b = setup.run(&["--model", "m", "session B"]).await;
    assert_eq!(b.status.code(), Some(0), "{}", text(&b.stderr));
    let b_file = setup
        .session_files()
        .into_iter()
        .find(|file| *file != a_file)
        .unwrap();
    let b_id = Session::open(&b_file).unwrap().id().to_owned();

    let bytes_before = fs::read(&a_file).unwrap();
    let modified_before = fs::metadata(&a_file).unwrap().modified().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let failing_url = format!("{}/v1", failing.url());
    let failed = output_of(setup.bare_command(&[
        "--base-url",
        &failing_url,
        "--model",
        "m",
        "--session",
        &a_id,
        "this fails",
    ]))
    .await;
    assert_eq!(failed.status.code(), Some(1), "{}", text(&failed.stderr));
    assert_eq!(failing.requests().len(), 1);
    assert_eq!(fs::read(&a_file).unwrap(), bytes_before);
    assert_eq!(
        fs::metadata(&a_file).unwrap().modified().unwrap(),
        modified_before
    );

    let mut list = Command::new(env!("CARGO_BIN_EXE_jig"));
    list.arg("sessions")
        .current_dir(&setup.ws)
        .env("XDG_DATA_HOME", &setup.data);
    let listed = output_of(list).await;
    let ids: Vec<String> = text(&listed.stdout)
        .lines()
        .skip(1)
        .map(|line| line.split_whitespace().next().unwrap().to_owned())
        .collect();
    assert_eq!(ids, vec![b_id, a_id]);

    let continued = setup.run(&["--continue", "which one?"]).await;
    assert_eq!(text(&continued.stdout), "continued\n");
    let sent: Vec<Value> = setup
        .request_messages(2)
        .into_iter()
        .filter(|message| message["role"] == "user")
        .map(|message| message["content"].clone())
        .collect();
    assert_eq!(sent, vec![json!("session B"), json!("which one?")]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbose_prints_tool_calls_and_retries_and_json_mode_reports_retries_and_a_summary() {
    let overloaded = || {
        ReplayResponse::status(503, r#"{"error":{"message":"Overloaded"}}"#)
            .with_header("Retry-After", "0")
    };
    let read_call = || {
        reply(ScriptedReply::tool_call(
            "c1",
            "read",
            json!({"path": "a.txt"}),
        ))
    };
    let setup = Setup::new(vec![
        overloaded(),
        read_call(),
        reply(ScriptedReply::text("done")),
        reply(ScriptedReply::text("quiet")),
        overloaded(),
        read_call(),
        reply(ScriptedReply::text("done again")),
    ])
    .await;
    fs::write(setup.ws.join("a.txt"), "a\n").unwrap();
    let verbose = setup
        .run(&["--model", "m", "--no-session", "--verbose", "read a.txt"])
        .await;
    assert_eq!(text(&verbose.stdout), "done\n");
    let stderr = text(&verbose.stderr);
    assert_eq!(
        without_duration(&stderr),
        "jig: retrying in 0.0 s (retry 1 of 3): HTTP 503: Overloaded\njig: read a.txt\n\
         jig: 2 model requests in <secs> s, cost unknown\n\
         jig:   openai/m: 20 input, 10 output, 0 cache read, 0 cache write tokens: no price in the model table\n"
    );
    // Without --verbose and with stderr not a terminal: nothing but the reply.
    let quiet = setup.run(&["--model", "m", "--no-session", "hi"]).await;
    assert_eq!(text(&quiet.stderr), "");
    assert_eq!(text(&quiet.stdout), "quiet\n");

    let json_run = setup
        .run(&[
            "--model",
            "m",
            "--no-session",
            "--mode",
            "json",
            "read a.txt",
        ])
        .await;
    assert_eq!(
        json_run.status.code(),
        Some(0),
        "{}",
        text(&json_run.stderr)
    );
    assert_eq!(text(&json_run.stderr), "");
    let events: Vec<Value> = text(&json_run.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let retries: Vec<&Value> = events.iter().filter(|e| e["type"] == "retry").collect();
    assert_eq!(
        retries,
        vec![
            &json!({"type": "retry", "attempt": 1, "maxRetries": 3, "delayMs": 0, "reason": "HTTP 503: Overloaded"})
        ]
    );
    let mut end = events.last().unwrap().clone();
    assert!(end["durationMs"].as_u64().is_some(), "{end}");
    end["durationMs"] = json!(0);
    assert_eq!(
        end,
        json!({
            "type": "agent_end",
            "end": {"reason": "completed"},
            "finalText": "done again",
            "turns": 2,
            "usage": [{"provider": "openai", "model": "m", "input": 20, "output": 10, "cacheRead": 0, "cacheWrite": 0, "cost": null}],
            "cost": null,
            "durationMs": 0
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_user_settings_file_chooses_provider_model_base_url_and_thinking() {
    let setup = Setup::new(vec![
        reply(ScriptedReply::text("configured")),
        reply(ScriptedReply::text("flag wins")),
        reply(ScriptedReply::text("typo ignored")),
    ])
    .await;
    let settings_dir = setup.data.with_file_name("config").join("jig");
    fs::create_dir_all(&settings_dir).unwrap();
    let settings = json!({
        "provider": "openai-compatible",
        "model": "from-settings",
        "baseUrl": format!("{}/v1", setup.server.url()),
        "thinking": "low",
    });
    fs::write(settings_dir.join("settings.json"), settings.to_string()).unwrap();
    // Project settings wait for project trust: this file must have no effect.
    fs::create_dir_all(setup.ws.join(".jig")).unwrap();
    fs::write(
        setup.ws.join(".jig/settings.json"),
        r#"{"model": "from-the-project", "baseUrl": "http://attacker.invalid/v1"}"#,
    )
    .unwrap();

    let configured = output_of(setup.bare_command(&["--no-session", "hi"])).await;
    assert_eq!(
        text(&configured.stdout),
        "configured\n",
        "{}",
        text(&configured.stderr)
    );
    let body = setup.server.requests()[0].json();
    assert_eq!(body["model"], "from-settings");
    assert_eq!(body["reasoning_effort"], "low");

    let flags = output_of(setup.bare_command(&[
        "--no-session",
        "--model",
        "flagged",
        "--thinking",
        "off",
        "hi",
    ]))
    .await;
    assert_eq!(
        text(&flags.stdout),
        "flag wins\n",
        "{}",
        text(&flags.stderr)
    );
    let body = setup.server.requests()[1].json();
    assert_eq!(body["model"], "flagged");
    assert_eq!(body.get("reasoning_effort"), None);

    // A key jig does not know is a warning naming it and the file; a value it cannot use stops
    // the run.
    let mut typo = settings.clone();
    typo["modle"] = json!("typo");
    fs::write(settings_dir.join("settings.json"), typo.to_string()).unwrap();
    let typo = output_of(setup.bare_command(&["--no-session", "hi"])).await;
    assert_eq!(typo.status.code(), Some(0), "{}", text(&typo.stderr));
    assert_eq!(text(&typo.stdout), "typo ignored\n");
    let stderr = text(&typo.stderr);
    assert!(
        stderr.starts_with(&format!(
            "jig: warning: the settings file {}: a key jig does not know, ignored: `modle`",
            settings_dir.join("settings.json").display()
        )),
        "{stderr}"
    );
    fs::write(
        settings_dir.join("settings.json"),
        r#"{"thinking": "extreme"}"#,
    )
    .unwrap();
    let bad = output_of(setup.bare_command(&["--no-session", "hi"])).await;
    assert_eq!(bad.status.code(), Some(2));
    let stderr = text(&bad.stderr);
    assert!(
        stderr.starts_with(&format!(
            "jig: the settings file {} is not valid: `thinking`: unknown variant `extreme`",
            settings_dir.join("settings.json").display()
        )),
        "{stderr}"
    );
    assert_eq!(setup.server.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flags_from_other_agent_clis_work() {
    let setup = Setup::new(vec![
        reply(ScriptedReply::text("one")),
        reply(ScriptedReply::text("two")),
    ])
    .await;
    let first = setup
        .run(&["-m", "short-flag", "--output-format", "json", "start"])
        .await;
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    assert!(text(&first.stdout).lines().all(|l| l.starts_with('{')));
    assert_eq!(setup.server.requests()[0].json()["model"], "short-flag");
    let file = setup.session_files().pop().unwrap();
    let id = Session::open(&file).unwrap().id().to_owned();
    let resumed = setup.run(&["--resume", &id, "go on"]).await;
    assert_eq!(text(&resumed.stdout), "two\n", "{}", text(&resumed.stderr));
    assert_eq!(Session::open(&file).unwrap().messages().len(), 4);
}

/// Runs `jig run <args>` in `dir` with stdin, stdout and stderr on a pseudo-terminal (through
/// util-linux `script`); returns the terminal's output, the exit code and the elapsed time.
fn run_on_a_terminal(dir: &Path, data: &Path, args: &str) -> (String, Option<i32>, Duration) {
    let jig = env!("CARGO_BIN_EXE_jig");
    let start = Instant::now();
    let output = Command::new("script")
        .args(["-qec", &format!("'{jig}' run {args}"), "/dev/null"])
        .current_dir(dir)
        .env("XDG_DATA_HOME", data)
        .env("XDG_CONFIG_HOME", "/nonexistent-jig-test-config")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| panic!("util-linux `script` (runs a pseudo-terminal): {error}"));
    (text(&output.stdout), output.status.code(), start.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_terminal_stdin_is_never_read_and_progress_is_shown() {
    let setup = Setup::new(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "read",
            json!({"path": "a.txt"}),
        )),
        reply(ScriptedReply::text("done")),
    ])
    .await;
    fs::write(setup.ws.join("a.txt"), "a\n").unwrap();
    let (ws, data) = (setup.ws.clone(), setup.data.clone());
    let (output, code, elapsed) =
        // `-p`: without it, no prompt on a terminal is an interactive session.
        tokio::task::spawn_blocking(move || run_on_a_terminal(&ws, &data, "-p --no-session"))
            .await
            .unwrap();
    assert_eq!(code, Some(2), "{output}");
    assert!(
        output.starts_with("jig: no prompt: pass it as an argument"),
        "{output}"
    );
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");

    let args = format!(
        "--no-session --base-url {}/v1 -m m 'read a.txt'",
        setup.server.url()
    );
    let (ws, data) = (setup.ws.clone(), setup.data.clone());
    let (output, code, _) =
        tokio::task::spawn_blocking(move || run_on_a_terminal(&ws, &data, &args))
            .await
            .unwrap();
    assert_eq!(code, Some(0), "{output}");
    let output = output.replace("\r\n", "\n");
    assert_eq!(
        without_duration(&output),
        "jig: read a.txt\n\
         jig: 2 model requests in <secs> s, cost unknown\n\
         jig:   openai/m: 20 input, 10 output, 0 cache read, 0 cache write tokens: no price in the model table\n\
         done\n"
    );
}

/// A loopback address whose connections are never completed: a listener with a backlog of 0
/// whose accept queue is filled and never drained, so the kernel drops further SYNs (as a
/// firewall that drops packets would). Returns the listener and the queued connections, which
/// must live as long as the address is used.
fn an_address_that_never_completes_a_connection() -> (
    std::net::SocketAddr,
    std::net::TcpListener,
    Vec<std::net::TcpStream>,
) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    rustix::net::listen(&listener, 0).unwrap();
    let address = listener.local_addr().unwrap();
    let mut queued = Vec::new();
    for _ in 0..64 {
        match std::net::TcpStream::connect_timeout(&address, Duration::from_millis(300)) {
            Ok(stream) => queued.push(stream),
            Err(error) if error.kind() == std::io::ErrorKind::TimedOut => {
                return (address, listener, queued);
            }
            Err(error) => panic!("connecting to fill the accept queue: {error}"),
        }
    }
    panic!("the accept queue never filled: this kernel completes connections beyond the backlog");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_accepts_ends_the_run_after_the_connect_timeout() {
    let (address, _listener, _queued) = an_address_that_never_completes_a_connection();
    timed_out_after_1_5_s(
        address,
        "--connect-timeout",
        &format!(
            "jig: could not connect to openai at http://{address}/v1/chat/completions within 1.5 s (--connect-timeout)\n"
        ),
    )
    .await;
}

/// A reply with the given token counts.
fn reply_with_usage(text_: &str, input: u64, output: u64) -> ReplayResponse {
    let ScriptedReply::Message(mut message) = ScriptedReply::text(text_) else {
        unreachable!()
    };
    message.usage.input = input;
    message.usage.output = output;
    ReplayResponse::sse(openai_sse(&message))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cost_of_a_run_comes_from_the_model_table_and_is_null_when_unknown() {
    let setup = Setup::new(vec![
        reply_with_usage("local", 1_000_000, 500_000),
        reply_with_usage("priced", 1_000_000, 500_000),
        reply_with_usage("summed", 2_000, 1_000),
    ])
    .await;
    // At a local or custom endpoint (every run of this test's server) a built-in model's price
    // is not its price: the cost is unknown, not made up from OpenAI's price of `gpt-4.1`.
    let local = setup
        .run(&[
            "--provider",
            "openai",
            "--model",
            "gpt-4.1",
            "--no-session",
            "--mode",
            "json",
            "hi",
        ])
        .await;
    assert_eq!(local.status.code(), Some(0), "{}", text(&local.stderr));
    let end: Value = serde_json::from_str(text(&local.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(end["usage"][0]["cost"], Value::Null);
    assert_eq!(end["cost"], Value::Null);

    // Prices the settings give apply there: $2 per million input tokens, $8 per million output.
    let settings = r#"{"models": [
        {"provider": "openai", "id": "gpt-4.1", "cost": {"input": 2, "output": 8}},
        {"provider": "openai", "id": "gpt-4.1-mini", "cost": {"input": 0.4, "output": 1.6}}
    ]}"#;
    let config = setup.data.with_file_name("config").join("jig");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("settings.json"), settings).unwrap();
    let priced = setup
        .run(&[
            "--provider",
            "openai",
            "--model",
            "gpt-4.1",
            "--no-session",
            "--mode",
            "json",
            "hi",
        ])
        .await;
    assert_eq!(priced.status.code(), Some(0), "{}", text(&priced.stderr));
    let end: Value = serde_json::from_str(text(&priced.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(
        end["usage"],
        json!([{"provider": "openai", "model": "gpt-4.1", "input": 1_000_000, "output": 500_000,
            "cacheRead": 0, "cacheWrite": 0,
            "cost": {"input": 2.0, "output": 4.0, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 6.0}}])
    );
    assert_eq!(end["cost"], json!(6.0));

    // Text mode with progress: the summary on stderr gives tokens and cost per model.
    let verbose = setup
        .run(&[
            "--provider",
            "openai",
            "--model",
            "gpt-4.1-mini",
            "--no-session",
            "--verbose",
            "hi",
        ])
        .await;
    assert_eq!(text(&verbose.stdout), "summed\n");
    let stderr = text(&verbose.stderr);
    insta::assert_snapshot!(without_duration(&stderr), @r"
    jig: 1 model request in <secs> s, cost $0.0024
    jig:   openai/gpt-4.1-mini: 2000 input, 1000 output, 0 cache read, 0 cache write tokens: $0.0024
    ");
}

/// `stderr` with the run time of its summary line (`… model requests in N.N s, …`) replaced by
/// `<secs>`, and only the lines that come in the run's order (see [`in_run_order`]).
fn without_duration(stderr: &str) -> String {
    stderr
        .split_inclusive('\n')
        .filter(|line| in_run_order(line))
        .map(
            |line| match (line.find(" model request"), line.find(" s, cost")) {
                (Some(_), Some(end)) => {
                    let start = line.find(" in ").unwrap() + 4;
                    format!("{}<secs>{}", &line[..start], &line[end..])
                }
                _ => line.to_owned(),
            },
        )
        .collect()
}

/// Whether a line of `--verbose` comes in the run's order: not the sandbox line
/// (machine-dependent; its own snapshots are in `sandbox.rs`) nor the warm index's, which is
/// printed whenever the index is ready (see `verbose_reports_the_warm_index…`).
fn in_run_order(line: &str) -> bool {
    !line.starts_with("jig: sandbox:") && !line.starts_with("jig: warm index of ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_providers_from_the_settings_are_selected_priced_and_restored_by_continue() {
    let setup = Setup::new(vec![
        // Few enough input tokens that the resumed run does not compact first.
        reply_with_usage("from corp", 40_000, 200_000),
        reply_with_usage("corp again", 10, 5),
    ])
    .await;
    let settings_dir = setup.data.with_file_name("config").join("jig");
    fs::create_dir_all(&settings_dir).unwrap();
    let settings_file = settings_dir.join("settings.json");
    let settings = json!({
        "providers": [
            {"name": "corp", "kind": "openai", "baseUrl": format!("{}/v1", setup.server.url()),
             "apiKeyEnv": "CORP_LLM_KEY",
             "models": [{"id": "corp-coder", "contextWindow": 65_536,
                         "cost": {"input": 1.5, "output": 3.0}}]},
            {"name": "broken", "kind": "grpc", "baseUrl": "http://localhost:1"},
        ],
    });
    fs::write(&settings_file, settings.to_string()).unwrap();

    let mut command = setup.bare_command(&["--provider", "corp", "--mode", "json", "hi"]);
    command.env("CORP_LLM_KEY", "corp-secret");
    let first = output_of(command).await;
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    // The bad entry is not selected: a warning, and the run goes on.
    insta::assert_snapshot!(
        text(&first.stderr).replace(&settings_file.display().to_string(), "<settings>"),
        @"jig: warning: settings file <settings>: provider `broken`: unknown variant `grpc`, expected `openai` or `anthropic` (keys: name, kind, baseUrl, apiKeyEnv, models) (entry left out)"
    );
    let request = &setup.server.requests()[0];
    assert_eq!(request.header("authorization"), Some("Bearer corp-secret"));
    assert_eq!(request.json()["model"], "corp-coder");
    let end: Value = serde_json::from_str(text(&first.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(end["usage"][0]["provider"], "corp");
    // 40 000 input tokens at $1.5 per million, 200 000 output tokens at $3 per million.
    let cost = end["cost"].as_f64().unwrap();
    assert!((cost - 0.66).abs() < 1e-12, "{cost}");

    // The session records how corp is reached: --continue works without the settings entry.
    fs::remove_file(&settings_file).unwrap();
    let mut command = setup.bare_command(&["--continue", "again"]);
    command.env("CORP_LLM_KEY", "corp-secret");
    let resumed = output_of(command).await;
    assert_eq!(
        text(&resumed.stdout),
        "corp again\n",
        "{}",
        text(&resumed.stderr)
    );
    let request = &setup.server.requests()[1];
    assert_eq!(request.header("authorization"), Some("Bearer corp-secret"));
    assert_eq!(request.json()["model"], "corp-coder");
    let session = fs::read_to_string(&setup.session_files()[0]).unwrap();
    let change: Value = serde_json::from_str(session.lines().nth(1).unwrap()).unwrap();
    assert_eq!(change["type"], "model_change");
    assert_eq!(change["providerKind"], "openai");
    assert_eq!(change["apiKeyEnv"], "CORP_LLM_KEY");

    // Selecting the broken entry is an error that says what to fix; a missing key too.
    fs::write(&settings_file, settings.to_string()).unwrap();
    let broken =
        output_of(setup.bare_command(&["--provider", "broken", "--no-session", "hi"])).await;
    assert_eq!(broken.status.code(), Some(2));
    insta::assert_snapshot!(
        text(&broken.stderr).replace(&settings_file.display().to_string(), "<settings>"),
        @"jig: provider `broken` from the settings file cannot be used: unknown variant `grpc`, expected `openai` or `anthropic` (keys: name, kind, baseUrl, apiKeyEnv, models); fix its entry in <settings>"
    );
    let no_key = output_of(setup.bare_command(&["--provider", "corp", "--no-session", "hi"])).await;
    assert_eq!(no_key.status.code(), Some(2));
    insta::assert_snapshot!(text(&no_key.stderr), @"jig: no API key for corp: set CORP_LLM_KEY or pass --api-key");
    assert_eq!(setup.server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_project_and_a_local_directory_of_the_same_path_have_separate_sessions() {
    let setup = Setup::new(vec![
        reply(ScriptedReply::text("remote reply")),
        reply(ScriptedReply::text("local reply")),
        reply(ScriptedReply::text("remote again")),
    ])
    .await;
    // The far side is this machine: the remote working directory is the same path as the
    // local one.
    let url = format!("stdio:{} env serve", env!("CARGO_BIN_EXE_jig"));
    let ws = setup.ws.to_string_lossy().into_owned();
    let remote = ["--env", url.as_str(), "--cwd", ws.as_str(), "--model", "m"];
    let first = setup.run(&[&remote[..], &["remote prompt"]].concat()).await;
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    assert_eq!(setup.session_files().len(), 1);

    // Locally, --continue finds no session of this directory: a new one starts.
    let second = setup
        .run(&["--model", "m", "--continue", "local prompt"])
        .await;
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    assert_eq!(text(&second.stdout), "local reply\n");
    let users = |index: usize| -> Vec<String> {
        setup
            .request_messages(index)
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| m["content"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        users(1),
        vec!["local prompt"],
        "the remote session was not continued"
    );
    let files = setup.session_files();
    assert_eq!(files.len(), 2);
    assert_ne!(
        files[0].parent(),
        files[1].parent(),
        "each project has its own session directory"
    );

    // Over --env, --continue resumes the remote session, not the newer local one.
    let third = setup
        .run(&[&remote[..], &["--continue", "remote again"]].concat())
        .await;
    assert_eq!(third.status.code(), Some(0), "{}", text(&third.stderr));
    assert_eq!(users(2), vec!["remote prompt", "remote again"]);
    assert_eq!(setup.session_files().len(), 2);

    // `jig sessions` lists each project's own.
    let sessions = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_jig"));
        command
            .arg("sessions")
            .args(args)
            .current_dir(&setup.ws)
            .env("XDG_DATA_HOME", &setup.data)
            .stdin(Stdio::null());
        let output = command.output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        text(&output.stdout)
    };
    let local = sessions(&[]);
    assert!(
        local.contains("local prompt") && !local.contains("remote prompt"),
        "{local}"
    );
    let remote = sessions(&["--env", url.as_str(), "--cwd", ws.as_str()]);
    assert!(
        remote.contains("remote prompt") && !remote.contains("local prompt"),
        "{remote}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbose_says_when_a_call_failed_or_was_denied_and_why() {
    let setup = Setup::new(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "bash",
            json!({"command": "echo hi > out.txt"}),
        )),
        reply(ScriptedReply::tool_call(
            "c2",
            "read",
            json!({"path": "missing.txt"}),
        )),
        reply(ScriptedReply::text("done")),
    ])
    .await;
    let output = setup
        .run(&[
            "--model",
            "m",
            "--no-session",
            "--verbose",
            "--permission-mode",
            "read-only",
            "go",
        ])
        .await;
    assert_eq!(text(&output.stdout), "done\n");
    let stderr = text(&output.stderr).replace(&setup.ws.display().to_string(), "<ws>");
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|line| in_run_order(line))
        .take(4)
        .collect();
    insta::assert_snapshot!(lines.join("\n"));
    assert!(!setup.ws.join("out.txt").exists());
}

/// `--verbose` says what a quiet run waits for, every 15 s: here a command that runs 16 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbose_says_what_a_quiet_run_waits_for() {
    let setup = Setup::new(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "bash",
            json!({"command": "sleep 16"}),
        )),
        reply(ScriptedReply::text("done")),
    ])
    .await;
    let output = setup
        .run(&["--model", "m", "--no-session", "--verbose", "wait"])
        .await;
    assert!(output.status.success(), "{output:?}");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("jig: bash still running: 15 s\n"),
        "{stderr}"
    );
    assert!(!stderr.contains("30 s"), "{stderr}");
}

/// With `--verbose`, each root's warm index says when it is ready; `warmIndex: false` in the
/// user's settings or in a trusted project's turns it off (no index, no line).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbose_reports_the_warm_index_and_settings_turn_it_off() {
    for case in ["on", "user-off", "project-off"] {
        let setup = Setup::new(vec![
            reply(ScriptedReply::tool_call(
                "call_1",
                "bash",
                json!({"command": "sleep 1"}),
            )),
            reply(ScriptedReply::text("done")),
        ])
        .await;
        fs::write(setup.ws.join("a.txt"), "alpha\n").unwrap();
        match case {
            "user-off" => {
                let config = setup.data.with_file_name("config").join("jig");
                fs::create_dir_all(&config).unwrap();
                fs::write(config.join("settings.json"), r#"{"warmIndex": false}"#).unwrap();
            }
            "project-off" => {
                fs::create_dir(setup.ws.join(".jig")).unwrap();
                fs::write(
                    setup.ws.join(".jig/settings.json"),
                    r#"{"warmIndex": false}"#,
                )
                .unwrap();
            }
            _ => {}
        }
        let output = setup
            .run(&["-p", "--verbose", "-a", "--model", "m", "wait a second"])
            .await;
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{case}: {stderr}");
        let ready = format!("jig: warm index of {}: ready, 1 file, ", setup.ws.display());
        if case == "on" {
            assert!(stderr.contains(&ready), "{case}: {stderr}");
        } else {
            assert!(!stderr.contains("warm index"), "{case}: {stderr}");
        }
    }
}
