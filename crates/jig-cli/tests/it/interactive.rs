//! The interactive session end to end: the real `jig` binary in a tmux pane, driven with
//! `send-keys` and read with `capture-pane`, against a local server replaying OpenAI-compatible
//! streams. Without tmux the tests print a SKIPPED notice and pass, unless `JIG_REQUIRE_TMUX=1`.
#![expect(
    clippy::unwrap_used,
    clippy::print_stderr,
    reason = "test helpers panic when the setup fails and tell when a test is skipped"
)]

use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use jig_llm::scripted::ScriptedReply;
use jig_llm::testing::{ReplayResponse, ReplayServer, openai_sse};
use jig_protocol::AssistantBlock;
use serde_json::{Value, json};

fn tmux_missing(test: &str) -> bool {
    let found = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        return false;
    }
    assert!(
        std::env::var("JIG_REQUIRE_TMUX").as_deref() != Ok("1"),
        "tmux is required (JIG_REQUIRE_TMUX=1) but not installed"
    );
    eprintln!("SKIPPED {test}: tmux is not installed (apt-get install tmux)");
    true
}

fn reply(scripted: ScriptedReply) -> ReplayResponse {
    match scripted {
        ScriptedReply::Message(message) => ReplayResponse::sse(openai_sse(&message)),
        other => panic!("not a message: {other:?}"),
    }
}

/// A reply streamed in many small pieces, `delay` apart.
fn streamed(pieces: &[&str], delay: Duration) -> ReplayResponse {
    let ScriptedReply::Message(mut message) = ScriptedReply::text(pieces[0]) else {
        panic!("text reply");
    };
    for piece in &pieces[1..] {
        message.content.push(AssistantBlock::Text {
            text: (*piece).to_owned(),
        });
    }
    ReplayResponse::sse(openai_sse(&message)).with_line_delay(delay)
}

/// A workspace, sessions and config in a temp directory, a replay server, and a tmux server of
/// its own (its own socket) running `jig` in one pane.
struct Pane {
    _dir: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
    socket: PathBuf,
    server: ReplayServer,
    /// The pane's columns and rows.
    size: (u16, u16),
}

/// The terminal sizes the session's main screens are tested at.
const SIZES: [(u16, u16); 2] = [(80, 24), (200, 50)];

impl Pane {
    /// A pane `size` columns by rows (see [`Pane::new`]).
    async fn sized(responses: Vec<ReplayResponse>, size: (u16, u16)) -> Self {
        let mut pane = Self::new(responses).await;
        pane.size = size;
        pane
    }

    async fn new(responses: Vec<ReplayResponse>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let ws = root.join("ws");
        fs::create_dir(&ws).unwrap();
        let server = ReplayServer::start(responses).await.unwrap();
        Self {
            _dir: dir,
            socket: root.join("tmux.sock"),
            root,
            ws,
            server,
            size: (80, 24),
        }
    }

    fn env(&self) -> Vec<(String, String)> {
        vec![
            (
                "XDG_DATA_HOME".into(),
                self.root.join("data").display().to_string(),
            ),
            (
                "XDG_CONFIG_HOME".into(),
                self.root.join("config").display().to_string(),
            ),
            ("HOME".into(), self.root.display().to_string()),
            ("TERM".into(), "xterm-256color".into()),
        ]
    }

    /// Starts `jig ARGS` (pointed at the replay server) in a pane of the pane's size (80×24
    /// unless [`Pane::sized`]); `extra_env` is added
    /// to its environment. When jig exits the pane prints `[exited N]` and stays.
    fn start(&self, args: &str, extra_env: &[(&str, &str)]) {
        let endpoint = format!("--base-url {}/v1 -m m", self.server.url());
        self.start_with(&format!("{args} {endpoint}"), extra_env);
    }

    /// Starts `jig ARGS` as given (no endpoint added), like [`Pane::start`].
    fn start_with(&self, args: &str, extra_env: &[(&str, &str)]) {
        let mut env = String::from(
            "env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u OPENAI_BASE_URL -u NO_COLOR",
        );
        for (key, value) in self.env() {
            let _ = write!(env, " {key}='{value}'");
        }
        for (key, value) in extra_env {
            let _ = write!(env, " {key}='{value}'");
        }
        let command = format!(
            "cd '{}' && {env} '{}' run {args}; echo \"[exited $?]\"; sleep 600",
            self.ws.display(),
            env!("CARGO_BIN_EXE_jig"),
        );
        let (columns, rows) = (self.size.0.to_string(), self.size.1.to_string());
        self.tmux(&[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            &columns,
            "-y",
            &rows,
            &command,
        ]);
    }

    fn tmux(&self, args: &[&str]) -> Output {
        let output = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .env_remove("TMUX")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    /// Types `text` literally.
    fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "t", "-l", text]);
    }

    /// Sends keys by tmux name (`Enter`, `Escape`, `C-c`).
    fn key(&self, key: &str) {
        self.tmux(&["send-keys", "-t", "t", key]);
    }

    /// The visible screen, trailing spaces cut.
    fn screen(&self) -> String {
        let output = self.tmux(&["capture-pane", "-p", "-t", "t"]);
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The screen with its escape sequences (colours).
    fn screen_with_escapes(&self) -> String {
        let output = self.tmux(&["capture-pane", "-p", "-e", "-t", "t"]);
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Waits until the screen contains `needle` (20 s at most); returns the screen.
    fn wait_for(&self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(needle) {
                return screen;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "`{needle}` never appeared; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the scrollback and screen contain `needle` (20 s at most); returns them.
    fn wait_for_history(&self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let output = self.tmux(&["capture-pane", "-p", "-S", "-", "-t", "t"]);
            let history = String::from_utf8_lossy(&output.stdout).into_owned();
            if history.contains(needle) {
                return history;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "`{needle}` never appeared; the history:\n{history}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until `then` is on the screen after the last `first` (20 s at most); returns the
    /// screen.
    fn wait_for_after(&self, first: &str, then: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if let Some(at) = screen.rfind(first)
                && screen[at..].contains(then)
            {
                return screen;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "`{then}` never appeared after `{first}`; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Types `/quit` and waits for the session to exit with 0.
    fn quit(&self) {
        self.type_text("/quit");
        self.key("Enter");
        self.wait_for("[exited 0]");
    }

    /// Starts the session with the acting extension (`ACTING_EXTENSION`) loaded, logging to
    /// the returned file, with `extra_env` set, and waits for the banner.
    fn start_with_actor(&self, extra_env: &[(&str, &str)]) -> std::path::PathBuf {
        let extension = self.root.join("actor");
        fs::create_dir(&extension).unwrap();
        fs::write(extension.join("index.py"), ACTING_EXTENSION).unwrap();
        let log = self.root.join("ext.log");
        let log_text = log.display().to_string();
        let mut env = vec![("EXT_LOG", log_text.as_str())];
        env.extend_from_slice(extra_env);
        self.start(&format!("-e '{}'", extension.display()), &env);
        self.wait_for("/help for commands");
        log
    }

    fn wait_idle(&self) {
        let start = Instant::now();
        while self.screen().contains("Esc to interrupt") {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The screen for a snapshot: the temp paths and the server's port replaced.
    fn normalised(&self, screen: &str) -> String {
        let screen = screen
            .replace(&self.ws.display().to_string(), "[WS]")
            .replace(&self.root.display().to_string(), "[ROOT]")
            .replace(&self.server.url(), "[SERVER]");
        // The spinner and the turn's time (`⠹ 12s · `) change from one capture to the next.
        screen
            .split_inclusive('\n')
            .map(|line| match line.split_once(" · ") {
                Some((head, rest))
                    if head.starts_with(|c: char| ('⠀'..='⣿').contains(&c))
                        && head.ends_with('s') =>
                {
                    format!("[SPINNER] · {rest}")
                }
                _ => line.to_owned(),
            })
            .collect()
    }

    fn tool_results(&self, request: usize) -> Vec<Value> {
        self.server.requests()[request].json()["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .cloned()
            .collect()
    }
}

/// A snapshot's name: `base` at 80×24, `base_COLSxROWS` at another size.
fn snapshot_name(base: &str, size: (u16, u16)) -> String {
    if size == (80, 24) {
        base.to_owned()
    } else {
        format!("{base}_{}x{}", size.0, size.1)
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_streams_the_reply_and_quit_exits() {
    if tmux_missing("a_prompt_streams_the_reply_and_quit_exits") {
        return;
    }
    let pane = Pane::new(vec![streamed(
        &["Hello ", "from ", "the ", "model.\n", "Second ", "line."],
        Duration::from_millis(30),
    )])
    .await;
    pane.start("", &[]);
    pane.wait_for("/help for commands");
    pane.type_text("say hi");
    pane.key("Enter");
    // The status line says a turn runs while the reply streams.
    pane.wait_for("Esc to interrupt");
    let screen = pane.wait_for("Second line.");
    pane.wait_idle();
    insta::assert_snapshot!("streamed_reply", pane.normalised(&pane.screen()));
    assert!(screen.contains("Hello from the model."), "{screen}");
    pane.quit();
    let request = pane.server.requests()[0].json();
    assert_eq!(
        request["messages"][1],
        json!({"role": "user", "content": "say hi"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_edit_runs_and_shows_its_diff() {
    if tmux_missing("an_approved_edit_runs_and_shows_its_diff") {
        return;
    }
    let pane = Pane::new(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "edit",
            json!({"path": "a.txt", "oldText": "old line", "newText": "new line"}),
        )),
        reply(ScriptedReply::text("Edited a.txt.")),
    ])
    .await;
    fs::write(pane.ws.join("a.txt"), "first\nold line\nlast\n").unwrap();
    pane.start("", &[]);
    pane.wait_for("/help for commands");
    pane.type_text("change the line");
    pane.key("Enter");
    let asking = pane.wait_for("[n] no, with a reason");
    insta::assert_snapshot!("edit_question", pane.normalised(&asking));
    assert_eq!(
        fs::read_to_string(pane.ws.join("a.txt")).unwrap(),
        "first\nold line\nlast\n",
        "nothing runs before the answer"
    );
    pane.type_text("y");
    let screen = pane.wait_for("Edited a.txt.");
    assert!(screen.contains("allowed edit once"), "{screen}");
    assert!(
        screen.contains("+2 new line")
            || screen.contains("+ 2 new line")
            || screen.contains("new line"),
        "{screen}"
    );
    assert_eq!(
        fs::read_to_string(pane.ws.join("a.txt")).unwrap(),
        "first\nnew line\nlast\n"
    );
    let colours = pane.screen_with_escapes();
    assert!(
        colours.contains("\u{1b}["),
        "colours are on without NO_COLOR"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_command_tells_the_model_why() {
    if tmux_missing("a_denied_command_tells_the_model_why") {
        return;
    }
    let pane = Pane::new(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "bash",
            json!({"command": "touch denied.txt"}),
        )),
        reply(ScriptedReply::text("Understood, I will not.")),
    ])
    .await;
    pane.start("", &[]);
    pane.wait_for("/help for commands");
    pane.type_text("make a file");
    pane.key("Enter");
    let asking = pane.wait_for("[n] no, with a reason");
    assert!(asking.contains("[p] always `touch …`"), "{asking}");
    pane.type_text("n");
    pane.wait_for("reason for the model");
    pane.type_text("not in this repo");
    pane.key("Enter");
    let screen = pane.wait_for("Understood, I will not.");
    assert!(screen.contains("denied: not in this repo"), "{screen}");
    assert!(!pane.ws.join("denied.txt").exists());
    let results = pane.tool_results(1);
    assert_eq!(
        results[0]["content"],
        "The user denied this `bash` call: not in this repo"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_aborts_a_long_command_and_kills_it() {
    if tmux_missing("escape_aborts_a_long_command_and_kills_it") {
        return;
    }
    // Found by what it runs, not by PID: under the default sandbox (bubblewrap) the command
    // sees PIDs of its own namespace.
    let marker = format!("300.{}", std::process::id());
    let pane = Pane::new(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "bash",
            json!({"command": format!("echo started; exec sleep {marker}")}),
        )),
        reply(ScriptedReply::text("after the abort")),
    ])
    .await;
    pane.start("--permission-mode full-auto", &[]);
    pane.wait_for("/help for commands");
    pane.type_text("wait a while");
    pane.key("Enter");
    pane.wait_for("started");
    let start = Instant::now();
    while crate::extension_processes::running(&marker).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the command never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    pane.key("Escape");
    let screen = pane.wait_for("interrupted");
    pane.wait_for("openai/m · full-auto");
    if let Err(survivors) =
        crate::extension_processes::gone_within(&marker, Duration::from_secs(10))
    {
        panic!("the command is still running: {survivors:?}\n{screen}");
    }
    // Only the aborted turn's request was made; the session goes on.
    assert_eq!(pane.server.requests().len(), 1);
    pane.type_text("go on");
    pane.key("Enter");
    pane.wait_for("after the abort");
    let results = pane.tool_results(1);
    assert_eq!(results[0]["tool_call_id"], "c1", "{results:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_picks_an_earlier_session() {
    if tmux_missing("resume_picks_an_earlier_session") {
        return;
    }
    let pane = Pane::new(vec![
        reply(ScriptedReply::text("the first answer")),
        reply(ScriptedReply::text("continuing")),
    ])
    .await;
    // An earlier session, from print mode.
    let mut earlier = Command::new(env!("CARGO_BIN_EXE_jig"));
    earlier
        .args(["run", "-p", "--base-url"])
        .arg(format!("{}/v1", pane.server.url()))
        .args(["-m", "m", "remember the number 42"])
        .current_dir(&pane.ws)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL");
    for (key, value) in pane.env() {
        earlier.env(key, value);
    }
    let output = earlier.output().unwrap();
    assert!(output.status.success(), "{output:?}");

    pane.start("", &[]);
    pane.wait_for("/help for commands");
    pane.type_text("/resume");
    pane.key("Enter");
    let picker = pane.wait_for("resume which?");
    assert!(
        picker.contains("1 replies · remember the number 42"),
        "{picker}"
    );
    pane.type_text("1");
    pane.key("Enter");
    pane.wait_for("resumed session");
    // The recap follows the line that names the session.
    pane.wait_for("• the first answer");
    pane.type_text("and now?");
    pane.key("Enter");
    pane.wait_for("continuing");
    let messages = pane.server.requests()[1].json()["messages"].clone();
    assert_eq!(
        messages[1]["content"], "remember the number 42",
        "{messages}"
    );
    assert_eq!(messages[3]["content"], "and now?", "{messages}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resize_mid_stream_keeps_the_reply_whole() {
    if tmux_missing("a_resize_mid_stream_keeps_the_reply_whole") {
        return;
    }
    let pieces: Vec<String> = (1..=30)
        .map(|n| format!("line {n} of the reply\n"))
        .collect();
    let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let pane = Pane::new(vec![streamed(&pieces, Duration::from_millis(25))]).await;
    pane.start("", &[]);
    pane.wait_for("/help for commands");
    pane.type_text("count");
    pane.key("Enter");
    pane.wait_for("line 3 of the reply");
    pane.tmux(&["resize-window", "-t", "t", "-x", "50", "-y", "16"]);
    pane.wait_for("line 12 of the reply");
    pane.tmux(&["resize-window", "-t", "t", "-x", "100", "-y", "30"]);
    let screen = pane.wait_for("line 30 of the reply");
    pane.wait_idle();
    let history = pane.tmux(&["capture-pane", "-p", "-S", "-100", "-t", "t"]);
    let history = String::from_utf8_lossy(&history.stdout);
    for n in 1..=30 {
        let line = format!("line {n} of the reply");
        assert_eq!(
            history.matches(&line).count(),
            1,
            "`{line}` once in the scrollback:\n{history}\n---\n{screen}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_color_means_no_colours() {
    if tmux_missing("no_color_means_no_colours") {
        return;
    }
    let pane = Pane::new(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "bash",
            json!({"command": "echo out"}),
        )),
        reply(ScriptedReply::text("plain")),
    ])
    .await;
    pane.start("--permission-mode full-auto", &[("NO_COLOR", "1")]);
    pane.wait_for("/help for commands");
    pane.type_text("run it");
    pane.key("Enter");
    pane.wait_for("plain");
    pane.wait_for("openai/m · full-auto");
    let screen = pane.screen_with_escapes();
    assert!(screen.contains("✓ bash echo out"), "{screen}");
    // Reverse video may mark the cursor; no colour or dim attribute appears.
    for code in ["\u{1b}[3", "\u{1b}[9", "\u{1b}[2m", "\u{1b}[38"] {
        assert!(!screen.contains(code), "{code:?} in:\n{screen:?}");
    }
}

/// The project's extension: leaves `marker` when it starts, then answers as an extension that
/// registers nothing.
fn marker_extension(marker: &std::path::Path) -> String {
    format!(
        r#"import json, pathlib, sys
pathlib.Path({marker:?}).touch()
for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method == "initialize":
        result = {{"protocolVersion": 1, "name": "marker"}}
    elif method == "shutdown":
        break
    elif "id" in message and method is not None:
        result = None
    else:
        continue
    sys.stdout.write(json.dumps({{"jsonrpc": "2.0", "id": message["id"], "result": result}}) + "\n")
    sys.stdout.flush()
"#,
        marker = marker.display().to_string()
    )
}

/// What the trust tests look at after the answer.
struct TrustOutcome {
    pane: Pane,
    /// The screen while the question was asked.
    question: String,
    /// The screen once the session started.
    after: String,
    /// `trust.json`, `None` when it was not written.
    store: Option<String>,
    /// The project's extension ran.
    marker: bool,
}

/// Starts `jig` in a project whose `.jig/extensions/` holds the marker extension, with
/// `defaultProjectTrust: "ask"`; answers the trust question with `keys`.
async fn answer_trust(keys: &[&str]) -> TrustOutcome {
    let pane = Pane::new(vec![reply(ScriptedReply::text("hello"))]).await;
    let marker = pane.root.join("extension-ran");
    let extension = pane.ws.join(".jig/extensions/marker");
    fs::create_dir_all(&extension).unwrap();
    fs::write(extension.join("index.py"), marker_extension(&marker)).unwrap();
    let config = pane.root.join("config/jig");
    fs::create_dir_all(&config).unwrap();
    fs::write(
        config.join("settings.json"),
        r#"{"defaultProjectTrust": "ask"}"#,
    )
    .unwrap();
    pane.start("", &[]);
    let question = pane.wait_for("Esc cancels");
    assert!(
        !marker.exists(),
        "nothing the project brings runs before the answer"
    );
    for key in keys {
        pane.key(key);
    }
    pane.wait_for("/help for commands");
    // The prompt is drawn after the banner (the editor asks the terminal where the cursor is
    // first): wait for its status line too.
    let after = pane.wait_for("openai/m · ask");
    let store = fs::read_to_string(config.join("trust.json")).ok();
    let marker = marker.exists();
    TrustOutcome {
        question,
        after: pane.normalised(&after),
        store: store.map(|text| pane.normalised(&text)),
        marker,
        pane,
    }
}

impl TrustOutcome {
    /// The session works, and `/quit` ends it.
    fn quit(&self) {
        self.pane.quit();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_prompt_trust_saves_the_folder_and_loads_its_extensions() {
    if tmux_missing("trust_prompt_trust_saves_the_folder_and_loads_its_extensions") {
        return;
    }
    let outcome = answer_trust(&["Enter"]).await;
    insta::assert_snapshot!("trust_question", outcome.pane.normalised(&outcome.question));
    insta::assert_snapshot!("trust_answered", outcome.after);
    assert_eq!(outcome.store.as_deref(), Some("{\n  \"[WS]\": true\n}\n"));
    assert!(outcome.marker, "a trusted project's extension runs");
    outcome.quit();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_prompt_trust_parent_saves_the_parent() {
    if tmux_missing("trust_prompt_trust_parent_saves_the_parent") {
        return;
    }
    let outcome = answer_trust(&["Down", "Enter"]).await;
    assert!(
        outcome.after.contains("› Trust parent folder ([ROOT])"),
        "{}",
        outcome.after
    );
    assert_eq!(outcome.store.as_deref(), Some("{\n  \"[ROOT]\": true\n}\n"));
    assert!(outcome.marker);
    outcome.quit();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_prompt_session_only_trusts_without_saving() {
    if tmux_missing("trust_prompt_session_only_trusts_without_saving") {
        return;
    }
    let outcome = answer_trust(&["3"]).await;
    assert!(
        outcome.after.contains("› Trust (this session only)"),
        "{}",
        outcome.after
    );
    assert_eq!(outcome.store, None, "nothing saved");
    assert!(outcome.marker);
    outcome.quit();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_prompt_do_not_trust_saves_false_and_loads_nothing() {
    if tmux_missing("trust_prompt_do_not_trust_saves_false_and_loads_nothing") {
        return;
    }
    let outcome = answer_trust(&["Down", "Down", "Down", "Enter"]).await;
    assert!(
        outcome.after.contains("› Do not trust"),
        "{}",
        outcome.after
    );
    assert!(
        outcome.after.contains("not loading .jig/extensions/"),
        "{}",
        outcome.after
    );
    assert_eq!(outcome.store.as_deref(), Some("{\n  \"[WS]\": false\n}\n"));
    assert!(
        !outcome.marker,
        "an untrusted project's extension never runs"
    );
    outcome.quit();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_prompt_escape_is_untrusted_and_saves_nothing() {
    if tmux_missing("trust_prompt_escape_is_untrusted_and_saves_nothing") {
        return;
    }
    let outcome = answer_trust(&["Escape"]).await;
    assert!(outcome.after.contains("› (cancelled)"), "{}", outcome.after);
    assert!(
        outcome.after.contains("the question was dismissed"),
        "{}",
        outcome.after
    );
    assert_eq!(outcome.store, None, "nothing saved");
    assert!(!outcome.marker);
    outcome.quit();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_prompt_do_not_trust_for_the_session_saves_nothing() {
    if tmux_missing("trust_prompt_do_not_trust_for_the_session_saves_nothing") {
        return;
    }
    let outcome = answer_trust(&["5"]).await;
    assert!(
        outcome.after.contains("› Do not trust (this session only)"),
        "{}",
        outcome.after
    );
    assert_eq!(outcome.store, None);
    assert!(!outcome.marker);
    outcome.quit();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_command_shows_the_decision_and_changes_the_saved_one() {
    if tmux_missing("trust_command_shows_the_decision_and_changes_the_saved_one") {
        return;
    }
    let outcome = answer_trust(&["3"]).await;
    let pane = &outcome.pane;
    pane.type_text("/trust");
    pane.key("Enter");
    let screen = pane.wait_for("Change the saved trust decision?");
    let unwrapped: String = screen.split_whitespace().collect();
    assert!(
        unwrapped.contains("trusted(answered\"Trust(thissessiononly)\"attheprompt)"),
        "{screen}"
    );
    assert!(screen.contains("saved decision: none"), "{screen}");
    // Only the choices that are saved.
    assert!(screen.contains("3. Do not trust"), "{screen}");
    assert!(!screen.contains("4. "), "{screen}");
    pane.key("3");
    pane.wait_for("Saved trust decision: untrusted. Restart jig for this to take effect.");
    let store = fs::read_to_string(pane.root.join("config/jig/trust.json")).unwrap();
    assert_eq!(pane.normalised(&store), "{\n  \"[WS]\": false\n}\n");
    pane.type_text("/trust");
    pane.key("Enter");
    pane.wait_for("saved decision: untrusted");
    pane.key("Escape");
    pane.wait_for("trust decision unchanged");
    outcome.quit();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_commands_and_input_hooks_work_in_the_session() {
    if tmux_missing("extension_commands_and_input_hooks_work_in_the_session") {
        return;
    }
    let pane = Pane::new(vec![reply(ScriptedReply::text("noted"))]).await;
    let example = fs::canonicalize(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/extensions/abbreviations"),
    )
    .unwrap();
    pane.start(&format!("-e '{}'", example.display()), &[]);
    pane.wait_for("/help for commands");
    pane.type_text("/help");
    pane.key("Enter");
    let help = pane.wait_for("from extensions:");
    assert!(
        help.contains("/abbrev       define an abbreviation: /abbrev NAME TEXT"),
        "{help}"
    );
    // The command's reply text is shown.
    pane.type_text("/abbrev brb be right back");
    pane.key("Enter");
    pane.wait_for("brb = be right back");
    pane.type_text("/nosuch");
    pane.key("Enter");
    pane.wait_for("unknown command /nosuch");
    // `input` handles a note: nothing is sent.
    pane.type_text("# only a note");
    pane.key("Enter");
    pane.wait_for("(handled by an extension: nothing sent)");
    assert_eq!(pane.server.requests().len(), 0);
    // `input` transforms, `before_agent_start` changes the system prompt.
    pane.type_text("brb soon");
    pane.key("Enter");
    pane.wait_for("noted");
    pane.wait_idle();
    let request = pane.server.requests()[0].json();
    assert_eq!(
        request["messages"][1],
        json!({"role": "user", "content": "be right back soon"})
    );
    let system = request["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.ends_with("\n\nAbbreviations the user defined: brb = be right back"),
        "{system}"
    );
    pane.quit();
}

/// An extension whose `/ask` command asks the user three questions through `ui/*` and answers
/// with what it got (and whether `initialize` said there is a user interface).
const ASKING_EXTENSION: &str = r#"import json, sys
has_ui = None
def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
def call(method, params, id):
    send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("id") == id and "method" not in message:
            return message.get("result")
for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method == "initialize":
        has_ui = message["params"].get("hasUI")
        result = {"protocolVersion": 1, "name": "asker",
                  "commands": [{"name": "ask", "description": "asks the user"}]}
    elif method == "command":
        colour = call("ui/select", {"title": "Favourite colour?", "options": ["red", "green", "blue"]}, "q1")
        sure = call("ui/confirm", {"title": "Sure?"}, "q2")
        name = call("ui/input", {"title": "Your name?", "placeholder": "type it"}, "q3")
        call("ui/notify", {"message": "thanks"}, "q4")
        result = "hasUI=%s colour=%s sure=%s name=%s" % (has_ui, colour, sure, name)
    elif method == "shutdown":
        break
    elif "id" in message and method is not None:
        result = None
    else:
        continue
    send({"jsonrpc": "2.0", "id": message["id"], "result": result})
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_ui_questions_are_answered_in_the_session() {
    if tmux_missing("extension_ui_questions_are_answered_in_the_session") {
        return;
    }
    let pane = Pane::new(Vec::new()).await;
    let extension = pane.root.join("asker");
    fs::create_dir(&extension).unwrap();
    fs::write(extension.join("index.py"), ASKING_EXTENSION).unwrap();
    pane.start(&format!("-e '{}'", extension.display()), &[]);
    pane.wait_for("/help for commands");
    pane.type_text("/ask");
    pane.key("Enter");
    let screen = pane.wait_for("? Favourite colour?");
    assert!(screen.contains("asker asks:"), "{screen}");
    pane.key("Down");
    pane.key("Enter");
    pane.wait_for("? Sure?");
    pane.key("1");
    pane.wait_for("? Your name?");
    pane.type_text("Ada");
    pane.key("Enter");
    let screen = pane.wait_for("hasUI=True colour=green sure=True name=Ada");
    assert!(screen.contains("asker: thanks"), "{screen}");
    assert!(
        screen.contains("asker: Favourite colour? › green"),
        "{screen}"
    );
    // Esc dismisses: the extension gets what it gets without a user interface.
    pane.type_text("/ask");
    pane.key("Enter");
    pane.wait_for("? Favourite colour?");
    pane.key("Escape");
    pane.wait_for("? Sure?");
    pane.key("Escape");
    pane.wait_for("? Your name?");
    pane.key("Escape");
    pane.wait_for("hasUI=True colour=None sure=False name=None");
    pane.quit();
}

/// An extension whose `/act METHOD PARAMS` command calls the action `METHOD` with the JSON
/// `PARAMS` and answers `ok METHOD` or `error: <message>`; `EXT_ON` maps an event (or
/// `message_end/<role>`) to the `[METHOD, PARAMS]` it calls the first time it sees it.
/// `/act later METHOD PARAMS` answers `ok later` at once and calls the action two seconds later
/// from a thread of its own (its answer is not read). Every answer is appended to
/// `EXT_LOG` as `{"method", "result"|"error"}`.
const ACTING_EXTENSION: &str = r#"import json, os, sys, threading, time
log = open(os.environ["EXT_LOG"], "a")
out = threading.Lock()
on = json.loads(os.environ.get("EXT_ON", "{}"))
def send(message):
    with out:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()
def call(method, params, id):
    send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("id") == id and "method" not in message:
            return message
def later(method, params):
    time.sleep(2)
    send({"jsonrpc": "2.0", "id": "later", "method": method, "params": params})
calls = 0
for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method == "initialize":
        result = {"protocolVersion": 1, "name": "actor",
                  "events": [key.split("/")[0] for key in on],
                  "commands": [{"name": "act", "description": "calls an action"}]}
    elif method == "event":
        event = message["params"]["event"]
        role = (message["params"].get("message") or {}).get("role")
        if "%s/%s" % (event, role) in on:
            event = "%s/%s" % (event, role)
        if event in on:
            name, params = on.pop(event)
            calls += 1
            answer = call(name, params, "a%d" % calls)
            log.write(json.dumps({"method": name, "event": event,
                                  "result": answer.get("result"),
                                  "error": answer.get("error", {}).get("message")}) + "\n")
            log.flush()
        result = None
    elif method == "command":
        name, _, params = message["params"]["args"].partition(" ")
        if name == "later":
            name, _, params = params.partition(" ")
            threading.Thread(target=later, args=(name, json.loads(params)), daemon=True).start()
            send({"jsonrpc": "2.0", "id": message["id"], "result": "ok later"})
            continue
        calls += 1
        answer = call(name, json.loads(params or "{}"), "a%d" % calls)
        if "error" in answer:
            entry = {"method": name, "error": answer["error"]["message"]}
            result = "error: " + answer["error"]["message"]
        else:
            entry = {"method": name, "result": answer.get("result")}
            result = "ok " + name
        log.write(json.dumps(entry) + "\n")
        log.flush()
    elif method == "shutdown":
        break
    elif "id" in message and method is not None:
        result = None
    else:
        continue
    send({"jsonrpc": "2.0", "id": message["id"], "result": result})
"#;

/// The entries of the session files under `data`, oldest file first.
fn session_files(data: &std::path::Path) -> Vec<Vec<Value>> {
    let mut files = Vec::new();
    let mut dirs = vec![data.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|ext| ext == "jsonl") {
                files.push(path);
            }
        }
    }
    // Session file names start with their creation time.
    files.sort();
    files
        .iter()
        .map(|path| {
            fs::read_to_string(path)
                .unwrap()
                .lines()
                .map(|line| serde_json::from_str(line).unwrap())
                .collect()
        })
        .collect()
}

/// The user messages' texts of a request, in order.
fn user_texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// The tool names a request offered.
fn offered_tools(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Runs `/act METHOD PARAMS` and waits for its answer line.
fn act(pane: &Pane, method: &str, params: &str, answer: &str) -> String {
    pane.type_text(&format!("/act {method} {params}"));
    pane.key("Enter");
    let screen = pane.wait_for(answer);
    pane.wait_idle();
    screen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(
    clippy::too_many_lines,
    reason = "one session checked end to end: each action, then the session switch"
)]
async fn extension_actions_reach_the_interactive_session() {
    if tmux_missing("extension_actions_reach_the_interactive_session") {
        return;
    }
    let pane = Pane::new(vec![
        reply(ScriptedReply::text("first answer")),
        reply(ScriptedReply::text("second answer")),
        reply(ScriptedReply::text("third answer")),
        reply(ScriptedReply::text("fourth answer")),
        reply(ScriptedReply::text("fifth answer")),
    ])
    .await;
    let log = pane.start_with_actor(&[]);

    // setActiveTools: an unknown name changes nothing; the list applies from the next request.
    act(
        &pane,
        "setActiveTools",
        r#"{"names": ["nope"]}"#,
        "error: setActiveTools: unknown tool \"nope\"",
    );
    act(
        &pane,
        "setActiveTools",
        r#"{"names": ["read"]}"#,
        "ok setActiveTools",
    );
    pane.type_text("/tools");
    pane.key("Enter");
    let screen = pane.wait_for("(turned off by an extension)");
    let line = |name: &str| {
        screen
            .lines()
            .find(|line| line.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(!line("read").contains("turned off"), "{screen}");
    assert!(
        line("bash").contains("(turned off by an extension)"),
        "{screen}"
    );
    pane.wait_idle();
    // sendUserMessage while idle: a turn, as if typed.
    act(
        &pane,
        "sendUserMessage",
        r#"{"text": "hello from the extension"}"#,
        "first answer",
    );
    let requests = pane.server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        user_texts(&requests[0].json()),
        ["hello from the extension"]
    );
    assert_eq!(offered_tools(&requests[0].json()), ["read"]);

    // sendMessage with triggerTurn: display false is sent but not shown; shown ones are
    // labelled with their customType.
    act(
        &pane,
        "sendMessage",
        r#"{"content": "hidden note", "customType": "memo", "display": false, "triggerTurn": true}"#,
        "second answer",
    );
    act(
        &pane,
        "sendMessage",
        r#"{"content": "shown note", "customType": "memo", "triggerTurn": true}"#,
        "third answer",
    );
    let screen = pane.screen();
    assert!(!screen.contains("] hidden note"), "{screen}");
    insta::assert_snapshot!("extension_messages", pane.normalised(&screen));
    let requests = pane.server.requests();
    assert_eq!(
        user_texts(&requests[2].json()),
        ["hello from the extension", "hidden note", "shown note"]
    );

    // nextTurn: delivered with the user's next prompt. A message without triggerTurn waits too.
    act(
        &pane,
        "sendMessage",
        r#"{"content": "for later", "deliverAs": "nextTurn"}"#,
        "ok sendMessage",
    );
    act(
        &pane,
        "sendMessage",
        r#"{"content": "no trigger"}"#,
        "ok sendMessage",
    );
    assert_eq!(pane.server.requests().len(), 3, "no turn was started");
    pane.type_text("now");
    pane.key("Enter");
    pane.wait_for("fourth answer");
    pane.wait_idle();
    let requests = pane.server.requests();
    assert_eq!(
        user_texts(&requests[3].json())[3..],
        ["now", "for later", "no trigger"]
    );
    act(
        &pane,
        "appendEntry",
        r#"{"customType": "state", "data": {"n": 1}}"#,
        "ok appendEntry",
    );
    act(&pane, "getSessionInfo", "{}", "ok getSessionInfo");

    // After /new the host follows the new session.
    pane.type_text("/new");
    pane.key("Enter");
    pane.wait_for("new session");
    act(
        &pane,
        "appendEntry",
        r#"{"customType": "state", "data": {"n": 2}}"#,
        "ok appendEntry",
    );
    act(&pane, "getSessionInfo", "{}", "ok getSessionInfo");
    act(
        &pane,
        "sendUserMessage",
        r#"{"text": "in the new session"}"#,
        "fifth answer",
    );
    assert_eq!(
        user_texts(&pane.server.requests()[4].json()),
        ["in the new session"]
    );
    pane.quit();

    let files = session_files(&pane.root.join("data"));
    assert_eq!(files.len(), 2, "{files:?}");
    let custom = |file: &[Value]| -> Vec<Value> {
        file.iter()
            .filter(|entry| entry["type"] == "custom")
            .map(|entry| json!([entry["customType"], entry["data"]]))
            .collect()
    };
    assert_eq!(custom(&files[0]), [json!(["state", {"n": 1}])]);
    assert_eq!(custom(&files[1]), [json!(["state", {"n": 2}])]);
    let tagged: Vec<Value> = files[0]
        .iter()
        .filter(|entry| entry.get("customType").is_some() && entry["type"] == "message")
        .map(|entry| {
            json!([
                entry["message"]["content"][0]["text"],
                entry["customType"],
                entry["display"]
            ])
        })
        .collect();
    assert_eq!(
        tagged,
        [
            json!(["hidden note", "memo", false]),
            json!(["shown note", "memo", null]),
        ]
    );

    let infos: Vec<Value> = fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|entry| entry["method"] == "getSessionInfo")
        .map(|entry| entry["result"].clone())
        .collect();
    assert_eq!(infos.len(), 2);
    assert_eq!(infos[0]["mode"], "interactive");
    assert_eq!(infos[0]["provider"], "openai");
    assert_eq!(infos[0]["sessionId"], files[0][0]["id"]);
    assert_eq!(infos[0]["messageCount"], 10);
    assert_eq!(infos[1]["sessionId"], files[1][0]["id"]);
    assert_eq!(infos[1]["messageCount"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_events_start_and_steer_interactive_turns() {
    if tmux_missing("extension_events_start_and_steer_interactive_turns") {
        return;
    }
    let pane = Pane::new(vec![
        reply(ScriptedReply::text("started")),
        reply(ScriptedReply::text("steered")),
    ])
    .await;
    // session_start (idle) starts the first turn; message_end of its reply (the turn runs)
    // steers it on.
    let on = json!({
        "session_start": ["sendUserMessage", {"text": "from session_start"}],
        "message_end/assistant": ["sendMessage", {"content": "keep going", "customType": "nudge"}],
    })
    .to_string();
    pane.start_with_actor(&[("EXT_ON", &on)]);
    let screen = pane.wait_for("steered");
    pane.wait_idle();
    assert!(screen.contains("› from session_start"), "{screen}");
    assert!(screen.contains("[nudge] keep going"), "{screen}");
    let requests = pane.server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(user_texts(&requests[0].json()), ["from session_start"]);
    assert_eq!(
        user_texts(&requests[1].json()),
        ["from session_start", "keep going"]
    );
    pane.quit();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_asked_for_while_the_editor_waits_starts_at_once_and_keeps_the_typing() {
    if tmux_missing("a_turn_asked_for_while_the_editor_waits_starts_at_once_and_keeps_the_typing") {
        return;
    }
    let pane = Pane::new(vec![
        reply(ScriptedReply::text("timer answer")),
        reply(ScriptedReply::text("draft answer")),
    ])
    .await;
    pane.start_with_actor(&[]);
    pane.type_text(r#"/act later sendUserMessage {"text": "from a timer"}"#);
    pane.key("Enter");
    pane.wait_for("ok later");
    // Typed but not sent when the extension's message arrives.
    pane.type_text("draft");
    let screen = pane.wait_for("timer answer");
    assert!(screen.contains("› from a timer"), "{screen}");
    pane.wait_idle();
    assert_eq!(
        user_texts(&pane.server.requests()[0].json()),
        ["from a timer"]
    );
    // The typing is back in the editor.
    let screen = pane.wait_for("› draft");
    insta::assert_snapshot!("turn_from_a_timer", pane.normalised(&screen));
    pane.key("Enter");
    pane.wait_for("draft answer");
    pane.wait_idle();
    assert_eq!(
        user_texts(&pane.server.requests()[1].json()),
        ["from a timer", "draft"]
    );
    pane.quit();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_templates_and_skills_are_commands_of_the_session() {
    if tmux_missing("prompt_templates_and_skills_are_commands_of_the_session") {
        return;
    }
    let pane = Pane::new(vec![
        reply(ScriptedReply::text("reviewed")),
        reply(ScriptedReply::text("noted")),
    ])
    .await;
    let prompts = pane.root.join("config/jig/prompts");
    fs::create_dir_all(&prompts).unwrap();
    fs::write(
        prompts.join("review.md"),
        "---\ndescription: Review a file\nargument-hint: FILE FOCUS\n---\nReview $1 for $2.\n",
    )
    .unwrap();
    let skill = pane.root.join(".agents/skills/greet");
    fs::create_dir_all(&skill).unwrap();
    fs::write(
        skill.join("SKILL.md"),
        "---\nname: greet\ndescription: Greets people politely.\n---\nAlways say hello first.\n",
    )
    .unwrap();
    pane.start("", &[]);
    pane.wait_for("/help for commands");
    pane.type_text("/help");
    pane.key("Enter");
    let help = pane.wait_for("/review FILE FOCUS");
    assert!(help.contains("Review a file"), "{help}");
    assert!(help.contains("/skill:greet"), "{help}");
    pane.type_text("/review src/lib.rs 'error handling'");
    pane.key("Enter");
    pane.wait_for("reviewed");
    pane.wait_idle();
    pane.type_text("/skill:greet meet the team");
    pane.key("Enter");
    pane.wait_for("noted");
    pane.wait_idle();
    pane.quit();
    let requests = pane.server.requests();
    assert_eq!(
        user_texts(&requests[0].json()),
        ["Review src/lib.rs for error handling.\n"]
    );
    let forced = user_texts(&requests[1].json())[1].clone();
    assert!(forced.starts_with("<skill name=\"greet\""), "{forced}");
    assert!(forced.contains("Always say hello first."), "{forced}");
    assert!(forced.ends_with("meet the team"), "{forced}");
}

/// Pi's own extensions in the session: `event-bus` (events between its handlers, shown through
/// `ctx.ui.notify`), `send-user-message` (`/ask` starts a turn), `permission-gate` (asks
/// through `ctx.ui.select`) and the npm package `pi-aliases` (`/clear` starts a new session
/// through `ctx.newSession()`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_extensions_commands_notify_start_turns_and_new_sessions() {
    if tmux_missing("pi_extensions_commands_notify_start_turns_and_new_sessions") {
        return;
    }
    let host = fs::canonicalize(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../jig-extensions/pi-host"),
    )
    .unwrap();
    let examples = host.join("node_modules/@mariozechner/pi-coding-agent/examples/extensions");
    if !examples.is_dir() {
        assert!(
            std::env::var("JIG_REQUIRE_CLIENTS").as_deref() != Ok("1"),
            "the Pi extension host's dependencies are not installed"
        );
        eprintln!("SKIPPED: the Pi extension host's dependencies are not installed");
        return;
    }
    let pane = Pane::new(vec![
        reply(ScriptedReply::text("four")),
        reply(ScriptedReply::tool_call(
            "c1",
            "bash",
            json!({"command": "rm -rf victim"}),
        )),
        reply(ScriptedReply::text("kept")),
    ])
    .await;
    fs::create_dir_all(pane.ws.join("victim")).unwrap();
    fs::write(pane.ws.join("victim/file"), "keep me\n").unwrap();
    let npm = pane.root.join("npm");
    let status = Command::new("npm")
        .args([
            "install",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--prefix",
        ])
        .arg(&npm)
        .arg("pi-aliases@1.0.7")
        .status()
        .unwrap();
    assert!(status.success(), "npm install pi-aliases failed");
    let args = format!(
        "--permission-mode full-auto -e '{}' -e '{}' -e '{}' -e '{}'",
        examples.join("event-bus.ts").display(),
        examples.join("send-user-message.ts").display(),
        examples.join("permission-gate.ts").display(),
        npm.join("node_modules/pi-aliases").display(),
    );
    let host_env = host.display().to_string();
    pane.start(&args, &[("JIG_PI_HOST", &host_env)]);
    pane.wait_for("/help for commands");
    // session_start emitted on the bus and the listener notified the user (shown once a
    // command runs: questions asked while the editor waits are shown with the next one); then
    // /emit does the same.
    pane.type_text("/emit hello bus");
    pane.key("Enter");
    let screen = pane.wait_for("Event from /emit command: hello bus");
    assert!(
        screen.contains("Event from event-bus-example: Session started"),
        "{screen}"
    );
    // /ask sends a user message, which starts a turn.
    pane.type_text("/ask what is 2+2");
    pane.key("Enter");
    pane.wait_for("four");
    pane.wait_idle();
    let request = pane.server.requests()[0].json();
    assert_eq!(user_texts(&request), ["what is 2+2"]);
    // permission-gate asks through ctx.ui.select; "No" blocks the command.
    pane.type_text("clean up");
    pane.key("Enter");
    pane.wait_for("Allow?");
    pane.key("Down");
    pane.key("Enter");
    pane.wait_for("kept");
    pane.wait_idle();
    assert!(pane.ws.join("victim/file").exists(), "rm -rf ran");
    let request = pane.server.requests()[2].json();
    let blocked = request["messages"].to_string();
    assert!(blocked.contains("Blocked by user"), "{blocked}");
    // pi-aliases' /clear asks for a new session.
    pane.type_text("/clear");
    pane.key("Enter");
    pane.wait_for("new session");
    pane.quit();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rm_offers_no_prefix_and_rm_rf_src_is_still_asked_about() {
    if tmux_missing("rm_offers_no_prefix_and_rm_rf_src_is_still_asked_about") {
        return;
    }
    let pane = Pane::new(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "bash",
            json!({"command": "rm -rf build"}),
        )),
        reply(ScriptedReply::tool_call(
            "c2",
            "bash",
            json!({"command": "rm -rf src"}),
        )),
        reply(ScriptedReply::text("Stopped.")),
    ])
    .await;
    fs::create_dir_all(pane.ws.join("build")).unwrap();
    fs::create_dir_all(pane.ws.join("src")).unwrap();
    fs::write(pane.ws.join("src/important.py"), "keep me\n").unwrap();
    pane.start("", &[]);
    pane.wait_for("/help for commands");
    pane.type_text("clean up");
    pane.key("Enter");
    let asking = pane.wait_for("[n] no, with a reason");
    insta::assert_snapshot!("rm_question", pane.normalised(&asking));
    assert!(!asking.contains("[p] always"), "{asking}");
    // `p` is not an answer here: the question stays.
    pane.type_text("p");
    std::thread::sleep(Duration::from_millis(300));
    assert!(pane.ws.join("build").exists(), "nothing ran on `p`");
    assert!(pane.screen().contains("[n] no, with a reason"));
    pane.type_text("y");
    let asking = pane.wait_for("? allow bash rm -rf src");
    assert!(!pane.ws.join("build").exists(), "`y` ran rm -rf build");
    assert!(asking.contains("[n] no, with a reason"), "{asking}");
    assert!(
        pane.ws.join("src/important.py").exists(),
        "rm -rf src waits for its own answer"
    );
    pane.key("Escape");
    pane.wait_for("Stopped.");
    assert_eq!(
        fs::read_to_string(pane.ws.join("src/important.py")).unwrap(),
        "keep me\n"
    );
    pane.quit();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_find_prefix_allows_neither_exec_nor_delete() {
    if tmux_missing("a_find_prefix_allows_neither_exec_nor_delete") {
        return;
    }
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    fs::create_dir(&victim).unwrap();
    fs::write(victim.join("data.txt"), "precious\n").unwrap();
    let pane = Pane::new(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "bash",
            json!({"command": "find . -name '*.txt'"}),
        )),
        reply(ScriptedReply::tool_call(
            "c2",
            "bash",
            json!({"command": "find . -name '*.txt' -exec touch pwned {} +"}),
        )),
        reply(ScriptedReply::tool_call(
            "c3",
            "bash",
            json!({"command": format!("find {} -delete", victim.display())}),
        )),
        reply(ScriptedReply::tool_call(
            "c4",
            "bash",
            json!({"command": "find . -type f"}),
        )),
        reply(ScriptedReply::text("Done finding.")),
    ])
    .await;
    fs::write(pane.ws.join("a.txt"), "a\n").unwrap();
    pane.start("", &[]);
    pane.wait_for("/help for commands");
    pane.type_text("look around");
    pane.key("Enter");
    let asking = pane.wait_for("[n] no, with a reason");
    insta::assert_snapshot!("find_prefix_question", pane.normalised(&asking));
    assert!(asking.contains("[p] always `find …` (session)"), "{asking}");
    assert!(asking.contains("never with -exec"), "{asking}");
    pane.type_text("p");
    let asking = pane.wait_for("? allow bash find . -name '*.txt' -exec");
    assert!(asking.contains("no [p]: `find -exec`"), "{asking}");
    pane.key("Escape");
    let asking = pane.wait_for("-delete");
    assert!(asking.contains("[n] no, with a reason"), "{asking}");
    pane.key("Escape");
    // A plain find is allowed by the prefix: no question.
    pane.wait_for("Done finding.");
    assert!(!pane.ws.join("pwned").exists());
    assert_eq!(
        fs::read_to_string(victim.join("data.txt")).unwrap(),
        "precious\n"
    );
    let results = pane.tool_results(4);
    assert!(
        results.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .contains("a.txt"),
        "{results:?}"
    );
    pane.quit();
}

/// A message that starts with a path is sent to the model, not refused as an unknown command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_starting_with_a_path_is_sent() {
    if tmux_missing("a_message_starting_with_a_path_is_sent") {
        return;
    }
    let pane = Pane::new(vec![reply(ScriptedReply::text("it runs a program"))]).await;
    pane.start("", &[]);
    pane.wait_for("/help for commands");
    pane.type_text("/usr/bin/env is what?");
    pane.key("Enter");
    let screen = pane.wait_for("it runs a program");
    assert!(!screen.contains("unknown command"), "{screen}");
    pane.wait_idle();
    let request = pane.server.requests()[0].json();
    assert_eq!(user_texts(&request), ["/usr/bin/env is what?"]);
    pane.quit();
}

/// The status line shows the reasoning level once it is not off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_line_shows_the_thinking_level() {
    if tmux_missing("the_status_line_shows_the_thinking_level") {
        return;
    }
    for size in SIZES {
        let pane = Pane::sized(Vec::new(), size).await;
        pane.start("", &[]);
        let screen = pane.wait_for("/help for commands");
        assert!(!screen.contains("thinking"), "{screen}");
        pane.type_text("/thinking high");
        pane.key("Enter");
        pane.wait_for("openai/m · thinking high · ask");
        pane.quit();
    }
}

/// Esc during a turn with a message queued: nothing more is sent (the interrupted command is
/// not started again by the queued message), and the queued text is back in the editor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_with_a_queued_message_sends_nothing_and_puts_it_back() {
    if tmux_missing("escape_with_a_queued_message_sends_nothing_and_puts_it_back") {
        return;
    }
    for size in SIZES {
        let pane = Pane::sized(
            vec![
                reply(ScriptedReply::tool_call(
                    "c1",
                    "bash",
                    json!({"command": "echo started; exec sleep 300"}),
                )),
                reply(ScriptedReply::tool_call(
                    "c2",
                    "bash",
                    json!({"command": "echo started again; exec sleep 300"}),
                )),
            ],
            size,
        )
        .await;
        pane.start("--permission-mode full-auto", &[]);
        pane.wait_for("/help for commands");
        pane.type_text("wait a while");
        pane.key("Enter");
        pane.wait_for("started");
        pane.type_text("and then this");
        pane.key("Enter");
        pane.wait_for("queued › and then this");
        pane.key("Escape");
        pane.wait_for("interrupted");
        let screen = pane.wait_for("› and then this");
        assert!(!screen.contains("queued ›"), "{screen}");
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(pane.server.requests().len(), 1, "{}", pane.screen());
        assert!(!pane.screen().contains("started again"));
        // The text is the editor's to change: clear it before quitting.
        pane.key("C-a");
        pane.key("C-k");
        pane.quit();
    }
}

/// `/model` refuses an id the provider's table does not know, unless forced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_refuses_an_unknown_id_unless_forced() {
    if tmux_missing("model_refuses_an_unknown_id_unless_forced") {
        return;
    }
    let pane = Pane::new(Vec::new()).await;
    // OpenAI's own endpoint: nothing is sent in this test.
    pane.start_with(
        "--provider openai -m gpt-4.1",
        &[("OPENAI_API_KEY", "sk-test")],
    );
    pane.wait_for("/help for commands");
    pane.type_text("/model gtp-5-typo");
    pane.key("Enter");
    let screen = pane.wait_for("unknown model `gtp-5-typo` for openai");
    assert!(screen.contains("openai/gpt-4.1 · ask"), "{screen}");
    pane.type_text("/model gpt-4.1-mini");
    pane.key("Enter");
    pane.wait_for("openai/gpt-4.1-mini · ask");
    pane.type_text("/model --force my-finetune");
    pane.key("Enter");
    pane.wait_for("openai/my-finetune · ask");
    pane.quit();
}

/// A session at OpenAI's own endpoint (`gpt-4.1`) with Anthropic's key set too, in a pane of
/// `size`: the picker lists both providers' models. Nothing is sent.
async fn two_providers(size: (u16, u16)) -> Pane {
    let pane = Pane::sized(Vec::new(), size).await;
    pane.start_with(
        "--provider openai -m gpt-4.1",
        &[
            ("OPENAI_API_KEY", "sk-test"),
            ("ANTHROPIC_API_KEY", "sk-ant-test"),
        ],
    );
    pane.wait_for("/help for commands");
    pane
}

/// `/model` lists the known models of the provider and of the other usable one, the current
/// model marked and selected; the one chosen is the model, and the status line says so.
async fn model_picker_switches(size: (u16, u16)) {
    let pane = two_providers(size).await;
    pane.type_text("/model");
    pane.key("Enter");
    let picker = pane.wait_for("Esc cancels");
    assert!(picker.contains("›  4. gpt-4.1 (current)"), "{picker}");
    insta::assert_snapshot!(
        snapshot_name("model_picker", size),
        pane.normalised(&picker)
    );
    pane.key("Down");
    pane.key("Enter");
    let screen = pane.wait_for_after(
        "model: gpt-4.1-mini",
        "openai/gpt-4.1-mini · ask · ↑0 ↓0\n›",
    );
    insta::assert_snapshot!(
        snapshot_name("model_picked", size),
        pane.normalised(&screen)
    );
    pane.quit();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_picker_switches_and_the_status_line_follows() {
    if tmux_missing("model_picker_switches_and_the_status_line_follows") {
        return;
    }
    for size in SIZES {
        model_picker_switches(size).await;
    }
}

/// Esc leaves the picker and the model as they were.
async fn model_picker_escape(size: (u16, u16)) {
    let pane = two_providers(size).await;
    pane.type_text("/model");
    pane.key("Enter");
    pane.wait_for("Esc cancels");
    pane.key("Down");
    pane.key("Escape");
    let screen = pane.wait_for_after(
        "model unchanged: gpt-4.1",
        "openai/gpt-4.1 · ask · ↑0 ↓0\n›",
    );
    insta::assert_snapshot!(
        snapshot_name("model_picker_escape", size),
        pane.normalised(&screen)
    );
    pane.quit();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_picker_escape_keeps_the_model() {
    if tmux_missing("model_picker_escape_keeps_the_model") {
        return;
    }
    for size in SIZES {
        model_picker_escape(size).await;
    }
}

/// Ctrl-P in the prompt goes to the provider's next known model at once: the prompt is drawn
/// again with a note and the new status line, the typed text kept; ↑ still walks the history.
async fn ctrl_p_cycles(size: (u16, u16)) {
    let pane = two_providers(size).await;
    pane.type_text("/thinking low");
    pane.key("Enter");
    pane.wait_for("thinking: low");
    pane.type_text("hello");
    pane.wait_for("› hello");
    pane.key("C-p");
    let screen = pane.wait_for_after(
        "model: gpt-4.1-mini",
        "openai/gpt-4.1-mini · thinking low · ask · ↑0 ↓0\n› hello",
    );
    insta::assert_snapshot!(
        snapshot_name("model_cycled", size),
        pane.normalised(&screen)
    );
    pane.key("C-p");
    let screen = pane.wait_for_after(
        "model: gpt-4.1-nano",
        "openai/gpt-4.1-nano · thinking low · ask · ↑0 ↓0\n› hello",
    );
    // Drawn in place: the first note made way for the second.
    assert!(!screen.contains("model: gpt-4.1-mini"), "{screen}");
    pane.key("C-a");
    pane.key("C-k");
    pane.key("Up");
    pane.wait_for_after("gpt-4.1-nano · thinking low", "› /thinking low");
    pane.key("C-a");
    pane.key("C-k");
    pane.quit();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_p_cycles_the_model() {
    if tmux_missing("ctrl_p_cycles_the_model") {
        return;
    }
    for size in SIZES {
        ctrl_p_cycles(size).await;
    }
}

/// At an endpoint whose models jig does not know, `/model` and Ctrl-P say so and how to switch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_at_an_unknown_endpoint_says_to_name_the_model() {
    if tmux_missing("model_at_an_unknown_endpoint_says_to_name_the_model") {
        return;
    }
    let pane = Pane::new(Vec::new()).await;
    pane.start("", &[]);
    pane.wait_for("/help for commands");
    pane.type_text("/model");
    pane.key("Enter");
    pane.wait_for("jig does not know the models of openai at");
    pane.wait_for("switch with /model ID");
    pane.key("C-p");
    pane.wait_for("no known models of openai to cycle through");
    pane.quit();
}

/// `/model PROVIDER/ID` switches to another configured provider (its own client: the next
/// request goes there with its key, and the session records it); a provider without its key
/// is refused, saying what to set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_switches_to_another_configured_provider() {
    if tmux_missing("model_switches_to_another_configured_provider") {
        return;
    }
    let pane = Pane::new(vec![reply(ScriptedReply::text("from beta"))]).await;
    let url = format!("{}/v1", pane.server.url());
    let settings = json!({"providers": [
        {"name": "alpha", "kind": "openai", "baseUrl": url, "models": [{"id": "a1"}, {"id": "a2"}]},
        {"name": "beta", "kind": "openai", "baseUrl": url, "apiKeyEnv": "BETA_KEY",
         "models": [{"id": "b1"}]},
        {"name": "gamma", "kind": "openai", "baseUrl": url, "apiKeyEnv": "GAMMA_KEY",
         "models": [{"id": "g1"}]},
    ]});
    let config = pane.root.join("config/jig");
    fs::create_dir_all(&config).unwrap();
    fs::write(config.join("settings.json"), settings.to_string()).unwrap();
    pane.start_with("--provider alpha", &[("BETA_KEY", "sk-beta")]);
    pane.wait_for("/help for commands");
    pane.type_text("/model");
    pane.key("Enter");
    let picker = pane.wait_for("Esc cancels");
    for listed in [
        "  alpha",
        "› 1. a1 (current)",
        "  2. a2",
        "  beta",
        "  3. b1",
    ] {
        assert!(picker.contains(listed), "{listed}: {picker}");
    }
    assert!(!picker.contains("gamma"), "{picker}");
    pane.key("Escape");
    pane.wait_for("model unchanged: a1");
    pane.type_text("/model gamma/g1");
    pane.key("Enter");
    pane.wait_for("set GAMMA_KEY");
    // Chosen in the picker, then back and forth by name.
    pane.type_text("/model");
    pane.key("Enter");
    pane.wait_for("Esc cancels");
    pane.key("3");
    pane.wait_for_after("model: beta/b1", "beta/b1 · ask");
    pane.type_text("/model alpha/a2");
    pane.key("Enter");
    pane.wait_for_after("model: alpha/a2", "alpha/a2 · ask");
    pane.type_text("/model beta/b1");
    pane.key("Enter");
    pane.wait_for_after("model: beta/b1", "beta/b1 · ask");
    pane.type_text("hi");
    pane.key("Enter");
    pane.wait_for("from beta");
    pane.wait_idle();
    pane.quit();
    let request = &pane.server.requests()[0];
    assert_eq!(request.json()["model"], "b1");
    assert_eq!(request.header("authorization"), Some("Bearer sk-beta"));
    let sessions = session_files(&pane.root.join("data"));
    let change = sessions[0]
        .iter()
        .rev()
        .find(|entry| entry["type"] == "model_change")
        .unwrap();
    assert_eq!(change["provider"], "beta");
    assert_eq!(change["modelId"], "b1");
}

/// A command the sandbox denied can run again outside it with the user's approval: `y` once
/// (`T` and `P`, the project scopes, are not answers here), `n` keeps the sandboxed result;
/// the model reads which happened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_the_sandbox_denied_runs_again_outside_it_only_when_approved() {
    if tmux_missing("a_command_the_sandbox_denied_runs_again_outside_it_only_when_approved") {
        return;
    }
    for mechanism in crate::sandbox::mechanisms(
        "a_command_the_sandbox_denied_runs_again_outside_it_only_when_approved",
    ) {
        let pane = Pane::new(vec![
            reply(ScriptedReply::tool_call(
                "c1",
                "bash",
                json!({"command": "echo pwned > ../outside.txt"}),
            )),
            reply(ScriptedReply::tool_call(
                "c2",
                "bash",
                json!({"command": "echo again > ../outside-2.txt"}),
            )),
            reply(ScriptedReply::text("Done.")),
        ])
        .await;
        pane.start(
            "--permission-mode full-auto",
            &[("JIG_SANDBOX_MECHANISM", mechanism)],
        );
        pane.wait_for("/help for commands");
        pane.type_text("write outside");
        pane.key("Enter");
        let asking = pane.wait_for("[n] no, with a reason");
        insta::assert_snapshot!(
            format!("rerun_outside_sandbox_question_{mechanism}"),
            pane.normalised(&asking)
        );
        assert!(
            !pane.root.join("outside.txt").exists(),
            "{mechanism}: the sandbox let the write through"
        );
        // Project scopes are no answer: the question stays, nothing runs.
        pane.type_text("T");
        pane.type_text("P");
        std::thread::sleep(Duration::from_millis(300));
        assert!(!pane.root.join("outside.txt").exists(), "{mechanism}");
        assert!(
            pane.screen().contains("[n] no, with a reason"),
            "{mechanism}"
        );
        pane.type_text("y");
        pane.wait_for("? run again OUTSIDE the sandbox bash echo again");
        assert_eq!(
            fs::read_to_string(pane.root.join("outside.txt")).unwrap(),
            "pwned\n",
            "{mechanism}"
        );
        pane.type_text("n");
        pane.type_text("not that one");
        pane.key("Enter");
        pane.wait_for("Done.");
        assert!(!pane.root.join("outside-2.txt").exists(), "{mechanism}");
        let results = pane.tool_results(2);
        let text = |index: usize| results[index]["content"].to_string();
        assert!(
            text(0).contains("ran again outside the sandbox"),
            "{mechanism}: {}",
            text(0)
        );
        assert!(
            text(1).contains("declined to run it again outside the sandbox: not that one"),
            "{mechanism}: {}",
            text(1)
        );
        // Nothing about leaving the sandbox was saved for the project.
        let saved = fs::read_dir(pane.root.join("config"))
            .into_iter()
            .flatten()
            .count();
        assert_eq!(saved, 0, "{mechanism}: something was saved");
        pane.quit();
    }
}

/// `/permissions` shows the mode, the allowances and what the sandbox enforces.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permissions_shows_the_sandbox() {
    if tmux_missing("permissions_shows_the_sandbox") {
        return;
    }
    for mechanism in crate::sandbox::mechanisms("permissions_shows_the_sandbox") {
        let pane = Pane::new(Vec::new()).await;
        pane.start("", &[("JIG_SANDBOX_MECHANISM", mechanism)]);
        pane.wait_for("/help for commands");
        pane.type_text("/permissions");
        pane.key("Enter");
        let screen = pane.wait_for("mechanism");
        assert!(screen.contains("permission mode: ask"), "{screen}");
        assert!(
            screen.contains("sandbox: workspace-write: writes only in"),
            "{mechanism}: {screen}"
        );
        let named = if mechanism == "bwrap" {
            "bubblewrap"
        } else {
            "Landlock"
        };
        assert!(screen.contains(named), "{mechanism}: {screen}");
        pane.quit();
    }
}

/// `/index` shows the root's warm index once it is built.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_shows_the_warm_index() {
    if tmux_missing("index_shows_the_warm_index") {
        return;
    }
    let pane = Pane::new(Vec::new()).await;
    fs::write(pane.ws.join("a.txt"), "alpha\n").unwrap();
    pane.start("", &[]);
    pane.wait_for("/help for commands");
    let ready = format!("warm index of {}: ready,", pane.ws.display());
    let mut screen = String::new();
    for _ in 0..20 {
        pane.type_text("/index");
        pane.key("Enter");
        screen = pane.wait_for("warm index of");
        if screen.contains(&ready) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    assert!(screen.contains(&ready), "{screen}");
    assert!(screen.contains("1 file, "), "{screen}");
    pane.quit();
}

/// After `--continue`, the recap shows the prompt, the call with its command, the denied
/// result marked `✗` with its reason, and the last reply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_resume_recap_shows_the_call_and_marks_the_denied_result() {
    if tmux_missing("the_resume_recap_shows_the_call_and_marks_the_denied_result") {
        return;
    }
    for size in SIZES {
        let pane = Pane::sized(
            vec![
                reply(ScriptedReply::tool_call(
                    "c1",
                    "bash",
                    json!({"command": "rm -rf build"}),
                )),
                reply(ScriptedReply::text("I could not clean up.")),
            ],
            size,
        )
        .await;
        fs::create_dir_all(pane.ws.join("build")).unwrap();
        // The earlier session, in print mode with `ask`: the call is denied without asking.
        let mut earlier = Command::new(env!("CARGO_BIN_EXE_jig"));
        earlier
            .args(["run", "-p", "--permission-mode", "ask", "--base-url"])
            .arg(format!("{}/v1", pane.server.url()))
            .args(["-m", "m", "clean up the build"])
            .current_dir(&pane.ws)
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL");
        for (key, value) in pane.env() {
            earlier.env(key, value);
        }
        let output = earlier.output().unwrap();
        assert!(output.status.success(), "{output:?}");
        assert!(pane.ws.join("build").exists());

        pane.start("--continue", &[]);
        pane.wait_for("• I could not clean up.");
        // The prompt comes after the recap.
        let screen = pane.wait_for("openai/m · ask · ↑20 ↓10");
        insta::assert_snapshot!(
            snapshot_name("resume_recap", size),
            pane.normalised(&screen)
        );
        assert!(screen.contains("⋯ bash rm -rf build"), "{screen}");
        assert!(
            screen.contains("✗ bash: The `bash` call was not run"),
            "{screen}"
        );
        assert!(screen.contains("• I could not clean up."), "{screen}");
        pane.quit();
    }
}

/// `jig` with no key opens the session, says how to configure a provider, and answers a
/// message with the same advice instead of exiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_contact_without_a_key_opens_the_session_and_says_how_to_configure_one() {
    if tmux_missing("first_contact_without_a_key_opens_the_session_and_says_how_to_configure_one") {
        return;
    }
    for size in SIZES {
        let pane = Pane::sized(Vec::new(), size).await;
        pane.start_with("", &[]);
        pane.wait_for("(docs/agent.md)");
        let screen = pane.wait_for("gpt-4.1 · ask · ↑0 ↓0");
        insta::assert_snapshot!(
            snapshot_name("first_contact_without_a_key", size),
            pane.normalised(&screen)
        );
        pane.type_text("hello");
        pane.key("Enter");
        let screen = pane.wait_for("no API key for openai: set OPENAI_API_KEY");
        assert!(!screen.contains("[exited"), "{screen}");
        assert!(pane.server.requests().is_empty());
        pane.quit();
    }
}

/// `!CMD` runs in the workspace and its output stays on screen; `!!CMD` also sends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bang_runs_a_shell_command_and_a_double_bang_sends_its_output() {
    if tmux_missing("a_bang_runs_a_shell_command_and_a_double_bang_sends_its_output") {
        return;
    }
    let pane = Pane::new(vec![reply(ScriptedReply::text("Noted the listing."))]).await;
    fs::write(pane.ws.join("marker-file.txt"), "x").unwrap();
    pane.start("", &[]);
    pane.wait_for("/help for commands");
    // Outside the workspace too: the user's own command runs with the user's rights.
    pane.type_text("!ls && echo made > ../by-the-user.txt");
    pane.key("Enter");
    let screen = pane.wait_for("  marker-file.txt");
    assert!(screen.contains("$ ls && echo made"), "{screen}");
    assert!(pane.root.join("by-the-user.txt").exists(), "{screen}");
    std::thread::sleep(Duration::from_millis(200));
    assert!(pane.server.requests().is_empty(), "! sent something");
    pane.type_text("!!ls");
    pane.key("Enter");
    pane.wait_for("Noted the listing.");
    let request = pane.server.requests()[0].json();
    let sent = request["messages"].to_string();
    assert!(sent.contains("I ran `ls` in the workspace"), "{sent}");
    assert!(sent.contains("marker-file.txt"), "{sent}");
    pane.quit();
}

/// `/export` writes the conversation as Markdown, or HTML for a `.html` name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_writes_the_conversation_as_markdown_or_html() {
    if tmux_missing("export_writes_the_conversation_as_markdown_or_html") {
        return;
    }
    let pane = Pane::new(vec![reply(ScriptedReply::text("The answer is 42."))]).await;
    pane.start("", &[]);
    pane.wait_for("/help for commands");
    pane.type_text("what is the answer?");
    pane.key("Enter");
    pane.wait_for("The answer is 42.");
    pane.type_text("/export notes.md");
    pane.key("Enter");
    pane.wait_for("exported the session to");
    let markdown = fs::read_to_string(pane.ws.join("notes.md")).unwrap();
    assert!(
        markdown.contains("## User\n\nwhat is the answer?"),
        "{markdown}"
    );
    assert!(
        markdown.contains("## Assistant\n\nThe answer is 42."),
        "{markdown}"
    );
    pane.type_text("/export page.html");
    pane.key("Enter");
    pane.wait_for("page.html");
    let html = fs::read_to_string(pane.ws.join("page.html")).unwrap();
    assert!(html.starts_with("<!doctype html>"), "{html}");
    assert!(html.contains("The answer is 42."), "{html}");
    pane.type_text("/export missing-dir/x.md");
    pane.key("Enter");
    pane.wait_for("nothing was written");
    pane.quit();
}

/// A paragraph of 520 characters, eight sentences.
const PARAGRAPH: &str = "The renderer breaks a long line only between words, never inside one. \
Each sentence here is long enough to cross the edge of a narrow terminal at least once. \
When the reply is copied, the words come back whole and in their order. \
The operator from minus to plus changes the sign of the whole expression. \
Nothing in this paragraph should ever be split into two halves of a word. \
A wider terminal shows the same text on fewer rows, with the same words. \
Tmux joins the rows it wrapped, so a joined capture holds every sentence. \
This is the last sentence.";

/// Problem: streamed text got hard line breaks inside words. The reply's rows end at word
/// boundaries, and tmux's joined capture has the paragraph on one line with its words whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_paragraph_wraps_between_words_and_copies_whole() {
    if tmux_missing("a_long_paragraph_wraps_between_words_and_copies_whole") {
        return;
    }
    assert!(PARAGRAPH.len() >= 520, "{}", PARAGRAPH.len());
    let pieces: Vec<String> = PARAGRAPH
        .as_bytes()
        .chunks(13)
        .map(|chunk| String::from_utf8(chunk.to_vec()).unwrap())
        .collect();
    let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let words: std::collections::HashSet<&str> = PARAGRAPH.split(' ').collect();
    for size in SIZES {
        let pane = Pane::sized(vec![streamed(&pieces, Duration::from_millis(5))], size).await;
        pane.start("", &[]);
        pane.wait_for("/help for commands");
        pane.type_text("explain");
        pane.key("Enter");
        pane.wait_for("last sentence.");
        pane.wait_idle();
        let screen = pane.screen();
        insta::assert_snapshot!(
            snapshot_name("long_paragraph", size),
            pane.normalised(&screen)
        );
        // Every row of the reply holds whole words only.
        let rows: Vec<&str> = screen
            .lines()
            .skip_while(|row| !row.starts_with("› explain"))
            .skip(1)
            .take_while(|row| !row.starts_with("openai/m ·"))
            .collect();
        assert!(rows.len() > 1, "{screen}");
        for row in &rows {
            for word in row.split(' ').filter(|w| !w.is_empty()) {
                assert!(
                    words.contains(word),
                    "`{word}` is not a whole word:\n{screen}"
                );
            }
        }
        // The joined capture has the paragraph on one line (a terminal may keep the columns
        // a row's end skipped as spaces), every sentence whole.
        let joined = pane.tmux(&["capture-pane", "-p", "-J", "-S", "-", "-t", "t"]);
        let joined = String::from_utf8_lossy(&joined.stdout);
        let line = joined
            .lines()
            .find(|line| line.starts_with("The renderer breaks"))
            .unwrap_or_else(|| panic!("no joined line:\n{joined}"));
        let collapsed = line.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(collapsed, PARAGRAPH, "joined:\n{joined}");
        pane.quit();
    }
}

/// Problem: shrinking the window while a command streamed left copies of the live block in the
/// scrollback. After shrinking mid-command, the scrollback holds the finished call once and no
/// running header or status line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shrinking_the_window_mid_stream_leaves_one_live_block() {
    if tmux_missing("shrinking_the_window_mid_stream_leaves_one_live_block") {
        return;
    }
    // The command line is wider than the narrower window: its header is cut to each width.
    let command = "for i in $(seq 1 30); do echo \"output line $i of a command whose lines are long enough to wrap\"; sleep 0.1; done # with a comment that makes the command line itself longer than the window";
    for (size, narrower) in [((100, 24), 80u16), ((200, 50), 160)] {
        let pane = Pane::sized(
            vec![
                reply(ScriptedReply::tool_call(
                    "c1",
                    "bash",
                    json!({ "command": command }),
                )),
                reply(ScriptedReply::text("Counted.")),
            ],
            size,
        )
        .await;
        pane.start("--permission-mode full-auto", &[]);
        pane.wait_for("/help for commands");
        pane.type_text("count slowly");
        pane.key("Enter");
        pane.wait_for("output line 5");
        // Shrunk in steps, as a window dragged narrower is, while the output streams.
        for step in 1..=5 {
            let columns = size.0 - (size.0 - narrower) * step / 5;
            pane.tmux(&["resize-window", "-t", "t", "-x", &columns.to_string()]);
            std::thread::sleep(Duration::from_millis(150));
        }
        pane.wait_for("output line 15");
        pane.wait_for("Counted.");
        pane.wait_idle();
        let history = pane.tmux(&["capture-pane", "-p", "-J", "-S", "-", "-t", "t"]);
        let history = String::from_utf8_lossy(&history.stdout);
        assert_eq!(history.matches("⋯ bash").count(), 0, "{history}");
        assert_eq!(history.matches("✓ bash for i").count(), 1, "{history}");
        assert_eq!(history.matches("output line 29 of").count(), 1, "{history}");
        assert_eq!(history.matches("Esc to interrupt").count(), 0, "{history}");
        assert_eq!(history.matches("Counted.").count(), 1, "{history}");
        pane.quit();
    }
}

/// Problem: a finished result kept only its last lines and nothing expanded it. Ctrl+O at the
/// prompt shows the last shortened result whole, and what was typed stays in the prompt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_o_expands_a_long_result() {
    if tmux_missing("ctrl_o_expands_a_long_result") {
        return;
    }
    for size in SIZES {
        let pane = Pane::sized(
            vec![
                reply(ScriptedReply::tool_call(
                    "c1",
                    "bash",
                    json!({"command": "for i in $(seq 1 30); do echo \"row $i\"; done"}),
                )),
                reply(ScriptedReply::text("Thirty rows.")),
            ],
            size,
        )
        .await;
        pane.start("--permission-mode full-auto", &[]);
        pane.wait_for("/help for commands");
        pane.type_text("list rows");
        pane.key("Enter");
        pane.wait_for("Thirty rows.");
        pane.wait_idle();
        let screen = pane.screen();
        assert!(
            screen.contains("… 24 lines above (ctrl+o shows all)"),
            "{screen}"
        );
        assert!(!screen.contains("row 3\n"), "{screen}");
        pane.type_text("half typed");
        pane.key("C-o");
        // The whole result may not fit on the screen: its header is looked for in the
        // scrollback, and the screen waited on for its end and the prompt after it.
        pane.wait_for_history("⤷ bash for i");
        let screen = pane.wait_for("  row 30\nopenai/m · full-auto");
        let screen = if screen.contains("› half typed") {
            screen
        } else {
            pane.wait_for("› half typed")
        };
        insta::assert_snapshot!(
            snapshot_name("ctrl_o_expanded", size),
            pane.normalised(&screen)
        );
        // The prompt is back on the screen: the scrollback read now holds all before it.
        let history = pane.wait_for_history("› half typed");
        let expanded = &history[history.find("⤷ bash").unwrap()..];
        for n in 1..=30 {
            assert!(
                expanded.contains(&format!("  row {n}\n")),
                "row {n}:\n{history}"
            );
        }
        // The old prompt is gone from the scrollback: only the new one holds the typing.
        assert_eq!(history.matches("› half typed").count(), 1, "{history}");
        // Nothing more to expand.
        pane.key("C-o");
        pane.wait_for("no shortened result left");
        pane.key("C-a");
        pane.key("C-k");
        pane.quit();
    }
}

/// Problem: the deny-reason field did not scroll (about 25 characters visible at 80 columns).
/// A long reason wraps, its end stays in view while typing, and the model gets all of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_deny_reason_wraps_and_scrolls() {
    if tmux_missing("a_long_deny_reason_wraps_and_scrolls") {
        return;
    }
    let reason = "this would delete the generated fixtures that the integration tests \
                  rebuild only on a clean checkout, so please run the narrower cleanup \
                  target first and tell me what it removed before anything else happens";
    for size in SIZES {
        let pane = Pane::sized(
            vec![
                reply(ScriptedReply::tool_call(
                    "c1",
                    "bash",
                    json!({"command": "make distclean"}),
                )),
                reply(ScriptedReply::text("Understood.")),
            ],
            size,
        )
        .await;
        pane.start("", &[]);
        pane.wait_for("/help for commands");
        pane.type_text("clean up");
        pane.key("Enter");
        pane.wait_for("[n] no, with a reason");
        pane.key("n");
        pane.wait_for("reason for the model");
        pane.type_text(reason);
        let screen = pane.wait_for("anything else happens▌");
        insta::assert_snapshot!(
            snapshot_name("deny_reason_field", size),
            pane.normalised(&screen)
        );
        pane.key("Enter");
        pane.wait_for("Understood.");
        pane.wait_idle();
        let results = pane.tool_results(1);
        let content = results[0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(content.contains(reason), "{content}");
        pane.quit();
    }
}

/// Problem: against a silent server the screen showed no sign of waiting. The status line
/// leads with a spinner and the turn's time while the model has not answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_for_a_silent_model_shows_a_spinner_and_the_time() {
    if tmux_missing("waiting_for_a_silent_model_shows_a_spinner_and_the_time") {
        return;
    }
    for size in SIZES {
        let pane = Pane::sized(
            vec![streamed(
                &["Finally.", " Done."],
                Duration::from_millis(1_500),
            )],
            size,
        )
        .await;
        pane.start("", &[]);
        pane.wait_for("/help for commands");
        pane.type_text("are you there");
        pane.key("Enter");
        let screen = pane.wait_for("1s · openai/m · ask");
        assert!(!screen.contains("Finally."), "{screen}");
        insta::assert_snapshot!(
            snapshot_name("waiting_spinner", size),
            pane.normalised(&screen)
        );
        pane.wait_for("Finally. Done.");
        pane.wait_idle();
        pane.quit();
    }
}
