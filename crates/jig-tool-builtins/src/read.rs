//! The `read` tool (being written).

use jig_protocol::ToolResult;
use jig_tool::{Effects, Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::config::ReadConfig;

/// Placeholder input of `read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadInput {
    /// Path, relative to the workspace.
    pub path: Option<String>,
}

/// The `read` tool.
#[derive(Debug, Clone, Default)]
pub struct ReadTool {
    config: ReadConfig,
}

impl ReadTool {
    /// The tool with `config`.
    pub fn new(config: ReadConfig) -> Self {
        Self { config }
    }
}

impl Tool for ReadTool {
    const NAME: &'static str = "read";
    type Input = ReadInput;

    fn title(&self) -> &'static str {
        "read"
    }

    fn description(&self) -> String {
        "Not implemented yet.".to_owned()
    }

    fn effects(&self) -> Effects {
        Effects::ReadOnly
    }

    async fn call(&self, _ctx: &ToolContext, _input: ReadInput) -> Result<ToolResult, ToolError> {
        let _ = &self.config;
        Err(ToolError::failed("the read tool is not implemented yet"))
    }
}
