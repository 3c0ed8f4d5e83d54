//! Pi's own extensions, from the `@mariozechner/pi-coding-agent` package the Node host installs,
//! loaded unchanged: every shipped example loads or is refused with its reason, and the
//! examples that gate, guard, add and replace tools behave in `jig run` and `jig mcp` as in Pi.
//!
//! The host's npm dependencies must be installed (`npm ci` in `crates/jig-extensions/pi-host`,
//! which `scripts/test` does); without them the tests print a SKIPPED notice and pass, unless
//! `JIG_REQUIRE_CLIENTS=1`.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers panic when the setup fails"
)]
#![expect(clippy::print_stderr, reason = "a skipped test says why on stderr")]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use jig_llm::scripted::ScriptedReply;
use jig_llm::testing::ReplayServer;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::extensions::{Workspace, reply, text};

/// The host in this tree, when its dependencies are installed.
fn host() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../jig-extensions/pi-host");
    let dir = fs::canonicalize(dir).unwrap();
    if dir
        .join("node_modules/@mariozechner/pi-coding-agent")
        .is_dir()
    {
        return Some(dir);
    }
    assert!(
        std::env::var("JIG_REQUIRE_CLIENTS").as_deref() != Ok("1"),
        "the Pi extension host's dependencies are not installed: npm ci --prefix {}",
        dir.display()
    );
    eprintln!(
        "SKIPPED: the Pi extension host's dependencies are not installed (npm ci --prefix {})",
        dir.display()
    );
    None
}

/// The examples directory of the installed Pi package.
fn examples(host: &Path) -> PathBuf {
    host.join("node_modules/@mariozechner/pi-coding-agent/examples/extensions")
}

/// `workspace.jig(args)` pointed at `host`, with a private `HOME` (Pi examples write under
/// `~/.pi`).
fn jig(workspace: &Workspace, host: &Path, args: &[&str]) -> std::process::Command {
    let mut command = workspace.jig(args);
    command
        .env("JIG_PI_HOST", host)
        .env("HOME", workspace.root.join("home"));
    command
}

/// Loads each example with `jig tools --json` and reports "loaded" or "refused: <reason>".
#[test]
fn every_example_of_pis_package_loads_or_is_refused_with_its_reason() {
    let Some(host) = host() else { return };
    let dir = examples(&host);
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| {
            !Path::new(name)
                .extension()
                .is_some_and(|ext| ext.eq_ignore_ascii_case("md"))
        })
        .collect();
    names.sort();
    assert!(
        names.len() >= 60,
        "only {} examples in {}",
        names.len(),
        dir.display()
    );
    let workspace = Workspace::new();
    let report: BTreeMap<String, String> = std::thread::scope(|scope| {
        let chunks: Vec<Vec<String>> = names
            .chunks(names.len().div_ceil(4))
            .map(<[String]>::to_vec)
            .collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                let (workspace, host, dir) = (&workspace, &host, &dir);
                scope.spawn(move || {
                    chunk
                        .into_iter()
                        .map(|name| {
                            let path = dir.join(&name).display().to_string();
                            let output = jig(workspace, host, &["tools", "--json", "-e", &path])
                                .output()
                                .unwrap();
                            let verdict = if output.status.success() {
                                "loaded".to_owned()
                            } else {
                                let stderr = text(&output.stderr).replace(&path, "<example>");
                                let first = stderr.lines().next().unwrap_or("").to_owned();
                                format!("refused: {first}")
                            };
                            (name, verdict)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().unwrap())
            .collect()
    });
    let refused: Vec<&String> = report
        .iter()
        .filter(|(_, verdict)| verdict.starts_with("refused"))
        .map(|(name, _)| name)
        .collect();
    // The three that cannot load, each for a stated reason: two register a provider through an
    // in-process stream function, one imports a package the example does not ship.
    assert_eq!(
        refused,
        [
            "custom-provider-anthropic",
            "custom-provider-gitlab-duo",
            "sandbox"
        ],
        "{report:#?}"
    );
    let table = report
        .iter()
        .fold(String::new(), |mut table, (name, verdict)| {
            let _ = writeln!(table, "{name}: {verdict}");
            table
        });
    insta::assert_snapshot!(table);
}

/// `jig run -e <example> <prompt>` against `server`; the output.
async fn run_with(
    workspace: &Workspace,
    host: &Path,
    server: &ReplayServer,
    example: &Path,
    prompt: &str,
) -> std::process::Output {
    let base_url = format!("{}/v1", server.url());
    let example = example.display().to_string();
    let mut command = jig(
        workspace,
        host,
        &[
            "run",
            "--base-url",
            &base_url,
            "--model",
            "m",
            "--no-session",
            "-e",
            &example,
            prompt,
        ],
    );
    // Pi's packages are transpiled at start; on a loaded machine that can pass the default.
    command.env("JIG_EXTENSION_TIMEOUT", "60");
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

/// [`run_with`], which must exit 0.
async fn run_ok(
    workspace: &Workspace,
    host: &Path,
    server: &ReplayServer,
    example: &Path,
    prompt: &str,
) -> std::process::Output {
    let output = run_with(workspace, host, server, example, prompt).await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    output
}

/// A scripted model endpoint answering `replies` in order.
async fn model(replies: Vec<jig_llm::testing::ReplayResponse>) -> ReplayServer {
    ReplayServer::start(replies).await.unwrap()
}

/// The content of the tool results the model was sent in request `index`.
fn tool_results(server: &ReplayServer, index: usize) -> Vec<String> {
    server.requests()[index].json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| match &message["content"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_gate_blocks_a_dangerous_command_without_a_user_interface() {
    let Some(host) = host() else { return };
    let workspace = Workspace::new();
    let server = model(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "bash",
            json!({"command": "rm -rf victim"}),
        )),
        reply(ScriptedReply::text("blocked")),
    ])
    .await;
    let example = examples(&host).join("permission-gate.ts");
    run_ok(&workspace, &host, &server, &example, "clean up").await;
    assert!(workspace.ws.join("victim/file").exists(), "rm -rf ran");
    assert_eq!(
        tool_results(&server, 1),
        ["Dangerous command blocked (no UI for confirmation)"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_paths_blocks_a_write_to_env_and_leaves_the_file_unchanged() {
    let Some(host) = host() else { return };
    let workspace = Workspace::new();
    fs::write(workspace.ws.join(".env"), "SECRET=1\n").unwrap();
    let server = model(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "write",
            json!({"path": ".env", "content": "SECRET=stolen\n"}),
        )),
        reply(ScriptedReply::tool_call(
            "c2",
            "write",
            json!({"path": "notes.txt", "content": "fine\n"}),
        )),
        reply(ScriptedReply::text("done")),
    ])
    .await;
    let example = examples(&host).join("protected-paths.ts");
    run_ok(&workspace, &host, &server, &example, "write").await;
    assert_eq!(
        fs::read_to_string(workspace.ws.join(".env")).unwrap(),
        "SECRET=1\n"
    );
    assert_eq!(
        fs::read_to_string(workspace.ws.join("notes.txt")).unwrap(),
        "fine\n"
    );
    assert_eq!(tool_results(&server, 1), ["Path \".env\" is protected"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hello_registers_a_tool_the_model_calls() {
    let Some(host) = host() else { return };
    let workspace = Workspace::new();
    let server = model(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "hello",
            json!({"name": "jig"}),
        )),
        reply(ScriptedReply::text("greeted")),
    ])
    .await;
    let example = examples(&host).join("hello.ts");
    run_ok(&workspace, &host, &server, &example, "greet jig").await;
    let offered: Vec<String> = server.requests()[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(offered.contains(&"hello".to_owned()), "{offered:?}");
    assert_eq!(tool_results(&server, 1), ["Hello, jig!"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_override_replaces_the_built_in_read_and_says_so() {
    let Some(host) = host() else { return };
    let workspace = Workspace::new();
    fs::write(workspace.ws.join(".env"), "SECRET=1\n").unwrap();
    fs::write(workspace.ws.join("notes.txt"), "hello notes\n").unwrap();
    // Pi's own start-up makes its agent directory; the example logs there.
    fs::create_dir_all(workspace.root.join("home/.pi/agent")).unwrap();
    let server = model(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "read",
            json!({"path": ".env"}),
        )),
        reply(ScriptedReply::tool_call(
            "c2",
            "read",
            json!({"path": "notes.txt"}),
        )),
        reply(ScriptedReply::text("read")),
    ])
    .await;
    let example = examples(&host).join("tool-override.ts");
    let output = run_ok(&workspace, &host, &server, &example, "read").await;
    assert!(
        text(&output.stderr).contains("replaces the built-in tool \"read\""),
        "{}",
        text(&output.stderr)
    );
    let first = tool_results(&server, 1);
    assert!(first[0].starts_with("Access denied: \".env\""), "{first:?}");
    let second = tool_results(&server, 2);
    assert_eq!(second[1], "hello notes\n");
    // The extension's own access log, under the private HOME's ~/.pi/agent.
    let log = fs::read_to_string(workspace.root.join("home/.pi/agent/read-access.log")).unwrap();
    assert!(log.contains("BLOCKED") && log.contains("ALLOWED"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_transform_rewrites_the_prompt_the_model_reads() {
    let Some(host) = host() else { return };
    let workspace = Workspace::new();
    let server = model(vec![reply(ScriptedReply::text("short answer"))]).await;
    let example = examples(&host).join("input-transform.ts");
    let output = run_with(
        &workspace,
        &host,
        &server,
        &example,
        "?quick why is the sky blue",
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let messages = server.requests()[0].json()["messages"].clone();
    let last = messages.as_array().unwrap().last().unwrap().to_string();
    assert!(
        last.contains("Respond briefly in 1-2 sentences: why is the sky blue"),
        "{last}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn todo_keeps_its_state_across_calls_of_its_tool() {
    let Some(host) = host() else { return };
    let workspace = Workspace::new();
    let server = model(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "todo",
            json!({"action": "add", "text": "write tests"}),
        )),
        reply(ScriptedReply::tool_call(
            "c2",
            "todo",
            json!({"action": "add", "text": "ship"}),
        )),
        reply(ScriptedReply::tool_call(
            "c3",
            "todo",
            json!({"action": "list"}),
        )),
        reply(ScriptedReply::text("listed")),
    ])
    .await;
    let example = examples(&host).join("todo.ts");
    run_ok(&workspace, &host, &server, &example, "plan").await;
    let results = tool_results(&server, 3);
    let list = results.last().unwrap();
    assert!(
        list.contains("write tests") && list.contains("ship"),
        "{results:?}"
    );
}

#[test]
fn a_pi_tool_runs_through_jig_tool() {
    let Some(host) = host() else { return };
    let workspace = Workspace::new();
    let example = examples(&host).join("hello.ts").display().to_string();
    let output = jig(
        &workspace,
        &host,
        &[
            "tool",
            "hello",
            "-e",
            &example,
            "--args",
            r#"{"name": "mcp"}"#,
        ],
    )
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout).trim(), "Hello, mcp!");
}

#[test]
fn without_the_host_a_pi_extension_is_a_load_error_that_says_how_to_install_it() {
    let workspace = Workspace::new();
    let module = workspace.root.join("ext.ts");
    fs::write(&module, "export default function (pi) {}\n").unwrap();
    let module = module.display().to_string();
    let missing = workspace.root.join("no-host");
    let output = jig(&workspace, &missing, &["tools", "-e", &module])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr).replace(&workspace.root.display().to_string(), "<root>");
    insta::assert_snapshot!(stderr);
}

/// Installs the pinned npm `package` into `dir` (its own prefix) and returns the package's
/// directory.
fn npm_package(dir: &Path, package: &str) -> PathBuf {
    let status = std::process::Command::new("npm")
        .args([
            "install",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--prefix",
        ])
        .arg(dir)
        .arg(package)
        .status()
        .unwrap();
    assert!(status.success(), "npm install {package} failed");
    let name = package.rsplit_once('@').map_or(package, |(name, _)| name);
    dir.join("node_modules").join(name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_mcp_adapter_offers_a_local_mcp_servers_tools_to_the_model() {
    let Some(host) = host() else { return };
    let workspace = Workspace::new();
    let adapter = npm_package(&workspace.root.join("npm"), "pi-mcp-adapter@2.36.0");
    fs::write(workspace.ws.join("notes.txt"), "from the MCP server\n").unwrap();
    // The project's .mcp.json names a local MCP server: jig's own, on the workspace.
    let server_config = json!({"mcpServers": {"files": {
        "command": env!("CARGO_BIN_EXE_jig"),
        "args": ["mcp", "--root", workspace.ws.display().to_string()],
    }}});
    fs::write(workspace.ws.join(".mcp.json"), server_config.to_string()).unwrap();
    let server = model(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "mcp",
            json!({"tool": "read", "server": "files", "args": {"path": "notes.txt"}}),
        )),
        reply(ScriptedReply::text("read it")),
    ])
    .await;
    let output = run_with(
        &workspace,
        &host,
        &server,
        &adapter,
        "read notes through MCP",
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let results = tool_results(&server, 1);
    assert!(results[0].contains("from the MCP server"), "{results:?}");
}

#[test]
fn jig_install_adds_a_pi_package_to_the_global_extensions_and_refuses_others() {
    if host().is_none() {
        return;
    }
    let workspace = Workspace::new();
    let output = workspace
        .jig(&["install", "npm:pi-aliases@1.0.7"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let link = workspace.root.join("config/jig/extensions/pi-aliases");
    let target = fs::canonicalize(&link).unwrap();
    assert!(
        target.join("package.json").is_file(),
        "{}",
        target.display()
    );
    // Not a Pi package: refused, and not left in jig's npm directory.
    let output = workspace
        .jig(&["install", "npm:is-number@7.0.0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stderr).contains("is-number is not a Pi package"),
        "{}",
        text(&output.stderr)
    );
    assert!(
        !workspace
            .root
            .join("config/jig/npm/node_modules/is-number")
            .exists()
    );
    assert!(
        !workspace
            .root
            .join("config/jig/extensions/is-number")
            .exists()
    );
    // Not npm:
    let output = workspace.jig(&["install", "pi-aliases"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
}

/// A Pi extension that logs the agent loop's events it is sent, with what identifies them.
const LIFECYCLE_LOGGER: &str = r#"import { appendFileSync } from "node:fs";
export default function (pi) {
	const log = (line) => appendFileSync(process.env.LIFECYCLE_LOG, line + "\n");
	pi.on("agent_start", () => log("agent_start"));
	pi.on("turn_start", (e) => log(`turn_start ${e.turnIndex}`));
	pi.on("tool_execution_start", (e) => log(`tool_execution_start ${e.toolName} ${e.toolCallId}`));
	pi.on("tool_execution_end", (e) => log(`tool_execution_end ${e.toolName} error=${e.isError}`));
	pi.on("turn_end", (e) => log(`turn_end ${e.turnIndex} results=${e.toolResults.length}`));
	pi.on("agent_end", () => log("agent_end"));
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_loops_events_reach_a_pi_extension_in_order() {
    let Some(host) = host() else { return };
    let workspace = Workspace::new();
    let module = workspace.root.join("lifecycle.ts");
    fs::write(&module, LIFECYCLE_LOGGER).unwrap();
    let log = workspace.root.join("lifecycle.log");
    let server = model(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "read",
            json!({"path": "victim/file"}),
        )),
        reply(ScriptedReply::text("read")),
    ])
    .await;
    let base_url = format!("{}/v1", server.url());
    let module = module.display().to_string();
    let mut command = jig(
        &workspace,
        &host,
        &[
            "run",
            "--base-url",
            &base_url,
            "--model",
            "m",
            "--no-session",
            "-e",
            &module,
            "list",
        ],
    );
    command.env("LIFECYCLE_LOG", &log);
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        fs::read_to_string(&log).unwrap(),
        "agent_start\nturn_start 0\ntool_execution_start read c1\ntool_execution_end read error=false\nturn_end 0 results=1\nturn_start 1\nturn_end 1 results=0\nagent_end\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_tools_registers_a_tool_at_session_start_that_the_model_then_calls() {
    let Some(host) = host() else { return };
    let workspace = Workspace::new();
    let server = model(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "echo_session",
            json!({"message": "hi"}),
        )),
        reply(ScriptedReply::text("echoed")),
    ])
    .await;
    let example = examples(&host).join("dynamic-tools.ts");
    run_ok(&workspace, &host, &server, &example, "echo hi").await;
    let offered: Vec<String> = server.requests()[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(offered.contains(&"echo_session".to_owned()), "{offered:?}");
    assert_eq!(tool_results(&server, 1), ["[session] hi"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_tool_wraps_ripgrep_and_its_result_stays_within_jigs_bound() {
    let Some(host) = host() else { return };
    if std::process::Command::new("rg")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var("JIG_REQUIRE_CLIENTS").as_deref() != Ok("1"),
            "ripgrep (rg) is not installed"
        );
        eprintln!("SKIPPED: ripgrep (rg) is not installed");
        return;
    }
    let workspace = Workspace::new();
    let lines = (0..3000).fold(String::new(), |mut lines, n| {
        let _ = writeln!(lines, "needle {n}");
        lines
    });
    fs::write(workspace.ws.join("hay.txt"), lines).unwrap();
    let server = model(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "rg",
            json!({"pattern": "needle"}),
        )),
        reply(ScriptedReply::text("found")),
    ])
    .await;
    let example = examples(&host).join("truncated-tool.ts");
    run_ok(&workspace, &host, &server, &example, "search").await;
    let results = tool_results(&server, 1);
    let result = &results[0];
    assert!(
        result.starts_with("./hay.txt:1:needle 0\n"),
        "{}",
        &result[..200]
    );
    // Pi cuts at 2000 lines or 50 KB and appends its notice after them, past jig's bound on
    // every extension tool's result (the same limits): jig's own notice says what was cut.
    let tail = &result[result.len().saturating_sub(120)..];
    assert!(tail.contains("(50.0KB limit)]"), "{tail}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_spawn_hook_replaces_bash_with_pis_own_and_changes_its_environment() {
    let Some(host) = host() else { return };
    let workspace = Workspace::new();
    fs::create_dir_all(workspace.root.join("home")).unwrap();
    fs::write(
        workspace.root.join("home/.profile"),
        "export FROM_PROFILE=yes\n",
    )
    .unwrap();
    let server = model(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "bash",
            json!({"command": "echo hook=$PI_SPAWN_HOOK profile=$FROM_PROFILE"}),
        )),
        reply(ScriptedReply::text("ran")),
    ])
    .await;
    let example = examples(&host).join("bash-spawn-hook.ts");
    let output = run_ok(&workspace, &host, &server, &example, "run").await;
    assert!(
        text(&output.stderr).contains("replaces the built-in tool \"bash\""),
        "{}",
        text(&output.stderr)
    );
    let results = tool_results(&server, 1);
    assert_eq!(results[0].trim(), "hook=1 profile=yes");
}

#[test]
fn without_node_a_pi_extension_is_a_load_error_that_says_so() {
    let workspace = Workspace::new();
    let module = workspace.root.join("ext.ts");
    fs::write(&module, "export default function (pi) {}\n").unwrap();
    let module = module.display().to_string();
    let empty = workspace.root.join("empty-path");
    fs::create_dir_all(&empty).unwrap();
    let output = workspace
        .jig(&["tools", "-e", &module])
        .env("PATH", &empty)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr).replace(&workspace.root.display().to_string(), "<root>");
    assert!(
        stderr.starts_with("jig: error: Failed to load extension \"<root>/ext.ts\": a Pi extension runs on Node.js 20 or newer, and `node` was not found on PATH"),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("Hint: Start without extensions using \"jig -ne\".\n"),
        "{stderr}"
    );
}

#[test]
fn pis_own_directories_load_with_pi_extensions_on_and_the_projects_only_when_trusted() {
    let Some(host) = host() else { return };
    let workspace = Workspace::new();
    let hello = fs::read_to_string(examples(&host).join("hello.ts")).unwrap();
    let user_dir = workspace.root.join("home/.pi/agent/extensions");
    fs::create_dir_all(&user_dir).unwrap();
    fs::write(user_dir.join("hello.ts"), &hello).unwrap();
    let project_dir = workspace.ws.join(".pi/extensions");
    fs::create_dir_all(&project_dir).unwrap();
    fs::write(
        project_dir.join("greet.ts"),
        hello.replace("\"hello\"", "\"project_hello\""),
    )
    .unwrap();
    let tools = |approve: &str| {
        let output = jig(&workspace, &host, &["tools", approve])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        let listed: Vec<String> = text(&output.stdout)
            .lines()
            .filter_map(|line| line.split(" — ").next())
            .map(str::to_owned)
            .collect();
        (
            listed.contains(&"hello".to_owned()),
            listed.contains(&"project_hello".to_owned()),
        )
    };
    // Off by default.
    assert_eq!(tools("-a"), (false, false));
    fs::create_dir_all(workspace.root.join("config/jig")).unwrap();
    fs::write(
        workspace.root.join("config/jig/settings.json"),
        r#"{"piExtensions": true}"#,
    )
    .unwrap();
    // The project's directory only once the project is trusted.
    assert_eq!(tools("-na"), (true, false));
    assert_eq!(tools("-a"), (true, true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_pi_extension_prints_does_not_break_the_protocol() {
    let Some(host) = host() else { return };
    let workspace = Workspace::new();
    let module = workspace.root.join("chatty.ts");
    fs::write(
        &module,
        r#"export default function (pi) {
	console.log("loading");
	process.stdout.write("raw bytes\n");
	pi.on("tool_call", (event) => {
		console.log("saw", event.toolName);
		console.info({ json: "like" });
		return undefined;
	});
}
"#,
    )
    .unwrap();
    let server = model(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "read",
            json!({"path": "victim/file"}),
        )),
        reply(ScriptedReply::text("done")),
    ])
    .await;
    let output = run_ok(&workspace, &host, &server, &module, "read").await;
    assert_eq!(text(&output.stdout), "done\n");
    assert_eq!(tool_results(&server, 1)[0], "   1│ keep me");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_session_start_goes_on_in_the_background_and_the_extension_keeps_working() {
    let Some(host) = host() else { return };
    let workspace = Workspace::new();
    let module = workspace.root.join("slow.ts");
    // Pi awaits session_start; this one takes longer than jig waits for a notification.
    fs::write(
        &module,
        r#"export default function (pi) {
	let ready = false;
	pi.on("session_start", async () => {
		await new Promise((resolve) => setTimeout(resolve, 6000));
		ready = true;
	});
	pi.registerTool({
		name: "ready",
		label: "Ready",
		description: "Says whether start-up work is done",
		parameters: { type: "object", properties: {} },
		async execute() {
			return { content: [{ type: "text", text: `ready=${ready}` }] };
		},
	});
}
"#,
    )
    .unwrap();
    let server = model(vec![
        reply(ScriptedReply::tool_call("c1", "ready", json!({}))),
        reply(ScriptedReply::text("done")),
    ])
    .await;
    let output = run_ok(&workspace, &host, &server, &module, "check").await;
    assert!(
        !text(&output.stderr).contains("handlers are disabled"),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(tool_results(&server, 1), ["ready=false"]);
}
