//! `jig run --mode rpc` end to end, driven by Pi's own `RpcClient` (from the
//! `@mariozechner/pi-coding-agent` package the Pi extension host installs) through a one-line
//! shim, against the scripted model endpoint: prompts and their events, steering and
//! follow-ups while a turn runs, abort, state, messages, compaction, `bash`, and an
//! extension's dialog answered with `extension_ui_response`.
//!
//! Without the host's npm dependencies (`npm ci` in `crates/jig-extensions/pi-host`, which
//! `scripts/test` runs) the tests print a SKIPPED notice and pass, unless
//! `JIG_REQUIRE_CLIENTS=1`.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers panic when the setup fails"
)]
#![expect(clippy::print_stderr, reason = "a skipped test says why on stderr")]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use jig_llm::scripted::ScriptedReply;
use jig_llm::testing::{ReplayResponse, ReplayServer};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::extensions::reply;
use crate::node_clients::{Rig, read_edit_run};

/// The Pi extension host in this tree, when its dependencies are installed.
fn host() -> Option<PathBuf> {
    let dir =
        fs::canonicalize(Path::new(env!("CARGO_MANIFEST_DIR")).join("../jig-extensions/pi-host"))
            .unwrap();
    if dir.join(CLIENT).is_file() {
        return Some(dir);
    }
    assert!(
        std::env::var("JIG_REQUIRE_CLIENTS").as_deref() != Ok("1"),
        "Pi's RpcClient is not installed: npm ci --prefix {}",
        dir.display()
    );
    eprintln!(
        "SKIPPED: Pi's RpcClient is not installed (npm ci --prefix {})",
        dir.display()
    );
    None
}

const CLIENT: &str = "node_modules/@mariozechner/pi-coding-agent/dist/modes/rpc/rpc-client.js";

/// Pi's client and the rig it runs in.
struct PiClient {
    rig: Rig,
    host: PathBuf,
}

impl std::ops::Deref for PiClient {
    type Target = Rig;
    fn deref(&self) -> &Rig {
        &self.rig
    }
}

impl PiClient {
    async fn new(host: PathBuf, responses: Vec<ReplayResponse>) -> Self {
        Self {
            rig: Rig::new(responses).await,
            host,
        }
    }

    /// Runs `scenario` of client.mjs with `extra` jig flags; what the client saw.
    async fn scenario(&self, scenario: &str, extra: &[&str]) -> Value {
        self.scenario_with(scenario, extra, &[]).await
    }

    /// [`PiClient::scenario`] with more environment variables for the client.
    async fn scenario_with(&self, scenario: &str, extra: &[&str], vars: &[(&str, &str)]) -> Value {
        let client = self.host.join(CLIENT);
        let extra = serde_json::to_string(extra).unwrap();
        let mut all = vec![
            ("PI_RPC_CLIENT", client.to_str().unwrap()),
            ("JIG_PI_HOST", self.host.to_str().unwrap()),
            ("JIG_EXTRA_ARGS", extra.as_str()),
        ];
        all.extend_from_slice(vars);
        self.rig.script("rpc/client.mjs", scenario, &all).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_streams_pis_events_and_the_session_answers_the_clients_questions() {
    let Some(host) = host() else { return };
    let rig = PiClient::new(host, {
        let mut replies = read_edit_run();
        replies.extend([
            reply(ScriptedReply::text("Nothing else.")),
            reply(ScriptedReply::text(
                "The user fixed a typo in greeting.txt.",
            )),
        ]);
        replies
    })
    .await;
    fs::write(rig.ws.join("greeting.txt"), "helo world\n").unwrap();
    let seen = rig.scenario("basic", &[]).await;
    assert_eq!(
        fs::read_to_string(rig.ws.join("greeting.txt")).unwrap(),
        "hello world\n"
    );
    let types: Vec<&str> = seen["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(types.first(), Some(&"agent_start"));
    assert_eq!(types.last(), Some(&"agent_end"));
    for expected in [
        "turn_start",
        "message_start",
        "message_update",
        "tool_execution_start",
        "tool_execution_end",
        "turn_end",
        "message_end",
    ] {
        assert!(types.contains(&expected), "no {expected} in {types:?}");
    }
    assert_eq!(seen["text"], "Fixed the greeting.");
    assert_eq!(
        seen["tools"],
        json!([
            {"tool": "read", "isError": false, "text": "   1│ helo world"},
            {"tool": "edit", "isError": false, "text": "Successfully replaced 1 block(s) in greeting.txt."},
            {"tool": "bash", "isError": false, "text": "hello world\n"},
        ])
    );
    assert_eq!(
        seen["state"],
        json!({"isStreaming": false, "messageCount": 8, "model": "gpt-4.1", "sessionId": "string"})
    );
    assert_eq!(seen["last"], "Fixed the greeting.");
    assert_eq!(
        seen["stats"],
        json!({"user": 1, "toolCalls": 3, "toolResults": 3})
    );
    assert_eq!(seen["bash"]["output"], "from-the-app\n");
    assert_eq!(seen["bash"]["exitCode"], 0);
    assert_eq!(seen["bash"]["cancelled"], false);
    assert_eq!(
        seen["compacted"]["summary"],
        "The user fixed a typo in greeting.txt."
    );
    assert_eq!(seen["afterCompact"]["isCompacting"], false);
    assert!(
        seen["fork"]
            .as_str()
            .unwrap()
            .contains("fork is not available in jig"),
        "{}",
        seen["fork"]
    );
    // The app's command reached the model with the next prompt.
    let requests = rig.server.requests();
    let second_prompt = requests[4].json();
    let sent = second_prompt["messages"].to_string();
    assert!(sent.contains("Ran `echo from-the-app`"), "{sent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steering_and_a_follow_up_sent_while_a_command_runs_reach_the_model_in_order() {
    let Some(host) = host() else { return };
    let rig = PiClient::new(
        host,
        vec![
            reply(ScriptedReply::tool_call(
                "c1",
                "bash",
                json!({"command": "sleep 1; echo slow-done"}),
            )),
            reply(ScriptedReply::text("Steered.")),
            reply(ScriptedReply::text("Goodbye.")),
        ],
    )
    .await;
    let seen = rig.scenario("steer", &[]).await;
    assert!(
        seen["busy"].as_str().unwrap().contains("streamingBehavior"),
        "a prompt while streaming is refused with what to do: {}",
        seen["busy"]
    );
    let agent_ends = seen["types"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| *t == "agent_end")
        .count();
    assert_eq!(
        agent_ends, 1,
        "one run takes the steering and the follow-up"
    );
    let requests = rig.server.requests();
    assert_eq!(requests.len(), 3);
    let last_user = |index: usize| {
        let body = requests[index].json();
        body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .map(|m| m["content"].to_string())
            .unwrap()
    };
    assert!(
        last_user(1).contains("also mention steering"),
        "{}",
        last_user(1)
    );
    assert!(
        last_user(2).contains("then say goodbye"),
        "{}",
        last_user(2)
    );
    // The tool's result came before the steering message.
    let second = requests[1].json().to_string();
    assert!(second.find("slow-done").unwrap() < second.find("also mention steering").unwrap());
    let queues = seen["queues"].as_array().unwrap();
    assert_eq!(
        queues.first().unwrap()["steering"],
        json!(["also mention steering"])
    );
    assert_eq!(
        queues.last().unwrap(),
        &json!({"type": "queue_update", "steering": [], "followUp": []})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_stops_a_running_command_at_once() {
    let Some(host) = host() else { return };
    let rig = PiClient::new(
        host,
        vec![reply(ScriptedReply::tool_call(
            "c1",
            "bash",
            json!({"command": "sleep 60"}),
        ))],
    )
    .await;
    let seen = rig.scenario("abort", &[]).await;
    assert!(seen["ms"].as_u64().unwrap() < 10_000, "{seen}");
    assert_eq!(seen["end"]["reason"], "aborted");
    assert_eq!(seen["toolIsError"], true);
    assert_eq!(rig.server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extensions_confirm_is_answered_through_extension_ui_response() {
    let Some(host) = host() else { return };
    let rig = PiClient::new(host.clone(), Vec::new()).await;
    let demo =
        host.join("node_modules/@mariozechner/pi-coding-agent/examples/extensions/rpc-demo.ts");
    let seen = rig
        .scenario("dialog", &["-e", demo.to_str().unwrap()])
        .await;
    assert_eq!(
        seen["asked"],
        json!([
            {"title": "Clear session?", "message": "All messages will be lost."},
            {"title": "Clear session?", "message": "All messages will be lost."},
        ])
    );
    assert_eq!(seen["first"], json!({"cancelled": false}));
    assert_eq!(seen["second"], json!({"cancelled": true}));
    assert!(
        seen["notices"]
            .as_array()
            .unwrap()
            .contains(&json!("Clear cancelled")),
        "{}",
        seen["notices"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_ask_mode_a_permission_question_is_a_select_dialog_and_reject_leaves_the_file_alone() {
    let Some(host) = host() else { return };
    for (answer, allowed) in [("Allow once", true), ("Reject", false)] {
        let rig = PiClient::new(
            host.clone(),
            vec![
                reply(ScriptedReply::tool_call(
                    "c1",
                    "write",
                    json!({"path": "notes.txt", "content": "written\n"}),
                )),
                reply(ScriptedReply::text("Done.")),
            ],
        )
        .await;
        fs::write(rig.ws.join("notes.txt"), "original\n").unwrap();
        let seen = rig
            .scenario_with(
                "permission",
                &["--permission-mode", "ask"],
                &[("JIG_ANSWER", answer)],
            )
            .await;
        assert_eq!(seen["asked"][0]["title"], "Allow write: notes.txt?");
        assert_eq!(
            seen["asked"][0]["options"],
            json!([
                "Allow once",
                "Always allow write in this session",
                "Always allow write in this project",
                "Reject"
            ])
        );
        assert_eq!(seen["isError"], !allowed, "{seen}");
        let content = fs::read_to_string(rig.ws.join("notes.txt")).unwrap();
        assert_eq!(content, if allowed { "written\n" } else { "original\n" });
    }
}

/// Hostile and malformed input, without Node: every line is answered, none stops the session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_lines_are_answered_and_the_session_goes_on() {
    use std::io::{BufRead as _, BufReader, Write as _};
    let dir = tempfile::tempdir().unwrap();
    let server = ReplayServer::start(Vec::new()).await.unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_jig"))
        .args(["run", "--mode", "rpc", "--no-session", "--base-url"])
        .arg(format!("{}/v1", server.url()))
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env_remove("OPENAI_API_KEY")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let huge = format!(
        "{{\"type\":\"set_session_name\",\"id\":\"huge\",\"name\":\"{}\"}}",
        "x".repeat(8 << 20)
    );
    let mut input: Vec<u8> = Vec::new();
    input.extend_from_slice(b"{not json\n");
    input.extend_from_slice(b"\xff\xfe\n");
    input.extend_from_slice(b"{\"id\":7}\n");
    input.extend_from_slice(b"{\"type\":\"warp\",\"id\":\"w\"}\r\n");
    input.extend_from_slice(b"{\"type\":\"set_model\",\"id\":\"m\"}\n");
    input.extend_from_slice(b"{\"type\":\"prompt\",\"id\":\"p\",\"message\":42}\n");
    input.extend_from_slice(b"\n   \n");
    input.extend_from_slice(b"{\"type\":\"export_html\",\"id\":\"e\"}\n");
    input.extend_from_slice(huge.as_bytes());
    input.push(b'\n');
    input.extend_from_slice(b"{\"type\":\"abort\",\"id\":\"a\"}\n");
    input.extend_from_slice("{\"type\":\"get_state\",\"id\":\"s\u{2028}\"}".as_bytes());
    let writer = std::thread::spawn(move || {
        stdin.write_all(&input).unwrap();
        // The last record has no LF: it is read when stdin closes.
    });
    let reader = BufReader::new(child.stdout.take().unwrap());
    let responses: Vec<Value> = reader
        .lines()
        .map(|line| serde_json::from_str::<Value>(&line.unwrap()).unwrap())
        .filter(|record| record["type"] == "response")
        .collect();
    writer.join().unwrap();
    assert!(child.wait().unwrap().success());
    let summary: Vec<(Value, Value, bool)> = responses
        .iter()
        .map(|r| {
            (
                r["id"].clone(),
                r["command"].clone(),
                r["success"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (Value::Null, json!("parse"), false),
            (Value::Null, json!("parse"), false),
            (json!(7), json!("parse"), false),
            (json!("w"), json!("warp"), false),
            (json!("m"), json!("set_model"), false),
            (json!("p"), json!("prompt"), false),
            (json!("e"), json!("export_html"), false),
            (json!("huge"), json!("set_session_name"), true),
            (json!("a"), json!("abort"), true),
            (json!("s\u{2028}"), json!("get_state"), true),
        ]
    );
    assert!(
        responses[3]["error"]
            .as_str()
            .unwrap()
            .starts_with("Unknown command: warp")
    );
    assert_eq!(
        responses[4]["error"],
        "set_model needs \"provider\" and \"modelId\""
    );
    assert!(
        responses[5]["error"]
            .as_str()
            .unwrap()
            .starts_with("invalid prompt command")
    );
}
