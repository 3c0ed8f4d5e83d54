//! A provider that replays scripted replies, for tests of everything above the HTTP layer.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;
use jig_protocol::{AssistantBlock, AssistantMessage, StopReason, ToolCall, Usage};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::LlmError;
use crate::provider::{EventStream, ModelRequest, Provider, StreamEvent};

/// One scripted reply.
#[derive(Debug, Clone)]
pub enum ScriptedReply {
    /// Stream this message as deltas (text split in pieces, tool-call arguments in pieces).
    Message(AssistantMessage),
    /// Fail the request with this message (as a provider error before streaming).
    Error(String),
    /// Stream this text, then never finish (until the run is cancelled).
    Hang(String),
    /// Start streaming, then fail with this provider message before any content (as an API
    /// reporting `overloaded_error` inside a 200 response).
    StreamError(String),
}

impl ScriptedReply {
    /// A final text reply.
    pub fn text(text: &str) -> Self {
        let mut message = AssistantMessage::empty("scripted", "scripted-model");
        message.content.push(AssistantBlock::Text {
            text: text.to_owned(),
        });
        message.usage = Usage {
            input: 10,
            output: 5,
            cache_read: 0,
            cache_write: 0,
        };
        Self::Message(message)
    }

    /// A reply calling one tool.
    pub fn tool_call(id: &str, name: &str, arguments: Value) -> Self {
        Self::tool_calls(&[(id, name, arguments)])
    }

    /// A reply calling several tools at once.
    pub fn tool_calls(calls: &[(&str, &str, Value)]) -> Self {
        let mut message = AssistantMessage::empty("scripted", "scripted-model");
        for (id, name, arguments) in calls {
            message.content.push(AssistantBlock::ToolCall(ToolCall {
                id: (*id).to_owned(),
                name: (*name).to_owned(),
                arguments: arguments.clone(),
                raw_arguments: None,
            }));
        }
        message.stop_reason = StopReason::ToolUse;
        message.usage = Usage {
            input: 10,
            output: 5,
            cache_read: 0,
            cache_write: 0,
        };
        Self::Message(message)
    }

    /// The same reply with a different stop reason (e.g. `Length` to simulate a cut reply).
    #[must_use]
    pub fn with_stop_reason(self, stop_reason: StopReason) -> Self {
        match self {
            Self::Message(mut message) => {
                message.stop_reason = stop_reason;
                Self::Message(message)
            }
            other => other,
        }
    }
}

/// The stream events that carry `message`.
pub fn message_events(message: &AssistantMessage) -> Vec<StreamEvent> {
    let mut events = Vec::new();
    for (index, block) in message.content.iter().enumerate() {
        match block {
            AssistantBlock::Text { text } => {
                for piece in split_in_two(text) {
                    events.push(StreamEvent::TextDelta { text: piece });
                }
            }
            AssistantBlock::Thinking {
                thinking,
                signature,
            } => {
                events.push(StreamEvent::ThinkingDelta {
                    text: thinking.clone(),
                });
                if let Some(signature) = signature {
                    events.push(StreamEvent::ThinkingSignature {
                        signature: signature.clone(),
                    });
                }
            }
            AssistantBlock::ToolCall(call) => {
                events.push(StreamEvent::ToolCallStart {
                    index,
                    id: call.id.clone(),
                    name: call.name.clone(),
                });
                let text = call
                    .raw_arguments
                    .clone()
                    .unwrap_or_else(|| call.arguments.to_string());
                for piece in split_in_two(&text) {
                    events.push(StreamEvent::ToolCallDelta {
                        index,
                        arguments: piece,
                    });
                }
            }
        }
    }
    events.push(StreamEvent::Usage {
        usage: message.usage,
    });
    events.push(StreamEvent::Stop {
        stop_reason: message.stop_reason,
    });
    events
}

fn split_in_two(text: &str) -> Vec<String> {
    let mut middle = text.len() / 2;
    while !text.is_char_boundary(middle) {
        middle -= 1;
    }
    let (a, b) = text.split_at(middle);
    [a, b]
        .into_iter()
        .filter(|piece| !piece.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A [`Provider`] that answers each request with the next scripted reply and records every
/// request it received.
#[derive(Debug)]
pub struct ScriptedProvider {
    replies: Mutex<VecDeque<ScriptedReply>>,
    requests: Mutex<Vec<ModelRequest>>,
}

impl ScriptedProvider {
    /// A provider that will give `replies` in order.
    pub fn new(replies: impl IntoIterator<Item = ScriptedReply>) -> Self {
        Self {
            replies: Mutex::new(replies.into_iter().collect()),
            requests: Mutex::new(Vec::new()),
        }
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Replies not yet given.
    pub fn remaining(&self) -> usize {
        self.replies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

#[async_trait]
impl Provider for ScriptedProvider {
    fn name(&self) -> &'static str {
        "scripted"
    }

    async fn stream(
        &self,
        request: ModelRequest,
        _cancel: CancellationToken,
    ) -> Result<EventStream, LlmError> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(request);
        let reply = self
            .replies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front();
        match reply {
            None => Err(LlmError::Other(
                "the scripted provider has no reply left".to_owned(),
            )),
            Some(ScriptedReply::Error(message)) => Err(LlmError::Provider {
                provider: "scripted".to_owned(),
                message,
            }),
            Some(ScriptedReply::Message(message)) => Ok(Box::pin(futures::stream::iter(
                message_events(&message).into_iter().map(Ok),
            ))),
            Some(ScriptedReply::StreamError(message)) => {
                let error = LlmError::Provider {
                    provider: "scripted".to_owned(),
                    message,
                };
                Ok(Box::pin(futures::stream::iter([Err(error)])))
            }
            Some(ScriptedReply::Hang(text)) => {
                let first = futures::stream::iter([Ok(StreamEvent::TextDelta { text })]);
                Ok(Box::pin(futures::StreamExt::chain(
                    first,
                    futures::stream::pending(),
                )))
            }
        }
    }
}
