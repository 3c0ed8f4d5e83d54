use std::fmt;
use std::future::Future;
use std::sync::Arc;

use async_trait::async_trait;
use jig_protocol::{ContentBlock, ToolResult};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::ToolContext;
use crate::error::ToolError;
use crate::validate::ArgumentValidator;

/// What a tool may do to the world; MCP annotations and read-only modes derive from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effects {
    /// Only reads (read, grep, find, ls).
    ReadOnly,
    /// Changes files (write, edit).
    Mutates,
    /// Runs arbitrary processes (bash): may change anything, may reach the network.
    Process,
}

impl Effects {
    /// True for tools that change nothing.
    pub fn is_read_only(self) -> bool {
        self == Self::ReadOnly
    }
}

/// What a typed tool's call returns: the content a model reads, the tool's typed details, and
/// whether the call failed. [`ErasedTool`] serialises it into a [`ToolResult`].
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput<D> {
    /// Blocks the model reads, in order.
    pub content: Vec<ContentBlock>,
    /// The tool's details; hosts receive them as `ToolResult::details`.
    pub details: D,
    /// True when the call failed; the content then explains why.
    pub is_error: bool,
}

impl<D> ToolOutput<D> {
    /// A successful output with one text block.
    pub fn text(text: impl Into<String>, details: D) -> Self {
        Self {
            content: vec![ContentBlock::text(text)],
            details,
            is_error: false,
        }
    }

    /// The same output marked as failed (or not).
    #[must_use]
    pub fn with_error(mut self, is_error: bool) -> Self {
        self.is_error = is_error;
        self
    }
}

impl<D: Serialize> ToolOutput<D> {
    /// The untyped result hosts hold. Details that serialise to nothing (`()`) become `null`.
    pub fn into_result(self) -> Result<ToolResult, ToolError> {
        let details = serde_json::to_value(&self.details).map_err(|error| {
            ToolError::Fatal(format!("details could not be serialised: {error}"))
        })?;
        Ok(ToolResult {
            content: self.content,
            details,
            is_error: self.is_error,
        })
    }
}

/// A typed tool. Implement this; the registry erases it to [`DynTool`].
///
/// The `Input` type's JSON Schema (from schemars; doc comments become descriptions) is what the
/// model sees as the tool's parameters, with camelCase field names. The `Details` type is the
/// wire contract of the result's `details` (MCP `_meta`, `jig tool --json`, sessions); its schema
/// is published next to the input schema ([`DynTool::details_schema`]).
pub trait Tool: Send + Sync + 'static {
    /// The wire name (`read`, `edit`, …).
    const NAME: &'static str;
    /// The arguments, deserialised after validation.
    type Input: DeserializeOwned + JsonSchema + Send;
    /// The structured details of a result (`()` for none).
    type Details: Serialize + JsonSchema + Send;

    /// A short human-readable title (`Read file`).
    fn title(&self) -> &'static str;

    /// The description a model reads: what the tool does, its limits and how to use it well.
    fn description(&self) -> String;

    /// What the tool may do to the world.
    fn effects(&self) -> Effects;

    /// True when calls to this tool must not run concurrently with other calls in one reply.
    fn sequential(&self) -> bool {
        false
    }

    /// Rewrites legacy argument shapes before validation (edit accepts older forms).
    fn prepare_arguments(&self, args: Value) -> Value {
        args
    }

    /// Runs one call.
    fn call(
        &self,
        ctx: &ToolContext,
        input: Self::Input,
    ) -> impl Future<Output = Result<ToolOutput<Self::Details>, ToolError>> + Send;
}

/// The object-safe form of a tool, as hosts (CLI, agent loop, MCP server) hold it.
#[async_trait]
pub trait DynTool: Send + Sync + fmt::Debug {
    /// The wire name.
    fn name(&self) -> &str;
    /// A short human-readable title.
    fn title(&self) -> &str;
    /// The description a model reads.
    fn description(&self) -> String;
    /// The JSON Schema of the arguments.
    fn input_schema(&self) -> &Value;
    /// The JSON Schema of a result's `details` (same portable form as the input schema).
    fn details_schema(&self) -> &Value;
    /// What the tool may do.
    fn effects(&self) -> Effects;
    /// Whether calls must run one at a time.
    fn sequential(&self) -> bool;

    /// Validates `args` (once, against the precompiled schema; numeric strings are accepted for
    /// numbers) and runs the call. Invalid arguments are [`ToolError::InvalidInput`] listing each
    /// problem and echoing what was received.
    async fn execute(&self, ctx: &ToolContext, args: Value) -> Result<ToolResult, ToolError>;

    /// `execute`, with every error turned into an `isError` result.
    async fn run(&self, ctx: &ToolContext, args: Value) -> ToolResult {
        match self.execute(ctx, args).await {
            Ok(result) => result,
            Err(error) => error.into_result(),
        }
    }
}

/// A typed [`Tool`] erased to [`DynTool`], with its schema compiled once.
pub struct ErasedTool<T: Tool> {
    tool: T,
    validator: ArgumentValidator,
    details_schema: Value,
}

impl<T: Tool> ErasedTool<T> {
    /// Erases `tool`, generating and compiling its schema.
    pub fn new(tool: T) -> Self {
        let validator = ArgumentValidator::for_type::<T::Input>();
        let details_schema = crate::schema::for_type::<T::Details>();
        Self {
            tool,
            validator,
            details_schema,
        }
    }

    /// Erases `tool` into a shareable handle.
    pub fn shared(tool: T) -> Arc<dyn DynTool> {
        Arc::new(Self::new(tool))
    }

    /// The typed tool inside.
    pub fn inner(&self) -> &T {
        &self.tool
    }
}

impl<T: Tool> fmt::Debug for ErasedTool<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ErasedTool")
            .field("name", &T::NAME)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl<T: Tool> DynTool for ErasedTool<T> {
    fn name(&self) -> &str {
        T::NAME
    }
    fn title(&self) -> &str {
        self.tool.title()
    }
    fn description(&self) -> String {
        self.tool.description()
    }
    fn input_schema(&self) -> &Value {
        self.validator.schema()
    }
    fn details_schema(&self) -> &Value {
        &self.details_schema
    }
    fn effects(&self) -> Effects {
        self.tool.effects()
    }
    fn sequential(&self) -> bool {
        self.tool.sequential()
    }

    async fn execute(&self, ctx: &ToolContext, args: Value) -> Result<ToolResult, ToolError> {
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let args = self.tool.prepare_arguments(args);
        let input: T::Input = self.validator.validate(T::NAME, args)?;
        self.tool.call(ctx, input).await?.into_result()
    }
}
