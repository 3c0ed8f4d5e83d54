//! jig's agent loop: a conversation with a model that calls tools.
//!
//! - [`Agent`] holds the conversation; [`Agent::run`] sends a prompt and loops — stream the
//!   reply through the [`Provider`](jig_llm::Provider), run its tool calls from the
//!   [`ToolRegistry`](jig_tool::ToolRegistry), append the results in call order — until the model
//!   stops calling tools, [`AgentConfig::max_turns`] is reached, a request fails, or the run is
//!   cancelled. [`RunOutcome`] says how it ended.
//! - Tool calls: an unknown tool answers `Tool <name> not found`; arguments are validated by the
//!   tool contract; [`ToolHooks`](jig_tool::ToolHooks) (`before_tool_call` may block or change
//!   arguments, `after_tool_call` may replace the result) are how hosts and extensions plug in;
//!   each call's [`ToolContext`](jig_tool::ToolContext) names it (the model's call id and the
//!   tool, [`CallInfo`](jig_tool::CallInfo)). Calls of one reply run concurrently unless one
//!   of their tools is sequential. A reply cut by the output-token limit runs none of its calls. Cancelling the run cancels running tools, and
//!   every call still gets its result.
//! - [`TurnHooks`]: messages queued while the run goes on (steering before the next request,
//!   follow-ups when it would end), the messages and tools each request sends, finished
//!   messages replaced before they are kept, compactions cancelled.
//! - [`AgentEvent`]s go to an [`AgentObserver`] (the JSON output mode, sessions, extensions).
//! - [`compaction`]: when the last request nears the model's context window (or the provider
//!   refuses it as too long), the older turns are summarised by the model and replaced by the
//!   summary in what the model is sent; tool calls are never separated from their results.
//! - [`session`]: conversations as append-only JSONL files with id/parent links;
//!   [`system_prompt`]: the default system prompt.
//!
//! This crate picks no provider, environment or tool set: the `jig` binary composes them.

mod agent;
pub mod compaction;
mod config;
mod event;
mod execute;
mod hooks;
mod recorder;
pub mod session;
pub mod system_prompt;

pub use agent::{Agent, CompactError, ReplyError, RunOutcome};
pub use config::{ABORTED_TEXT, AgentConfig};
pub use event::{
    AgentEvent, AgentObserver, ModelUsage, NoObserver, RunEnd, total_cost, usage_by_model,
};
pub use execute::{truncated_call_text, unknown_tool_text};
pub use hooks::TurnHooks;
pub use recorder::SessionRecorder;
pub use session::{CustomEndpoint, Session, SessionError, SessionStore};
