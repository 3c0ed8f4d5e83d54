use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One block of content a model reads: text, or an image encoded as base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text itself.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 (standard alphabet, padded) of the encoded image bytes.
        data: String,
        /// The image's MIME type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

impl ContentBlock {
    /// The text of the text blocks among `blocks`, joined with newlines (images are skipped).
    pub fn join_text(blocks: &[ContentBlock]) -> String {
        let texts: Vec<&str> = blocks.iter().filter_map(Self::as_text).collect();
        texts.join("\n")
    }

    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// The text of a text block, `None` for an image.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text { text } => Some(text),
            Self::Image { .. } => None,
        }
    }
}

/// What one tool call returns: content for the model, structured details for hosts, and whether
/// the call failed.
///
/// Serialised with camelCase keys: `{"content":[…],"details":{…},"isError":false}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// Blocks the model reads, in order.
    pub content: Vec<ContentBlock>,
    /// Structured, tool-specific data (camelCase keys). `null` when the tool has none.
    #[serde(default)]
    pub details: Value,
    /// True when the call failed; the content then explains why.
    #[serde(default)]
    pub is_error: bool,
}

impl ToolResult {
    /// A successful result with one text block and no details.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![ContentBlock::text(text)],
            details: Value::Null,
            is_error: false,
        }
    }

    /// A failed result with one text block and no details.
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            content: vec![ContentBlock::text(text)],
            details: Value::Null,
            is_error: true,
        }
    }

    /// The same result with `details` set.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }

    /// All text blocks joined with newlines (images are skipped).
    pub fn text_content(&self) -> String {
        ContentBlock::join_text(&self.content)
    }
}
