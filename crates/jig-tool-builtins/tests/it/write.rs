//! `write` on `MemoryEnv`: results and details, parents, symlinks, directories, and
//! concurrent writes through aliases.

use std::sync::Arc;

use insta::{assert_json_snapshot, assert_snapshot};
use jig_env::ExecutionEnv;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::Workspace;

#[tokio::test]
async fn writing_a_new_file_reports_real_bytes_and_lines() {
    let ws = Workspace::new();
    let result = ws
        .call(
            "write",
            json!({"path": "task.txt", "content": "status: draft\n"}),
        )
        .await;
    assert_eq!(result.text_content(), "Wrote 14 bytes (1 line) to task.txt");
    assert_json_snapshot!("write_new_file", result);
    assert_eq!(ws.content("task.txt").unwrap(), b"status: draft\n");
    // Read back through the tool: the seed walk-through.
    assert_eq!(
        ws.ok("read", json!({"path": "task.txt"})).await,
        "   1│ status: draft"
    );
}

#[tokio::test]
async fn overwriting_counts_utf8_bytes_and_a_final_line_without_newline() {
    let ws = Workspace::new();
    ws.file("a.txt", "old");
    let result = ws
        .call("write", json!({"path": "a.txt", "content": "héllo\nwörld"}))
        .await;
    assert_eq!(result.text_content(), "Wrote 13 bytes (2 lines) to a.txt");
    assert_eq!(result.details["created"], false);
    assert_eq!(result.details["path"], "/ws/a.txt");
    let empty = ws
        .call("write", json!({"path": "a.txt", "content": ""}))
        .await;
    assert_eq!(empty.text_content(), "Wrote 0 bytes (0 lines) to a.txt");
}

#[tokio::test]
async fn missing_parent_directories_are_created() {
    let ws = Workspace::new();
    let text = ws
        .ok(
            "write",
            json!({"path": "deep/er/new.txt", "content": "x\n"}),
        )
        .await;
    assert_eq!(text, "Wrote 2 bytes (1 line) to deep/er/new.txt");
    assert_eq!(ws.content("deep/er/new.txt").unwrap(), b"x\n");
}

#[tokio::test]
async fn a_directory_is_refused() {
    let ws = Workspace::new();
    ws.dir("src");
    assert_snapshot!(
        "write_directory",
        ws.err("write", json!({"path": "src", "content": "x"}))
            .await
    );
    // A trailing slash names a directory even when none exists yet.
    let text = ws
        .err("write", json!({"path": "newdir/", "content": "x"}))
        .await;
    assert_eq!(
        text,
        "Cannot write newdir/: it is a directory. Give the path of a file (e.g. newdir/name.txt)."
    );
}

#[tokio::test]
async fn a_file_where_a_directory_is_needed_is_a_clear_error() {
    let ws = Workspace::new();
    ws.file("plain", "x");
    let text = ws
        .err("write", json!({"path": "plain/child.txt", "content": "x"}))
        .await;
    assert_snapshot!("write_parent_is_file", text);
}

#[tokio::test]
async fn writing_through_a_symlink_inside_the_workspace_changes_its_target() {
    let ws = Workspace::new();
    ws.file("real.txt", "old\n");
    ws.symlink("/ws/real.txt", "alias.txt");
    ws.ok("write", json!({"path": "alias.txt", "content": "new\n"}))
        .await;
    assert_eq!(ws.content("real.txt").unwrap(), b"new\n");
    let info = ws
        .env
        .file_info(std::path::Path::new("/ws/alias.txt"))
        .await
        .unwrap();
    assert_eq!(info.kind, jig_env::FileKind::Symlink);
}

#[tokio::test]
async fn concurrent_writes_through_aliases_leave_one_whole_content() {
    let ws = Arc::new(Workspace::new());
    ws.dir("data");
    ws.symlink("/ws/data", "linkdir");
    let aliases = [
        "data/target.txt",
        "/ws/data/target.txt",
        "linkdir/target.txt",
    ];
    let mut handles = Vec::new();
    for writer in 0..100 {
        let ws = Arc::clone(&ws);
        let path = aliases[writer % 3];
        handles.push(tokio::spawn(async move {
            let content = format!("writer {writer}\n").repeat(200);
            ws.ok("write", json!({"path": path, "content": content}))
                .await
        }));
    }
    for handle in handles {
        handle.await.unwrap();
    }
    let content = String::from_utf8(ws.content("data/target.txt").unwrap()).unwrap();
    let first = content.lines().next().unwrap().to_owned();
    assert!(
        content.lines().all(|line| line == first),
        "interleaved content"
    );
    assert_eq!(content.lines().count(), 200);
    assert_eq!(ws.ctx.mutation_queue.active_keys(), 0);
    let files: Vec<_> = ws.env.files().into_keys().collect();
    assert_eq!(files, [std::path::PathBuf::from("/ws/data/target.txt")]);
}
