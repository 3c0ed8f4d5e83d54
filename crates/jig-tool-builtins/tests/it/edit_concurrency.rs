//! 200 concurrent edits of one file, each on its own unique line, issued through three alias
//! paths (relative, absolute, through a symlinked directory): the mutation queue keys them all
//! on the file's canonical path, so every edit is applied and none is lost.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers fail loudly"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use jig_env::ExecutionEnv;
use jig_env_local::LocalEnv;
use jig_env_memory::MemoryEnv;
use jig_tool::{DynTool, ErasedTool, ToolContext};
use jig_tool_builtins::EditTool;
use serde_json::json;

const EDITS: usize = 200;

fn line(i: usize, state: &str) -> String {
    format!("item {i:03}: {state}\n")
}

/// Runs the 200 edits against `file` (inside `ctx.cwd`), reached as `relative`, as its absolute
/// path and as `through_symlink`; returns the final content.
async fn run_concurrently(
    env: Arc<dyn ExecutionEnv>,
    ctx: ToolContext,
    file: &Path,
    aliases: [String; 3],
) -> Vec<u8> {
    let tool: Arc<dyn DynTool> = ErasedTool::shared(EditTool::new());
    let mut tasks = Vec::with_capacity(EDITS);
    for i in 0..EDITS {
        let tool = Arc::clone(&tool);
        let ctx = ctx.clone();
        let path = aliases[i % 3].clone();
        tasks.push(tokio::spawn(async move {
            let args = json!({"path": path, "edits": [{"oldText": line(i, "old"), "newText": line(i, "new")}]});
            tool.run(&ctx, args).await
        }));
    }
    for (i, task) in tasks.into_iter().enumerate() {
        let result = task.await.expect("edit task panicked");
        assert!(
            !result.is_error,
            "edit {i} failed: {}",
            result.text_content()
        );
    }
    env.read(file).await.unwrap()
}

fn original() -> String {
    (0..EDITS).map(|i| line(i, "old")).collect()
}

fn expected() -> Vec<u8> {
    (0..EDITS)
        .map(|i| line(i, "new"))
        .collect::<String>()
        .into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_edits_through_three_aliases_on_memory_env() {
    let env = Arc::new(MemoryEnv::new());
    env.add_file("/ws/sub/f.txt", original()).unwrap();
    env.symlink("/ws/sub", "/ws/alias").unwrap();
    let ctx = ToolContext::new(env.clone(), PathBuf::from("/ws"));
    let aliases = [
        "sub/f.txt".to_owned(),
        "/ws/sub/f.txt".to_owned(),
        "alias/f.txt".to_owned(),
    ];
    let content = run_concurrently(
        env.clone(),
        ctx.clone(),
        Path::new("/ws/sub/f.txt"),
        aliases,
    )
    .await;
    assert_eq!(
        String::from_utf8(content).unwrap(),
        String::from_utf8(expected()).unwrap()
    );
    assert_eq!(ctx.mutation_queue.active_keys(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[expect(
    clippy::disallowed_methods,
    reason = "the fixture is built on the host with std::fs"
)]
async fn two_hundred_edits_through_three_aliases_on_local_env() {
    let dir = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir(ws.join("sub")).unwrap();
    std::fs::write(ws.join("sub/f.txt"), original()).unwrap();
    std::os::unix::fs::symlink(ws.join("sub"), ws.join("alias")).unwrap();
    let env: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new());
    let ctx = ToolContext::new(Arc::clone(&env), ws.clone());
    let file = ws.join("sub/f.txt");
    let aliases = [
        "sub/f.txt".to_owned(),
        file.display().to_string(),
        "alias/f.txt".to_owned(),
    ];
    let content = run_concurrently(env, ctx.clone(), &file, aliases).await;
    assert_eq!(
        String::from_utf8(content).unwrap(),
        String::from_utf8(expected()).unwrap()
    );
    assert_eq!(ctx.mutation_queue.active_keys(), 0);
    // The symlinked directory is still a symlink and no temp file was left behind.
    assert!(
        std::fs::symlink_metadata(ws.join("alias"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let names: Vec<_> = std::fs::read_dir(ws.join("sub"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["f.txt"]);
}
