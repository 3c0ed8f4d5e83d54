use jig_protocol::ToolResult;

/// Why a tool call did not produce a normal result.
///
/// `InvalidInput` and `Failed` are for the model: they become an error result (`isError: true`)
/// whose text says what was wrong and what to do instead. `Cancelled` and `Fatal` end the turn.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The arguments were wrong; the text says which and how to fix them.
    #[error("{0}")]
    InvalidInput(String),
    /// The tool ran and failed; the text is written for the model.
    #[error("{0}")]
    Failed(String),
    /// The call was cancelled before it finished.
    #[error("Operation aborted")]
    Cancelled,
    /// Something is broken beyond what the model can fix (a bug, a lost environment).
    #[error("{0}")]
    Fatal(String),
}

impl ToolError {
    /// A failure with text for the model.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }

    /// Invalid arguments, with text for the model.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::InvalidInput(message.into())
    }

    /// Whether the model should see this as an error result (rather than the turn ending).
    pub fn is_for_model(&self) -> bool {
        matches!(self, Self::InvalidInput(_) | Self::Failed(_))
    }

    /// The error as an `isError` result carrying its text.
    pub fn into_result(self) -> ToolResult {
        ToolResult::error(self.to_string())
    }
}
