//! End-to-end tests of the `jig` binary on temporary directories.
#![expect(
    clippy::disallowed_methods,
    reason = "tests set up real files on the host"
)]

mod acp;
mod audit;
mod concurrency;
mod containment;
mod context_files;
mod docs;
mod env_limits;
mod extension_processes;
mod extension_session;
mod extensions;
mod hardening;
mod help;
mod interactive;
mod mcp;
mod node_clients;
mod permissions;
mod pi_extensions;
mod project_files;
mod remote;
mod rpc;
mod run_cmd;
mod run_compaction;
mod sandbox;
mod serve_memory;
mod skills;
mod support;
mod tool_cmd;
mod trust;
mod trust_race;
