//! `jig run` compaction end to end: the real binary against the replay server.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers panic when the setup fails"
)]

use std::collections::HashSet;
use std::fs;
use std::process::{Command, Output, Stdio};

use jig_agent::compaction::SUMMARY_INSTRUCTION;
use jig_llm::scripted::ScriptedReply;
use jig_llm::testing::{ReplayResponse, ReplayServer, openai_sse};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn reply(scripted: ScriptedReply, input: u64) -> ReplayResponse {
    match scripted {
        ScriptedReply::Message(mut message) => {
            message.usage.input = input;
            ReplayResponse::sse(openai_sse(&message))
        }
        other => panic!("not a message: {other:?}"),
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    ws: std::path::PathBuf,
    data: std::path::PathBuf,
    server: ReplayServer,
}

impl Setup {
    async fn new(responses: Vec<ReplayResponse>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let ws = root.join("ws");
        fs::create_dir(&ws).unwrap();
        fs::write(ws.join("a.txt"), "alpha\n").unwrap();
        let server = ReplayServer::start(responses).await.unwrap();
        Self {
            _dir: dir,
            ws,
            data: root.join("data"),
            server,
        }
    }

    async fn run(&self, args: &[&str]) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_jig"));
        command
            .arg("run")
            .args(["--base-url", &format!("{}/v1", self.server.url())])
            .args(["--model", "m", "--tools", "read"])
            .args(args)
            .current_dir(&self.ws)
            .env("XDG_DATA_HOME", &self.data)
            .env("XDG_CONFIG_HOME", self.data.with_file_name("config"))
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .stdin(Stdio::null());
        tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap()
    }

    fn session_lines(&self) -> Vec<Value> {
        let dir = fs::read_dir(self.data.join("jig/sessions"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let file = fs::read_dir(dir).unwrap().next().unwrap().unwrap().path();
        fs::read_to_string(file)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    fn bodies(&self) -> Vec<Value> {
        self.server
            .requests()
            .iter()
            .map(jig_llm::testing::RecordedRequest::json)
            .collect()
    }
}

fn is_summary_request(body: &Value) -> bool {
    body["messages"][0]["content"] == SUMMARY_INSTRUCTION
}

/// In an OpenAI request body, every tool call is answered by a `tool` message before the next
/// user or assistant message, and every `tool` message answers an earlier call.
fn assert_paired(body: &Value) {
    let mut open: HashSet<String> = HashSet::new();
    for message in body["messages"].as_array().unwrap() {
        match message["role"].as_str().unwrap() {
            "tool" => assert!(
                open.remove(message["tool_call_id"].as_str().unwrap()),
                "a result without its call: {message}"
            ),
            role => {
                assert!(
                    open.is_empty(),
                    "calls without results before {role}: {open:?}"
                );
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    open.insert(call["id"].as_str().unwrap().to_owned());
                }
            }
        }
    }
    assert!(open.is_empty(), "calls without results: {open:?}");
}

fn user_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<String>(),
        _ => String::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_200_turn_run_compacts_twice_and_every_request_pairs_calls_with_results() {
    // --context-window 10000: the threshold is 8000 input tokens; each reply reports 100 more
    // than the last, from 1000 after a compaction.
    let mut responses = Vec::new();
    let mut since = 0u64;
    let mut summaries = 0;
    for turn in 0..200 {
        let input = 1_000 + 100 * since;
        responses.push(reply(
            ScriptedReply::tool_call(&format!("call{turn}"), "read", json!({"path": "a.txt"})),
            input,
        ));
        since += 1;
        if input >= 8_000 {
            summaries += 1;
            responses.push(reply(
                ScriptedReply::text(&format!("SUMMARY {summaries}")),
                50,
            ));
            since = 0;
        }
    }
    assert_eq!(summaries, 2);
    responses.push(reply(ScriptedReply::text("all done"), 2_000));
    let setup = Setup::new(responses).await;
    let output = setup
        .run(&[
            "--context-window",
            "10000",
            "--mode",
            "json",
            "read a.txt many times",
        ])
        .await;
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let compactions: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "compaction")
        .collect();
    assert_eq!(compactions.len(), 2);
    for (n, event) in compactions.iter().enumerate() {
        assert_eq!(event["reason"], "threshold");
        assert_eq!(event["tokensBefore"], 8_000);
        assert_eq!(event["keptMessages"], 8);
        assert_eq!(event["summary"], format!("SUMMARY {}", n + 1));
    }

    let bodies = setup.bodies();
    assert_eq!(bodies.len(), 203);
    let summary_at: Vec<usize> = (0..bodies.len())
        .filter(|&i| is_summary_request(&bodies[i]))
        .collect();
    assert_eq!(summary_at.len(), 2);
    for (n, &index) in summary_at.iter().enumerate() {
        let after = &bodies[index + 1];
        let first = &after["messages"][1];
        assert_eq!(first["role"], "user");
        assert!(
            user_text(first).contains(&format!("SUMMARY {}", n + 1)),
            "{first}"
        );
        assert_paired(after);
        // system, summary, the last 4 calls with their results
        assert_eq!(after["messages"].as_array().unwrap().len(), 2 + 8);
    }
    for body in bodies.iter().filter(|b| !is_summary_request(b)) {
        assert_paired(body);
    }

    // The session keeps every message and records both compactions.
    let lines = setup.session_lines();
    let messages = lines.iter().filter(|l| l["type"] == "message").count();
    assert_eq!(messages, 1 + 200 * 2 + 1);
    let recorded: Vec<&Value> = lines.iter().filter(|l| l["type"] == "compaction").collect();
    assert_eq!(recorded.len(), 2);
    let ids: Vec<&Value> = lines.iter().map(|l| &l["id"]).collect();
    for entry in &recorded {
        assert!(ids.contains(&&entry["firstKeptEntryId"]));
        assert_eq!(entry["tokensBefore"], 8_000);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_context_overflow_error_is_recovered_by_compacting_and_retrying() {
    let mut responses = Vec::new();
    for turn in 0..6 {
        responses.push(reply(
            ScriptedReply::tool_call(&format!("c{turn}"), "read", json!({"path": "a.txt"})),
            100,
        ));
    }
    responses.push(ReplayResponse::status(
        400,
        r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9100 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
    ));
    responses.push(reply(ScriptedReply::text("THE SUMMARY"), 50));
    responses.push(reply(ScriptedReply::text("recovered"), 100));
    let setup = Setup::new(responses).await;
    let output = setup.run(&["--verbose", "go"]).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "recovered\n");
    assert!(
        stderr.contains("jig: compacted the conversation: 5 older messages summarised, 8 kept"),
        "{stderr}"
    );
    let bodies = setup.bodies();
    assert_eq!(bodies.len(), 9);
    assert!(is_summary_request(&bodies[7]));
    assert!(user_text(&bodies[8]["messages"][1]).contains("THE SUMMARY"));
    assert_paired(&bodies[8]);
    let lines = setup.session_lines();
    let compaction = lines.iter().find(|l| l["type"] == "compaction").unwrap();
    assert_eq!(compaction["reason"], "overflow");
    assert_eq!(compaction["summary"], "THE SUMMARY");
    assert!(
        !lines.iter().any(|l| l["message"]["stopReason"] == "error"),
        "the refused request leaves no reply in the session"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_summarises_a_resumed_session_and_continue_resumes_from_the_summary() {
    let mut responses = Vec::new();
    for turn in 0..6 {
        responses.push(reply(
            ScriptedReply::tool_call(&format!("c{turn}"), "read", json!({"path": "a.txt"})),
            100,
        ));
    }
    responses.push(reply(ScriptedReply::text("first done"), 100));
    responses.push(reply(ScriptedReply::text("MANUAL SUMMARY"), 50));
    responses.push(reply(ScriptedReply::text("second done"), 100));
    responses.push(reply(ScriptedReply::text("third done"), 100));
    let setup = Setup::new(responses).await;
    assert_eq!(setup.run(&["first"]).await.status.code(), Some(0));
    let output = setup.run(&["--continue", "--compact", "second"]).await;
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let output = setup.run(&["--continue", "third"]).await;
    assert_eq!(output.status.code(), Some(0));

    let bodies = setup.bodies();
    assert!(is_summary_request(&bodies[7]));
    for body in [&bodies[8], &bodies[9]] {
        assert!(user_text(&body["messages"][1]).contains("MANUAL SUMMARY"));
        assert_paired(body);
    }
    // The first run's 14 messages become the summary and the last 4 replies (with results).
    assert_eq!(bodies[8]["messages"].as_array().unwrap().len(), 2 + 7 + 1);
    assert_eq!(
        bodies[9]["messages"].as_array().unwrap().len(),
        2 + 7 + 1 + 2
    );
    let lines = setup.session_lines();
    assert_eq!(
        lines.iter().filter(|l| l["type"] == "message").count(),
        14 + 2 + 2
    );
    let compaction = lines.iter().find(|l| l["type"] == "compaction").unwrap();
    assert_eq!(compaction["reason"], "manual");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_needs_a_resumed_session() {
    let setup = Setup::new(Vec::new()).await;
    let output = setup.run(&["--compact", "hi"]).await;
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "jig: --compact compacts a resumed session: add --continue or --session\n"
    );
}

const ANTHROPIC_TEXT: &str = include_str!("../../../jig-llm/tests/fixtures/anthropic/text.sse");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anthropic_prompt_is_too_long_error_is_recovered_on_a_resumed_session() {
    let setup = Setup::new(vec![
        ReplayResponse::sse(ANTHROPIC_TEXT),
        ReplayResponse::status(
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 212345 tokens > 200000 maximum"}}"#,
        ),
        ReplayResponse::sse(ANTHROPIC_TEXT),
        ReplayResponse::sse(ANTHROPIC_TEXT),
    ])
    .await;
    let url = setup.server.url();
    let anthropic = |prompt: &'static str, resume: bool| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_jig"));
        command
            .arg("run")
            .args([
                "--provider",
                "anthropic",
                "--base-url",
                &url,
                "--tools",
                "read",
            ])
            .args(if resume { &["--continue"][..] } else { &[][..] })
            .arg(prompt)
            .current_dir(&setup.ws)
            .env("XDG_DATA_HOME", &setup.data)
            .env("XDG_CONFIG_HOME", setup.data.with_file_name("config"))
            .env("ANTHROPIC_API_KEY", "sk-ant-test")
            .env_remove("ANTHROPIC_BASE_URL")
            .stdin(Stdio::null());
        command
    };
    let mut first = anthropic("first", false);
    let first = tokio::task::spawn_blocking(move || first.output().unwrap())
        .await
        .unwrap();
    assert_eq!(first.status.code(), Some(0));
    let mut second = anthropic("second", true);
    let second = tokio::task::spawn_blocking(move || second.output().unwrap())
        .await
        .unwrap();
    assert_eq!(
        second.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&second.stdout),
        "Hello, world — ✓\n"
    );
    let bodies = setup.bodies();
    assert_eq!(bodies.len(), 4);
    assert_eq!(
        bodies[2]["system"]
            .as_str()
            .map(|s| s == SUMMARY_INSTRUCTION),
        Some(true)
    );
    // The retry: the summary, then the new prompt.
    let retry = bodies[3]["messages"].as_array().unwrap();
    assert_eq!(retry.len(), 2, "{retry:?}");
    assert!(retry[0].to_string().contains("Hello, world"));
    assert!(retry[1].to_string().contains("second"));
    let lines = setup.session_lines();
    let compaction = lines.iter().find(|l| l["type"] == "compaction").unwrap();
    assert_eq!(compaction["reason"], "overflow");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_settings_file_gives_the_context_window_of_its_model() {
    let script = |summary: bool| {
        let mut responses = Vec::new();
        for turn in 0..5 {
            responses.push(reply(
                ScriptedReply::tool_call(&format!("c{turn}"), "read", json!({"path": "a.txt"})),
                100,
            ));
        }
        responses.push(reply(
            ScriptedReply::tool_call("big", "read", json!({"path": "a.txt"})),
            9_000,
        ));
        if summary {
            responses.push(reply(ScriptedReply::text("SETTINGS SUMMARY"), 50));
        }
        responses.push(reply(ScriptedReply::text("done"), 100));
        responses
    };
    for (settings, compacts) in [
        (json!({"contextWindow": 10_000}), true),
        (json!({"model": "m", "contextWindow": 10_000}), true),
        (json!({"model": "other", "contextWindow": 10_000}), false),
    ] {
        let setup = Setup::new(script(compacts)).await;
        let config = setup.data.with_file_name("config").join("jig");
        fs::create_dir_all(&config).unwrap();
        fs::write(config.join("settings.json"), settings.to_string()).unwrap();
        let output = setup.run(&["--mode", "json", "go"]).await;
        assert_eq!(output.status.code(), Some(0), "{settings}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(
            stdout.contains(r#""type":"compaction""#),
            compacts,
            "{settings}"
        );
        assert_eq!(setup.bodies().len(), if compacts { 8 } else { 7 });
    }
}
