//! OpenAI Chat Completions with streaming (`stream: true`), as served by OpenAI and every
//! OpenAI-compatible server.

use std::collections::HashSet;

use eventsource_stream::Event;
use jig_protocol::{AssistantBlock, ContentBlock, Message, StopReason, Usage};
use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde_json::{Value, json};

use crate::config::ProviderConfig;
use crate::error::LlmError;
use crate::http::{HttpProvider, SseParser, Wire, key_header};
use crate::provider::{ModelRequest, StreamEvent, ThinkingLevel};
use crate::transcript::prepare_messages;

/// The OpenAI Chat Completions protocol.
#[derive(Debug)]
pub struct OpenAiCompletions;

/// A provider speaking OpenAI Chat Completions.
pub type OpenAiProvider = HttpProvider<OpenAiCompletions>;

impl Wire for OpenAiCompletions {
    type Parser = ChunkParser;
    const PATH: &'static str = "/chat/completions";

    fn headers(config: &ProviderConfig) -> Result<HeaderMap, LlmError> {
        let mut headers = HeaderMap::new();
        if let Some(key) = &config.api_key {
            headers.insert(AUTHORIZATION, key_header(&format!("Bearer {key}"))?);
        }
        Ok(headers)
    }

    /// The JSON body sent for `request`.
    fn request_body(config: &ProviderConfig, request: &ModelRequest) -> Value {
        let mut body = json!({
            "model": request.model,
            "messages": convert_messages(&request.system_prompt, &prepare_messages(&request.messages)),
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": tool.name,
                            "description": tool.description,
                            "parameters": tool.input_schema,
                        }
                    })
                })
                .collect();
        }
        if let Some(max) = request.max_output_tokens {
            // OpenAI's own API wants the newer name; compatible servers know the older one.
            let key = if config.name == "openai" {
                "max_completion_tokens"
            } else {
                "max_tokens"
            };
            body[key] = json!(max);
        }
        if request.thinking != ThinkingLevel::Off {
            body["reasoning_effort"] = json!(request.thinking.as_str());
        }
        body
    }
}

fn data_url(data: &str, mime_type: &str) -> String {
    format!("data:{mime_type};base64,{data}")
}

fn user_content(blocks: &[ContentBlock]) -> Value {
    if blocks
        .iter()
        .all(|block| matches!(block, ContentBlock::Text { .. }))
    {
        return Value::String(ContentBlock::join_text(blocks));
    }
    blocks
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => json!({"type": "text", "text": text}),
            ContentBlock::Image { data, mime_type } => {
                json!({"type": "image_url", "image_url": {"url": data_url(data, mime_type)}})
            }
        })
        .collect()
}

/// Chat Completions messages for a (prepared) conversation. Tool messages carry text only, so
/// images from tool results follow the run of tool messages as one user message.
fn convert_messages(system_prompt: &str, messages: &[Message]) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    if !system_prompt.is_empty() {
        out.push(json!({"role": "system", "content": system_prompt}));
    }
    let mut pending_images: Vec<Value> = Vec::new();
    for message in messages {
        if !matches!(message, Message::ToolResult(_)) && !pending_images.is_empty() {
            out.push(images_message(&mut pending_images));
        }
        match message {
            Message::User(user) => {
                out.push(json!({"role": "user", "content": user_content(&user.content)}));
            }
            Message::Assistant(reply) => {
                let text = reply.text();
                let calls: Vec<Value> = reply
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        AssistantBlock::ToolCall(call) => Some(json!({
                            "id": call.id,
                            "type": "function",
                            "function": {
                                "name": call.name,
                                "arguments": call.raw_arguments.clone()
                                    .unwrap_or_else(|| call.arguments.to_string()),
                            }
                        })),
                        _ => None,
                    })
                    .collect();
                let mut value = json!({"role": "assistant"});
                value["content"] = if text.is_empty() {
                    Value::Null
                } else {
                    Value::String(text)
                };
                if !calls.is_empty() {
                    value["tool_calls"] = Value::Array(calls);
                }
                if value["content"].is_null() && value.get("tool_calls").is_none() {
                    // An empty reply: keep the turn structure with empty text.
                    value["content"] = Value::String(String::new());
                }
                out.push(value);
            }
            Message::ToolResult(result) => {
                let mut text = result.text();
                for block in &result.content {
                    if let ContentBlock::Image { data, mime_type } = block {
                        pending_images.push(
                            json!({"type": "image_url", "image_url": {"url": data_url(data, mime_type)}}),
                        );
                    }
                }
                let has_images = result
                    .content
                    .iter()
                    .any(|b| matches!(b, ContentBlock::Image { .. }));
                if has_images {
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str("(image attached in the next message)");
                }
                if result.is_error && text.is_empty() {
                    "(error with no message)".clone_into(&mut text);
                }
                out.push(
                    json!({"role": "tool", "tool_call_id": result.tool_call_id, "content": text}),
                );
            }
        }
    }
    if !pending_images.is_empty() {
        out.push(images_message(&mut pending_images));
    }
    out
}

fn images_message(images: &mut Vec<Value>) -> Value {
    let mut content = vec![json!({"type": "text", "text": "Attached image(s) from tool result:"})];
    content.append(images);
    json!({"role": "user", "content": content})
}

/// Parses `chat.completion.chunk` events.
pub(crate) struct ChunkParser {
    provider: String,
    /// OpenAI call index → whether `ToolCallStart` was emitted.
    started: HashSet<usize>,
    finish: Option<StopReason>,
    done: bool,
}

impl ChunkParser {
    fn usage(value: &Value) -> Usage {
        let prompt = value
            .get("prompt_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let cached = value
            .pointer("/prompt_tokens_details/cached_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        Usage {
            input: prompt.saturating_sub(cached),
            output: value
                .get("completion_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            cache_read: cached,
            cache_write: 0,
        }
    }
}

fn stop_reason(finish: &str) -> StopReason {
    match finish {
        "length" => StopReason::Length,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "content_filter" => StopReason::Error,
        _ => StopReason::Stop,
    }
}

impl SseParser for ChunkParser {
    fn new(provider: &str) -> Self {
        Self {
            provider: provider.to_owned(),
            started: HashSet::new(),
            finish: None,
            done: false,
        }
    }

    fn event(&mut self, event: &Event) -> Result<Vec<StreamEvent>, LlmError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(Vec::new());
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(vec![StreamEvent::Stop {
                stop_reason: self.finish.unwrap_or(StopReason::Stop),
            }]);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|error| LlmError::Stream {
            provider: self.provider.clone(),
            message: format!(
                "a chunk is not JSON ({error}): {}",
                crate::http::error_message(data)
            ),
        })?;
        if let Some(error) = chunk.get("error") {
            return Err(LlmError::Provider {
                provider: self.provider.clone(),
                message: crate::http::error_message(&json!({"error": error}).to_string()),
            });
        }
        let mut events = Vec::new();
        if let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        {
            let delta = choice.get("delta").unwrap_or(&Value::Null);
            for key in ["reasoning_content", "reasoning"] {
                if let Some(text) = delta
                    .get(key)
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
                {
                    events.push(StreamEvent::ThinkingDelta {
                        text: text.to_owned(),
                    });
                    break;
                }
            }
            if let Some(text) = delta
                .get("content")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            {
                events.push(StreamEvent::TextDelta {
                    text: text.to_owned(),
                });
            }
            for (position, call) in delta
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let index = call
                    .get("index")
                    .and_then(Value::as_u64)
                    .and_then(|i| usize::try_from(i).ok())
                    .unwrap_or(position);
                if self.started.insert(index) {
                    let id = call
                        .get("id")
                        .and_then(Value::as_str)
                        .map_or_else(|| format!("call_{index}"), str::to_owned);
                    let name = call
                        .pointer("/function/name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned();
                    events.push(StreamEvent::ToolCallStart { index, id, name });
                }
                if let Some(arguments) = call
                    .pointer("/function/arguments")
                    .and_then(Value::as_str)
                    .filter(|a| !a.is_empty())
                {
                    events.push(StreamEvent::ToolCallDelta {
                        index,
                        arguments: arguments.to_owned(),
                    });
                }
            }
            if let Some(finish) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish = Some(stop_reason(finish));
            }
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            events.push(StreamEvent::Usage {
                usage: Self::usage(usage),
            });
        }
        Ok(events)
    }

    fn end(&mut self) -> Result<Vec<StreamEvent>, LlmError> {
        self.done = true;
        match self.finish {
            // Some servers close the stream after the finish reason without `[DONE]`.
            Some(stop_reason) => Ok(vec![StreamEvent::Stop { stop_reason }]),
            None => Err(LlmError::Stream {
                provider: self.provider.clone(),
                message: "the stream ended before the reply was complete".to_owned(),
            }),
        }
    }

    fn finished(&self) -> bool {
        self.done
    }

    fn provider(&self) -> &str {
        &self.provider
    }
}
