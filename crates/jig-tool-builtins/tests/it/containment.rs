//! Every containment refusal, for every file tool (one table; a new file tool adds a row to
//! `jig_tool_builtins::test_support::FILE_TOOLS`). The workspace is `/ws`; `/outside` and the look-alike siblings hold files the
//! tools must not reach.
#![expect(clippy::unwrap_used, reason = "test set-up helpers fail loudly")]

use insta::assert_snapshot;
use jig_tool_builtins::test_support::{FILE_TOOLS, Target};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::Workspace;

/// What a tool is asked to touch: a file or a directory.
struct Escape {
    name: &'static str,
    file: &'static str,
    dir: &'static str,
    /// A phrase the refusal must contain (the reason).
    reason: &'static str,
}

const ESCAPES: &[Escape] = &[
    Escape {
        name: "dotdot",
        file: "../outside/secret.txt",
        dir: "../outside",
        reason: "resolves to",
    },
    Escape {
        name: "dotdot_deep",
        file: "sub/../../outside/secret.txt",
        dir: "sub/../..",
        reason: "resolves to",
    },
    Escape {
        name: "absolute",
        file: "/outside/secret.txt",
        dir: "/outside",
        reason: "resolves to",
    },
    Escape {
        name: "sibling_underscore",
        file: "/ws_evil/secret.txt",
        dir: "/ws_evil",
        reason: "resolves to",
    },
    Escape {
        name: "sibling_dash",
        file: "/ws-x/secret.txt",
        dir: "/ws-x",
        reason: "resolves to",
    },
    Escape {
        name: "sibling_dot",
        file: "/ws.bak/secret.txt",
        dir: "/ws.bak",
        reason: "resolves to",
    },
    Escape {
        name: "sibling_dotdot",
        file: "../ws_evil/secret.txt",
        dir: "../ws_evil",
        reason: "resolves to",
    },
    Escape {
        name: "tilde_outside",
        file: "~/../../outside/secret.txt",
        dir: "~/../../outside",
        reason: "resolves to",
    },
    Escape {
        name: "file_url_outside",
        file: "file:///outside/secret.txt",
        dir: "file:///outside",
        reason: "resolves to",
    },
    Escape {
        name: "symlink_to_outside",
        file: "link-file",
        dir: "link-dir",
        reason: "symbolic link",
    },
    Escape {
        name: "below_symlinked_dir",
        file: "link-dir/secret.txt",
        dir: "link-dir/sub",
        reason: "symbolic link",
    },
    Escape {
        name: "new_file_below_symlinked_dir",
        file: "link-dir/new.txt",
        dir: "link-dir/newdir",
        reason: "symbolic link",
    },
    Escape {
        name: "dangling_symlink_outside",
        file: "dangling",
        dir: "dangling-dir",
        reason: "symbolic link",
    },
    Escape {
        name: "chained_symlinks",
        file: "hop/secret.txt",
        dir: "hop",
        reason: "symbolic link",
    },
];

fn workspace() -> Workspace {
    let ws = Workspace::new();
    for dir in ["/outside", "/ws_evil", "/ws-x", "/ws.bak"] {
        ws.env
            .add_file(format!("{dir}/secret.txt"), "secret\n")
            .unwrap();
        ws.env.add_dir(format!("{dir}/sub")).unwrap();
    }
    ws.dir("sub");
    ws.symlink("/outside/secret.txt", "link-file");
    ws.symlink("/outside", "link-dir");
    ws.symlink("/outside/missing.txt", "dangling");
    ws.symlink("/outside/missing-dir", "dangling-dir");
    ws.symlink("link-dir", "hop");
    ws
}

#[tokio::test]
async fn every_escape_is_refused_by_every_file_tool_naming_the_root() {
    for tool in FILE_TOOLS {
        for escape in ESCAPES {
            let ws = workspace();
            let path = match tool.target {
                Target::File => escape.file,
                Target::Dir => escape.dir,
            };
            let before = ws.env.files();
            let result = ws.call(tool.name, (tool.args)(path)).await;
            let text = result.text_content();
            let case = format!("{} / {} ({path})", tool.name, escape.name);
            assert!(result.is_error, "{case}: not refused: {text}");
            assert!(text.starts_with("Access denied: "), "{case}: {text}");
            assert!(text.contains("the workspace root /ws."), "{case}: {text}");
            assert!(text.contains(escape.reason), "{case}: {text}");
            assert_eq!(ws.env.files(), before, "{case}: files changed");
        }
    }
}

#[tokio::test]
async fn a_nul_byte_is_refused_by_every_file_tool_and_touches_nothing() {
    for tool in FILE_TOOLS {
        let ws = workspace();
        let before = ws.env.files();
        let result = ws.call(tool.name, (tool.args)("a\0b")).await;
        assert!(result.is_error, "{}", tool.name);
        assert_eq!(
            result.text_content(),
            "Invalid path \"a\\\\0b\": it contains a NUL byte (\\0), which no file name can contain. Remove it and try again."
        );
        assert_eq!(ws.env.files(), before);
    }
}

#[tokio::test]
async fn paths_inside_the_workspace_through_internal_symlinks_are_allowed() {
    let ws = workspace();
    ws.file("data/in.txt", "inside\n");
    ws.symlink("/ws/data", "data-link");
    ws.symlink("data/in.txt", "in-link");
    assert_eq!(
        ws.ok("read", json!({"path": "data-link/in.txt"})).await,
        "   1│ inside"
    );
    assert_eq!(
        ws.ok("read", json!({"path": "in-link"})).await,
        "   1│ inside"
    );
    assert_eq!(ws.ok("ls", json!({"path": "data-link"})).await, "in.txt");
    ws.ok(
        "write",
        json!({"path": "data-link/new.txt", "content": "n\n"}),
    )
    .await;
    assert_eq!(ws.content("data/new.txt").unwrap(), b"n\n");
    // `..` that stays inside is fine.
    assert_eq!(
        ws.ok("read", json!({"path": "sub/../data/in.txt"})).await,
        "   1│ inside"
    );
}

#[tokio::test]
async fn containment_none_allows_outside_paths() {
    let mut ws = workspace();
    ws.ctx.containment.mode = jig_tool::ContainmentMode::None;
    assert_eq!(
        ws.ok("read", json!({"path": "../outside/secret.txt"}))
            .await,
        "   1│ secret"
    );
    assert_eq!(
        ws.ok("read", json!({"path": "link-file"})).await,
        "   1│ secret"
    );
}

#[tokio::test]
async fn refusal_texts() {
    let ws = workspace();
    assert_snapshot!(
        "refusal_lexical",
        ws.err("read", json!({"path": "../outside/secret.txt"}))
            .await
    );
    assert_snapshot!(
        "refusal_sibling_prefix",
        ws.err("ls", json!({"path": "/ws_evil"})).await
    );
    assert_snapshot!(
        "refusal_symlink",
        ws.err("read", json!({"path": "link-file"})).await
    );
    assert_snapshot!(
        "refusal_new_file_below_symlinked_dir",
        ws.err("write", json!({"path": "link-dir/new.txt", "content": "x"}))
            .await
    );
    assert_snapshot!(
        "refusal_dangling_symlink",
        ws.err("read", json!({"path": "dangling"})).await
    );
    let mut multi = workspace();
    multi.ctx.containment.roots.push("/data".into());
    assert_snapshot!(
        "refusal_two_roots",
        multi
            .err("read", json!({"path": "/outside/secret.txt"}))
            .await
    );
}
