//! The startup sequence for each face's configuration. Each test runs again in a child process
//! of the test binary with a home of its own (`HOME`, `XDG_CONFIG_HOME`, `XDG_DATA_HOME`: the
//! user's settings, trust store, global extensions and sessions live there), so no test reads
//! or changes the real ones, and none sees another's.

use std::path::{Path, PathBuf};
use std::time::Duration;

use jig_env::SandboxMode;
use jig_protocol::EnvVars;
use jig_tool::ContainmentMode;

use super::*;

/// Set in the child process: the home directory it runs with.
const CHILD_HOME: &str = "JIG_SESSION_TEST_HOME";

/// Runs the test `name` (of this module) in a child process with a fresh home, and there runs
/// `body` with that home. The child's output is shown when it fails.
fn in_own_home(name: &str, body: impl AsyncFnOnce(&Path)) {
    if let Some(home) = std::env::var_os(CHILD_HOME) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(body(Path::new(&home)));
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let home_path = home.path().canonicalize().unwrap();
    let path = format!(
        "{}::{name}",
        module_path!().split_once("::").map_or("", |(_, rest)| rest)
    );
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([path.as_str(), "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_HOME, &home_path)
        .env(EnvVars::HOME, &home_path)
        .env(EnvVars::XDG_CONFIG_HOME, home_path.join(".config"))
        .env(EnvVars::XDG_DATA_HOME, home_path.join(".local/share"))
        .env_remove(EnvVars::OPENAI_API_KEY)
        .env_remove(EnvVars::ANTHROPIC_API_KEY)
        .env_remove(EnvVars::OPENAI_BASE_URL)
        .env_remove(EnvVars::ANTHROPIC_BASE_URL)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "{path} failed in its own home:\n{stdout}\n{stderr}"
    );
}

/// Writes the user's settings file.
fn user_settings(home: &Path, json: &str) {
    let dir = home.join(".config/jig");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("settings.json"), json).unwrap();
}

/// A project directory in the home (canonical).
fn project(home: &Path, name: &str) -> PathBuf {
    let dir = home.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

fn open_options(roots: Vec<PathBuf>) -> OpenOptions {
    OpenOptions {
        roots,
        roots_flag: "--cwd",
        containment: ContainmentMode::Workspace,
        ..OpenOptions::default()
    }
}

fn run_options(open: OpenOptions) -> RunOptions {
    RunOptions {
        open,
        provider: Some("openai-compatible".into()),
        model: Some("local-model".into()),
        api_key: Some("sk-test".into()),
        base_url: Some("http://127.0.0.1:9/v1".into()),
        connect_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_secs(1),
        tools: None,
        system_prompt: None,
        append_system_prompt: Vec::new(),
        skills: Vec::new(),
        no_skills: true,
        max_turns: None,
        context_window: None,
        compact_threshold: 0.8,
        max_output_tokens: None,
        thinking: None,
        session: None,
        continue_session: false,
        no_session: true,
        permission_mode: None,
        reserved_commands: vec!["/help"],
    }
}

/// The mode a face gets by default here: the face's default, or off with a warning where no
/// mechanism can enforce a sandbox that is on only by default.
fn default_mode_here(face: Face) -> SandboxMode {
    match jig_env_local::sandbox::mechanism() {
        jig_env_local::sandbox::Mechanism::Unavailable(_) => SandboxMode::Off,
        _ => face.default_sandbox(false),
    }
}

#[test]
fn print_mode_opens_in_the_cwd_and_prepares_the_default_tools_and_model() {
    in_own_home(
        "print_mode_opens_in_the_cwd_and_prepares_the_default_tools_and_model",
        async |home| {
            let dir = project(home, "work");
            let options = run_options(open_options(vec![dir.clone()]));
            let opened = open(&options.open, Face::Print, None).await.unwrap();
            assert_eq!(opened.tool_context.cwd, dir);
            assert_eq!(opened.tool_context.containment.roots, vec![dir.clone()]);
            assert_eq!(
                opened.tool_context.sandbox.mode,
                default_mode_here(Face::Print)
            );
            assert!(opened.project.decision.trusted);
            assert_eq!(
                opened.project.decision.step,
                jig_project::TrustStep::NothingToGate
            );
            // Shown only with --verbose (or in the interactive session).
            assert_eq!(opened.sandbox_report, "");
            let prepared = prepare(&options, &opened).await.unwrap();
            let tools: Vec<&str> = prepared.config.tools.names();
            assert_eq!(tools, ["read", "write", "edit", "bash"]);
            assert_eq!(prepared.provider_name, "openai-compatible");
            assert_eq!(prepared.config.model, "local-model");
            assert!(
                prepared
                    .config
                    .system_prompt
                    .contains(&dir.display().to_string())
            );
            assert!(prepared.setup_note.is_none());
            opened.close().await;
        },
    );
}

#[test]
fn every_face_warns_about_an_unknown_key_and_stops_on_a_bad_value() {
    in_own_home(
        "every_face_warns_about_an_unknown_key_and_stops_on_a_bad_value",
        async |home| {
            let dir = project(home, "work");
            let options = open_options(vec![dir]);
            let faces = [
                Face::Print,
                Face::Interactive,
                Face::Mcp,
                Face::Tool,
                Face::Rpc,
                Face::Acp,
            ];
            user_settings(home, r#"{"model": "x", "modle": 1}"#);
            for face in faces {
                let opened = open(&options, face, None).await.unwrap();
                assert_eq!(opened.user_settings.model.as_deref(), Some("x"));
                opened.close().await;
            }
            user_settings(home, r#"{"model": "x", "thinking": "extreme"}"#);
            for face in faces {
                let error = open(&options, face, None).await.unwrap_err();
                assert!(
                    matches!(&error, StartError::Usage(message)
                        if message.to_string().contains("`thinking`: unknown variant `extreme`")),
                    "{face:?}: {error:?}"
                );
            }
        },
    );
}

#[test]
fn the_interactive_session_reports_its_sandbox_and_opens_without_a_key() {
    in_own_home(
        "the_interactive_session_reports_its_sandbox_and_opens_without_a_key",
        async |home| {
            let dir = project(home, "work");
            let mut options = run_options(open_options(vec![dir]));
            options.provider = Some("openai".into());
            options.api_key = None;
            options.base_url = None;
            let opened = open(&options.open, Face::Interactive, None).await.unwrap();
            assert!(
                opened.sandbox_report.starts_with("sandbox: "),
                "{}",
                opened.sandbox_report
            );
            let prepared = prepare(&options, &opened).await.unwrap();
            let note = prepared.setup_note.clone().unwrap_or_default();
            assert!(note.contains("OPENAI_API_KEY"), "{note}");
            opened.close().await;
            // So do the other conversations a client steers (it may set the model first).
            for face in [Face::Rpc, Face::Acp] {
                let opened = open(&options.open, face, None).await.unwrap();
                let prepared = prepare(&options, &opened).await.unwrap();
                assert!(prepared.setup_note.is_some(), "{face:?}");
                opened.close().await;
            }
            // Print mode needs the key before it starts.
            let opened = open(&options.open, Face::Print, None).await.unwrap();
            let error = prepare(&options, &opened).await.unwrap_err();
            assert!(error.to_string().contains("OPENAI_API_KEY"), "{error}");
            opened.close().await;
        },
    );
}

#[test]
fn a_tool_server_confines_to_every_root_once_and_names_the_root_flag() {
    in_own_home(
        "a_tool_server_confines_to_every_root_once_and_names_the_root_flag",
        async |home| {
            let a = project(home, "a");
            let b = project(home, "b");
            let mut options = open_options(vec![a.clone(), b.clone(), a.clone()]);
            options.roots_flag = "--root";
            let opened = open(&options, Face::Mcp, None).await.unwrap();
            assert_eq!(opened.tool_context.cwd, a);
            assert_eq!(opened.tool_context.containment.roots, vec![a.clone(), b]);
            assert_eq!(
                opened.tool_context.sandbox.mode,
                default_mode_here(Face::Mcp)
            );
            // The server's instructions name the sandbox when it is on.
            assert_eq!(
                opened.sandbox_report.is_empty(),
                !opened.tool_context.sandbox.is_on()
            );
            let served = opened.serve(opened.tools(&BuiltinsConfig::default())).await;
            assert!(served.get("grep").is_some());
            opened.close().await;
            options.roots.push(home.join("missing"));
            let error = open(&options, Face::Mcp, None).await.unwrap_err();
            assert!(
                error.to_string().starts_with("--root ")
                    && error.to_string().ends_with("no such directory"),
                "{error}"
            );
        },
    );
}

#[test]
fn one_tool_call_runs_unsandboxed_unless_asked_and_the_settings_sandbox_applies() {
    in_own_home(
        "one_tool_call_runs_unsandboxed_unless_asked_and_the_settings_sandbox_applies",
        async |home| {
            let dir = project(home, "work");
            let options = open_options(vec![dir.clone()]);
            let opened = open(&options, Face::Tool, None).await.unwrap();
            assert_eq!(opened.tool_context.sandbox.mode, SandboxMode::Off);
            assert_eq!(opened.project.extensions.extensions().len(), 0);
            opened.close().await;
            // The user's settings name a mode: every face takes it, `jig tool` too, and it is
            // not enforced at startup there (a bash call it cannot run says why).
            user_settings(
                home,
                r#"{"sandbox": {"mode": "read-only", "network": true}}"#,
            );
            for face in [Face::Tool, Face::Print] {
                let opened = match open(&options, face, None).await {
                    Ok(opened) => opened,
                    // A sandbox the settings ask for that cannot be enforced is an error.
                    Err(error) if face != Face::Tool => {
                        assert!(error.to_string().contains("cannot be enforced"), "{error}");
                        continue;
                    }
                    Err(error) => panic!("{error}"),
                };
                assert_eq!(opened.tool_context.sandbox.mode, SandboxMode::ReadOnly);
                assert!(opened.tool_context.sandbox.network);
                opened.close().await;
            }
        },
    );
}

#[test]
fn trust_overrides_decide_before_the_project_is_loaded_in_every_face() {
    in_own_home(
        "trust_overrides_decide_before_the_project_is_loaded_in_every_face",
        async |home| {
            let dir = project(home, "work");
            std::fs::create_dir_all(dir.join(".jig")).unwrap();
            std::fs::write(
                dir.join(".jig/settings.json"),
                r#"{"sandbox": {"protectedPaths": ["secrets/*"]}}"#,
            )
            .unwrap();
            for face in [Face::Print, Face::Mcp, Face::Tool] {
                for trust in [Some(true), Some(false)] {
                    let mut options = open_options(vec![dir.clone()]);
                    options.project.trust = trust;
                    options.sandbox.mode = Some(SandboxMode::WorkspaceWrite);
                    let opened = match open(&options, face, None).await {
                        Ok(opened) => opened,
                        Err(error) => {
                            // No mechanism here: the sandbox was asked for.
                            assert!(error.to_string().contains("cannot be enforced"));
                            continue;
                        }
                    };
                    let decision = &opened.project.decision;
                    assert_eq!(decision.trusted, trust == Some(true), "{face:?}");
                    assert_eq!(decision.step, jig_project::TrustStep::Override);
                    // A trusted project's settings add protected paths; an untrusted one's are
                    // never read.
                    let protected = opened
                        .tool_context
                        .sandbox
                        .protected
                        .iter()
                        .any(|path| path.ends_with("secrets/*"));
                    assert_eq!(protected, trust == Some(true), "{face:?}");
                    assert_eq!(opened.project.settings.is_some(), trust == Some(true));
                    opened.close().await;
                }
            }
        },
    );
}
