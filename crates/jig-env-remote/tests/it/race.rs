//! Streamed reads and writes in a confined view, served: while another process keeps swapping
//! the workspace's entries for symlinks to a directory outside, nothing outside is ever read
//! or changed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use jig_env::{ErrorKind, ExecutionEnv};
use jig_env_local::test_support::{SymlinkRace, leaked};

use crate::support::in_process;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamed_reads_and_writes_in_a_view_never_escape_while_symlinks_are_swapped() {
    let arena = SymlinkRace::new();
    let (env, _server) = in_process().await;
    let view = Arc::new(env)
        .beneath(std::slice::from_ref(&arena.ws))
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = arena.flipper(Arc::clone(&stop));
    // More than 8 MiB: the server streams the write into the file.
    let big = Bytes::from(vec![b'i'; 9 << 20]);
    let targets = [arena.ws.join("f"), arena.ws.join("link/file.txt")];
    for round in 0..12 {
        for path in &targets {
            match view.read(path).await {
                Ok(bytes) => assert!(
                    !leaked(&String::from_utf8_lossy(&bytes)),
                    "read outside through {}",
                    path.display()
                ),
                // Refused (outside) or caught mid-swap: either way nothing was read outside.
                Err(error) => assert_ne!(error.kind(), ErrorKind::Invalid, "{error}"),
            }
            let data = if round % 3 == 0 {
                big.clone()
            } else {
                Bytes::from_static(b"inside\n")
            };
            if let Err(error) = view.write(path, data).await {
                assert_ne!(error.kind(), ErrorKind::Invalid, "{error}");
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let rounds = flipper.join().unwrap();
    assert!(rounds > 10, "the flipper ran ({rounds} rounds)");
    assert_eq!(arena.outside_changes(), 0, "a write escaped the view");
}
