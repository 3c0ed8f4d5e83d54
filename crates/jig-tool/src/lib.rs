//! jig's tool contract: how a tool is described to a model, validated and run.
//!
//! - [`Tool`]: a typed tool (an `Input` type whose JSON Schema the model sees, a `Details` type
//!   whose schema hosts see, and `call` returning a [`ToolOutput`]).
//!   [`ErasedTool`] turns it into a [`DynTool`], the object-safe form hosts hold as
//!   `Arc<dyn DynTool>`; validation against the precompiled schema happens there, once per call.
//! - [`ToolRegistry`]: the tools a host offers.
//! - [`ToolContext`]: what a call may use — the `ExecutionEnv`, cwd, [`Containment`],
//!   cancellation, an update sink, session variables, the [`MutationQueue`] and which call it
//!   is ([`CallInfo`]).
//! - [`ToolHooks`]: the hooks around every call, whoever dispatches it (`before_tool_call` may
//!   block it, change its arguments or its context; `after_tool_call` may replace its result);
//!   [`with_hooks`] runs a registry's tools through them for hosts without an agent loop.
//! - [`schema`]: the portable form of input schemas every client accepts, and checks against
//!   OpenAI's strict and Gemini's subsets.
//! - [`paths`]: turning what a model wrote into a path, and refusing paths outside the roots.
//! - [`ToolError`]: what the model sees as an error result versus what ends a turn.
//!
//! Tools reach the world only through `jig_env::ExecutionEnv`; this crate never names a concrete
//! env. The built-in tools live in `jig-tool-builtins`.
//!
//! ```
//! use jig_tool::{ToolRegistry, ToolError};
//! let registry = ToolRegistry::new();
//! assert!(registry.get("read").is_none());
//! assert!(ToolError::failed("Path not found: x").is_for_model());
//! ```

/// The metadata methods of a [`DynTool`] that wraps another one in `self.inner` and changes
/// only how a call runs (audit records, extension hooks, a rerun question): write
/// `jig_tool::delegate_tool_metadata!();` inside the `impl DynTool`.
#[macro_export]
macro_rules! delegate_tool_metadata {
    () => {
        fn name(&self) -> &str {
            self.inner.name()
        }
        fn title(&self) -> &str {
            self.inner.title()
        }
        fn description(&self) -> String {
            self.inner.description()
        }
        fn input_schema(&self) -> &serde_json::Value {
            self.inner.input_schema()
        }
        fn details_schema(&self) -> &serde_json::Value {
            self.inner.details_schema()
        }
        fn effects(&self) -> $crate::Effects {
            self.inner.effects()
        }
        fn sequential(&self) -> bool {
            self.inner.sequential()
        }
    };
}

mod context;
mod error;
mod hooks;
mod mutation_queue;
pub mod paths;
mod registry;
pub mod schema;
mod tool;
mod validate;

pub use context::{CallInfo, Containment, ContainmentMode, ToolContext, UpdateSink};
pub use error::ToolError;
pub use hooks::{BLOCKED_TEXT, BeforeToolCall, NoHooks, ToolHooks, blocked_text, with_hooks};
pub use jig_protocol::{ContentBlock, ToolResult};
pub use mutation_queue::{MutationGuard, MutationQueue};
pub use registry::ToolRegistry;
pub use tool::{DynTool, Effects, ErasedTool, Tool, ToolOutput};
pub use validate::{ArgumentValidator, SchemaError};
