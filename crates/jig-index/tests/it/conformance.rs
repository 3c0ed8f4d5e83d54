//! The env conformance suite on `IndexedEnv` over `LocalEnv`, with a ready index of the
//! fixture's directory: every case writes and then walks or searches at once, so the warm
//! answers must already see each change.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use jig_env::conformance::{Capabilities, Fixture};
use jig_env::{EnvError, EnvResult};
use jig_env_local::LocalEnv;
use jig_index::{IndexOptions, IndexedEnv, WarmIndexes};

fn host(operation: &'static str, path: &Path, result: std::io::Result<()>) -> EnvResult<()> {
    result.map_err(|error| EnvError::io(operation, path, error))
}

async fn fixture() -> Fixture {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let canonical = std::fs::canonicalize(&root).unwrap();
    let indexes = WarmIndexes::new(IndexOptions::default());
    let env = IndexedEnv::new(Arc::new(LocalEnv::new()), Arc::clone(&indexes));
    indexes.start(&[canonical]);
    let index = indexes.indexes()[0].clone();
    let ready = tokio::task::spawn_blocking(move || index.wait_ready(Duration::from_secs(10)))
        .await
        .unwrap();
    assert!(ready, "{:?}", indexes.status());
    let is_root = rustix::process::geteuid().is_root();
    Fixture::new(Arc::new(env), root)
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

jig_env::conformance_tests!(fixture);

/// The same suite on a view confined beneath the fixture's directory: views share the index.
mod beneath {
    use std::sync::Arc;

    use jig_env::conformance::Fixture;

    async fn fixture() -> Fixture {
        let mut fixture = super::fixture().await;
        let root = std::fs::canonicalize(&fixture.root).unwrap();
        fixture.env = Arc::clone(&fixture.env).beneath(&[root]).unwrap();
        fixture.confined()
    }

    jig_env::conformance_tests!(fixture);
}
