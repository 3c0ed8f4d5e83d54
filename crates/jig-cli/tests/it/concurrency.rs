//! 100 concurrent writes through three aliases of one file on the real filesystem.

use std::fs;
use std::path::PathBuf;
use std::sync::Arc;

use jig_env::ExecutionEnv;
use jig_env_local::LocalEnv;
use jig_tool::ToolContext;
use jig_tool_builtins::{BuiltinsConfig, builtin_registry};
use pretty_assertions::assert_eq;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writes_through_three_aliases_leave_one_whole_content() {
    let base = tempfile::tempdir().unwrap();
    let ws = fs::canonicalize(base.path()).unwrap();
    fs::create_dir(ws.join("data")).unwrap();
    std::os::unix::fs::symlink(ws.join("data"), ws.join("linkdir")).unwrap();
    let env: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new());
    let ctx = ToolContext::new(env.clone(), ws.clone());
    let registry = builtin_registry(&BuiltinsConfig::default());
    let write = registry.get("write").unwrap().clone();
    let absolute = ws.join("data/target.txt").display().to_string();
    let aliases = [
        "data/target.txt".to_owned(),
        absolute,
        "linkdir/target.txt".to_owned(),
    ];

    let mut handles = Vec::new();
    for writer in 0..100 {
        let (ctx, write) = (ctx.clone(), write.clone());
        let path = aliases[writer % 3].clone();
        handles.push(tokio::spawn(async move {
            // Big enough that an interleaved write would show.
            let content = format!("writer {writer:03}\n").repeat(20_000);
            let result = write
                .run(&ctx, json!({"path": path, "content": content}))
                .await;
            assert!(!result.is_error, "{result:?}");
        }));
    }
    for handle in handles {
        handle.await.unwrap();
    }

    let content = fs::read_to_string(ws.join("data/target.txt")).unwrap();
    let first = content.lines().next().unwrap().to_owned();
    assert!(first.starts_with("writer "), "{first}");
    assert_eq!(
        content,
        format!("{first}\n").repeat(20_000),
        "interleaved content"
    );
    let mut names: Vec<PathBuf> = fs::read_dir(ws.join("data"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [ws.join("data/target.txt")],
        "temp files left behind"
    );
    assert_eq!(ctx.mutation_queue.active_keys(), 0);
    assert!(
        fs::symlink_metadata(ws.join("linkdir"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    env.cleanup().await;
}
