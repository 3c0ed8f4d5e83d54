//! Shared set-up: a `LocalEnv` served in-process, and fixtures for the conformance suite.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::sync::Arc;

use jig_env::conformance::{Capabilities, Fixture};
use jig_env::{EnvError, EnvResult, ExecutionEnv};
use jig_env_local::LocalEnv;
use jig_env_remote::{RemoteEnv, ServeOptions, serve};

fn host(operation: &'static str, path: &Path, result: std::io::Result<()>) -> EnvResult<()> {
    result.map_err(|error| EnvError::io(operation, path, error))
}

/// A `RemoteEnv` talking to a `LocalEnv` served on the other end of an in-process pipe; the
/// server task's handle comes back too.
pub(crate) async fn in_process() -> (RemoteEnv, tokio::task::JoinHandle<()>) {
    let (client, server) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server);
    let served: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new());
    let task = tokio::spawn(async move {
        let _ = serve(served, ServeOptions::default(), server_read, server_write).await;
    });
    let (client_read, client_write) = tokio::io::split(client);
    let env = RemoteEnv::connect("in-process", client_read, client_write, None, None)
        .await
        .expect("connect");
    (env, task)
}

/// A fixture for `env`, which acts on this machine's filesystem, in a fresh temp directory.
pub(crate) fn local_fixture(env: Arc<dyn ExecutionEnv>) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("root");
    std::fs::create_dir(&root).expect("root dir");
    let is_root = rustix::process::geteuid().is_root();
    Fixture::new(env, root)
        .with_symlink(|target, link| {
            host("symlink", link, std::os::unix::fs::symlink(target, link))
        })
        .with_set_mode(|path, mode| {
            host(
                "chmod",
                path,
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)),
            )
        })
        .with_capabilities(Capabilities {
            exec: true,
            enforces_permissions: !is_root,
        })
        .keep_alive(dir)
}

/// Like [`in_process`], but the server runs on its own runtime thread; calling the returned
/// function kills that runtime with every task of the server (as if its process died).
pub(crate) async fn killable() -> (RemoteEnv, Box<dyn FnOnce() + Send>) {
    let (client, server) = tokio::io::duplex(1 << 20);
    let (kill_tx, kill_rx) = std::sync::mpsc::channel::<()>();
    let thread = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        runtime.spawn(async move {
            let (server_read, server_write) = tokio::io::split(server);
            let served: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new());
            let _ = serve(served, ServeOptions::default(), server_read, server_write).await;
        });
        let _ = kill_rx.recv();
        runtime.shutdown_background();
    });
    let (client_read, client_write) = tokio::io::split(client);
    let env = RemoteEnv::connect("in-process", client_read, client_write, None, None)
        .await
        .expect("connect");
    let kill = Box::new(move || {
        let _ = kill_tx.send(());
        let _ = thread.join();
    });
    (env, kill)
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Like [`in_process`], but the bytes cross a relay task that
/// [`RemoteEnv::close_transport`] stops (as a killed `ssh` would): both sides see the stream
/// end.
pub(crate) async fn cuttable() -> (RemoteEnv, tokio::task::JoinHandle<()>) {
    let (client, mut client_relay) = tokio::io::duplex(1 << 20);
    let (mut server_relay, server) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server);
    let served: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new());
    let task = tokio::spawn(async move {
        let _ = serve(served, ServeOptions::default(), server_read, server_write).await;
    });
    let relay = tokio::spawn(async move {
        let _ = tokio::io::copy_bidirectional(&mut client_relay, &mut server_relay).await;
    });
    let (client_read, client_write) = tokio::io::split(client);
    let env = RemoteEnv::connect(
        "in-process",
        client_read,
        client_write,
        None,
        Some(Box::new(AbortOnDrop(relay))),
    )
    .await
    .expect("connect");
    (env, task)
}
