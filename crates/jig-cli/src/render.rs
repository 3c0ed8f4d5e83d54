//! Turning a [`ToolResult`] into what the terminal shows.

use std::fmt::Write as _;

use base64::Engine as _;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use jig_protocol::{ContentBlock, ToolResult};
use jig_tool_builtins::image_dimensions;
use jig_truncate::format_size;

/// The default (non-`--json`) rendering: text blocks as they are, each image as one
/// placeholder line with its type, size and dimensions. Always ends with a newline unless empty.
pub(crate) fn render_text(result: &ToolResult) -> String {
    let mut out = String::new();
    for (index, block) in result.content.iter().enumerate() {
        if index > 0 && !out.ends_with('\n') {
            out.push('\n');
        }
        match block {
            ContentBlock::Text { text } => out.push_str(text),
            ContentBlock::Image { data, mime_type } => {
                out.push_str(&image_placeholder(data, mime_type));
            }
        }
    }
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// `[image: image/png, 12.3KB, 640x480]`; dimensions are read from the encoded header.
fn image_placeholder(data: &str, mime_type: &str) -> String {
    let bytes = decode_base64(data);
    let mut line = format!("[image: {mime_type}");
    match &bytes {
        Some(bytes) => {
            let _ = write!(line, ", {}", format_size(bytes.len()));
            match image_dimensions(bytes) {
                Some((width, height)) => {
                    let _ = write!(line, ", {width}x{height}");
                }
                None => line.push_str(", unknown dimensions"),
            }
        }
        None => line.push_str(", invalid base64 data"),
    }
    line.push(']');
    line
}

/// Standard base64, padded or not, as image blocks carry it; `None` when it is not base64.
fn decode_base64(data: &str) -> Option<Vec<u8>> {
    const ENGINE: GeneralPurpose = GeneralPurpose::new(
        &alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    ENGINE.decode(data.trim()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes_with_and_without_padding() {
        assert_eq!(decode_base64("aGk=").unwrap(), b"hi");
        assert_eq!(decode_base64("aGk").unwrap(), b"hi");
        assert!(decode_base64("a$").is_none());
    }

    #[test]
    fn an_image_block_renders_as_one_placeholder_line() {
        // A whole 1x1 GIF (the dimensions come from its decoded header).
        let data = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";
        assert!(decode_base64(data).unwrap().starts_with(b"GIF89a"));
        let result = ToolResult {
            content: vec![
                ContentBlock::text("Read image file [image/gif]"),
                ContentBlock::Image {
                    data: data.to_owned(),
                    mime_type: "image/gif".to_owned(),
                },
            ],
            details: serde_json::Value::Null,
            is_error: false,
        };
        assert_eq!(
            render_text(&result),
            "Read image file [image/gif]\n[image: image/gif, 42B, 1x1]\n"
        );
    }
}
