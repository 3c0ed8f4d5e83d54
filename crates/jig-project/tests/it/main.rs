//! jig-project against real directories: the trust chain step by step, the trust store under
//! concurrent writers, and extension discovery.
#![expect(
    clippy::disallowed_methods,
    clippy::unwrap_used,
    reason = "tests set up real files on the host and fail loudly"
)]

mod discovery;
mod snapshot;
mod store;
mod trust_chain;
