use std::collections::HashMap;

use jig_protocol::{AssistantBlock, AssistantMessage, StopReason, ToolCall};
use serde_json::{Map, Value};

use crate::provider::StreamEvent;

/// Assembles streamed [`StreamEvent`]s into an [`AssistantMessage`].
#[derive(Debug)]
pub struct MessageBuilder {
    message: AssistantMessage,
    /// Tool-call index → (position in `content`, argument text so far).
    calls: HashMap<usize, (usize, String)>,
    stopped: bool,
}

impl MessageBuilder {
    /// A builder for a reply from `provider`/`model`.
    pub fn new(provider: &str, model: &str) -> Self {
        Self {
            message: AssistantMessage::empty(provider, model),
            calls: HashMap::new(),
            stopped: false,
        }
    }

    /// Applies one event.
    pub fn apply(&mut self, event: &StreamEvent) {
        let content = &mut self.message.content;
        match event {
            StreamEvent::TextDelta { text } => match content.last_mut() {
                Some(AssistantBlock::Text { text: last }) => last.push_str(text),
                _ => content.push(AssistantBlock::Text { text: text.clone() }),
            },
            StreamEvent::ThinkingDelta { text } => match content.last_mut() {
                Some(AssistantBlock::Thinking { thinking, .. }) => thinking.push_str(text),
                _ => content.push(AssistantBlock::Thinking {
                    thinking: text.clone(),
                    signature: None,
                }),
            },
            StreamEvent::ThinkingSignature { signature } => {
                let last_thinking = content.iter_mut().rev().find_map(|block| match block {
                    AssistantBlock::Thinking { signature, .. } => Some(signature),
                    _ => None,
                });
                match last_thinking {
                    Some(slot) => *slot = Some(signature.clone()),
                    None => content.push(AssistantBlock::Thinking {
                        thinking: String::new(),
                        signature: Some(signature.clone()),
                    }),
                }
            }
            StreamEvent::ToolCallStart { index, id, name } => {
                content.push(AssistantBlock::ToolCall(ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: Value::Object(Map::new()),
                    raw_arguments: None,
                }));
                self.calls
                    .insert(*index, (content.len() - 1, String::new()));
            }
            StreamEvent::ToolCallDelta { index, arguments } => {
                if let Some((_, text)) = self.calls.get_mut(index) {
                    text.push_str(arguments);
                }
            }
            StreamEvent::Usage { usage } => self.message.usage = *usage,
            StreamEvent::Stop { stop_reason } => {
                self.message.stop_reason = *stop_reason;
                self.stopped = true;
            }
        }
    }

    /// True once a `Stop` event was applied.
    pub fn is_stopped(&self) -> bool {
        self.stopped
    }

    /// The reply as built so far (arguments of tool calls not yet parsed).
    pub fn partial(&self) -> &AssistantMessage {
        &self.message
    }

    /// Parses the tool-call arguments and returns the message. A `stop` reply that contains
    /// tool calls is reported as `toolUse` (some servers say `stop` regardless).
    pub fn finish(mut self) -> AssistantMessage {
        for (position, text) in self.calls.into_values() {
            if let Some(AssistantBlock::ToolCall(call)) = self.message.content.get_mut(position) {
                if text.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<Value>(&text) {
                    Ok(value) => call.arguments = value,
                    Err(_) => call.raw_arguments = Some(text),
                }
            }
        }
        if self.message.stop_reason == StopReason::Stop
            && self.message.tool_calls().next().is_some()
        {
            self.message.stop_reason = StopReason::ToolUse;
        }
        self.message
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_call_arguments_split_across_deltas_are_joined_and_parsed() {
        let mut builder = MessageBuilder::new("p", "m");
        builder.apply(&StreamEvent::TextDelta {
            text: "Let me ".into(),
        });
        builder.apply(&StreamEvent::TextDelta {
            text: "look.".into(),
        });
        builder.apply(&StreamEvent::ToolCallStart {
            index: 0,
            id: "a".into(),
            name: "read".into(),
        });
        for piece in ["{\"pa", "th\":", " \"x.txt\"", "}"] {
            builder.apply(&StreamEvent::ToolCallDelta {
                index: 0,
                arguments: piece.into(),
            });
        }
        builder.apply(&StreamEvent::Stop {
            stop_reason: StopReason::Stop,
        });
        let message = builder.finish();
        assert_eq!(message.text(), "Let me look.");
        assert_eq!(message.stop_reason, StopReason::ToolUse);
        let call = message.tool_calls().next().unwrap();
        assert_eq!(call.arguments, serde_json::json!({"path": "x.txt"}));
    }

    #[test]
    fn unparseable_arguments_are_kept_raw() {
        let mut builder = MessageBuilder::new("p", "m");
        builder.apply(&StreamEvent::ToolCallStart {
            index: 3,
            id: "a".into(),
            name: "bash".into(),
        });
        builder.apply(&StreamEvent::ToolCallDelta {
            index: 3,
            arguments: "{\"command\": \"ec".into(),
        });
        builder.apply(&StreamEvent::Stop {
            stop_reason: StopReason::Length,
        });
        let message = builder.finish();
        let call = message.tool_calls().next().unwrap();
        assert_eq!(call.raw_arguments.as_deref(), Some("{\"command\": \"ec"));
        assert_eq!(call.arguments, serde_json::json!({}));
        assert_eq!(message.stop_reason, StopReason::Length);
    }
}
