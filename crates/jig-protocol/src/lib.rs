//! Data types shared across jig: what a tool returns, the content blocks a model reads, and the
//! conversation messages ([`Message`]: user, assistant, tool result) the agent loop exchanges.
//!
//! [`EnvVars`] names every environment variable jig reads or sets.
//!
//! This crate holds types only (no I/O, no behaviour beyond constructors), so every other crate —
//! the tool layer, the agent loop, the MCP server — can agree on one wire shape without depending on
//! each other.
//!
//! ```
//! use jig_protocol::{ContentBlock, ToolResult};
//! let result = ToolResult::text("   1│ status: draft");
//! assert!(!result.is_error);
//! assert_eq!(result.text_content(), "   1│ status: draft");
//! let json = serde_json::to_value(&result).unwrap();
//! assert_eq!(json["isError"], false);
//! assert!(matches!(result.content[0], ContentBlock::Text { .. }));
//! ```

mod content;
mod env_vars;
mod messages;

pub use content::{ContentBlock, ToolResult};
pub use env_vars::EnvVars;
pub use messages::{
    AssistantBlock, AssistantMessage, Message, StopReason, ToolCall, ToolResultMessage, Usage,
    UserMessage, now_millis,
};
