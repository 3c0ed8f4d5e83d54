//! Integration tests of the warm index.
#![expect(
    clippy::disallowed_methods,
    reason = "the tests change the host tree the index watches, as other programs would"
)]
#![expect(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup step fails the test"
)]

#[cfg(target_os = "linux")]
mod conformance;
#[cfg(target_os = "linux")]
mod differential;
