//! Provider tests against a local server replaying recorded SSE streams (no network).
#![expect(
    clippy::disallowed_methods,
    reason = "tests read their fixtures from the host"
)]

mod anthropic;
mod openai;
mod retry;

use std::path::Path;
use std::time::Duration;

use futures::StreamExt;
use jig_llm::testing::{ReplayResponse, ReplayServer};
use jig_llm::{
    AnthropicProvider, LlmError, MessageBuilder, ModelRequest, OpenAiProvider, Provider,
    ProviderConfig, RetryPolicy, ThinkingLevel, ToolDefinition,
};
use jig_protocol::{AssistantMessage, Message};
use tokio_util::sync::CancellationToken;

fn fixture(provider: &str, name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(provider)
        .join(format!("{name}.sse"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        max_retries: 2,
        initial_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(50),
    }
}

fn config(name: &str, server: &ReplayServer, suffix: &str) -> ProviderConfig {
    let mut config = ProviderConfig::new(
        name,
        format!("{}{suffix}", server.url()),
        Some("sk-test".into()),
    );
    config.retry = fast_retry();
    config
}

fn openai(server: &ReplayServer) -> OpenAiProvider {
    OpenAiProvider::new(config("openai", server, "/v1"))
}

fn anthropic(server: &ReplayServer) -> AnthropicProvider {
    AnthropicProvider::new(config("anthropic", server, ""))
}

fn request(messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        model: "test-model".into(),
        system_prompt: "You are a test.".into(),
        messages,
        tools: vec![ToolDefinition {
            name: "read".into(),
            description: "Read a file.".into(),
            input_schema: serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
        thinking: ThinkingLevel::Off,
        max_output_tokens: None,
        on_retry: None,
        retry: true,
    }
}

/// Streams one reply; on a stream error returns the partial message with the error.
async fn collect(
    provider: &dyn Provider,
    request: ModelRequest,
) -> Result<AssistantMessage, (AssistantMessage, LlmError)> {
    let mut builder = MessageBuilder::new(provider.name(), &request.model);
    let mut stream = match provider.stream(request, CancellationToken::new()).await {
        Ok(stream) => stream,
        Err(error) => return Err((builder.finish(), error)),
    };
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => builder.apply(&event),
            Err(error) => return Err((builder.finish(), error)),
        }
    }
    assert!(builder.is_stopped(), "stream ended without a stop event");
    let mut message = builder.finish();
    message.timestamp = 0;
    Ok(message)
}

async fn serve(responses: Vec<ReplayResponse>) -> ReplayServer {
    ReplayServer::start(responses)
        .await
        .unwrap_or_else(|e| panic!("replay server: {e}"))
}
