//! `jig acp` end to end with real ACP clients from the npm registry (pinned by
//! `scripts/install-acp-clients` into `target/acp-clients`): a test client built on
//! `@agentclientprotocol/sdk`'s `ClientSideConnection`, and the `acpx` headless CLI, each
//! driving `jig acp` against the scripted model endpoint.
//!
//! Without the clients the tests print a SKIPPED notice and pass, unless
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
use jig_llm::testing::ReplayResponse;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::extensions::reply;
use crate::node_clients::{Rig, read_edit_run, run};

/// The installed clients, when `scripts/install-acp-clients` ran.
fn clients() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/acp-clients");
    if dir.join(SDK).is_file() && dir.join("node_modules/.bin/acpx").is_file() {
        return Some(fs::canonicalize(dir).unwrap());
    }
    assert!(
        std::env::var("JIG_REQUIRE_CLIENTS").as_deref() != Ok("1"),
        "the ACP clients are not installed: run scripts/install-acp-clients"
    );
    eprintln!("SKIPPED: the ACP clients are not installed (scripts/install-acp-clients)");
    None
}

const SDK: &str = "node_modules/@agentclientprotocol/sdk/dist/acp.js";

/// The clients and the rig they run in.
struct Clients {
    rig: Rig,
    dir: PathBuf,
}

impl std::ops::Deref for Clients {
    type Target = Rig;
    fn deref(&self) -> &Rig {
        &self.rig
    }
}

impl Clients {
    async fn new(dir: PathBuf, responses: Vec<ReplayResponse>) -> Self {
        Self {
            rig: Rig::new(responses).await,
            dir,
        }
    }

    /// Runs `scenario` of the SDK client with `vars`; what the client saw.
    async fn sdk(&self, scenario: &str, vars: &[(&str, &str)]) -> Value {
        let sdk = self.dir.join(SDK);
        let mut vars = vars.to_vec();
        vars.push(("ACP_SDK", sdk.to_str().unwrap()));
        self.rig.script("acp/client.mjs", scenario, &vars).await
    }
}

/// The update that finished the tool call `id` (the one with its final status).
fn finished_call(updates: &Value, id: &str) -> Value {
    updates
        .as_array()
        .unwrap()
        .iter()
        .find(|u| {
            u["kind"] == "tool_call_update" && u["toolCallId"] == id && u["status"].is_string()
        })
        .unwrap_or_else(|| panic!("no finished update of {id} in {updates}"))
        .clone()
}

fn kinds(updates: &Value) -> Vec<String> {
    updates
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["kind"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_streams_text_tool_calls_with_a_diff_and_output_and_asks_before_the_edit() {
    let Some(clients) = clients() else { return };
    let rig = Clients::new(clients, read_edit_run()).await;
    fs::write(rig.ws.join("greeting.txt"), "helo world\n").unwrap();
    let seen = rig.sdk("prompt", &[("JIG_ANSWER", "allow_once")]).await;
    assert_eq!(seen["stopReason"], "end_turn");
    assert_eq!(seen["init"]["agentCapabilities"]["loadSession"], true);
    assert_eq!(seen["session"]["modes"]["currentModeId"], "ask");
    assert_eq!(
        fs::read_to_string(rig.ws.join("greeting.txt")).unwrap(),
        "hello world\n"
    );
    let updates = &seen["updates"];
    let kinds = kinds(updates);
    assert_eq!(
        kinds[0], "agent_thought_chunk",
        "the trust decision comes first"
    );
    assert!(kinds.contains(&"available_commands_update".to_owned()));
    let calls: Vec<&Value> = updates
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["kind"] == "tool_call")
        .collect();
    assert_eq!(
        calls
            .iter()
            .map(|c| (
                c["title"].as_str().unwrap(),
                c["toolKind"].as_str().unwrap()
            ))
            .collect::<Vec<_>>(),
        [
            ("Read greeting.txt", "read"),
            ("Edit greeting.txt", "edit"),
            ("Run `cat greeting.txt`", "execute")
        ]
    );
    let file = rig.ws.join("greeting.txt");
    assert_eq!(calls[0]["locations"], json!([{"path": file}]));
    let done = |id: &str| finished_call(updates, id);
    assert_eq!(done("c2")["status"], "completed");
    assert_eq!(
        done("c2")["content"][0],
        json!({"type": "diff", "path": file, "oldText": "helo", "newText": "hello"})
    );
    assert_eq!(
        done("c3")["content"][0]["content"]["text"],
        "```\nhello world\n```"
    );
    let text: String = updates
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["kind"] == "agent_message_chunk")
        .map(|u| u["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Fixed the greeting.");
    // `ask` mode: the edit and the command were asked about; the read was not.
    let asked: Vec<&str> = seen["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["toolCallId"].as_str().unwrap())
        .collect();
    assert_eq!(asked, ["c2", "c3"]);
    assert_eq!(seen["permissions"][0]["title"], "Allow edit: greeting.txt?");
    let options: Vec<(&str, &str)> = seen["permissions"][0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["optionId"].as_str().unwrap(), o["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        options,
        [
            ("allow_once", "allow_once"),
            ("allow_tool_session", "allow_always"),
            ("allow_tool_project", "allow_always"),
            ("reject", "reject_once")
        ]
    );
    // The resource link reached the model with the prompt.
    let first = rig.server.requests()[0].json().to_string();
    assert!(first.contains("[greeting.txt](file://"), "{first}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_edit_leaves_the_file_unchanged() {
    let Some(clients) = clients() else { return };
    let rig = Clients::new(
        clients,
        vec![
            reply(ScriptedReply::tool_call(
                "c1",
                "edit",
                json!({"path": "greeting.txt", "edits": [{"oldText": "helo", "newText": "hello"}]}),
            )),
            reply(ScriptedReply::text("I was not allowed to.")),
        ],
    )
    .await;
    fs::write(rig.ws.join("greeting.txt"), "helo world\n").unwrap();
    let seen = rig.sdk("prompt", &[("JIG_ANSWER", "reject")]).await;
    assert_eq!(seen["stopReason"], "end_turn");
    assert_eq!(
        fs::read_to_string(rig.ws.join("greeting.txt")).unwrap(),
        "helo world\n"
    );
    let failed = finished_call(&seen["updates"], "c1");
    assert_eq!(failed["status"], "failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_command_kills_the_process_tree() {
    let Some(clients) = clients() else { return };
    let marker = "jig-acp-cancel-marker-a81f";
    let rig = Clients::new(
        clients,
        vec![reply(ScriptedReply::tool_call(
            "c1",
            "bash",
            json!({"command": format!("(sleep 60; echo {marker}) & sleep 60; echo {marker}")}),
        ))],
    )
    .await;
    let seen = rig
        .sdk(
            "cancel",
            &[("JIG_EXTRA_ARGS", r#"["--permission-mode","full-auto"]"#)],
        )
        .await;
    assert_eq!(seen["stopReason"], "cancelled");
    assert!(seen["ms"].as_u64().unwrap() < 10_000, "{seen}");
    // Nothing the command started is left running.
    let ps = Command::new("ps").args(["-eo", "args"]).output().unwrap();
    let left: Vec<String> = String::from_utf8_lossy(&ps.stdout)
        .lines()
        .filter(|line| line.contains(marker))
        .map(str::to_owned)
        .collect();
    assert!(left.is_empty(), "still running: {left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_session_loads_and_goes_on() {
    let Some(clients) = clients() else { return };
    let rig = Clients::new(
        clients,
        vec![
            reply(ScriptedReply::text("First answer.")),
            reply(ScriptedReply::text("Second answer.")),
        ],
    )
    .await;
    // A session made by `jig run` in the same directory.
    let made = rig
        .command(env!("CARGO_BIN_EXE_jig"))
        .args([
            "run",
            "--base-url",
            &rig.base_url(),
            "--mode",
            "json",
            "first question",
        ])
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let header: Value = serde_json::from_str(
        String::from_utf8_lossy(&made.stdout)
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let id = header["id"].as_str().unwrap().to_owned();
    let seen = rig.sdk("load", &[("JIG_SESSION", &id)]).await;
    assert_eq!(seen["stopReason"], "end_turn");
    let updates = seen["updates"].as_array().unwrap();
    assert_eq!(
        updates[0],
        json!({"kind": "user_message_chunk", "text": "first question"})
    );
    assert_eq!(
        updates[1],
        json!({"kind": "agent_message_chunk", "text": "First answer."})
    );
    // The model was sent the whole conversation.
    let second = rig.server.requests()[1].json().to_string();
    assert!(
        second.contains("first question") && second.contains("First answer."),
        "{second}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acpx_runs_a_prompt_through_jig_and_approves_or_denies() {
    let Some(clients) = clients() else { return };
    // acpx exits 5 when every permission it was asked for was denied.
    for (approve, edited, code) in [("--approve-all", true, 0), ("--deny-all", false, 5)] {
        let rig = Clients::new(clients.clone(), read_edit_run()).await;
        fs::write(rig.ws.join("greeting.txt"), "helo world\n").unwrap();
        let agent = format!(
            "{} acp --base-url {}",
            env!("CARGO_BIN_EXE_jig"),
            rig.base_url()
        );
        let mut command = rig.command(rig.dir.join("node_modules/.bin/acpx"));
        command.args([
            approve,
            "--format",
            "json",
            "--cwd",
            rig.ws.to_str().unwrap(),
            "--agent",
            &agent,
            "exec",
            "fix greeting.txt",
        ]);
        let output = run(command).await;
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(
            output.status.code(),
            Some(code),
            "acpx {approve}:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let content = fs::read_to_string(rig.ws.join("greeting.txt")).unwrap();
        assert_eq!(
            content == "hello world\n",
            edited,
            "{approve}: {content:?}\n{stdout}"
        );
        // acpx prints the session's messages as JSON-RPC lines: the reply streamed in chunks.
        let text: String = stdout
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|message| message["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
            .filter_map(|message| {
                message["params"]["update"]["content"]["text"]
                    .as_str()
                    .map(str::to_owned)
            })
            .collect();
        assert_eq!(text, "Fixed the greeting.", "{stdout}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_client_fs_an_edit_changes_the_editors_buffer_not_the_file_on_disk() {
    let Some(clients) = clients() else { return };
    let rig = Clients::new(
        clients,
        vec![
            reply(ScriptedReply::tool_call("c1", "read", json!({"path": "greeting.txt"}))),
            reply(ScriptedReply::tool_call(
                "c2",
                "edit",
                json!({"path": "greeting.txt", "edits": [{"oldText": "helo from the editor", "newText": "hello from the editor"}]}),
            )),
            reply(ScriptedReply::text("Fixed the buffer.")),
        ],
    )
    .await;
    fs::write(rig.ws.join("greeting.txt"), "helo world\n").unwrap();
    let seen = rig
        .sdk(
            "clientfs",
            &[
                ("JIG_CLIENT_FS", "1"),
                (
                    "JIG_EXTRA_ARGS",
                    r#"["--client-fs","--permission-mode","auto-edit"]"#,
                ),
            ],
        )
        .await;
    assert_eq!(seen["stopReason"], "end_turn");
    let file = rig.ws.join("greeting.txt");
    assert_eq!(seen["writes"], json!([file]));
    assert_eq!(seen["buffer"], "hello from the editor buffer\n");
    assert_eq!(fs::read_to_string(&file).unwrap(), "helo world\n");
    let read = finished_call(&seen["updates"], "c1");
    assert!(
        read["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("helo from the editor buffer"),
        "{read}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_editor_changes_the_permission_mode_and_the_model() {
    let Some(clients) = clients() else { return };
    let rig = Clients::new(
        clients,
        vec![
            reply(ScriptedReply::tool_call(
                "c1",
                "write",
                json!({"path": "new.txt", "content": "x\n"}),
            )),
            reply(ScriptedReply::text("Read-only here.")),
        ],
    )
    .await;
    let seen = rig
        .sdk(
            "configure",
            &[("JIG_EXTRA_ARGS", r#"["--model","gpt-4.1"]"#)],
        )
        .await;
    let model = &seen["session"]["configOptions"][0];
    assert_eq!(model["id"], "model");
    assert_eq!(model["currentValue"], "openai/gpt-4.1");
    assert_eq!(
        seen["changed"]["configOptions"][0]["currentValue"],
        "openai/other-model"
    );
    assert_eq!(seen["stopReason"], "end_turn");
    // read-only: the write was denied without a question, and nothing was written.
    assert!(!rig.ws.join("new.txt").exists());
    let kinds = kinds(&seen["updates"]);
    assert!(
        kinds.contains(&"current_mode_update".to_owned()),
        "{kinds:?}"
    );
    let requests = rig.server.requests();
    assert_eq!(requests[0].json()["model"], "other-model");
}
