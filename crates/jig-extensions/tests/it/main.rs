//! Integration tests of the extension runtime: fold rules, transports, faults, examples.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions unwrap too"
)]

mod examples;
mod faults;
mod folds;
mod hooks;
mod process;
mod support;
