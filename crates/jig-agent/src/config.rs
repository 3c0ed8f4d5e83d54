//! [`AgentConfig`]: what one agent is made of.

use std::sync::Arc;

use jig_llm::{ModelTable, Provider, RetryPolicy, ThinkingLevel, ToolDefinition};
use jig_tool::{NoHooks, ToolContext, ToolHooks, ToolRegistry};

use crate::compaction::CompactionConfig;
use crate::hooks::TurnHooks;

/// The text of an aborted reply's `errorMessage` and of results of calls cut by an abort.
pub const ABORTED_TEXT: &str = "Operation aborted";

/// Everything one agent needs: the model, the prompt, the tools and how they run.
#[derive(Clone)]
pub struct AgentConfig {
    /// The model API.
    pub provider: Arc<dyn Provider>,
    /// The model id.
    pub model: String,
    /// The system prompt sent with every request.
    pub system_prompt: String,
    /// The tools the model may call (all of them are offered).
    pub tools: ToolRegistry,
    /// The context every call runs with; each call gets a clone whose `cancel` is a child of
    /// the run's token and whose `updates` feed [`crate::AgentEvent::ToolExecutionUpdate`].
    pub tool_context: ToolContext,
    /// Hooks around each call.
    pub hooks: Arc<dyn ToolHooks>,
    /// Hooks around each model request and finished message.
    pub turn_hooks: Arc<dyn TurnHooks>,
    /// The most model requests one run may make; `None` means no limit.
    pub max_turns: Option<u32>,
    /// Requested reasoning effort.
    pub thinking: ThinkingLevel,
    /// Output-token limit per reply; `None` uses the provider's default.
    pub max_output_tokens: Option<u32>,
    /// How often a reply whose stream failed before any content (an overloaded or rate-limited
    /// server, a broken connection) is requested again, and how long to wait in between.
    pub stream_retry: RetryPolicy,
    /// Whether failed model requests are retried at all (the provider's policy for requests,
    /// `stream_retry` for streams); `false` ends the turn at the first failure.
    pub auto_retry: bool,
    /// When the conversation is compacted; `None` never compacts (an overflow error then ends
    /// the run).
    pub compaction: Option<CompactionConfig>,
    /// The models' prices, for the cost reported at the end of a run.
    pub models: Arc<ModelTable>,
}

impl AgentConfig {
    /// A configuration with no hooks, no turn limit, thinking off and default output limit.
    pub fn new(
        provider: Arc<dyn Provider>,
        model: impl Into<String>,
        system_prompt: impl Into<String>,
        tools: ToolRegistry,
        tool_context: ToolContext,
    ) -> Self {
        Self {
            provider,
            model: model.into(),
            system_prompt: system_prompt.into(),
            tools,
            tool_context,
            hooks: Arc::new(NoHooks),
            turn_hooks: Arc::new(NoHooks),
            max_turns: None,
            thinking: ThinkingLevel::Off,
            max_output_tokens: None,
            stream_retry: RetryPolicy::default(),
            auto_retry: true,
            compaction: None,
            models: Arc::new(ModelTable::builtin()),
        }
    }

    /// The tool definitions sent to the model.
    pub fn tool_definitions(&self) -> Vec<ToolDefinition> {
        self.tools
            .iter()
            .map(|tool| ToolDefinition {
                name: tool.name().to_owned(),
                description: tool.description(),
                input_schema: tool.input_schema().clone(),
            })
            .collect()
    }
}

impl std::fmt::Debug for AgentConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentConfig")
            .field("provider", &self.provider.name())
            .field("model", &self.model)
            .field("tools", &self.tools.names())
            .field("max_turns", &self.max_turns)
            .field("thinking", &self.thinking)
            .finish_non_exhaustive()
    }
}
