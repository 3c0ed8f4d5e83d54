//! The encodings `edit` reads and writes back unchanged: UTF-8 with or without a BOM, and
//! UTF-16 LE/BE with a BOM (told apart from UTF-32 by [`crate::bom`], as `read` does). Anything
//! else is refused, never decoded lossily.

use std::borrow::Cow;

use memchr::{memchr, memchr2};

use crate::bom::{Bom, UTF8_BOM};

/// How a file's bytes encode its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextEncoding {
    /// UTF-8; `bom` says whether the file starts with `EF BB BF`.
    Utf8 { bom: bool },
    /// UTF-16 little-endian, with its `FF FE` BOM.
    Utf16Le,
    /// UTF-16 big-endian, with its `FE FF` BOM.
    Utf16Be,
}

impl TextEncoding {
    /// A short name for messages (`UTF-8`, `UTF-8 with BOM`, `UTF-16LE`, `UTF-16BE`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Utf8 { bom: false } => "UTF-8",
            Self::Utf8 { bom: true } => "UTF-8 with BOM",
            Self::Utf16Le => "UTF-16LE",
            Self::Utf16Be => "UTF-16BE",
        }
    }
}

/// Why a file's bytes are not text `edit` can change safely.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DecodeError {
    /// A NUL byte (outside UTF-16), at this byte offset: a binary file.
    Nul { offset: usize },
    /// Bytes that are not valid UTF-8 start at this offset.
    InvalidUtf8 { offset: usize },
    /// UTF-16 with an odd byte count or an unpaired surrogate.
    InvalidUtf16 { encoding: TextEncoding },
    /// A byte-order mark of an encoding `edit` does not write (UTF-32).
    Unsupported { bom: Bom },
}

/// A file's text (without BOM) and its encoding. For UTF-8 the text borrows the file's bytes.
#[derive(Debug)]
pub(crate) struct Decoded<'a> {
    pub(crate) encoding: TextEncoding,
    pub(crate) text: Cow<'a, str>,
    /// Whether the text contains a `\r` (found by the same scan that looks for NUL).
    pub(crate) has_cr: bool,
}

/// Decodes `bytes` strictly.
pub(crate) fn decode(bytes: &[u8]) -> Result<Decoded<'_>, DecodeError> {
    match Bom::sniff(bytes) {
        Some(bom @ Bom::Utf16Le) => {
            return decode_utf16(&bytes[bom.bytes().len()..], TextEncoding::Utf16Le);
        }
        Some(bom @ Bom::Utf16Be) => {
            return decode_utf16(&bytes[bom.bytes().len()..], TextEncoding::Utf16Be);
        }
        Some(bom @ (Bom::Utf32Le | Bom::Utf32Be)) => return Err(DecodeError::Unsupported { bom }),
        Some(Bom::Utf8) | None => {}
    }
    let (bom, body, body_offset) = match bytes.strip_prefix(UTF8_BOM) {
        Some(rest) => (true, rest, UTF8_BOM.len()),
        None => (false, bytes, 0),
    };
    // One pass finds both the first NUL and whether any CR exists (LF files: a single scan).
    let (nul, has_cr) = match memchr2(0, b'\r', body) {
        None => (None, false),
        Some(i) if body[i] == 0 => (Some(i), false),
        Some(i) => (memchr(0, &body[i..]).map(|n| i + n), true),
    };
    if let Some(offset) = nul {
        return Err(DecodeError::Nul {
            offset: body_offset + offset,
        });
    }
    match std::str::from_utf8(body) {
        Ok(text) => Ok(Decoded {
            encoding: TextEncoding::Utf8 { bom },
            text: Cow::Borrowed(text),
            has_cr,
        }),
        Err(error) => Err(DecodeError::InvalidUtf8 {
            offset: body_offset + error.valid_up_to(),
        }),
    }
}

fn decode_utf16(body: &[u8], encoding: TextEncoding) -> Result<Decoded<'_>, DecodeError> {
    if !body.len().is_multiple_of(2) {
        return Err(DecodeError::InvalidUtf16 { encoding });
    }
    let units = body.chunks_exact(2).map(|pair| match encoding {
        TextEncoding::Utf16Be => u16::from_be_bytes([pair[0], pair[1]]),
        _ => u16::from_le_bytes([pair[0], pair[1]]),
    });
    let mut text = String::with_capacity(body.len() / 2);
    for unit in char::decode_utf16(units) {
        match unit {
            Ok('\0') => return Err(DecodeError::Nul { offset: 2 }),
            Ok(c) => text.push(c),
            Err(_) => return Err(DecodeError::InvalidUtf16 { encoding }),
        }
    }
    let has_cr = text.contains('\r');
    Ok(Decoded {
        encoding,
        text: Cow::Owned(text),
        has_cr,
    })
}

/// The bytes that start a file of `encoding` (its BOM, or nothing).
pub(crate) fn bom(encoding: TextEncoding) -> &'static [u8] {
    match encoding {
        TextEncoding::Utf8 { bom: true } => UTF8_BOM,
        TextEncoding::Utf8 { bom: false } => b"",
        TextEncoding::Utf16Le => Bom::Utf16Le.bytes(),
        TextEncoding::Utf16Be => Bom::Utf16Be.bytes(),
    }
}

/// Encodes UTF-8 `text` as UTF-16 with the BOM of `encoding` (which must be a UTF-16 one).
pub(crate) fn encode_utf16(text: &str, encoding: TextEncoding) -> Vec<u8> {
    let mut out = Vec::with_capacity(2 + text.len() * 2);
    out.extend_from_slice(bom(encoding));
    for unit in text.encode_utf16() {
        let pair = match encoding {
            TextEncoding::Utf16Be => unit.to_be_bytes(),
            _ => unit.to_le_bytes(),
        };
        out.extend_from_slice(&pair);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_with_and_without_bom_borrows() {
        let decoded = decode(b"\xEF\xBB\xBFab").unwrap();
        assert_eq!(decoded.encoding, TextEncoding::Utf8 { bom: true });
        assert!(matches!(decoded.text, Cow::Borrowed("ab")));
        assert_eq!(
            decode(b"ab").unwrap().encoding,
            TextEncoding::Utf8 { bom: false }
        );
    }

    #[test]
    fn reports_carriage_returns_from_the_nul_scan() {
        assert!(!decode(b"a\nb").unwrap().has_cr);
        assert!(decode(b"a\r\nb").unwrap().has_cr);
        assert_eq!(
            decode(b"a\r\n\0").unwrap_err(),
            DecodeError::Nul { offset: 3 }
        );
    }

    #[test]
    fn refuses_nul_and_invalid_utf8() {
        assert_eq!(
            decode(b"ab\0c").unwrap_err(),
            DecodeError::Nul { offset: 2 }
        );
        assert_eq!(
            decode(b"ab\xFFc").unwrap_err(),
            DecodeError::InvalidUtf8 { offset: 2 }
        );
        assert_eq!(
            decode(b"\xEF\xBB\xBFab\xC3").unwrap_err(),
            DecodeError::InvalidUtf8 { offset: 5 }
        );
    }

    #[test]
    fn utf16_round_trips() {
        for encoding in [TextEncoding::Utf16Le, TextEncoding::Utf16Be] {
            let bytes = encode_utf16("héllo\r\nwörld 😀", encoding);
            let decoded = decode(&bytes).unwrap();
            assert_eq!(decoded.encoding, encoding);
            assert_eq!(decoded.text, "héllo\r\nwörld 😀");
            assert_eq!(encode_utf16(&decoded.text, encoding), bytes);
        }
    }

    #[test]
    fn refuses_utf32_as_read_detects_it() {
        assert_eq!(
            decode(b"\xFF\xFE\0\0a\0\0\0").unwrap_err(),
            DecodeError::Unsupported { bom: Bom::Utf32Le }
        );
        assert_eq!(
            decode(b"\0\0\xFE\xFF\0\0\0a").unwrap_err(),
            DecodeError::Unsupported { bom: Bom::Utf32Be }
        );
    }

    #[test]
    fn refuses_broken_utf16() {
        assert!(matches!(
            decode(b"\xFF\xFEa"),
            Err(DecodeError::InvalidUtf16 { .. })
        ));
        // an unpaired high surrogate
        assert!(matches!(
            decode(b"\xFF\xFE\x00\xD8a\x00"),
            Err(DecodeError::InvalidUtf16 { .. })
        ));
    }
}
