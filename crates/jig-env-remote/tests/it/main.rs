//! Integration tests of jig-env-remote: the env conformance suite on `RemoteEnv` over an
//! in-process pipe, over ssh and into a container, and the fault cases (a connection lost
//! mid-write, mid-exec, a server that dies).
#![expect(
    clippy::disallowed_methods,
    reason = "tests set up and inspect the host filesystem and start servers directly"
)]
#![expect(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::similar_names,
    reason = "set-up helpers of tests: a failed step is a failed test; client and served ends"
)]

mod bulk;
mod conformance;
mod faults;
mod race;
mod support;
mod version;
mod warm;
