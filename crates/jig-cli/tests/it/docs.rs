//! The docs against the binary: `docs/cli.md` is the `--help` of every command, each command's
//! options list in the docs names exactly the options its `--help` has, and the shell examples
//! marked runnable run as written, with the output and exit status they state.
//!
//! `UPDATE_DOCS=1 cargo nextest run -p jig-cli --all-features -E 'test(cli_reference)'`
//! rewrites `docs/cli.md` from the binary.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers panic when the setup fails"
)]

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use jig_llm::scripted::ScriptedReply;
use jig_llm::testing::{ReplayResponse, ReplayServer, openai_sse};

use crate::support::{jig, stdout_of};

/// The repository's root (README.md, docs/).
fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `jig <path> --help`.
fn help_of(path: &[String]) -> String {
    let output = jig().args(path).arg("--help").output().unwrap();
    assert_eq!(output.status.code(), Some(0), "jig {path:?} --help");
    stdout_of(&output)
}

/// The subcommands a help text lists (`help` left out).
fn subcommands_in(help: &str) -> Vec<String> {
    let Some((_, after)) = help.split_once("\nCommands:\n") else {
        return Vec::new();
    };
    after
        .lines()
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// Every command as its path of names (`[]` is `jig` itself, then `["tool"]`, `["env",
/// "serve"]`, …) with its `--help`, depth first in the order the help lists them.
fn commands() -> Vec<(Vec<String>, String)> {
    let mut found = Vec::new();
    let mut stack = vec![Vec::new()];
    while let Some(path) = stack.pop() {
        let help = help_of(&path);
        for name in subcommands_in(&help).into_iter().rev() {
            let mut child = path.clone();
            child.push(name);
            stack.push(child);
        }
        found.push((path, help));
    }
    found
}

fn display(path: &[String]) -> String {
    std::iter::once("jig")
        .chain(path.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `docs/cli.md` as the binary's help texts make it.
fn cli_reference() -> String {
    let mut text = String::from(
        "# Command-line reference\n\n\
         <!-- Generated from `jig … --help`; do not edit. Regenerate with\n     \
         UPDATE_DOCS=1 cargo nextest run -p jig-cli --all-features -E 'test(cli_reference)' -->\n\n\
         Every command's `--help`, as this version of jig prints it. The guides explain what the \
         options are for: [README](../README.md#command-line-reference) (`jig tool`, `jig tools`, \
         `jig sessions`), [agent.md](agent.md) (`jig run`), [interactive.md](interactive.md) \
         (`jig`), [mcp.md](mcp.md) (`jig mcp`), [trust.md](trust.md) (`-a`, `-na`, `-e`, `-ne`), \
         [extensions.md](extensions.md) (`--flag`), [env-protocol.md](env-protocol.md) (`--env`, \
         `jig env`).\n",
    );
    for (path, help) in commands() {
        let _ = write!(
            text,
            "\n## `{}`\n\n```text\n{}\n```\n",
            display(&path),
            help.trim_end()
        );
    }
    text
}

#[test]
fn cli_reference_is_the_help_of_every_command() {
    let expected = cli_reference();
    let file = repository().join("docs/cli.md");
    if std::env::var_os("UPDATE_DOCS").is_some_and(|value| value == "1") {
        std::fs::write(&file, &expected).unwrap();
        return;
    }
    let actual = std::fs::read_to_string(&file).unwrap_or_default();
    if actual != expected {
        let diff = similar_lines(&actual, &expected);
        panic!(
            "docs/cli.md is not the binary's --help (regenerate it: UPDATE_DOCS=1 cargo nextest \
             run -p jig-cli --all-features -E 'test(cli_reference)'):\n{diff}"
        );
    }
}

/// The lines of `expected` missing from `actual` (`+`) and the reverse (`-`), for the message.
fn similar_lines(actual: &str, expected: &str) -> String {
    let have: BTreeSet<&str> = actual.lines().collect();
    let want: BTreeSet<&str> = expected.lines().collect();
    let mut out = String::new();
    for line in want.difference(&have) {
        let _ = writeln!(out, "+ {line}");
    }
    for line in have.difference(&want) {
        let _ = writeln!(out, "- {line}");
    }
    out
}

/// The options of a `--help` text: each long option and its short form, and the long and short
/// aliases it lists (`[aliases: --resume]`, `[short: -ne]`), which a page may name but need not.
#[derive(Debug, Default)]
struct HelpOptions {
    required: BTreeSet<String>,
    allowed: BTreeSet<String>,
}

fn options_in(help: &str) -> HelpOptions {
    let mut options = HelpOptions::default();
    let Some((_, section)) = help.split_once("\nOptions:\n") else {
        return options;
    };
    for line in section.lines() {
        let indent = line.len() - line.trim_start().len();
        let trimmed = line.trim_start();
        if (1..8).contains(&indent) && trimmed.starts_with('-') {
            let words = trimmed.split([' ', ',']).filter(|word| !word.is_empty());
            for word in words.take_while(|word| word.starts_with('-')) {
                if !matches!(word, "-h" | "--help" | "-V" | "--version") {
                    options.required.insert(word.to_owned());
                }
            }
        }
        for marker in ["[alias: ", "[aliases: ", "[short: "] {
            if let Some((_, rest)) = trimmed.split_once(marker) {
                let list = rest.split(']').next().unwrap_or_default();
                for alias in list.split(", ") {
                    options.allowed.insert(alias.trim().to_owned());
                }
            }
        }
    }
    options
}

/// The options a docs region names: every word starting with `-` inside an inline code span
/// (`` `-m/--model ID` `` names `-m` and `--model`).
fn options_named(region: &str) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    for (index, span) in region.split('`').enumerate() {
        if index % 2 == 0 {
            continue;
        }
        for word in span.split([' ', '/', ',', '|', '=', '[', ']', '(', ')']) {
            let word = word.trim_end_matches("…").trim_end_matches('.');
            let is_option = word.strip_prefix("--").map_or_else(
                || {
                    word.strip_prefix('-')
                        .is_some_and(|short| (1..=2).contains(&short.len()))
                },
                |long| !long.is_empty(),
            );
            if is_option
                && word[1..]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-')
            {
                named.insert(word.to_owned());
            }
        }
    }
    named
}

/// The `<!-- options: jig … -->` … `<!-- /options -->` regions of README.md and docs/*.md
/// (docs/cli.md left out: it is generated), as (file, command, text).
fn options_regions() -> Vec<(String, String, String)> {
    let mut regions = Vec::new();
    for file in doc_files() {
        let text = std::fs::read_to_string(repository().join(&file)).unwrap();
        let mut rest = text.as_str();
        while let Some((_, after)) = rest.split_once("<!-- options: ") {
            let (command, after) = after.split_once(" -->").unwrap();
            let (region, after) = after
                .split_once("<!-- /options -->")
                .unwrap_or_else(|| panic!("{file}: `options: {command}` is never closed"));
            regions.push((file.clone(), command.trim().to_owned(), region.to_owned()));
            rest = after;
        }
    }
    regions
}

/// README.md and docs/*.md, except the generated docs/cli.md.
fn doc_files() -> Vec<String> {
    let mut files = vec!["README.md".to_owned()];
    let mut pages: Vec<String> = std::fs::read_dir(repository().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| {
            Path::new(name)
                .extension()
                .is_some_and(|ext| ext.eq_ignore_ascii_case("md"))
                && name != "cli.md"
        })
        .map(|name| format!("docs/{name}"))
        .collect();
    pages.sort();
    files.extend(pages);
    files
}

#[test]
fn each_commands_options_list_in_the_docs_matches_its_help() {
    let regions = options_regions();
    let commands = commands();
    let mut problems = Vec::new();
    for (path, help) in &commands {
        let options = options_in(help);
        let name = display(path);
        if options.required.is_empty() || !subcommands_in(help).is_empty() {
            continue;
        }
        let listed: Vec<&(String, String, String)> = regions
            .iter()
            .filter(|(_, command, _)| *command == name)
            .collect();
        if listed.is_empty() {
            problems.push(format!(
                "`{name}` has no options list in the docs (mark one with <!-- options: {name} --> … <!-- /options -->)"
            ));
        }
        for (file, _, region) in listed {
            let named = options_named(region);
            let missing: Vec<&String> = options.required.difference(&named).collect();
            let unknown: Vec<&String> = named
                .iter()
                .filter(|word| {
                    !options.required.contains(*word) && !options.allowed.contains(*word)
                })
                .collect();
            if !missing.is_empty() {
                problems.push(format!("{file}: `{name}` leaves out {missing:?}"));
            }
            if !unknown.is_empty() {
                problems.push(format!("{file}: `{name}` has no option {unknown:?}"));
            }
        }
    }
    for (file, command, _) in &regions {
        if !commands.iter().any(|(path, _)| display(path) == *command) {
            problems.push(format!("{file}: `{command}` is not a command"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// One command of a runnable example and what its comment says it does.
#[derive(Debug)]
struct Step {
    command: String,
    exit: i32,
    output: Option<String>,
}

/// The fenced blocks whose info string is `sh runnable`, as (file, line, text).
fn runnable_blocks() -> Vec<(String, usize, String)> {
    let mut blocks = Vec::new();
    for file in doc_files() {
        let text = std::fs::read_to_string(repository().join(&file)).unwrap();
        let mut current: Option<(usize, String)> = None;
        for (number, line) in text.lines().enumerate() {
            match &mut current {
                None if line.trim() == "```sh runnable" => {
                    current = Some((number + 1, String::new()));
                }
                None => {}
                Some(_) if line.trim() == "```" => {
                    let (start, body) = current.take().unwrap();
                    blocks.push((file.clone(), start, body));
                }
                Some((_, body)) => {
                    body.push_str(line);
                    body.push('\n');
                }
            }
        }
    }
    blocks
}

/// Where a line's comment starts: a `#` after whitespace, outside quotes.
fn comment_start(line: &str) -> Option<usize> {
    let mut quote = None;
    let mut previous = ' ';
    for (index, c) in line.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            (None, '#') if previous.is_whitespace() => return Some(index),
            (Some(_) | None, _) => {}
        }
        previous = c;
    }
    None
}

/// `# → (nothing)`: the command prints nothing, on stdout or stderr.
const NOTHING: &str = "(nothing)";

/// The commands of a runnable block (lines ending in `\` continue), each with the exit status
/// (`# exit N`, else 0) and the text its output contains (`# → TEXT`; [`NOTHING`]) its comment
/// states.
fn steps(block: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut pending = String::new();
    for line in block.lines() {
        if line.ends_with('\\') {
            pending.push_str(line);
            pending.push('\n');
            continue;
        }
        let line = format!("{pending}{line}");
        pending.clear();
        let (command, comment) = match comment_start(&line) {
            Some(at) => (line[..at].trim_end(), line[at + 1..].trim()),
            None => (line.trim_end(), ""),
        };
        if command.trim().is_empty() {
            continue;
        }
        let mut exit = 0;
        let mut output = None;
        let mut comment = comment;
        if let Some(rest) = comment.strip_prefix("exit ") {
            let (code, rest) = rest.split_once(' ').unwrap_or((rest, ""));
            exit = code.parse().unwrap();
            comment = rest.trim();
        }
        if let Some(text) = comment.strip_prefix('→') {
            output = Some(text.trim().to_owned());
        }
        steps.push(Step {
            command: command.to_owned(),
            exit,
            output,
        });
    }
    steps
}

/// A model endpoint that answers every request with a short reply.
async fn scripted_model() -> ReplayServer {
    let message = match ScriptedReply::text("Done.") {
        ScriptedReply::Message(message) => message,
        other => panic!("not a message: {other:?}"),
    };
    ReplayServer::start((0..200).map(|_| ReplayResponse::sse(openai_sse(&message))))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runnable_doc_examples_run_as_written() {
    let model = scripted_model().await;
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_jig"));
    let path = format!(
        "{}:{}",
        binary.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let blocks = runnable_blocks();
    assert!(
        blocks.len() >= 8,
        "expected the docs to mark their examples ```sh runnable, found {} blocks",
        blocks.len()
    );
    let mut failures = Vec::new();
    for (file, line, block) in blocks {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let work = dir.path().join("work");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&work).unwrap();
        for step in steps(&block) {
            let mut command = assert_cmd::Command::new("sh");
            command
                .arg("-c")
                .arg(&step.command)
                .current_dir(&work)
                .env("PATH", &path)
                .env("HOME", &home)
                .env("XDG_CONFIG_HOME", home.join(".config"))
                .env("XDG_DATA_HOME", home.join(".local/share"))
                .env("OPENAI_BASE_URL", format!("{}/v1", model.url()))
                .env_remove("OPENAI_API_KEY")
                .env_remove("ANTHROPIC_API_KEY")
                .env_remove("ANTHROPIC_BASE_URL")
                .env_remove("JIG_LOG")
                .write_stdin("")
                .timeout(Duration::from_mins(1));
            let output = tokio::task::spawn_blocking(move || command.output().unwrap())
                .await
                .unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            let status = output.status.code();
            let output_ok = match step.output.as_deref() {
                None => true,
                Some(NOTHING) => text.is_empty(),
                Some(want) => text.contains(want),
            };
            if status != Some(step.exit) || !output_ok {
                failures.push(format!(
                    "{file}:{line}: `{}`: expected exit {}{}, got {status:?}:\n{text}",
                    step.command,
                    step.exit,
                    step.output
                        .as_ref()
                        .map(|want| format!(" with output containing {want:?}"))
                        .unwrap_or_default()
                ));
                break;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn runnable_example_comments_state_exit_status_and_output() {
    let parsed = steps(
        "jig tool read --args '{\"path\":\"a # b\"}'   # → 1│ hi\n\
         # a comment line\n\
         jig run --bad  # exit 2 → error: unknown\n\
         printf '%s\\n' \\\n  x | wc -l  # prose only\n",
    );
    let summary: Vec<(String, i32, Option<String>)> = parsed
        .into_iter()
        .map(|step| (step.command, step.exit, step.output))
        .collect();
    pretty_assertions::assert_eq!(
        summary,
        vec![
            (
                "jig tool read --args '{\"path\":\"a # b\"}'".to_owned(),
                0,
                Some("1│ hi".to_owned())
            ),
            (
                "jig run --bad".to_owned(),
                2,
                Some("error: unknown".to_owned())
            ),
            ("printf '%s\\n' \\\n  x | wc -l".to_owned(), 0, None),
        ]
    );
}
