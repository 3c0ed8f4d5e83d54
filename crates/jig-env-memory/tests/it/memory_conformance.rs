//! The env conformance suite on `MemoryEnv`.

use std::sync::Arc;

use jig_env::conformance::{Capabilities, Fixture};
use jig_env_memory::MemoryEnv;

async fn fixture() -> Fixture {
    let env = Arc::new(MemoryEnv::with_home("/home/tester"));
    if let Err(error) = env.add_dir("/work/root") {
        panic!("setup: {error}");
    }
    let links = Arc::clone(&env);
    let modes = Arc::clone(&env);
    Fixture::new(env, "/work/root")
        .with_symlink(move |target, link| links.symlink(target, link))
        .with_set_mode(move |path, mode| modes.set_mode(path, mode))
        .with_capabilities(Capabilities {
            exec: false,
            enforces_permissions: true,
        })
}

jig_env::conformance_tests!(fixture);

/// `run_all` walks the same list as the macro.
#[tokio::test]
async fn run_all_runs_every_case() {
    jig_env::conformance::run_all(fixture).await;
}

/// The same suite on a view confined beneath the fixture's directory: inside its roots a view
/// keeps the whole contract.
mod beneath {
    use std::path::PathBuf;
    use std::sync::Arc;

    use jig_env::conformance::Fixture;

    async fn fixture() -> Fixture {
        let mut fixture = super::fixture().await;
        fixture.env = match Arc::clone(&fixture.env).beneath(&[PathBuf::from("/work/root")]) {
            Ok(view) => view,
            Err(error) => panic!("opening the view: {error}"),
        };
        fixture.confined()
    }

    jig_env::conformance_tests!(fixture);
}
