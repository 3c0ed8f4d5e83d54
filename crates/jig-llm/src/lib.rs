//! jig's model providers: a streaming [`Provider`] trait and its HTTP implementations.
//!
//! - [`Provider`] sends a [`ModelRequest`] (system prompt, [`Message`](jig_protocol::Message)s,
//!   [`ToolDefinition`]s, [`ThinkingLevel`]) and streams [`StreamEvent`]s: text, thinking and
//!   tool-call argument deltas, usage, and the stop reason. [`MessageBuilder`] assembles them
//!   into an [`AssistantMessage`](jig_protocol::AssistantMessage).
//! - [`OpenAiProvider`]: OpenAI Chat Completions (OpenAI, OpenRouter, vLLM, llama.cpp, Ollama,
//!   LM Studio). [`AnthropicProvider`]: Anthropic Messages. Both stream over SSE, send images in
//!   user messages and tool results, request reasoning where the API has it, and retry rate
//!   limits and server errors with backoff ([`RetryPolicy`]). A connect timeout and an idle
//!   timeout (no bytes for too long, before or during the stream) end a request with
//!   [`LlmError::Timeout`].
//! - [`prepare_messages`] repairs a conversation before sending (every tool call answered).
//! - [`KNOWN_PROVIDERS`]: names, default endpoints and API-key variables.
//! - [`ModelTable`]: known models' context windows and prices (built in, dated
//!   [`PRICES_TAKEN`], extended or overridden by the host); [`ModelCost::of`] prices a
//!   [`Usage`](jig_protocol::Usage).
//! - Feature `test-support`: [`ScriptedProvider`](scripted::ScriptedProvider) and a local
//!   [`ReplayServer`](testing::ReplayServer) replaying recorded SSE.
//!
//! This crate does not run tools or loops (that is `jig-agent`) and reads no environment
//! variables: the caller resolves API keys.

mod anthropic;
mod builder;
mod config;
mod error;
mod http;
mod models;
mod openai;
mod provider;
mod retry;
mod transcript;

#[cfg(feature = "test-support")]
pub mod scripted;
#[cfg(feature = "test-support")]
pub mod testing;

pub use anthropic::{ANTHROPIC_VERSION, AnthropicMessages, AnthropicProvider};
pub use builder::MessageBuilder;
pub use config::{
    Api, DEFAULT_CONNECT_TIMEOUT, DEFAULT_IDLE_TIMEOUT, KNOWN_PROVIDERS, KnownProvider,
    ProviderConfig,
};
pub use error::{LlmError, TimeoutKind};
pub use http::HttpProvider;
pub use models::{Cost, ModelCost, ModelInfo, ModelTable, PRICES_TAKEN};
pub use openai::{OpenAiCompletions, OpenAiProvider};
pub use provider::{
    EventStream, ModelRequest, Provider, RetryHook, RetryNotice, StreamEvent, ThinkingLevel,
    ToolDefinition,
};
pub use retry::RetryPolicy;
pub use transcript::{NO_RESULT_TEXT, prepare_messages};
