use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::{ContentBlock, ToolResult};

/// One message of a conversation between a user, a model and its tools.
///
/// Serialised with a `role` tag and camelCase keys:
/// `{"role":"user","content":[…],"timestamp":…}`,
/// `{"role":"assistant","content":[…],"stopReason":"toolUse",…}`,
/// `{"role":"toolResult","toolCallId":"…","toolName":"read","content":[…],"isError":false,…}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum Message {
    /// What the user said.
    User(UserMessage),
    /// What the model replied.
    Assistant(AssistantMessage),
    /// The result of one tool call, paired with it by id.
    ToolResult(ToolResultMessage),
}

impl Message {
    /// A user message holding one text block, stamped now.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::User(UserMessage {
            content: vec![ContentBlock::text(text)],
            timestamp: now_millis(),
        })
    }

    /// The role name as serialised (`user`, `assistant`, `toolResult`).
    pub fn role(&self) -> &'static str {
        match self {
            Self::User(_) => "user",
            Self::Assistant(_) => "assistant",
            Self::ToolResult(_) => "toolResult",
        }
    }

    /// The assistant message inside, if this is one.
    pub fn as_assistant(&self) -> Option<&AssistantMessage> {
        match self {
            Self::Assistant(message) => Some(message),
            _ => None,
        }
    }

    /// The tool result inside, if this is one.
    pub fn as_tool_result(&self) -> Option<&ToolResultMessage> {
        match self {
            Self::ToolResult(message) => Some(message),
            _ => None,
        }
    }
}

/// A user turn: text and images.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    /// Text and image blocks, in order.
    pub content: Vec<ContentBlock>,
    /// Milliseconds since the Unix epoch.
    #[serde(default)]
    pub timestamp: u64,
}

/// One block of an assistant reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum AssistantBlock {
    /// Visible text.
    Text {
        /// The text.
        text: String,
    },
    /// The model's reasoning, where the API exposes it.
    Thinking {
        /// The reasoning text.
        thinking: String,
        /// An opaque signature some APIs require when the block is sent back.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// A request to run a tool.
    ToolCall(ToolCall),
}

/// A tool call requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// The provider's call id; the result carries the same id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as parsed JSON. When the model sent text that is not JSON, this is an
    /// object `{}` and [`ToolCall::raw_arguments`] keeps the text.
    pub arguments: Value,
    /// The argument text exactly as streamed, when it did not parse as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_arguments: Option<String>,
}

/// Why a model stopped producing a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// It finished on its own.
    Stop,
    /// It hit the output-token limit; the reply (and any tool-call arguments) may be cut.
    Length,
    /// It asked for tools to run.
    ToolUse,
    /// The request or the stream failed; see the message's `errorMessage`.
    Error,
    /// The run was aborted while the reply streamed.
    Aborted,
}

/// Token accounting of one reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Input tokens not served from a cache.
    pub input: u64,
    /// Output tokens (including reasoning).
    pub output: u64,
    /// Input tokens read from the provider's prompt cache.
    #[serde(default)]
    pub cache_read: u64,
    /// Input tokens written to the provider's prompt cache.
    #[serde(default)]
    pub cache_write: u64,
}

impl Usage {
    /// All tokens counted.
    pub fn total(&self) -> u64 {
        self.input + self.output + self.cache_read + self.cache_write
    }
}

/// A model's reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    /// Text, thinking and tool-call blocks in the order the model produced them.
    pub content: Vec<AssistantBlock>,
    /// The provider that produced it (`openai`, `anthropic`, …).
    pub provider: String,
    /// The model id.
    pub model: String,
    /// Token accounting, as far as the provider reported it.
    #[serde(default)]
    pub usage: Usage,
    /// Why the reply ended.
    pub stop_reason: StopReason,
    /// What went wrong, for `error` (and `aborted`) replies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Milliseconds since the Unix epoch.
    #[serde(default)]
    pub timestamp: u64,
}

impl AssistantMessage {
    /// An empty reply from `provider`/`model`, stamped now, with stop reason `stop`.
    pub fn empty(provider: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            content: Vec::new(),
            provider: provider.into(),
            model: model.into(),
            usage: Usage::default(),
            stop_reason: StopReason::Stop,
            error_message: None,
            timestamp: now_millis(),
        }
    }

    /// The tool calls, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|block| match block {
            AssistantBlock::ToolCall(call) => Some(call),
            _ => None,
        })
    }

    /// The visible text blocks joined with newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|block| match block {
                AssistantBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n")
    }
}

/// The result of one tool call, as the model reads it on the next request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    /// The id of the call this answers.
    pub tool_call_id: String,
    /// The called tool's name.
    pub tool_name: String,
    /// Text and image blocks.
    pub content: Vec<ContentBlock>,
    /// Structured, tool-specific data for hosts (never sent to the model).
    #[serde(default)]
    pub details: Value,
    /// True when the call failed.
    #[serde(default)]
    pub is_error: bool,
    /// Milliseconds since the Unix epoch.
    #[serde(default)]
    pub timestamp: u64,
}

impl ToolResultMessage {
    /// The message answering `call` with `result`, stamped now.
    pub fn new(call: &ToolCall, result: ToolResult) -> Self {
        Self {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            content: result.content,
            details: result.details,
            is_error: result.is_error,
            timestamp: now_millis(),
        }
    }

    /// The text blocks joined with newlines.
    pub fn text(&self) -> String {
        ContentBlock::join_text(&self.content)
    }
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_serialise_with_role_tags_and_camel_case() {
        let call = ToolCall {
            id: "c1".into(),
            name: "read".into(),
            arguments: serde_json::json!({"path": "a"}),
            raw_arguments: None,
        };
        let mut assistant = AssistantMessage::empty("openai", "m");
        assistant
            .content
            .push(AssistantBlock::ToolCall(call.clone()));
        assistant.stop_reason = StopReason::ToolUse;
        assistant.timestamp = 1;
        let json = serde_json::to_value(Message::Assistant(assistant.clone())).unwrap();
        assert_eq!(json["role"], "assistant");
        assert_eq!(json["stopReason"], "toolUse");
        assert_eq!(json["content"][0]["type"], "toolCall");
        let mut result = ToolResultMessage::new(&call, ToolResult::text("ok"));
        result.timestamp = 2;
        let json = serde_json::to_value(Message::ToolResult(result.clone())).unwrap();
        assert_eq!(json["role"], "toolResult");
        assert_eq!(json["toolCallId"], "c1");
        let back: Message = serde_json::from_value(json).unwrap();
        assert_eq!(back, Message::ToolResult(result));
        assert_eq!(assistant.tool_calls().count(), 1);
    }
}
