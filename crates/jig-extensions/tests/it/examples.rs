//! The example extensions in `examples/extensions/`, each loaded the way discovery finds it.

use std::sync::Arc;
use std::time::Duration;

use jig_extensions::{ExtensionHost, ToolCallOutcome, load_index_dir, load_manifest_dir};
use jig_protocol::ToolResult;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::{example, host, options, patient as runner};

fn blocked(outcome: ToolCallOutcome) -> String {
    match outcome {
        ToolCallOutcome::Block { reason } => reason.unwrap_or_default(),
        ToolCallOutcome::Allow { .. } => String::new(),
    }
}

#[tokio::test]
async fn the_permission_gate_blocks_rm_rf_and_find_delete_in_bash() {
    let dir = tempfile::tempdir().unwrap();
    let gate = load_index_dir(&example("permission-gate"), None, &options(dir.path()))
        .await
        .unwrap();
    let runner = runner(vec![gate]);
    for command in [
        "rm -rf /",
        "cd build && sudo rm -fr .",
        "rm -r -f x",
        "rm --recursive --force x",
        "rm '-rf' x",
        // Inside the script of a nested shell, or any quoted string.
        "bash -c 'rm -rf zdir'",
        "sh -c \"cd /tmp && rm -rf zdir\"",
        "bash -lc 'rm -fr zdir'",
        "env X=1 bash -c 'rm -rf zdir'",
        "ssh host 'rm -rf zdir'",
        // find running rm -rf.
        "find . -name build -exec rm -rf {} +",
    ] {
        assert_eq!(
            blocked(
                runner
                    .tool_call("c", "bash", &json!({"command": command}))
                    .await
            ),
            "Blocked by permission-gate: recursive forced deletion (rm -rf) is not allowed",
            "{command}"
        );
    }
    for command in [
        "find zdir -delete",
        "find . -name '*.o' -delete",
        "bash -c \"find . -name '*.o' -delete\"",
    ] {
        assert_eq!(
            blocked(
                runner
                    .tool_call("c", "bash", &json!({"command": command}))
                    .await
            ),
            "Blocked by permission-gate: deletion with find (-delete) is not allowed",
            "{command}"
        );
    }
    for command in [
        "ls -la",
        "rm -r build",
        "echo rm -rf",
        "git rm -rf --cached x",
        "bash -c 'rm -r zdir'",
        "find zdir -name x -print",
        "echo find -delete",
    ] {
        assert_eq!(
            runner
                .tool_call("c", "bash", &json!({"command": command}))
                .await,
            ToolCallOutcome::Allow { input: None },
            "{command}"
        );
    }
    assert_eq!(
        runner
            .tool_call("c", "write", &json!({"path": "rm -rf"}))
            .await,
        ToolCallOutcome::Allow { input: None }
    );
    runner.shutdown().await;
}

#[tokio::test]
async fn the_protected_paths_hook_guards_env_files_and_git() {
    let dir = tempfile::tempdir().unwrap();
    let guard = load_manifest_dir(&example("protected-paths"), &options(dir.path()))
        .await
        .unwrap();
    let runner = runner(vec![guard]);
    assert_eq!(
        blocked(
            runner
                .tool_call("c", "write", &json!({"path": ".env", "content": "X=1"}))
                .await
        ),
        "Blocked by protected-paths: write may not touch .env files or .git/ (.env)"
    );
    assert_eq!(
        blocked(
            runner
                .tool_call("c", "edit", &json!({"path": "app/.env.local", "edits": []}))
                .await
        ),
        "Blocked by protected-paths: edit may not touch .env files or .git/ (app/.env.local)"
    );
    assert_eq!(
        blocked(
            runner
                .tool_call("c", "write", &json!({"path": "repo/.git/config"}))
                .await
        ),
        "Blocked by protected-paths: write may not touch .env files or .git/ (repo/.git/config)"
    );
    assert_eq!(
        blocked(
            runner
                .tool_call("c", "bash", &json!({"command": "cat .env"}))
                .await
        ),
        "Blocked by protected-paths: bash may not touch .env files or .git/ (cat .env)"
    );
    for (tool, input) in [
        ("write", json!({"path": "src/main.rs"})),
        ("write", json!({"path": ".envrc"})),
        ("read", json!({"path": ".env"})),
        ("bash", json!({"command": "git status"})),
    ] {
        assert_eq!(
            runner.tool_call("c", tool, &input).await,
            ToolCallOutcome::Allow { input: None },
            "{tool} {input}"
        );
    }
    assert!(runner.take_errors().is_empty());
}

#[tokio::test]
async fn the_redactor_hook_hides_secrets_in_tool_results() {
    let dir = tempfile::tempdir().unwrap();
    let redactor = load_manifest_dir(&example("redactor"), &options(dir.path()))
        .await
        .unwrap();
    let runner = runner(vec![redactor]);
    let result = runner
        .tool_result(
            "c",
            "bash",
            &json!({"command": "env"}),
            ToolResult::text("OPENAI_KEY=sk-abcdefghijklmnop1234\npassword=hunter2\nplain line"),
        )
        .await;
    assert_eq!(
        result.text_content(),
        "OPENAI_KEY=[REDACTED]\npassword=[REDACTED]\nplain line"
    );
    let clean = runner
        .tool_result("c", "read", &json!({}), ToolResult::text("nothing to hide"))
        .await;
    assert_eq!(clean, ToolResult::text("nothing to hide"));
}

#[tokio::test]
async fn the_word_count_extension_registers_a_tool_that_runs() {
    let dir = tempfile::tempdir().unwrap();
    let extension = load_manifest_dir(&example("word-count"), &options(dir.path()))
        .await
        .unwrap();
    let runner = runner(vec![extension]);
    runner.bind(host() as Arc<dyn ExtensionHost>).await;
    // Bound, the extension asks for the session info; give it a moment.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let tools = runner.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["word_count"]);
    assert!(tools[0].effects().is_read_only());
    let ctx = jig_tool::ToolContext::new(
        Arc::new(jig_env_memory::MemoryEnv::new()),
        std::path::PathBuf::from("/"),
    );
    let result = tools[0]
        .execute(&ctx, json!({"text": "one two\nthree four\n"}))
        .await
        .unwrap();
    assert_eq!(result.text_content(), "2 lines, 4 words, 19 characters");
    assert_eq!(
        result.details,
        json!({"lines": 2, "words": 4, "characters": 19, "session": "s-1"})
    );
    let invalid = tools[0].run(&ctx, json!({"text": "x", "extra": 1})).await;
    assert!(invalid.is_error);
    runner.shutdown().await;
}

#[tokio::test]
async fn the_abbreviations_command_expands_input_and_names_them_in_the_system_prompt() {
    use jig_extensions::InputOutcome;
    let dir = tempfile::tempdir().unwrap();
    let abbreviations = load_index_dir(&example("abbreviations"), None, &options(dir.path()))
        .await
        .unwrap();
    let runner = runner(vec![abbreviations]);
    let commands = runner.commands();
    assert_eq!(commands.len(), 1);
    assert_eq!(commands[0].name, "abbrev");
    assert_eq!(
        runner.run_command("abbrev", "").await.unwrap().as_deref(),
        Some("no abbreviations yet: /abbrev NAME TEXT")
    );
    assert_eq!(
        runner
            .run_command("abbrev", "brb be right back")
            .await
            .unwrap()
            .as_deref(),
        Some("brb = be right back")
    );
    assert_eq!(
        runner
            .input("brb soon".to_owned(), Vec::new(), "interactive")
            .await,
        InputOutcome::Continue {
            text: "be right back soon".to_owned(),
            images: Vec::new()
        }
    );
    assert_eq!(
        runner
            .input("# a note".to_owned(), Vec::new(), "interactive")
            .await,
        InputOutcome::Handled
    );
    let before = runner.before_agent_start("x", &[], "Base.").await;
    assert_eq!(
        before.system_prompt.as_deref(),
        Some("Base.\n\nAbbreviations the user defined: brb = be right back")
    );
    assert!(runner.run_command("nosuch", "").await.is_err());
    runner.shutdown().await;
}
