//! Skills and prompt templates in `jig run`: the corpus in `tests/fixtures/skills` (the
//! published skills' format, with scripts and references, and deliberately invalid skills)
//! listed in the system prompt, a skill's `SKILL.md` read and its script run by a scripted
//! model, project skills only for a trusted project, and prompt templates with arguments.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers panic when the setup fails"
)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use jig_llm::scripted::ScriptedReply;
use serde_json::{Value, json};

use crate::run_cmd::{Setup, reply};
use crate::support::stderr_of;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/skills");

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The home directory of the run (beside the workspace).
fn home(setup: &Setup) -> PathBuf {
    setup.ws.with_file_name("home")
}

/// The user's skills: the corpus in `~/.agents/skills`.
fn with_user_skills(setup: &Setup) -> PathBuf {
    let skills = home(setup).join(".agents/skills");
    copy_dir(Path::new(CORPUS), &skills);
    skills
}

async fn run(setup: &Setup, args: &[&str]) -> Output {
    let mut command = setup.command(args);
    command.env("HOME", home(setup));
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

fn system_prompt(setup: &Setup, request: usize) -> String {
    setup.request_messages(request)[0]["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn user_text(setup: &Setup, request: usize) -> String {
    let messages = setup.request_messages(request);
    let user = messages.iter().find(|m| m["role"] == "user").unwrap();
    match &user["content"] {
        Value::String(text) => text.clone(),
        parts => parts[0]["text"].as_str().unwrap().to_owned(),
    }
}

/// The skills section of a system prompt, with the home directory written `~`.
fn skills_section(prompt: &str, home: &Path) -> String {
    let start = prompt.find("# Skills").unwrap();
    let end = prompt[start..].find("\n\nCurrent date").unwrap() + start;
    prompt[start..end].replace(&home.display().to_string(), "~")
}

#[tokio::test]
async fn valid_skills_are_listed_and_invalid_ones_are_warnings() {
    let setup = Setup::new(vec![reply(ScriptedReply::text("ok"))]).await;
    let skills = with_user_skills(&setup);
    let output = run(&setup, &["hello"]).await;
    assert!(output.status.success(), "{}", stderr_of(&output));
    let home = fs::canonicalize(home(&setup)).unwrap();
    insta::assert_snapshot!(skills_section(&system_prompt(&setup, 0), &home));
    let stderr = stderr_of(&output).replace(&skills.display().to_string(), "~/.agents/skills");
    insta::assert_snapshot!("skill_warnings", stderr);
}

#[tokio::test]
async fn a_model_reads_a_skill_and_runs_its_script_but_cannot_write_there() {
    // `~` is the run's home: jig expands it in paths, the shell in commands.
    let dir = "~/.agents/skills/csv-summary";
    let responses = vec![
        reply(ScriptedReply::tool_call(
            "call_1",
            "read",
            json!({"path": format!("{dir}/SKILL.md")}),
        )),
        reply(ScriptedReply::tool_call(
            "call_2",
            "bash",
            json!({"command": format!("sh {dir}/scripts/summarize.sh data.csv")}),
        )),
        reply(ScriptedReply::tool_call(
            "call_3",
            "write",
            json!({"path": format!("{dir}/SKILL.md"), "content": "replaced"}),
        )),
        reply(ScriptedReply::text("done")),
    ];
    let setup = Setup::new(responses).await;
    let dir = with_user_skills(&setup).join("csv-summary");
    fs::write(
        setup.ws.join("data.csv"),
        "city,people\nOslo,700000\nBergen,290000\n",
    )
    .unwrap();
    let output = run(&setup, &["summarize data.csv"]).await;
    assert!(output.status.success(), "{}", stderr_of(&output));
    let result = |request: usize| {
        let messages = setup.request_messages(request);
        messages.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(result(1).contains("# CSV summary"), "{}", result(1));
    assert!(result(1).contains("sh scripts/summarize.sh data.csv"));
    assert!(result(2).contains("csv-summary: 2 rows"), "{}", result(2));
    assert!(result(2).contains("csv-summary: columns city,people"));
    // The skill's directory is readable, never writable.
    assert!(result(3).contains("Access denied"), "{}", result(3));
    assert!(
        fs::read_to_string(dir.join("SKILL.md"))
            .unwrap()
            .contains("# CSV summary")
    );
}

#[tokio::test]
async fn project_skills_are_listed_only_for_a_trusted_project() {
    let setup = Setup::new(vec![
        reply(ScriptedReply::text("untrusted")),
        reply(ScriptedReply::text("trusted")),
    ])
    .await;
    copy_dir(
        &Path::new(CORPUS).join("csv-summary"),
        &setup.ws.join(".agents/skills/csv-summary"),
    );
    let output = run(&setup, &["-na", "hello"]).await;
    assert!(output.status.success(), "{}", stderr_of(&output));
    assert!(!system_prompt(&setup, 0).contains("csv-summary"));
    let output = run(&setup, &["-a", "hello"]).await;
    assert!(output.status.success(), "{}", stderr_of(&output));
    let prompt = system_prompt(&setup, 1);
    assert!(prompt.contains("<name>csv-summary</name>"), "{prompt}");
    assert!(prompt.contains(&format!(
        "<location>{}</location>",
        setup.ws.join(".agents/skills/csv-summary/SKILL.md").display()
    )));
}

#[tokio::test]
async fn a_skill_named_with_skill_is_forced_into_the_prompt() {
    let setup = Setup::new(vec![reply(ScriptedReply::text("ok"))]).await;
    with_user_skills(&setup);
    let output = run(&setup, &["--skill", "release-notes", "prepare v2"]).await;
    assert!(output.status.success(), "{}", stderr_of(&output));
    let text = user_text(&setup, 0);
    assert!(text.starts_with("<skill name=\"release-notes\""), "{text}");
    assert!(text.contains("git describe --tags --abbrev=0"));
    assert!(text.ends_with("</skill>\n\nprepare v2"), "{text}");

    let output = run(&setup, &["--skill", "nope", "x"]).await;
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr_of(&output).contains("unknown skill \"nope\"; the skills are: csv-summary"),
        "{}",
        stderr_of(&output)
    );
}

#[tokio::test]
async fn prompt_templates_substitute_arguments_and_collisions_are_reported() {
    let setup = Setup::new(vec![
        reply(ScriptedReply::text("user template")),
        reply(ScriptedReply::text("project template")),
    ])
    .await;
    let user_prompts = setup.data.with_file_name("config").join("jig/prompts");
    fs::create_dir_all(&user_prompts).unwrap();
    fs::write(
        user_prompts.join("review.md"),
        "---\ndescription: Review a file\nargument-hint: FILE FOCUS\n---\nReview $1 for $2.\nAll: $ARGUMENTS\n",
    )
    .unwrap();
    fs::write(
        user_prompts.join("help.md"),
        "Not a way to replace /help.\n",
    )
    .unwrap();
    let output = run(&setup, &["/review src/lib.rs 'memory leaks'"]).await;
    assert!(output.status.success(), "{}", stderr_of(&output));
    assert_eq!(
        user_text(&setup, 0),
        "Review src/lib.rs for memory leaks.\nAll: src/lib.rs 'memory leaks'\n"
    );
    assert!(
        stderr_of(&output).contains("help.md: /help is a built-in command"),
        "{}",
        stderr_of(&output)
    );

    // A trusted project's template of the same name comes first, and the user's is reported.
    let project_prompts = setup.ws.join(".jig/prompts");
    fs::create_dir_all(&project_prompts).unwrap();
    fs::write(
        project_prompts.join("review.md"),
        "Project review of $ARGUMENTS",
    )
    .unwrap();
    let output = run(&setup, &["-a", "/review a.rs"]).await;
    assert!(output.status.success(), "{}", stderr_of(&output));
    assert_eq!(user_text(&setup, 1), "Project review of a.rs");
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("Prompt template /review in ")
            && stderr.contains("is shadowed by")
            && stderr.contains(".jig/prompts/review.md"),
        "{stderr}"
    );
}
