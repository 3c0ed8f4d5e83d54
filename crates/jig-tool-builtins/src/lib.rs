//! jig's built-in tools — `read`, `write`, `edit`, `grep`, `find`, `ls` and `bash` — one module
//! per tool.
//!
//! Each tool is a typed [`jig_tool::Tool`] whose `Input` doc comment is the description a model
//! reads, and whose `Details` type ([`details`]) is the structured part of its results, with its
//! schema published beside the input schema. Env failures reach the model through one mapping
//! (`failure`), whatever the tool. Hosts (the `jig` CLI, the MCP server, the agent loop) build a registry with
//! [`builtin_registry`] or add the tools to their own with [`register_builtins`], configured by a
//! [`BuiltinsConfig`] (page limits and the like; `BuiltinsConfig::default()` is what jig ships).
//!
//! ```ignore
//! let registry = jig_tool_builtins::builtin_registry(&BuiltinsConfig::default());
//! let result = registry.get("read").unwrap().run(&ctx, json!({"path": "task.txt"})).await;
//! ```
//!
//! The tools reach files only through the [`jig_env::ExecutionEnv`] in the
//! [`ToolContext`](jig_tool::ToolContext); they never name a concrete env, resolve every path
//! with [`jig_tool::paths`] (workspace containment included) and serialise file mutations through
//! the context's mutation queue.
//!
//! With the feature `test-support`, `test_support` has the tables the tests of the tools and of
//! the `jig` binary share (the file tools every containment test runs).

mod bash;
mod bom;
mod cancel;
mod config;
pub mod details;
mod edit;
mod failure;
mod find;
mod grep;
mod image;
mod ls;
mod read;
mod search_root;
#[cfg(feature = "test-support")]
pub mod test_support;
mod write;

use jig_tool::{ErasedTool, ToolRegistry};

pub use bash::{
    BashConfig, BashInput, BashTool, CommandGuard, DEFAULT_BASH_MAX_TIMEOUT, DEFAULT_BASH_TIMEOUT,
    DEFAULT_FULL_OUTPUT_MAX_BYTES, DEFAULT_FULL_OUTPUTS_TOTAL_MAX_BYTES, SESSION_VARIABLES,
    SharedSpawnHook, SpawnHook, SpawnRequest,
};
pub use config::{
    BuiltinsConfig, DEFAULT_LS_LIMIT, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, LsConfig, ReadConfig,
    WriteConfig,
};
pub use edit::{EditInput, EditOperation, EditTool};
pub use find::{DEFAULT_FIND_LIMIT, FindConfig, FindInput, FindTool};
pub use grep::{DEFAULT_GREP_LIMIT, GREP_MAX_LINE_CHARS, GrepConfig, GrepInput, GrepTool};
pub use image::{
    DEFAULT_IMAGE_MAX_BASE64_BYTES, DEFAULT_IMAGE_MAX_DIMENSION, ImageConfig, ImageKind,
    ImageOutcome, image_dimensions, process_image, sniff_image,
};
pub use ls::{LsInput, LsTool};
pub use read::{ReadInput, ReadTool};
pub use write::{WriteInput, WriteTool};

/// Adds every built-in tool to `registry`, configured by `config`, in the order a model sees
/// them.
pub fn register_builtins(registry: &mut ToolRegistry, config: &BuiltinsConfig) {
    registry.register(ErasedTool::shared(ReadTool::new(config.read.clone())));
    registry.register(ErasedTool::shared(WriteTool::new(config.write.clone())));
    registry.register(ErasedTool::shared(EditTool::new()));
    registry.register(ErasedTool::shared(GrepTool::new(config.grep.clone())));
    registry.register(ErasedTool::shared(FindTool::new(config.find.clone())));
    registry.register(ErasedTool::shared(LsTool::new(config.ls.clone())));
    registry.register(ErasedTool::shared(BashTool::new(config.bash.clone())));
}

/// A registry holding every built-in tool.
pub fn builtin_registry(config: &BuiltinsConfig) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    register_builtins(&mut registry, config);
    registry
}
