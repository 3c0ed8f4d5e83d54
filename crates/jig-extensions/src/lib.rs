//! jig's extension runtime: loaded extensions in load order, each event's fold rule, the load
//! and bound phases, and extension tools as registry tools.
//!
//! - [`ExtensionRunner`] owns the extensions in load order and implements every event's fold
//!   rule once: [`project_trust`](ExtensionRunner::project_trust) (first decisive answer),
//!   [`tool_call`](ExtensionRunner::tool_call) (first block wins, failures block, replaced input
//!   seen by later handlers), [`tool_result`](ExtensionRunner::tool_result) (chained patches),
//!   [`input`](ExtensionRunner::input) (transform chain, first `handled`),
//!   [`before_agent_start`](ExtensionRunner::before_agent_start),
//!   [`context`](ExtensionRunner::context), [`message_end`](ExtensionRunner::message_end),
//!   [`session_before`](ExtensionRunner::session_before) and
//!   [`notify`](ExtensionRunner::notify). With no subscriber an emit returns at once.
//! - [`ExtensionHandle`] is how the runner reaches one extension; three implementations:
//!   [`InProcessExtension`] (Rust closures), [`ProcessExtension`] (a long-lived process speaking
//!   JSON-RPC 2.0 over stdio, full duplex) and [`HookExtension`] (one process per event).
//! - Loading: [`load_process`], [`load_executable`], [`load_manifest_dir`] (`extension.toml`),
//!   [`load_index_dir`] (`index.*` run by a known runtime). Failures are [`LoadError`]s:
//!   `Failed to load extension "<path>": <reason>`, printed with [`LOAD_ERROR_HINT`].
//! - Phases: while loading, an extension may only register; any action call is answered with
//!   [`NOT_INITIALIZED`]. [`ExtensionRunner::bind`] connects an [`ExtensionHost`] (the session's
//!   actions) and applies queued provider registrations. Before that,
//!   [`ExtensionRunner::apply_flag_values`] checks the command line's flag values against the
//!   registered flags and gives each extension its own (in the `bind` notification and through
//!   `getFlag`).
//! - [`ExtensionTool`]: an extension's tool as a `jig_tool::DynTool`, validated and bounded like
//!   a built-in; a `tool_result` handler's rewrite is bounded the same way (text by
//!   `jig-truncate`'s default limits, [`MAX_RESULT_IMAGE_BYTES`], [`MAX_RESULT_DETAILS_BYTES`]).
//! - Processes: extension processes and command hooks are started like `bash` commands
//!   (`jig-process`: own session, `JIG_EXEC_TAG`, the watchdog), so stopping one ends
//!   everything it started and nothing it started outlives jig.
//!
//! The wire protocol is documented in `docs/extensions.md`. This crate does not discover
//! extensions or decide project trust; it runs what it is given. Extensions run with the
//! user's permissions: this is no sandbox.
//!
//! ```ignore
//! let options = LoadOptions::new(cwd);
//! let mut runner = ExtensionRunner::default();
//! runner.add(load_manifest_dir(&dir, &options).await?)?;
//! runner.bind(host).await;
//! match runner.tool_call("call-1", "bash", &json!({"command": "rm -rf /"})).await {
//!     ToolCallOutcome::Block { reason } => { /* an error result for the model */ }
//!     ToolCallOutcome::Allow { input } => { /* run, with `input` if replaced */ }
//! }
//! ```
#![expect(
    clippy::disallowed_methods,
    reason = "host I/O: extension processes, hooks and manifests are host configuration"
)]

mod error;
mod handle;
mod hook;
mod host;
mod in_process;
mod lines;
mod loader;
mod options;
mod pi;
mod process;
mod registration;
mod runner;
mod spawn;
mod tool;

pub use error::{
    ActionError, ExtensionError, HandlerError, LOAD_ERROR_HINT, LoadError, NOT_INITIALIZED,
};
pub use handle::{ExtensionHandle, ToolInvocation};
pub use hook::{HOOK_MAX_STDOUT_BYTES, HookExtension};
pub use host::{
    ExtensionHost, RecordedAction, RecordingHost, SendMessage, SessionInfo, SessionRequest,
    UiRequest,
};
pub use in_process::{BoxFuture, HandlerContext, InProcessExtension};
pub use lines::MAX_LINE_BYTES;
pub use loader::{
    MANIFEST_FILE, Manifest, ManifestError, index_runtime, load_executable, load_index_dir,
    load_manifest_dir, load_process, parse_manifest,
};
pub use options::{DEFAULT_INITIALIZE_TIMEOUT, LoadOptions};
pub use pi::{
    PI_HOST_FILES, PI_HOST_NODE_MAJOR, PI_HOST_SCRIPT, PiHostNotInstalled, load_pi, locate_pi_host,
    pi_host_candidates, pi_host_install_dir,
};
pub use process::ProcessExtension;
pub use registration::{
    CommandRegistration, FlagRegistration, PROTOCOL_VERSION, RegistrationError, Registrations,
    ToolRegistration, events,
};
pub use runner::{
    BeforeAgentStart, CustomMessage, ExtensionRunner, FlagValueError, InputOutcome,
    RegisteredCommand, SessionBeforeOutcome, Timeouts, ToolCallOutcome, TrustAnswer, TrustOutcome,
};
pub use tool::{ExtensionTool, MAX_RESULT_DETAILS_BYTES, MAX_RESULT_IMAGE_BYTES};
