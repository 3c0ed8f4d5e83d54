//! The `ls` tool (being written).

use jig_protocol::ToolResult;
use jig_tool::{Effects, Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::config::LsConfig;

/// Placeholder input of `ls`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LsInput {
    /// Path, relative to the workspace.
    pub path: Option<String>,
}

/// The `ls` tool.
#[derive(Debug, Clone, Default)]
pub struct LsTool {
    config: LsConfig,
}

impl LsTool {
    /// The tool with `config`.
    pub fn new(config: LsConfig) -> Self {
        Self { config }
    }
}

impl Tool for LsTool {
    const NAME: &'static str = "ls";
    type Input = LsInput;

    fn title(&self) -> &'static str {
        "ls"
    }

    fn description(&self) -> String {
        "Not implemented yet.".to_owned()
    }

    fn effects(&self) -> Effects {
        Effects::ReadOnly
    }

    async fn call(&self, _ctx: &ToolContext, _input: LsInput) -> Result<ToolResult, ToolError> {
        let _ = &self.config;
        Err(ToolError::failed("the ls tool is not implemented yet"))
    }
}
