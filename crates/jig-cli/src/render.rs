//! Turning a [`ToolResult`] into what the terminal shows.

use std::fmt::Write as _;

use jig_protocol::{ContentBlock, ToolResult};

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

fn format_size(bytes: usize) -> String {
    #[expect(
        clippy::cast_precision_loss,
        reason = "one decimal of a size is all that is shown"
    )]
    let value = bytes as f64;
    if bytes < 1024 {
        format!("{bytes}B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1}KB", value / 1024.0)
    } else {
        format!("{:.1}MB", value / (1024.0 * 1024.0))
    }
}

/// Standard base64 (padding optional); `None` on any invalid character.
fn decode_base64(data: &str) -> Option<Vec<u8>> {
    fn value(byte: u8) -> Option<u32> {
        Some(u32::from(match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        }))
    }
    let trimmed = data.trim_end_matches('=');
    let mut out = Vec::with_capacity(trimmed.len() / 4 * 3 + 3);
    let mut buffer = 0_u32;
    let mut bits = 0_u32;
    for &byte in trimmed.as_bytes() {
        if byte.is_ascii_whitespace() {
            continue;
        }
        buffer = (buffer << 6) | value(byte)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from((buffer >> bits) & 0xFF).ok()?);
        }
    }
    Some(out)
}

/// Width and height from a PNG, GIF, JPEG, WebP or BMP header.
fn image_dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    let be16 = |at: usize| {
        Some(u32::from(u16::from_be_bytes(
            bytes.get(at..at + 2)?.try_into().ok()?,
        )))
    };
    let le16 = |at: usize| {
        Some(u32::from(u16::from_le_bytes(
            bytes.get(at..at + 2)?.try_into().ok()?,
        )))
    };
    let be32 = |at: usize| Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let le32 = |at: usize| Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some((be32(16)?, be32(20)?));
    }
    if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        return Some((le16(6)?, le16(8)?));
    }
    if bytes.starts_with(b"BM") {
        let height = le32(22)?;
        // A negative height marks a top-down bitmap.
        let height = i32::from_le_bytes(height.to_le_bytes()).unsigned_abs();
        return Some((le32(18)?, height));
    }
    if bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP") {
        return match bytes.get(12..16)? {
            b"VP8 " => Some((le16(26)? & 0x3FFF, le16(28)? & 0x3FFF)),
            b"VP8L" => {
                let bits = le32(21)?;
                Some(((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1))
            }
            b"VP8X" => {
                let width = le32(24)? & 0x00FF_FFFF;
                let height = le32(27)? & 0x00FF_FFFF;
                Some((width + 1, height + 1))
            }
            _ => None,
        };
    }
    if bytes.starts_with(&[0xFF, 0xD8]) {
        let mut at = 2;
        while at + 4 <= bytes.len() {
            if bytes[at] != 0xFF {
                return None;
            }
            let marker = bytes[at + 1];
            if marker == 0xFF {
                at += 1;
                continue;
            }
            let length = usize::try_from(be16(at + 2)?).ok()?;
            let is_frame_header =
                matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC);
            if is_frame_header {
                return Some((be16(at + 7)?, be16(at + 5)?));
            }
            at += 2 + length;
        }
    }
    None
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
    fn png_dimensions_come_from_the_ihdr_chunk() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&640_u32.to_be_bytes());
        png.extend_from_slice(&480_u32.to_be_bytes());
        assert_eq!(image_dimensions(&png), Some((640, 480)));
    }

    #[test]
    fn an_image_block_renders_as_one_placeholder_line() {
        let mut gif = b"GIF89a".to_vec();
        gif.extend_from_slice(&[3, 0, 2, 0]);
        let data = "R0lGODlhAwACAA==";
        assert_eq!(decode_base64(data).unwrap(), gif);
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
            "Read image file [image/gif]\n[image: image/gif, 10B, 3x2]\n"
        );
    }
}
