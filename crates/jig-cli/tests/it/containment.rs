//! Every containment refusal, for every file tool, through the binary on real symlinks (one
//! table; a new file tool adds a row to `jig_tool_builtins::test_support::FILE_TOOLS`).

use insta::assert_snapshot;
use jig_tool_builtins::test_support::{FILE_TOOLS, Target};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{Sandbox, stdout_of};

struct Escape {
    name: &'static str,
    file: &'static str,
    dir: &'static str,
}

/// `[BASE]` is replaced with the sandbox's base directory.
const ESCAPES: &[Escape] = &[
    Escape {
        name: "dotdot",
        file: "../outside/secret.txt",
        dir: "../outside",
    },
    Escape {
        name: "absolute",
        file: "[BASE]/outside/secret.txt",
        dir: "[BASE]/outside",
    },
    Escape {
        name: "sibling_underscore",
        file: "[BASE]/ws_evil/secret.txt",
        dir: "[BASE]/ws_evil",
    },
    Escape {
        name: "sibling_dash",
        file: "[BASE]/ws-x/secret.txt",
        dir: "[BASE]/ws-x",
    },
    Escape {
        name: "sibling_dot",
        file: "[BASE]/ws.bak/secret.txt",
        dir: "[BASE]/ws.bak",
    },
    Escape {
        name: "sibling_relative",
        file: "../ws_evil/secret.txt",
        dir: "../ws.bak",
    },
    Escape {
        name: "symlink_to_outside",
        file: "link-file",
        dir: "link-dir",
    },
    Escape {
        name: "below_symlinked_dir",
        file: "link-dir/secret.txt",
        dir: "link-dir/.",
    },
    Escape {
        name: "new_file_below_symlinked_dir",
        file: "link-dir/new.txt",
        dir: "link-dir/newdir",
    },
    Escape {
        name: "dangling_symlink_outside",
        file: "dangling",
        dir: "dangling-dir",
    },
    Escape {
        name: "relative_symlink_escape",
        file: "rel-link",
        dir: "rel-link-dir",
    },
];

fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.symlink(sandbox.base.join("outside/secret.txt"), "link-file");
    sandbox.symlink(sandbox.base.join("outside"), "link-dir");
    sandbox.symlink(sandbox.base.join("outside/missing.txt"), "dangling");
    sandbox.symlink(sandbox.base.join("outside/missing-dir"), "dangling-dir");
    sandbox.symlink("../outside/secret.txt", "rel-link");
    sandbox.symlink("../outside", "rel-link-dir");
    sandbox
}

#[test]
fn every_escape_is_refused_by_every_file_tool_naming_the_root() {
    let sandbox = sandbox();
    let root = sandbox.ws.display().to_string();
    for tool in FILE_TOOLS {
        for escape in ESCAPES {
            let path = match tool.target {
                Target::File => escape.file,
                Target::Dir => escape.dir,
            };
            let path = path.replace("[BASE]", &sandbox.base.display().to_string());
            let before = sandbox.snapshot_tree();
            let output = sandbox
                .jig(tool.name, &(tool.args)(&path))
                .output()
                .unwrap();
            let text = stdout_of(&output);
            let case = format!("{} / {} ({path})", tool.name, escape.name);
            assert_eq!(output.status.code(), Some(1), "{case}: {text}");
            assert!(text.starts_with("Access denied: "), "{case}: {text}");
            assert!(
                text.contains(&format!("the workspace root {root}.")),
                "{case}: {text}"
            );
            assert_eq!(sandbox.snapshot_tree(), before, "{case}: files changed");
        }
    }
}

#[test]
fn refusal_texts_name_the_root_and_the_reason() {
    let sandbox = sandbox();
    let run = |tool: &str, args: Value| {
        sandbox.redact(&stdout_of(&sandbox.jig(tool, &args).output().unwrap()))
    };
    assert_snapshot!(
        "refusal_dotdot",
        run("read", json!({"path": "../outside/secret.txt"}))
    );
    assert_snapshot!(
        "refusal_symlink_dir",
        run("ls", json!({"path": "link-dir"}))
    );
    assert_snapshot!("refusal_dangling", run("read", json!({"path": "dangling"})));
    assert_snapshot!(
        "refusal_new_below_link",
        run("write", json!({"path": "link-dir/x.txt", "content": ""}))
    );
}

#[test]
fn a_nul_byte_is_refused_and_touches_nothing() {
    let sandbox = sandbox();
    for tool in FILE_TOOLS {
        let before = sandbox.snapshot_tree();
        let output = sandbox
            .jig(tool.name, &(tool.args)("a\u{0}b"))
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{}", tool.name);
        assert!(
            stdout_of(&output).starts_with("Invalid path \"a\\\\0b\": it contains a NUL byte"),
            "{}",
            stdout_of(&output)
        );
        assert_eq!(sandbox.snapshot_tree(), before);
    }
}
