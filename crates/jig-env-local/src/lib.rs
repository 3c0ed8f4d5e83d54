//! `LocalEnv`: the host machine's filesystem and processes behind `jig_env::ExecutionEnv` (being written).
#![expect(clippy::disallowed_methods, reason = "this crate is the host I/O backend")]
