//! Compile-time proof that the trait is object safe and its futures are `Send`, so tools can
//! hold an `Arc<dyn ExecutionEnv>` and spawn work on a multi-threaded runtime.

use std::path::Path;
use std::sync::Arc;

use jig_env::{Bytes, ExecutionEnv, LineWindow, Recursive};
use jig_env_memory::MemoryEnv;

fn assert_send<T: Send>(value: T) -> T {
    value
}

fn assert_send_sync<T: Send + Sync + ?Sized>() {}

#[test]
fn env_types_are_send_and_sync() {
    assert_send_sync::<MemoryEnv>();
    assert_send_sync::<dyn ExecutionEnv>();
    assert_send_sync::<Arc<dyn ExecutionEnv>>();
}

/// Every method's future is `Send` through `Arc<dyn ExecutionEnv>` (this is checked by the
/// compiler; the run itself only shows the calls work through the trait object).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn futures_are_send_through_a_trait_object() {
    let env: Arc<dyn ExecutionEnv> = Arc::new(MemoryEnv::new());
    let path = Path::new("/ws/file.txt");
    let window = LineWindow {
        start_line: 1,
        max_lines: 10,
        max_bytes: 100,
    };
    assert_send(env.write(path, Bytes::from_static(b"a\nb\n")))
        .await
        .unwrap();
    assert_send(env.append(path, Bytes::from_static(b"c\n")))
        .await
        .unwrap();
    assert_eq!(assert_send(env.read(path)).await.unwrap(), b"a\nb\nc\n");
    assert_eq!(assert_send(env.read_start(path, 1)).await.unwrap(), b"a");
    assert_eq!(
        assert_send(env.read_lines(path, window))
            .await
            .unwrap()
            .total_lines,
        3
    );
    assert_send(env.file_info(path)).await.unwrap();
    assert_send(env.stat(path)).await.unwrap();
    assert!(assert_send(env.exists(path)).await.unwrap());
    assert_send(env.canonical_path(path)).await.unwrap();
    assert_send(env.canonical_path_lenient(Path::new("/ws/new")))
        .await
        .unwrap();
    assert_send(env.read_link(path)).await.unwrap_err();
    assert_send(env.create_dir(Path::new("/ws/d"), Recursive::No))
        .await
        .unwrap();
    assert_send(env.read_dir(Path::new("/ws"))).await.unwrap();
    assert_send(env.rename(path, Path::new("/ws/moved.txt")))
        .await
        .unwrap();
    assert_send(env.remove(Path::new("/ws/d"), Recursive::No))
        .await
        .unwrap();
    assert_send(env.create_temp_file("p", "s")).await.unwrap();
    assert_send(env.create_temp_dir("p")).await.unwrap();
    let mut sink = jig_env::DiscardSink;
    let request = jig_env::ExecRequest::new("true", Vec::new(), "/");
    assert_send(env.exec(request, &mut sink)).await.unwrap_err();
    assert_send(env.cleanup()).await;

    // The env moves into spawned tasks on other threads.
    let spawned = Arc::clone(&env);
    let listed = tokio::spawn(async move {
        spawned
            .read_dir(Path::new("/ws"))
            .await
            .map(|entries| entries.len())
    });
    assert_eq!(listed.await.unwrap().unwrap(), 1);
}
