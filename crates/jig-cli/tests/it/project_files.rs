//! Saved permissions and sessions belong to one project each: `/x/a-b` and `/x/a/b` never
//! share them, and files saved under the names earlier versions used (every `/` turned into
//! `-`, so those two collided) move to the new names only for the project they name.
#![expect(clippy::unwrap_used, reason = "test setup fails loudly")]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use jig_llm::scripted::ScriptedReply;
use serde_json::{Value, json};

use crate::run_cmd::{Setup, reply};

fn text(output: &[u8]) -> String {
    String::from_utf8_lossy(output).into_owned()
}

/// `/x/a-b` and `/x/a/b` under the setup's temporary root.
fn dashed_and_nested(setup: &Setup) -> (PathBuf, PathBuf) {
    let x = setup.ws.parent().unwrap().join("x");
    let dashed = x.join("a-b");
    let nested = x.join("a/b");
    fs::create_dir_all(&dashed).unwrap();
    fs::create_dir_all(&nested).unwrap();
    (dashed, nested)
}

/// The name earlier versions gave a project's files.
fn legacy_name(project: &Path) -> String {
    format!(
        "--{}--",
        project
            .display()
            .to_string()
            .trim_start_matches('/')
            .replace('/', "-")
    )
}

async fn run_in(setup: &Setup, dir: &Path, args: &[&str]) -> Output {
    let mut command = setup.command(args);
    command.current_dir(dir);
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    output
}

/// The text of the tool result the model got in request `index`.
fn tool_result(setup: &Setup, index: usize) -> String {
    let messages = setup.request_messages(index);
    let result: &Value = messages.iter().find(|m| m["role"] == "tool").unwrap();
    result["content"].to_string()
}

fn bash_echo() -> Vec<jig_llm::testing::ReplayResponse> {
    vec![
        reply(ScriptedReply::tool_call(
            "call_1",
            "bash",
            json!({"command": "echo ran-here"}),
        )),
        reply(ScriptedReply::text("done")),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_allowed_for_a_dashed_directory_is_still_asked_about_in_its_slashed_twin() {
    let setup = Setup::new([bash_echo(), bash_echo(), bash_echo()].concat()).await;
    let (dashed, nested) = dashed_and_nested(&setup);
    let permissions = setup.data.with_file_name("config").join("jig/permissions");
    fs::create_dir_all(&permissions).unwrap();
    // Saved by an earlier version for /x/a-b, under the name /x/a/b shared.
    let legacy = permissions.join(format!("{}.json", legacy_name(&dashed)));
    assert_eq!(legacy_name(&dashed), legacy_name(&nested));
    fs::write(
        &legacy,
        json!({"project": dashed, "allow": {"bashPrefixes": ["echo"]}}).to_string(),
    )
    .unwrap();
    let ask = ["--permission-mode", "ask", "--model", "m", "go"];

    // In /x/a/b (whose name the old file has) the allowance of /x/a-b does not apply: print
    // mode denies what it would ask about, and a warning names the file.
    let output = run_in(&setup, &nested, &ask).await;
    assert!(
        !tool_result(&setup, 1).contains("ran-here"),
        "{}",
        tool_result(&setup, 1)
    );
    assert!(legacy.exists(), "another project's file is not moved");
    let root = setup.ws.parent().unwrap().display().to_string();
    let root_name = root.trim_start_matches('/').replace('/', "-");
    let stderr = text(&output.stderr)
        .replace(&root, "[ROOT]")
        .replace(&root_name, "[ROOT-NAME]");
    insta::assert_snapshot!(stderr, @"jig: warning: ignoring the saved permissions [ROOT]/config/jig/permissions/--[ROOT-NAME]-x-a-b--.json: they are for [ROOT]/x/a-b, not [ROOT]/x/a/b");

    // In /x/a-b it does, and the file moves to the project's own name.
    run_in(&setup, &dashed, &ask).await;
    assert!(
        tool_result(&setup, 3).contains("ran-here"),
        "{}",
        tool_result(&setup, 3)
    );
    assert!(!legacy.exists());
    let moved: Vec<String> = fs::read_dir(&permissions)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(moved.len(), 1);
    assert!(moved[0].ends_with("-x-a%2Db--.json"), "{moved:?}");

    // And /x/a/b is still asked, now silently.
    let output = run_in(&setup, &nested, &ask).await;
    assert!(
        !tool_result(&setup, 5).contains("ran-here"),
        "{}",
        tool_result(&setup, 5)
    );
    assert_eq!(text(&output.stderr), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_in_a_slashed_twin_never_resumes_the_dashed_directorys_session() {
    let setup = Setup::new(vec![
        reply(ScriptedReply::text("first in a-b")),
        reply(ScriptedReply::text("new in a/b")),
        reply(ScriptedReply::text("again in a/b")),
        reply(ScriptedReply::text("resumed in a-b")),
    ])
    .await;
    let (dashed, nested) = dashed_and_nested(&setup);
    run_in(&setup, &dashed, &["--model", "m", "secret plan of a-b"]).await;
    // As an earlier version left it: in the directory /x/a-b and /x/a/b shared.
    let sessions = setup.data.join("jig/sessions");
    let own_dir = fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let legacy_dir = sessions.join(legacy_name(&dashed));
    fs::rename(&own_dir, &legacy_dir).unwrap();

    let users = |index: usize| -> Vec<String> {
        setup
            .request_messages(index)
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| m["content"].as_str().unwrap().to_owned())
            .collect()
    };
    let output = run_in(
        &setup,
        &nested,
        &["--model", "m", "--continue", "hello from a/b"],
    )
    .await;
    let warning = text(&output.stderr);
    assert!(
        warning.starts_with("jig: warning: ignoring the session ")
            && warning.contains(&format!("it was created in {}, not", dashed.display())),
        "{warning}"
    );
    assert_eq!(users(1), vec!["hello from a/b"]);
    run_in(
        &setup,
        &nested,
        &["--model", "m", "--continue", "more from a/b"],
    )
    .await;
    assert_eq!(users(2), vec!["hello from a/b", "more from a/b"]);

    // /x/a-b's session moves to its own directory and is the one it continues.
    run_in(
        &setup,
        &dashed,
        &["--model", "m", "--continue", "back in a-b"],
    )
    .await;
    assert_eq!(users(3), vec!["secret plan of a-b", "back in a-b"]);
    // The old directory is /x/a/b's own name: only its sessions stay there.
    for entry in fs::read_dir(&legacy_dir).unwrap() {
        let first = fs::read_to_string(entry.unwrap().path()).unwrap();
        let header: Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
        assert_eq!(header["cwd"], json!(nested));
    }
}
