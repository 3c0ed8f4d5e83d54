//! The harness every face of jig drives (`jig tool`, `jig mcp`, `jig run`, the interactive
//! session): it opens the environment, decides project trust, reads the settings, loads the
//! extensions, chooses the tools and wraps them, picks the model and opens or resumes the
//! session. A face parses its own input and renders its own output; what happens between is
//! here, once.
//!
//! Modules:
//! - [`workspace`]: the env and the tool context (containment roots, canonical cwd).
//! - [`settings`]: the settings files' typed model (user, then a trusted project's).
//! - [`extensions`]: the loaded extensions at work: their tools, `tool_call`/`tool_result`
//!   around each call, the host side of their actions ([`extensions::SessionHost`]).
//! - [`model`]: which provider and model a session talks to ([`model::resolve`]) and how the
//!   interactive session switches provider.
//! - [`skills`], [`context_files`]: what the system prompt carries.
//! - [`jsonl`]: strict JSONL over stdin and stdout, for the faces a program drives.
//! - [`session_choice`]: the session a run opens (new, resumed, none); [`writer`]: a live
//!   session's writer, for the faces that hold a conversation open.
//! - [`policy`]: permission modes (`read-only`, `ask`, `auto-edit`, `full-auto`), allowlists
//!   by tool and bash command prefix, and [`policy::decide`], the one function that decides
//!   whether a call runs, is asked about or is denied, in every face; [`prefix`]: bash command
//!   prefixes (which is offered, which commands a saved one allows); [`approval`]: that policy
//!   as a `before_tool_call` hook ([`approval::PermissionHooks`]), asking through an
//!   [`approval::Approver`] where a face can ask, denying with a reason the model reads where
//!   it cannot.
//! - [`permissions`]: a project's saved allowlist.
//! - [`chain`]: the one chain of hooks around every tool call, the same in every face: audit,
//!   permissions (where the face has a policy), the extensions' `tool_call`/`tool_result`;
//!   [`audit`]: its `--audit` layer, which records each call and hands the tool the call's view
//!   of the audited env.
//!
//! Errors are [`StartError`]s; warnings go to stderr through [`warn`] with the same text in
//! every face.
#![expect(
    clippy::disallowed_methods,
    reason = "the harness reads the user's settings and the process's cwd on the host, and opens the --audit file"
)]

pub mod approval;
pub mod audit;
pub mod chain;
pub mod context_files;
mod error;
pub mod extensions;
pub mod jsonl;
pub mod model;
pub mod permissions;
pub mod policy;
pub mod prefix;
pub mod print;
pub mod project;
pub mod sandbox;
pub mod session_choice;
pub mod settings;
pub mod skills;
pub mod startup;
pub mod workspace;
pub mod writer;

pub use error::{StartError, note, warn};
