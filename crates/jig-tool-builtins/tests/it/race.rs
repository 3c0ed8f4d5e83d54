//! Containment under a symlink race, on the host filesystem: while a thread keeps swapping
//! `ws/link` between a directory inside the workspace and a symlink to a directory outside it,
//! and `ws/f` between a file inside and a symlink to a file outside (each swap one atomic
//! `renameat2(RENAME_EXCHANGE)`), every file tool is called over and over on paths through
//! them. No call may return outside content, list outside names or change anything outside.
//!
//! `JIG_RACE_CALLS` sets the calls per tool (default 400).
#![expect(
    clippy::disallowed_methods,
    clippy::too_many_lines,
    reason = "the race runs on the host filesystem, set up directly; each test is one scenario \
              read top to bottom"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use jig_env_local::LocalEnv;
use jig_env_local::test_support::{SECRET, SymlinkRace, leaked};
use jig_tool::{ToolContext, ToolRegistry};
use jig_tool_builtins::{BuiltinsConfig, builtin_registry};
use serde_json::{Value, json};

/// The arguments of call `i` of one tool.
type Args = Box<dyn Fn(u64) -> Value>;

struct Tally {
    escapes: AtomicU64,
    successes: AtomicU64,
    calls: AtomicU64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_file_tool_escapes_while_symlinks_are_swapped() {
    let calls: u64 = std::env::var("JIG_RACE_CALLS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(400);
    let arena = SymlinkRace::new();
    let env = Arc::new(LocalEnv::new());
    let ctx = ToolContext::new(env, arena.ws.clone());
    let registry: ToolRegistry = builtin_registry(&BuiltinsConfig::default());
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = arena.flipper(Arc::clone(&stop));

    let cases: Vec<(&str, Args)> = vec![
        (
            "read",
            Box::new(|i| json!({"path": if i.is_multiple_of(2) { "link/file.txt" } else { "f" }})),
        ),
        (
            "write",
            Box::new(|i| {
                let path = if i.is_multiple_of(2) {
                    format!("link/w{i}.txt")
                } else {
                    "f".to_owned()
                };
                json!({"path": path, "content": format!("written {i}\n")})
            }),
        ),
        (
            "edit",
            Box::new(|i| {
                // Two calls per path: one changes `count` to `Count`, the next changes it back.
                let path = if (i / 2).is_multiple_of(2) {
                    "link/file.txt"
                } else {
                    "f"
                };
                let (old, new) = if i.is_multiple_of(2) {
                    ("count", "Count")
                } else {
                    ("Count", "count")
                };
                json!({"path": path, "edits": [{"oldText": old, "newText": new}]})
            }),
        ),
        ("ls", Box::new(|_| json!({"path": "link"}))),
        (
            "grep",
            Box::new(
                |i| json!({"pattern": SECRET, "path": if i.is_multiple_of(2) { "." } else { "link" }}),
            ),
        ),
        (
            "find",
            Box::new(
                |i| json!({"pattern": "*", "path": if i.is_multiple_of(2) { "." } else { "link" }}),
            ),
        ),
    ];
    let mut report = Vec::new();
    for (name, args) in &cases {
        let tool = registry.get(name).unwrap();
        let tally = Tally {
            escapes: AtomicU64::new(0),
            successes: AtomicU64::new(0),
            calls: AtomicU64::new(0),
        };
        for i in 0..calls {
            let result = tool.run(&ctx, args(i)).await;
            tally.calls.fetch_add(1, Ordering::Relaxed);
            let text = result.text_content();
            if leaked(&text) {
                tally.escapes.fetch_add(1, Ordering::Relaxed);
            }
            if result.is_error {
                if std::env::var_os("JIG_RACE_VERBOSE").is_some() {
                    println!("{name} {i}: {text}");
                }
            } else {
                tally.successes.fetch_add(1, Ordering::Relaxed);
            }
            tally
                .escapes
                .fetch_add(arena.outside_changes(), Ordering::Relaxed);
        }
        report.push((
            *name,
            tally.calls.load(Ordering::Relaxed),
            tally.successes.load(Ordering::Relaxed),
            tally.escapes.load(Ordering::Relaxed),
        ));
    }
    stop.store(true, Ordering::Relaxed);
    let rounds = flipper.join().unwrap();
    for (name, calls, successes, escapes) in &report {
        println!("{name}: {calls} calls, {successes} succeeded, {escapes} escapes");
    }
    println!("{rounds} swap rounds");
    assert!(rounds > 100, "the flipper ran ({rounds} rounds)");
    for (name, _, successes, escapes) in &report {
        assert_eq!(*escapes, 0, "{name} escaped the workspace");
        // The race is real: calls also land inside while the links flip.
        assert!(*successes > 0, "{name} never succeeded");
    }
    assert_eq!(arena.outside_changes(), 0);
}

/// `write` and `edit` refuse a FIFO at once (nothing blocks, the FIFO stays a FIFO), and a call
/// cancelled while it waits for its turn on a file holds nothing: the next edit goes through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifos_are_refused_and_cancelled_mutations_release_their_turn() {
    use std::os::unix::fs::FileTypeExt;
    use std::time::Duration;

    let arena = SymlinkRace::new();
    let fifo = arena.fifo("pipe");
    let env = Arc::new(LocalEnv::new());
    let ctx = ToolContext::new(env, arena.ws.clone());
    let registry: ToolRegistry = builtin_registry(&BuiltinsConfig::default());
    let call = |tool: &str, args: Value| {
        let tool = registry.get(tool).unwrap().clone();
        let ctx = ctx.clone();
        async move {
            tokio::time::timeout(Duration::from_secs(5), tool.run(&ctx, args))
                .await
                .expect("the call answered within 5 s")
        }
    };
    let written = call("write", json!({"path": "pipe", "content": "x"})).await;
    assert!(written.is_error, "{written:?}");
    assert!(
        written.text_content().contains("not a regular file"),
        "{written:?}"
    );
    let edited = call(
        "edit",
        json!({"path": "pipe", "edits": [{"oldText": "a", "newText": "b"}]}),
    )
    .await;
    assert!(edited.is_error, "{edited:?}");
    assert!(
        edited.text_content().contains("not a regular file"),
        "{edited:?}"
    );
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );

    // Someone holds the file's turn; an edit waits, is cancelled, and gives up its place.
    let file = arena.ws.join("link/file.txt");
    let held = ctx
        .mutation_queue
        .lock_key(std::fs::canonicalize(&file).unwrap())
        .await;
    let mut waiting_ctx = ctx.clone();
    waiting_ctx.cancel = jig_env::CancellationToken::new();
    let edit = registry.get("edit").unwrap().clone();
    let waiting = {
        let ctx = waiting_ctx.clone();
        let edit = edit.clone();
        tokio::spawn(async move {
            edit.run(
                &ctx,
                json!({"path": "link/file.txt", "edits": [{"oldText": "count", "newText": "never"}]}),
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    waiting_ctx.cancel.cancel();
    let cancelled = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("the cancelled edit returned")
        .unwrap();
    assert!(cancelled.is_error, "{cancelled:?}");
    drop(held);
    assert_eq!(
        ctx.mutation_queue.active_keys(),
        0,
        "no turn is left behind"
    );

    // Another process holds the update lock: the edit waits for it, and cancelling works there
    // too.
    let locked = std::fs::File::open(&file).unwrap();
    rustix::fs::flock(&locked, rustix::fs::FlockOperation::LockExclusive).unwrap();
    let mut waiting_ctx = ctx.clone();
    waiting_ctx.cancel = jig_env::CancellationToken::new();
    let waiting = {
        let ctx = waiting_ctx.clone();
        let edit = edit.clone();
        tokio::spawn(async move {
            edit.run(
                &ctx,
                json!({"path": "link/file.txt", "edits": [{"oldText": "count", "newText": "never"}]}),
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !waiting.is_finished(),
        "the edit waits for the other process's lock"
    );
    waiting_ctx.cancel.cancel();
    let cancelled = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("the cancelled edit returned")
        .unwrap();
    assert!(cancelled.is_error, "{cancelled:?}");
    drop(locked);
    assert_eq!(
        ctx.mutation_queue.active_keys(),
        0,
        "no turn is left behind"
    );

    let done = call(
        "edit",
        json!({"path": "link/file.txt", "edits": [{"oldText": "count", "newText": "done"}]}),
    )
    .await;
    assert!(!done.is_error, "{done:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "inside done\n");
}

/// An edit planned on content another program replaced meanwhile (without taking the lock) is
/// refused, and the other program's content stays.
#[tokio::test]
async fn an_edit_of_a_file_changed_since_it_was_read_writes_nothing() {
    let arena = SymlinkRace::new();
    let file = arena.ws.join("link/file.txt");
    let env = Arc::new(LocalEnv::new());
    let ctx = ToolContext::new(env, arena.ws.clone());
    let registry: ToolRegistry = builtin_registry(&BuiltinsConfig::default());
    let edit = registry.get("edit").unwrap().clone();
    let stop = Arc::new(AtomicBool::new(false));
    // A writer that does not lock rewrites the file (same size, new inode) as fast as it can.
    let writer = {
        let stop = Arc::clone(&stop);
        let file = file.clone();
        std::thread::spawn(move || {
            let mut rounds = 0_u64;
            while !stop.load(Ordering::Relaxed) {
                let temp = file.with_extension("editor");
                std::fs::write(&temp, "inside count\n").unwrap();
                std::fs::rename(&temp, &file).unwrap();
                rounds += 1;
            }
            rounds
        })
    };
    // On a loaded machine the writer may get few turns while the edits run: edit until one is
    // refused, for up to 30 s, rather than a fixed number of times.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut refused = 0;
    while refused == 0 && std::time::Instant::now() < deadline {
        let result = edit
            .run(
                &ctx,
                json!({"path": "link/file.txt", "edits": [{"oldText": "count", "newText": "Count"}]}),
            )
            .await;
        let text = result.text_content();
        if result.is_error && text.contains("changed since it was read") {
            refused += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    // Some edits land between two rewrites (then the rewrite replaces them, which is the
    // editor's save winning, not a lost report); the point is that an edit planned on an old
    // version is refused rather than reported as done over the new one.
    assert!(refused > 0, "no edit saw the file change under it");
}
