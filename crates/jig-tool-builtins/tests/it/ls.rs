//! `ls` on `MemoryEnv`: order, markers, limits and notices, errors.

use insta::{assert_json_snapshot, assert_snapshot};
use jig_tool_builtins::{BuiltinsConfig, LsConfig};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::Workspace;

#[tokio::test]
async fn entries_are_sorted_case_insensitively_with_markers() {
    let ws = Workspace::new();
    ws.file("b.txt", "")
        .file("B.txt", "")
        .file("a.txt", "")
        .file(".hidden", "")
        .file("Zeta", "")
        .dir("src")
        .dir("Docs")
        .symlink("/ws/src", "link-to-dir")
        .symlink("/ws/a.txt", "link-to-file")
        .symlink("/ws/gone.txt", "dangling");
    let result = ws.call("ls", json!({})).await;
    assert_snapshot!("ls_listing", result.text_content());
    assert_json_snapshot!("ls_listing_details", result.details);
    // The same through an explicit path.
    assert_eq!(
        ws.ok("ls", json!({"path": "."})).await,
        result.text_content()
    );
}

#[tokio::test]
async fn an_empty_directory_says_so() {
    let ws = Workspace::new();
    ws.dir("empty");
    assert_eq!(
        ws.ok("ls", json!({"path": "empty"})).await,
        "(empty directory)"
    );
}

#[tokio::test]
async fn the_entry_limit_gives_a_notice_only_when_entries_remain() {
    let ws = Workspace::new();
    for name in ["d/a", "d/b", "d/c"] {
        ws.file(name, "");
    }
    let result = ws.call("ls", json!({"path": "d", "limit": 2})).await;
    assert_eq!(
        result.text_content(),
        "a\nb\n\n[2 entries limit reached. Use limit=4 for more]"
    );
    assert_eq!(
        result.details,
        json!({"path": "/ws/d", "entries": 2, "entryLimitReached": 2})
    );
    let exact = ws.call("ls", json!({"path": "d", "limit": 3})).await;
    assert_eq!(exact.text_content(), "a\nb\nc");
}

#[tokio::test]
async fn the_default_limit_is_500() {
    let ws = Workspace::new();
    for n in 0..501 {
        ws.file(&format!("f{n:04}"), "");
    }
    let text = ws.ok("ls", json!({})).await;
    assert_eq!(text.lines().filter(|l| l.starts_with('f')).count(), 500);
    assert!(text.ends_with("\n\n[500 entries limit reached. Use limit=1000 for more]"));
}

#[tokio::test]
async fn the_byte_limit_stops_the_listing_with_a_notice() {
    let config = BuiltinsConfig {
        ls: LsConfig::default().with_limits(500, 100),
        ..Default::default()
    };
    let ws = Workspace::with_config(&config);
    for n in 0..50 {
        ws.file(&format!("file-{n:03}"), "");
    }
    let result = ws.call("ls", json!({})).await;
    let text = result.text_content();
    assert!(text.len() <= 100, "{}", text.len());
    assert_snapshot!("ls_byte_limit", text);
    assert_eq!(result.details["byteLimitReached"], true);
}

#[tokio::test]
async fn missing_paths_and_files_are_clear_errors() {
    let ws = Workspace::new();
    ws.file("a.txt", "");
    assert_eq!(
        ws.err("ls", json!({"path": "nope"})).await,
        "Path not found: /ws/nope"
    );
    assert_eq!(
        ws.err("ls", json!({"path": "a.txt"})).await,
        "Not a directory: /ws/a.txt"
    );
    assert_snapshot!("ls_limit_zero", ws.err("ls", json!({"limit": 0})).await);
}
