//! `--help` texts and the tool listing (snapshots), and usage errors.

use insta::assert_snapshot;
use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::support::{jig, stderr_of, stdout_of};

#[test]
fn help_texts() {
    for (name, args) in [
        ("help_main", vec!["--help"]),
        ("help_tool", vec!["tool", "--help"]),
        ("help_tools", vec!["tools", "--help"]),
    ] {
        let output = jig().args(&args).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{name}");
        assert_snapshot!(name, stdout_of(&output));
    }
}

#[test]
fn no_arguments_is_a_usage_error() {
    let output = jig().output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr_of(&output).contains("Usage: jig"),
        "{}",
        stderr_of(&output)
    );
}

#[test]
fn tools_lists_names_descriptions_and_schemas() {
    let output = jig().arg("tools").output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let text = stdout_of(&output);
    for name in ["read", "write", "ls"] {
        assert!(
            text.contains(&format!("\n{name} — ")) || text.starts_with(&format!("{name} — ")),
            "{name}"
        );
    }
    // What the mechanism enforces depends on the machine; that it is named does not.
    let (head, mechanism) = text
        .split_once("Mechanism here: ")
        .expect("jig tools names the sandbox mechanism");
    assert!(mechanism.ends_with(".\n"), "{mechanism}");
    assert_snapshot!("tools_text", format!("{head}Mechanism here: [MECHANISM]\n"));
}

#[test]
fn tools_json_is_an_array_of_tools_with_schemas() {
    let output = jig().args(["tools", "--json"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let tools: Value = serde_json::from_slice(&output.stdout).unwrap();
    let tools = tools.as_array().unwrap();
    let read = tools.iter().find(|tool| tool["name"] == "read").unwrap();
    assert_eq!(read["inputSchema"]["type"], "object");
    assert_eq!(read["inputSchema"]["required"], serde_json::json!(["path"]));
    assert_eq!(read["effects"], "readOnly");
    assert_snapshot!("tools_json", String::from_utf8(output.stdout).unwrap());
}

#[test]
fn usage_errors_exit_2_with_the_message_on_stderr() {
    let cases: [(&str, Vec<&str>); 5] = [
        ("unknown_tool", vec!["tool", "nope"]),
        ("invalid_json", vec!["tool", "read", "--args", "{not json"]),
        (
            "missing_args_file",
            vec!["tool", "read", "--args", "@/nonexistent/args.json"],
        ),
        (
            "bad_containment",
            vec!["tool", "read", "--containment", "sometimes"],
        ),
        (
            "missing_cwd",
            vec!["tool", "ls", "--cwd", "/nonexistent/dir"],
        ),
    ];
    for (name, args) in cases {
        let output = jig().args(&args).output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(2),
            "{name}: {}",
            stderr_of(&output)
        );
        assert!(output.stdout.is_empty(), "{name}");
        assert_snapshot!(format!("usage_{name}"), stderr_of(&output));
    }
}
