//! The env conformance suite on `RemoteEnv` over an in-process pipe to the server loop.

use std::sync::Arc;

use jig_env::conformance::Fixture;

async fn fixture() -> Fixture {
    let (env, _server) = crate::support::in_process().await;
    crate::support::local_fixture(Arc::new(env))
}

jig_env::conformance_tests!(fixture);

/// The same suite on a confined view made on the far side.
mod beneath {
    use std::sync::Arc;

    use jig_env::conformance::Fixture;

    async fn fixture() -> Fixture {
        let mut fixture = super::fixture().await;
        let root = std::fs::canonicalize(&fixture.root).expect("canonical root");
        fixture.env = Arc::clone(&fixture.env)
            .beneath(&[root])
            .expect("opening the view");
        fixture.confined()
    }

    jig_env::conformance_tests!(fixture);
}
