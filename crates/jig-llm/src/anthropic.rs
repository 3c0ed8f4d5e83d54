//! Anthropic Messages with streaming (`stream: true`).

use std::collections::HashSet;

use eventsource_stream::Event;
use jig_protocol::{AssistantBlock, ContentBlock, Message, StopReason, Usage};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};

use crate::config::ProviderConfig;
use crate::error::LlmError;
use crate::http::{HttpProvider, SseParser, Wire, error_message, key_header};
use crate::provider::{ModelRequest, StreamEvent, ThinkingLevel};
use crate::transcript::prepare_messages;

/// The API version header sent with every request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Output-token limit when the request sets none (and thinking is off).
const DEFAULT_MAX_TOKENS: u32 = 8192;

/// The Anthropic Messages protocol.
#[derive(Debug)]
pub struct AnthropicMessages;

/// A provider speaking Anthropic Messages.
pub type AnthropicProvider = HttpProvider<AnthropicMessages>;

impl Wire for AnthropicMessages {
    type Parser = EventParser;
    const PATH: &'static str = "/v1/messages";

    fn headers(config: &ProviderConfig) -> Result<HeaderMap, LlmError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        if let Some(key) = &config.api_key {
            headers.insert(HeaderName::from_static("x-api-key"), key_header(key)?);
        }
        Ok(headers)
    }

    /// The JSON body sent for `request`.
    fn request_body(_config: &ProviderConfig, request: &ModelRequest) -> Value {
        let budget = match request.thinking {
            ThinkingLevel::Off => None,
            ThinkingLevel::Low => Some(2048u32),
            ThinkingLevel::Medium => Some(8192),
            ThinkingLevel::High => Some(24576),
        };
        let max_tokens = match (request.max_output_tokens, budget) {
            (Some(max), _) => max,
            (None, Some(budget)) => budget + DEFAULT_MAX_TOKENS,
            (None, None) => DEFAULT_MAX_TOKENS,
        };
        let mut body = json!({
            "model": request.model,
            "max_tokens": max_tokens,
            "messages": convert_messages(&prepare_messages(&request.messages)),
            "stream": true,
        });
        if !request.system_prompt.is_empty() {
            body["system"] = json!(request.system_prompt);
        }
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|tool| {
                    json!({
                        "name": tool.name,
                        "description": tool.description,
                        "input_schema": tool.input_schema,
                    })
                })
                .collect();
        }
        if let Some(budget) = budget {
            // The budget must stay below max_tokens; the API rejects anything under 1024.
            let budget = budget.min(max_tokens.saturating_sub(1024)).max(1024);
            body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
        }
        body
    }
}

fn content_blocks(blocks: &[ContentBlock]) -> Vec<Value> {
    blocks
        .iter()
        .filter(|block| !matches!(block, ContentBlock::Text { text } if text.is_empty()))
        .map(|block| match block {
            ContentBlock::Text { text } => json!({"type": "text", "text": text}),
            ContentBlock::Image { data, mime_type } => json!({
                "type": "image",
                "source": {"type": "base64", "media_type": mime_type, "data": data},
            }),
        })
        .collect()
}

/// Messages API turns for a (prepared) conversation: tool results become `tool_result` blocks
/// of one user turn per run of results.
fn convert_messages(messages: &[Message]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    let mut results: Vec<Value> = Vec::new();
    for message in messages {
        if !matches!(message, Message::ToolResult(_)) && !results.is_empty() {
            out.push(json!({"role": "user", "content": std::mem::take(&mut results)}));
        }
        match message {
            Message::User(user) => {
                let mut content = content_blocks(&user.content);
                if content.is_empty() {
                    content.push(json!({"type": "text", "text": "(empty message)"}));
                }
                out.push(json!({"role": "user", "content": content}));
            }
            Message::Assistant(reply) => {
                let content: Vec<Value> = reply
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        AssistantBlock::Text { text } if text.is_empty() => None,
                        AssistantBlock::Text { text } => Some(json!({"type": "text", "text": text})),
                        AssistantBlock::Thinking { thinking, signature: Some(signature) } => {
                            Some(json!({"type": "thinking", "thinking": thinking, "signature": signature}))
                        }
                        // Unsigned reasoning (from another provider) cannot be replayed as thinking.
                        AssistantBlock::Thinking { thinking, signature: None } if !thinking.is_empty() => {
                            Some(json!({"type": "text", "text": format!("<thinking>\n{thinking}\n</thinking>")}))
                        }
                        AssistantBlock::Thinking { .. } => None,
                        AssistantBlock::ToolCall(call) => Some(json!({
                            "type": "tool_use",
                            "id": call.id,
                            "name": call.name,
                            "input": if call.arguments.is_object() { call.arguments.clone() } else { json!({}) },
                        })),
                    })
                    .collect();
                if !content.is_empty() {
                    out.push(json!({"role": "assistant", "content": content}));
                }
            }
            Message::ToolResult(result) => {
                let mut content = content_blocks(&result.content);
                if content.is_empty() {
                    content.push(json!({"type": "text", "text": "(no output)"}));
                }
                results.push(json!({
                    "type": "tool_result",
                    "tool_use_id": result.tool_call_id,
                    "content": content,
                    "is_error": result.is_error,
                }));
            }
        }
    }
    if !results.is_empty() {
        out.push(json!({"role": "user", "content": results}));
    }
    out
}

/// Parses Messages stream events.
pub(crate) struct EventParser {
    provider: String,
    usage: Usage,
    stop: Option<StopReason>,
    /// Content-block index → tool-call block.
    tool_blocks: HashSet<usize>,
    done: bool,
}

impl EventParser {
    fn read_usage(&mut self, usage: &Value) {
        let field = |name: &str| usage.get(name).and_then(Value::as_u64);
        if let Some(input) = field("input_tokens") {
            self.usage.input = input;
        }
        if let Some(output) = field("output_tokens") {
            self.usage.output = output;
        }
        if let Some(read) = field("cache_read_input_tokens") {
            self.usage.cache_read = read;
        }
        if let Some(write) = field("cache_creation_input_tokens") {
            self.usage.cache_write = write;
        }
    }
}

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "max_tokens" | "model_context_window_exceeded" => StopReason::Length,
        "tool_use" => StopReason::ToolUse,
        "refusal" => StopReason::Error,
        _ => StopReason::Stop,
    }
}

fn index_of(value: &Value) -> usize {
    value
        .get("index")
        .and_then(Value::as_u64)
        .and_then(|i| usize::try_from(i).ok())
        .unwrap_or(0)
}

impl SseParser for EventParser {
    fn new(provider: &str) -> Self {
        Self {
            provider: provider.to_owned(),
            usage: Usage::default(),
            stop: None,
            tool_blocks: HashSet::new(),
            done: false,
        }
    }

    #[expect(
        clippy::too_many_lines,
        reason = "one match over the event kinds of the API"
    )]
    fn event(&mut self, event: &Event) -> Result<Vec<StreamEvent>, LlmError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(Vec::new());
        }
        let value: Value = serde_json::from_str(data).map_err(|error| LlmError::Stream {
            provider: self.provider.clone(),
            message: format!("an event is not JSON ({error}): {}", error_message(data)),
        })?;
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(event.event.as_str());
        let mut events = Vec::new();
        match kind {
            "message_start" => {
                if let Some(usage) = value.pointer("/message/usage") {
                    self.read_usage(usage);
                    events.push(StreamEvent::Usage { usage: self.usage });
                }
            }
            "content_block_start" => {
                let index = index_of(&value);
                let block = value.get("content_block").unwrap_or(&Value::Null);
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_use" | "server_tool_use") => {
                        self.tool_blocks.insert(index);
                        events.push(StreamEvent::ToolCallStart {
                            index,
                            id: block
                                .get("id")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_owned(),
                            name: block
                                .get("name")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_owned(),
                        });
                    }
                    Some("text") => {
                        if let Some(text) = block
                            .get("text")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            events.push(StreamEvent::TextDelta {
                                text: text.to_owned(),
                            });
                        }
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let index = index_of(&value);
                let delta = value.get("delta").unwrap_or(&Value::Null);
                let text = |key: &str| {
                    delta
                        .get(key)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned()
                };
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        events.push(StreamEvent::TextDelta { text: text("text") });
                    }
                    Some("thinking_delta") => {
                        events.push(StreamEvent::ThinkingDelta {
                            text: text("thinking"),
                        });
                    }
                    Some("signature_delta") => {
                        events.push(StreamEvent::ThinkingSignature {
                            signature: text("signature"),
                        });
                    }
                    Some("input_json_delta") if self.tool_blocks.contains(&index) => {
                        events.push(StreamEvent::ToolCallDelta {
                            index,
                            arguments: text("partial_json"),
                        });
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = value.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop = Some(stop_reason(reason));
                }
                if let Some(usage) = value.get("usage") {
                    self.read_usage(usage);
                    events.push(StreamEvent::Usage { usage: self.usage });
                }
            }
            "message_stop" => {
                self.done = true;
                events.push(StreamEvent::Stop {
                    stop_reason: self.stop.unwrap_or(StopReason::Stop),
                });
            }
            "error" => {
                return Err(LlmError::Provider {
                    provider: self.provider.clone(),
                    message: error_message(data),
                });
            }
            _ => {}
        }
        Ok(events)
    }

    fn end(&mut self) -> Result<Vec<StreamEvent>, LlmError> {
        self.done = true;
        Err(LlmError::Stream {
            provider: self.provider.clone(),
            message: "the stream ended before the reply was complete".to_owned(),
        })
    }

    fn finished(&self) -> bool {
        self.done
    }

    fn provider(&self) -> &str {
        &self.provider
    }
}
