//! The env conformance suite on `LocalEnv`, in a fresh temp directory per case.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use jig_env::conformance::{Capabilities, Fixture};
use jig_env::{EnvError, EnvResult};
use jig_env_local::LocalEnv;

fn host(operation: &'static str, path: &Path, result: std::io::Result<()>) -> EnvResult<()> {
    result.map_err(|error| EnvError::io(operation, path, error))
}

#[expect(
    clippy::unused_async,
    reason = "conformance_tests! awaits the fixture factory"
)]
async fn fixture() -> Fixture {
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(error) => panic!("creating a temp dir: {error}"),
    };
    let root = dir.path().join("root");
    if let Err(error) = std::fs::create_dir(&root) {
        panic!("creating {}: {error}", root.display());
    }
    let is_root = rustix::process::geteuid().is_root();
    Fixture::new(Arc::new(LocalEnv::new()), root)
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

/// The same suite on a view confined beneath the fixture's directory: inside its roots a view
/// keeps the whole contract.
mod beneath {
    use std::sync::Arc;

    use jig_env::conformance::Fixture;

    async fn fixture() -> Fixture {
        let mut fixture = super::fixture().await;
        let root = match std::fs::canonicalize(&fixture.root) {
            Ok(root) => root,
            Err(error) => panic!("canonicalizing {}: {error}", fixture.root.display()),
        };
        fixture.env = match Arc::clone(&fixture.env).beneath(&[root]) {
            Ok(view) => view,
            Err(error) => panic!("opening the view: {error}"),
        };
        fixture.confined()
    }

    jig_env::conformance_tests!(fixture);
}
