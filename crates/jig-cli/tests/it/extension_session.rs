//! Extensions acting on a `jig run` session: the action API after bind (queued messages,
//! session entries, active tools, session info, dialogs without a user interface), the events
//! around each model request, and faults inside a run.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers panic when the setup fails"
)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use jig_llm::scripted::ScriptedReply;
use jig_llm::testing::ReplayServer;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::extensions::{Workspace, reply, text};

/// What every action call during `initialize` is answered.
const NOT_INITIALIZED: &str =
    "Extension runtime not initialized. Action methods cannot be called during extension loading.";

/// A Python extension driven by a plan: `EXT_PLAN` maps an event (or `initialize`) to the
/// action calls it makes while handling it, `EXT_ANSWERS` maps an event to its answer.
/// Every action's answer is appended to `EXT_LOG` as `{"event", "method", "result"|"error"}`.
const SCRIPTED: &str = r#"import json, os, sys
plan = json.loads(os.environ.get("EXT_PLAN", "{}"))
answers = json.loads(os.environ.get("EXT_ANSWERS", "{}"))
events = json.loads(os.environ.get("EXT_EVENTS", "[]"))
log = open(os.environ["EXT_LOG"], "a")
pending = []
next_id = [1000]

def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()

def receive():
    if pending:
        return pending.pop(0)
    line = sys.stdin.readline()
    return json.loads(line) if line else None

def call(method, params):
    next_id[0] += 1
    mine = next_id[0]
    send({"jsonrpc": "2.0", "id": mine, "method": method, "params": params})
    while True:
        line = sys.stdin.readline()
        if not line:
            sys.exit(0)
        message = json.loads(line)
        if message.get("id") == mine and "method" not in message:
            return message
        pending.append(message)

def act(event):
    for method, params in plan.get(event, []):
        answer = call(method, params)
        entry = {"event": event, "method": method}
        if "error" in answer:
            entry["error"] = answer["error"]["message"]
        else:
            entry["result"] = answer.get("result")
        log.write(json.dumps(entry) + "\n")
        log.flush()

while True:
    message = receive()
    if message is None:
        break
    if "id" not in message:
        if message.get("method") == "shutdown":
            break
        if message.get("method") == "bind":
            log.write(json.dumps({"bind": message["params"]}) + "\n")
            log.flush()
        continue
    method = message["method"]
    if method == "initialize":
        act("initialize")
        result = {"protocolVersion": 1, "name": "scripted", "events": events,
                  "providers": json.loads(os.environ.get("EXT_PROVIDERS", "[]")),
                  "flags": json.loads(os.environ.get("EXT_FLAGS", "[]"))}
    elif method == "event":
        event = message["params"]["event"]
        log.write(json.dumps({"seen": event, "payload": message["params"]}) + "\n")
        log.flush()
        act(event)
        result = answers.get(event)
        if event == "message_end" and os.environ.get("EXT_SHOUT"):
            changed = message["params"]["message"]
            if changed["role"] == "assistant":
                for block in changed["content"]:
                    if block["type"] == "text":
                        block["text"] = block["text"].upper()
                result = {"message": changed}
    else:
        result = None
    send({"jsonrpc": "2.0", "id": message["id"], "result": result})
"#;

/// The scripted extension's directory in `workspace`.
fn scripted(workspace: &Workspace) -> String {
    let dir = workspace.root.join("scripted");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("index.py"), SCRIPTED).unwrap();
    dir.display().to_string()
}

/// The events the extension saw, from its log.
fn seen_events(path: &Path) -> Vec<Value> {
    log_lines(path)
        .into_iter()
        .filter(|line| line.get("seen").is_some())
        .collect()
}

/// The lines of the extension's log.
fn log_lines(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The action answers logged for `event`, as `(method, result or error)`.
fn answers(log: &[Value], event: &str) -> Vec<(String, Value)> {
    log.iter()
        .filter(|entry| entry["event"] == event)
        .map(|entry| {
            let answer = match entry.get("error") {
                Some(error) => json!({"error": error}),
                None => entry["result"].clone(),
            };
            (entry["method"].as_str().unwrap().to_owned(), answer)
        })
        .collect()
}

/// `jig run --base-url <server> --model m -e <extension>` followed by `extra`.
fn jig_run(
    workspace: &Workspace,
    server: &ReplayServer,
    extension: &str,
    extra: &[&str],
) -> std::process::Command {
    let base_url = format!("{}/v1", server.url());
    let mut args = vec![
        "run",
        "--base-url",
        &base_url,
        "--model",
        "m",
        "-e",
        extension,
    ];
    args.extend_from_slice(extra);
    workspace.jig(&args)
}

/// Runs `command` to its end off the async runtime (the replay server runs on it).
async fn output_of(mut command: std::process::Command) -> Output {
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

/// `jig run` with the scripted extension, `plan`, `events` and `answers`, against `server`.
async fn run(
    workspace: &Workspace,
    server: &ReplayServer,
    setup: &Value,
    extra: &[&str],
) -> (Output, PathBuf) {
    let log = workspace.root.join("ext.log");
    let extension = scripted(workspace);
    let mut command = jig_run(workspace, server, &extension, extra);
    command
        .env("EXT_LOG", &log)
        .env("EXT_PLAN", setup["plan"].to_string())
        .env("EXT_EVENTS", setup["events"].to_string())
        .env("EXT_ANSWERS", setup["answers"].to_string());
    (output_of(command).await, log)
}

/// The tool names a request offered.
fn offered(request: &Value) -> Vec<String> {
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

/// The text of a request's last message.
fn last_message(request: &Value) -> (String, String) {
    let last = request["messages"].as_array().unwrap().last().unwrap();
    let content = match &last["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        other => other.to_string(),
    };
    (last["role"].as_str().unwrap().to_owned(), content)
}

/// The entries of the one session file under `data`.
fn session_entries(data: &Path) -> Vec<Value> {
    let files: Vec<PathBuf> = walk(data)
        .into_iter()
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    fs::read_to_string(&files[0])
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(
    clippy::too_many_lines,
    reason = "one run checked end to end: every action in each phase of the session"
)]
async fn actions_are_refused_while_loading_and_act_on_the_run_after_bind() {
    let workspace = Workspace::new();
    let server = ReplayServer::start(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "bash",
            json!({"command": "echo hi"}),
        )),
        reply(ScriptedReply::text("listed")),
        reply(ScriptedReply::text("summary")),
    ])
    .await
    .unwrap();
    let setup = json!({
        "events": ["session_start", "tool_call", "session_shutdown"],
        "answers": {},
        "plan": {
            "initialize": [
                ["sendMessage", {"content": "too early"}],
                ["appendEntry", {"customType": "early", "data": 1}],
                ["setActiveTools", {"names": ["read"]}],
                ["getSessionInfo", {}],
            ],
            "session_start": [
                ["getSessionInfo", {}],
                ["appendEntry", {"customType": "note", "data": {"n": 1}}],
                ["setActiveTools", {"names": ["read", "nope"]}],
                ["setActiveTools", {"names": ["read", "bash"]}],
                ["getActiveTools", {}],
                ["ui/confirm", {"title": "go on?"}],
                ["ui/select", {"title": "pick", "options": ["a", "b"]}],
                ["ui/input", {"title": "name"}],
            ],
            "tool_call": [
                ["sendMessage", {"content": "steer: keep it short", "customType": "hint", "display": false}],
                ["sendUserMessage", {"text": "follow up: summarise", "deliverAs": "followUp"}],
                ["sendMessage", {"content": "later", "deliverAs": "nextTurn"}],
                ["getSessionInfo", {}],
            ],
            "session_shutdown": [
                ["sendMessage", {"content": "too late"}],
                ["appendEntry", {"customType": "bye", "data": null}],
            ],
        },
    });
    let (output, log) = run(&workspace, &server, &setup, &["list files"]).await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "summary\n");
    let log = log_lines(&log);

    // Loading: every action is refused with the same message.
    let refused: Vec<(String, Value)> = [
        "sendMessage",
        "appendEntry",
        "setActiveTools",
        "getSessionInfo",
    ]
    .iter()
    .map(|method| ((*method).to_owned(), json!({"error": NOT_INITIALIZED})))
    .collect();
    assert_eq!(answers(&log, "initialize"), refused);

    // Bound: session info, entries, active tools, dialogs without a user interface.
    let start = answers(&log, "session_start");
    let info = &start[0].1;
    assert_eq!(info["cwd"], workspace.ws.display().to_string());
    assert_eq!(info["model"], "openai/m");
    assert_eq!(info["provider"], "openai");
    assert_eq!(info["messageCount"], 0);
    assert_eq!(info["mode"], "print");
    assert_eq!(info["hasUI"], false);
    let id = info["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(start[1], ("appendEntry".to_owned(), Value::Null));
    assert_eq!(start[2].0, "setActiveTools");
    assert_eq!(
        start[2].1,
        json!({"error": "setActiveTools: unknown tool \"nope\"; available tools: read, write, edit, bash"})
    );
    assert_eq!(start[3], ("setActiveTools".to_owned(), Value::Null));
    assert_eq!(
        start[4],
        ("getActiveTools".to_owned(), json!(["read", "bash"]))
    );
    assert_eq!(start[5], ("ui/confirm".to_owned(), json!(false)));
    assert_eq!(start[6], ("ui/select".to_owned(), Value::Null));
    assert_eq!(start[7], ("ui/input".to_owned(), Value::Null));

    // Mid-run: a steering message goes right after the tool result; a follow-up once the model
    // stops; nextTurn has no next prompt in print mode.
    let during = answers(&log, "tool_call");
    assert_eq!(during[0], ("sendMessage".to_owned(), Value::Null));
    assert_eq!(during[1], ("sendUserMessage".to_owned(), Value::Null));
    assert_eq!(
        during[2].1,
        json!({"error": "sendMessage: deliverAs nextTurn needs a next prompt, and jig print mode sends one prompt"})
    );
    assert_eq!(during[3].1["messageCount"], 2, "the prompt and the reply");
    assert_eq!(during[3].1["sessionId"], id.as_str());

    // After the run: no turn is left for a message; entries are still written.
    let after = answers(&log, "session_shutdown");
    assert_eq!(
        after,
        vec![
            (
                "sendMessage".to_owned(),
                json!({"error": "sendMessage: the run has ended; no turn is left to take it"})
            ),
            ("appendEntry".to_owned(), Value::Null),
        ]
    );

    let requests: Vec<Value> = server
        .requests()
        .iter()
        .map(jig_llm::testing::RecordedRequest::json)
        .collect();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        assert_eq!(offered(request), ["read", "bash"]);
    }
    assert_eq!(
        last_message(&requests[1]),
        ("user".to_owned(), "steer: keep it short".to_owned())
    );
    assert_eq!(
        last_message(&requests[2]),
        ("user".to_owned(), "follow up: summarise".to_owned())
    );

    let entries = session_entries(&workspace.root.join("data"));
    assert_eq!(entries[0]["id"], id.as_str());
    let custom: Vec<(Value, Value)> = entries
        .iter()
        .filter(|entry| entry["type"] == "custom")
        .map(|entry| (entry["customType"].clone(), entry["data"].clone()))
        .collect();
    assert_eq!(
        custom,
        vec![
            (json!("note"), json!({"n": 1})),
            (json!("bye"), Value::Null)
        ]
    );
    let text_of = |entry: &Value| entry["message"]["content"][0]["text"].clone();
    let steered = entries
        .iter()
        .find(|entry| entry["type"] == "message" && text_of(entry) == "steer: keep it short")
        .expect("the steering message is part of the session");
    assert_eq!(steered["customType"], "hint", "{steered}");
    assert_eq!(steered["display"], false, "{steered}");
    let followed = entries
        .iter()
        .find(|entry| entry["type"] == "message" && text_of(entry) == "follow up: summarise")
        .unwrap();
    assert!(followed.get("customType").is_none(), "{followed}");
    assert!(followed.get("display").is_none(), "{followed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_options_without_a_subcommand_are_jig_run() {
    // `jig -e PATH --strict` is `jig run` without a prompt argument: in a terminal the
    // interactive session, here (stdin piped) the prompt is read from stdin.
    let workspace = Workspace::new();
    let server = ReplayServer::start(vec![reply(ScriptedReply::text("ok"))])
        .await
        .unwrap();
    let extension = scripted(&workspace);
    let log = workspace.root.join("ext.log");
    let base_url = format!("{}/v1", server.url());
    let mut command = workspace.jig(&[
        "-e",
        &extension,
        "--strict",
        "--no-session",
        "--base-url",
        &base_url,
        "--model",
        "m",
    ]);
    command
        .env("EXT_LOG", &log)
        .env(
            "EXT_FLAGS",
            json!([{"name": "strict", "type": "boolean"}]).to_string(),
        )
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let output = tokio::task::spawn_blocking(move || {
        use std::io::Write as _;
        let mut child = command.spawn().unwrap();
        child.stdin.take().unwrap().write_all(b"hi").unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "ok\n");
    assert_eq!(last_message(&server.requests()[0].json()).1, "hi");
    let bind = log_lines(&log)
        .into_iter()
        .find_map(|line| line.get("bind").cloned())
        .unwrap();
    assert_eq!(bind["flagValues"], json!({"strict": true}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tagged_message_keeps_its_tag_in_the_json_events() {
    let workspace = Workspace::new();
    let server = ReplayServer::start(vec![reply(ScriptedReply::text("ok"))])
        .await
        .unwrap();
    let setup = json!({
        "events": ["session_start"],
        "answers": {},
        "plan": {"session_start": [
            ["sendMessage", {"content": "a note", "customType": "memo", "display": false}],
        ]},
    });
    let (output, _) = run(&workspace, &server, &setup, &["--mode", "json", "hi"]).await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let ends: Vec<Value> = text(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|event| event["type"] == "message_end")
        .collect();
    let tag = |event: &Value| json!([event["customType"], event["display"]]);
    assert_eq!(ends.len(), 3, "{ends:?}");
    assert_eq!(tag(&ends[0]), json!([null, null]), "the prompt");
    assert_eq!(ends[1]["message"]["content"][0]["text"], "a note");
    assert_eq!(tag(&ends[1]), json!(["memo", false]));
    assert_eq!(tag(&ends[2]), json!([null, null]), "the reply");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_rewrites_what_the_model_is_sent_but_not_the_session() {
    let workspace = Workspace::new();
    let server = ReplayServer::start(vec![reply(ScriptedReply::text("ok"))])
        .await
        .unwrap();
    let setup = json!({
        "events": ["context"],
        "plan": {},
        "answers": {"context": {"messages": [
            {"role": "user", "content": [{"type": "text", "text": "rewritten"}]}]}},
    });
    let (output, log) = run(&workspace, &server, &setup, &["the original"]).await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let request = server.requests()[0].json();
    let sent: Vec<&Value> = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] != "system")
        .collect();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(
        last_message(&request),
        ("user".to_owned(), "rewritten".to_owned())
    );
    let seen = seen_events(&log);
    assert_eq!(seen[0]["seen"], "context");
    assert_eq!(
        seen[0]["payload"]["messages"][0]["content"][0]["text"],
        "the original"
    );
    let entries = session_entries(&workspace.root.join("data"));
    let prompt = entries
        .iter()
        .find(|entry| entry["type"] == "message")
        .unwrap();
    assert_eq!(prompt["message"]["content"][0]["text"], "the original");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn message_end_replaces_the_reply_the_run_keeps_and_prints() {
    let workspace = Workspace::new();
    let server = ReplayServer::start(vec![reply(ScriptedReply::text("quiet reply"))])
        .await
        .unwrap();
    let setup = json!({"events": ["message_end"], "plan": {}, "answers": {}});
    let log = workspace.root.join("ext.log");
    let extension = scripted(&workspace);
    let mut command = jig_run(&workspace, &server, &extension, &["hi"]);
    command
        .env("EXT_LOG", &log)
        .env("EXT_SHOUT", "1")
        .env("EXT_PLAN", setup["plan"].to_string())
        .env("EXT_EVENTS", setup["events"].to_string())
        .env("EXT_ANSWERS", "{}");
    let output = output_of(command).await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "QUIET REPLY\n");
    let roles: Vec<Value> = seen_events(&log)
        .iter()
        .map(|entry| entry["payload"]["message"]["role"].clone())
        .collect();
    assert_eq!(roles, [json!("user"), json!("assistant")]);
    let entries = session_entries(&workspace.root.join("data"));
    let replies: Vec<&Value> = entries
        .iter()
        .filter(|entry| entry["message"]["role"] == "assistant")
        .collect();
    assert_eq!(replies.len(), 1);
    assert_eq!(replies[0]["message"]["content"][0]["text"], "QUIET REPLY");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_before_compact_can_cancel_a_compaction() {
    let workspace = Workspace::new();
    let server = ReplayServer::start(vec![]).await.unwrap();
    let session = workspace.root.join("s.jsonl");
    let session = session.display().to_string();
    let setup = json!({
        "events": ["session_before_compact"],
        "plan": {},
        "answers": {"session_before_compact": {"cancel": true}},
    });
    let (output, log) = run(
        &workspace,
        &server,
        &setup,
        &["--session", &session, "--compact", "hi"],
    )
    .await;
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        "jig: --compact: the compaction was cancelled by a hook\n"
    );
    let seen = seen_events(&log);
    assert_eq!(seen[0]["seen"], "session_before_compact");
    assert_eq!(seen[0]["payload"]["reason"], "manual");
    assert!(server.requests().is_empty(), "nothing was sent");
}

#[test]
fn bad_or_conflicting_provider_registrations_stop_run_mcp_and_tool() {
    let workspace = Workspace::new();
    let extension = scripted(&workspace);
    let log = workspace.root.join("ext.log");
    let cases = [
        (
            json!([{"name": "openai", "baseUrl": "http://localhost:1/v1"}]),
            "Provider \"openai\" conflicts with the built-in provider",
        ),
        (
            json!([{"baseUrl": "http://localhost:1/v1"}]),
            "Provider config is required when registering by name",
        ),
        (
            json!([{"name": "local", "baseUrl": "localhost:1"}]),
            "Provider \"local\": baseUrl must be an http(s) URL, got \"localhost:1\"",
        ),
    ];
    // A provider registered by an action call during `initialize` is checked the same way.
    let output = workspace
        .jig(&["run", "--no-session", "-e", &extension, "hi"])
        .env("EXT_LOG", &log)
        .env(
            "EXT_PLAN",
            json!({"initialize": [["registerProvider", {"baseUrl": "http://localhost:1/v1"}]]})
                .to_string(),
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        format!(
            "jig: error: Failed to load extension \"{extension}\": Provider config is required when registering by name\n"
        )
    );
    for (providers, reason) in cases {
        let expected = format!("jig: error: Failed to load extension \"{extension}\": {reason}\n");
        let with_env = |command: &mut std::process::Command| {
            command
                .env("EXT_LOG", &log)
                .env("EXT_PROVIDERS", providers.to_string());
        };
        let mut run = workspace.jig(&["run", "--no-session", "-e", &extension, "hi"]);
        with_env(&mut run);
        let run = run.output().unwrap();
        assert_eq!(run.status.code(), Some(1));
        assert_eq!(text(&run.stderr), expected);
        let mut tool = workspace.jig(&["tool", "ls", "-e", &extension]);
        with_env(&mut tool);
        let tool = tool.output().unwrap();
        assert_eq!(tool.status.code(), Some(1));
        assert_eq!(text(&tool.stderr), expected);
        let mut mcp = workspace.jig(&["mcp", "-e", &extension]);
        with_env(&mut mcp);
        let mcp = mcp.stdin(std::process::Stdio::null()).output().unwrap();
        assert_eq!(mcp.status.code(), Some(1));
        assert_eq!(text(&mcp.stderr), expected);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_registered_while_loading_is_offered_and_a_later_one_is_refused() {
    let workspace = Workspace::new();
    let server = ReplayServer::start(vec![reply(ScriptedReply::text("served by ext-llm"))])
        .await
        .unwrap();
    let extension = scripted(&workspace);
    let log = workspace.root.join("ext.log");
    let providers = json!([{
        "name": "ext-llm",
        "api": "openai-completions",
        "baseUrl": format!("{}/v1", server.url()),
        "models": [{"id": "ext-model", "name": "Ext model", "contextWindow": 32000}],
    }]);
    let plan = json!({"session_start": [["registerProvider", {"name": "late-llm"}]]});
    let mut command = workspace.jig(&["run", "--provider", "ext-llm", "-e", &extension, "hi"]);
    command
        .env("EXT_LOG", &log)
        .env("EXT_PROVIDERS", providers.to_string())
        .env("EXT_EVENTS", json!(["session_start"]).to_string())
        .env("EXT_PLAN", plan.to_string());
    let output = output_of(command).await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout).contains("served by ext-llm"),
        "{}",
        text(&output.stdout)
    );
    let request = server.requests()[0].json();
    assert_eq!(
        request["model"], "ext-model",
        "its first model is the default"
    );
    let bind = log_lines(&log)
        .into_iter()
        .find_map(|line| line.get("bind").cloned())
        .unwrap();
    assert_eq!(bind["session"]["provider"], "ext-llm");
    assert_eq!(
        answers(&log_lines(&log), "session_start"),
        vec![(
            "registerProvider".to_owned(),
            json!({"error": "registerProvider after loading is not available in jig print mode: register providers in the initialize reply or during initialize"})
        )]
    );

    // Modes that ask no model accept the registration without a word.
    for mode in [&["tool", "ls"][..], &["tools"][..]] {
        let mut args = mode.to_vec();
        args.extend_from_slice(&["-e", &extension]);
        let mut command = workspace.jig(&args);
        command
            .env("EXT_LOG", &log)
            .env("EXT_PROVIDERS", providers.to_string());
        let output = output_of(command).await;
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        assert_eq!(text(&output.stderr), "", "{mode:?}");
    }

    // A registration that cannot be used (a key given in the open) is left out; selecting it
    // names the extension and says what to fix.
    let providers =
        json!([{"name": "keyed", "baseUrl": "http://localhost:1/v1", "apiKey": "sk-1"}]);
    let mut command = workspace.jig(&["run", "--provider", "keyed", "-e", &extension, "hi"]);
    command
        .env("EXT_LOG", &log)
        .env("EXT_PROVIDERS", providers.to_string());
    let output = command.output().unwrap();
    assert_ne!(output.status.code(), Some(0));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "provider `keyed` of extension {extension} cannot be used"
        )) && stderr.contains(
            "`apiKey` is not read: name the environment variable holding the key in `apiKeyEnv`"
        ),
        "{stderr}"
    );
}

/// The runtime's scripted test extension in `mode`, started through a script in `workspace`
/// whose command line carries the workspace's path (to find its processes afterwards).
fn faulty(workspace: &Workspace, mode: &str) -> String {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../jig-extensions/tests/it/fixtures/ext.py")
        .canonicalize()
        .unwrap();
    let script = workspace.root.join(format!("{mode}.sh"));
    crate::extensions::executable(
        &script,
        &format!(
            "#!/bin/sh\nexec python3 {} {mode} {}\n",
            fixture.display(),
            workspace.root.display()
        ),
    );
    script.display().to_string()
}

/// Processes whose command line mentions `tag`.
fn processes_with(tag: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(tag) {
            found.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found
}

/// `jig run` with the extension in `mode` subscribed to `tool_call`, the model asking for
/// `touch ran` and then answering `done`: the call is blocked (fail closed), the run goes on
/// and ends normally, the error names the extension and the event, and no process is left.
async fn a_faulty_tool_call_handler_blocks_and_the_run_goes_on(mode: &str, error: &str) {
    let workspace = Workspace::new();
    let server = ReplayServer::start(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "bash",
            json!({"command": "touch ran"}),
        )),
        reply(ScriptedReply::text("done")),
    ])
    .await
    .unwrap();
    let extension = faulty(&workspace, mode);
    let mut command = jig_run(&workspace, &server, &extension, &["--no-session", "go"]);
    command.env("JIG_EXTENSION_TIMEOUT", "1");
    let started = std::time::Instant::now();
    let output = output_of(command).await;
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{mode}: too slow"
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{mode}: {}",
        text(&output.stderr)
    );
    assert_eq!(text(&output.stdout), "done\n", "{mode}");
    assert!(!workspace.ws.join("ran").exists(), "{mode}: the call ran");
    let stderr = text(&output.stderr);
    let prefix = format!("jig: warning: Extension \"{extension}\" tool_call error: ");
    let line = stderr
        .lines()
        .find(|line| line.starts_with(&prefix))
        .unwrap_or_else(|| panic!("{mode}: no error naming the extension in {stderr}"));
    assert!(line.contains(error), "{mode}: {line}");
    let requests = server.requests();
    let result = requests[1].json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["role"] == "tool")
        .unwrap()["content"]
        .clone();
    assert!(
        result.as_str().unwrap().contains(error),
        "{mode}: the model reads {result}"
    );
    let left = processes_with(&workspace.root.display().to_string());
    assert!(left.is_empty(), "{mode}: left behind: {left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_mid_handler_blocks_the_call_and_the_run_goes_on() {
    a_faulty_tool_call_handler_blocks_and_the_run_goes_on("crash", "segfault in handler").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hang_past_the_timeout_blocks_the_call_and_the_run_goes_on() {
    a_faulty_tool_call_handler_blocks_and_the_run_goes_on("hang", "no answer").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_on_stdout_blocks_the_call_and_the_run_goes_on() {
    a_faulty_tool_call_handler_blocks_and_the_run_goes_on("flood", "without a newline").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_json_blocks_the_call_and_the_run_goes_on() {
    a_faulty_tool_call_handler_blocks_and_the_run_goes_on("garbage", "invalid JSON").await;
}

#[test]
fn exiting_during_initialize_stops_the_run_before_any_request() {
    let workspace = Workspace::new();
    let extension = faulty(&workspace, "exit-init");
    let output = workspace
        .jig(&["run", "--no-session", "-e", &extension, "go"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        format!(
            "jig: error: Failed to load extension \"{extension}\": during initialize: the process exited (exit status: 3); stderr: cannot start: missing config\nHint: Start without extensions using \"jig -ne\".\n"
        )
    );
    let left = processes_with(&workspace.root.display().to_string());
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flag_values_reach_the_extension_and_unknown_flags_stop_startup() {
    let workspace = Workspace::new();
    let server = ReplayServer::start(vec![reply(ScriptedReply::text("ok"))])
        .await
        .unwrap();
    let extension = scripted(&workspace);
    let log = workspace.root.join("ext.log");
    let flags = json!([
        {"name": "strict", "type": "boolean", "default": false},
        {"name": "label", "type": "string"},
        {"name": "level", "type": "string", "default": "low"},
    ]);
    let plan =
        json!({"session_start": [["getFlag", {"name": "strict"}], ["getFlag", {"name": "other"}]]});
    let mut command = jig_run(
        &workspace,
        &server,
        &extension,
        // As jig's own options are written, and through `--flag`.
        &["--no-session", "--strict", "--flag", "label=nightly", "hi"],
    );
    command
        .env("EXT_LOG", &log)
        .env("EXT_FLAGS", flags.to_string())
        .env("EXT_EVENTS", r#"["session_start"]"#)
        .env("EXT_PLAN", plan.to_string());
    let output = output_of(command).await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let lines = log_lines(&log);
    let bind = lines.iter().find_map(|line| line.get("bind")).unwrap();
    assert_eq!(
        bind["flagValues"],
        json!({"strict": true, "label": "nightly", "level": "low"})
    );
    assert_eq!(
        answers(&lines, "session_start"),
        vec![
            ("getFlag".to_owned(), json!(true)),
            ("getFlag".to_owned(), Value::Null)
        ]
    );

    for (flag, message) in [
        (
            "nope",
            "Unknown flag \"--nope\": no loaded extension registers it",
        ),
        (
            "strict=maybe",
            "Flag \"--strict\" is a boolean: give true or false, not \"maybe\"",
        ),
        ("label", "Flag \"--label\" needs a value: --label=VALUE"),
    ] {
        let bare = format!("--{flag}");
        for (mode, spelled) in [
            (&["run", "--no-session", "hi"][..], &["--flag", flag][..]),
            (&["run", "--no-session", "hi"][..], &[bare.as_str()][..]),
            (&["tool", "ls"][..], &[bare.as_str()][..]),
            (&["mcp"][..], &["--flag", flag][..]),
        ] {
            let mut args = mode.to_vec();
            args.extend_from_slice(&["-e", &extension]);
            args.extend_from_slice(spelled);
            let output = workspace
                .jig(&args)
                .env("EXT_LOG", &log)
                .env("EXT_FLAGS", flags.to_string())
                .output()
                .unwrap();
            // A command line jig cannot take is a usage error, as clap's own are.
            assert_eq!(output.status.code(), Some(2), "{args:?}");
            assert_eq!(
                text(&output.stderr),
                format!("jig: error: {message}\n"),
                "{args:?}"
            );
        }
    }
}
