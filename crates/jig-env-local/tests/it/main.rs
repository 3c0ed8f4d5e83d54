//! Integration tests of jig-env-local: the env conformance suite on a temp directory, and
//! host-specific behaviour of `LocalEnv`.
#![expect(
    clippy::disallowed_methods,
    reason = "tests set up and inspect the host filesystem directly"
)]

mod conformance;
mod exec;
mod local_fs;
