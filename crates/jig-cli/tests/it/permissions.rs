//! Permissions end to end in print mode: a project's settings may narrow the permission mode
//! and never widen it, and in `auto-edit` a write to `.git/` or `.jig/` (also through a symlink)
//! is not done without approval.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers panic when the setup fails"
)]

use std::fs;

use jig_llm::scripted::ScriptedReply;
use serde_json::{Value, json};

use crate::run_cmd::{Setup, reply};

fn text(output: &[u8]) -> String {
    String::from_utf8_lossy(output).into_owned()
}

/// The tool results the model received in request `index`.
fn tool_results(setup: &Setup, index: usize) -> Vec<String> {
    setup
        .request_messages(index)
        .into_iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            m["content"]
                .as_str()
                .map_or_else(|| m["content"].to_string(), str::to_owned)
        })
        .collect()
}

fn user_settings(setup: &Setup, settings: &Value) {
    let dir = setup.data.with_file_name("config").join("jig");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
}

fn project_settings(setup: &Setup, settings: &Value) {
    fs::create_dir_all(setup.ws.join(".jig")).unwrap();
    fs::write(setup.ws.join(".jig/settings.json"), settings.to_string()).unwrap();
}

/// A run whose model calls `bash touch ran.txt` once, then answers "done".
async fn touch_run(setup_settings: impl FnOnce(&Setup)) -> (Setup, std::process::Output) {
    let setup = Setup::new(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "bash",
            json!({"command": "touch ran.txt"}),
        )),
        reply(ScriptedReply::text("done")),
    ])
    .await;
    setup_settings(&setup);
    let output = setup.run(&["--no-session", "-a", "go"]).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    (setup, output)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_project_cannot_widen_the_users_permission_mode() {
    let (setup, output) = touch_run(|setup| {
        user_settings(setup, &json!({"permissionMode": "ask"}));
        project_settings(setup, &json!({"permissionMode": "full-auto"}));
    })
    .await;
    assert!(
        !setup.ws.join("ran.txt").exists(),
        "the project's full-auto must not override the user's ask"
    );
    let stderr = text(&output.stderr);
    let warning = stderr
        .lines()
        .find(|line| line.contains("permission mode"))
        .unwrap_or_default();
    insta::assert_snapshot!(warning, @"jig: warning: this project's settings ask for permission mode `full-auto`, which allows more than yours (`ask`); ignoring it (a project may only narrow the mode)");
    assert!(
        tool_results(&setup, 1)[0].contains("requires approval"),
        "{:?}",
        tool_results(&setup, 1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_project_may_narrow_the_permission_mode() {
    // Print mode's default is full-auto; the project tightens it to ask.
    let (setup, output) = touch_run(|setup| {
        project_settings(setup, &json!({"permissionMode": "ask"}));
    })
    .await;
    assert!(!setup.ws.join("ran.txt").exists());
    assert!(
        !text(&output.stderr).contains("permission mode `"),
        "narrowing is not warned about: {}",
        text(&output.stderr)
    );
    // And the user's own full-auto is narrowed the same way.
    let (setup, _) = touch_run(|setup| {
        user_settings(setup, &json!({"permissionMode": "full-auto"}));
        project_settings(setup, &json!({"permissionMode": "ask"}));
    })
    .await;
    assert!(!setup.ws.join("ran.txt").exists());
    // Untrusted, the project's settings do nothing: full-auto runs it.
    let setup = Setup::new(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "bash",
            json!({"command": "touch ran.txt"}),
        )),
        reply(ScriptedReply::text("done")),
    ])
    .await;
    project_settings(&setup, &json!({"permissionMode": "ask"}));
    let output = setup.run(&["--no-session", "-na", "go"]).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(setup.ws.join("ran.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_edit_does_not_write_git_config_without_asking() {
    let hook = "[core]\n\tfsmonitor = touch pwned\n";
    let setup = Setup::new(vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "write",
            json!({"path": ".git/config", "content": hook}),
        )),
        reply(ScriptedReply::tool_call(
            "c2",
            "write",
            json!({"path": "through/config", "content": hook}),
        )),
        reply(ScriptedReply::tool_call(
            "c3",
            "edit",
            json!({"path": ".jig/settings.json", "oldText": "{}", "newText": "{\"hooks\": {}}"}),
        )),
        reply(ScriptedReply::tool_call(
            "c4",
            "write",
            json!({"path": "src/a.txt", "content": "fine\n"}),
        )),
        reply(ScriptedReply::text("done")),
    ])
    .await;
    fs::create_dir_all(setup.ws.join(".git")).unwrap();
    fs::write(setup.ws.join(".git/config"), "[core]\n").unwrap();
    fs::create_dir_all(setup.ws.join(".jig")).unwrap();
    fs::write(setup.ws.join(".jig/settings.json"), "{}").unwrap();
    std::os::unix::fs::symlink(".git", setup.ws.join("through")).unwrap();
    let output = setup
        .run(&[
            "--no-session",
            "-na",
            "--permission-mode",
            "auto-edit",
            "go",
        ])
        .await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(
        fs::read_to_string(setup.ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert_eq!(
        fs::read_to_string(setup.ws.join(".jig/settings.json")).unwrap(),
        "{}"
    );
    assert_eq!(
        fs::read_to_string(setup.ws.join("src/a.txt")).unwrap(),
        "fine\n"
    );
    for request in 1..=3 {
        let results = tool_results(&setup, request);
        assert!(
            results
                .last()
                .unwrap()
                .contains("needs the user's approval"),
            "{results:?}"
        );
    }
}
