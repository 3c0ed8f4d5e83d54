//! The `write` tool (being written).

use jig_protocol::ToolResult;
use jig_tool::{Effects, Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::config::WriteConfig;

/// Placeholder input of `write`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WriteInput {
    /// Path, relative to the workspace.
    pub path: Option<String>,
}

/// The `write` tool.
#[derive(Debug, Clone, Default)]
pub struct WriteTool {
    config: WriteConfig,
}

impl WriteTool {
    /// The tool with `config`.
    pub fn new(config: WriteConfig) -> Self {
        Self { config }
    }
}

impl Tool for WriteTool {
    const NAME: &'static str = "write";
    type Input = WriteInput;

    fn title(&self) -> &'static str {
        "write"
    }

    fn description(&self) -> String {
        "Not implemented yet.".to_owned()
    }

    fn effects(&self) -> Effects {
        Effects::ReadOnly
    }

    async fn call(&self, _ctx: &ToolContext, _input: WriteInput) -> Result<ToolResult, ToolError> {
        let _ = &self.config;
        Err(ToolError::failed("the write tool is not implemented yet"))
    }
}
