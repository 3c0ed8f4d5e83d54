//! Telling text from binary by the first bytes of a file, and naming binary types.

use crate::bom::{Bom, UTF8_BOM};
use crate::image::ImageKind;

/// Byte order of a UTF-16 file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Utf16Order {
    /// Little-endian (BOM `FF FE`).
    Little,
    /// Big-endian (BOM `FE FF`).
    Big,
}

/// What a file's first bytes say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Content {
    /// UTF-8 text (possibly with a BOM).
    Utf8 {
        /// Whether the file starts with a UTF-8 BOM.
        bom: bool,
    },
    /// UTF-16 text with a BOM.
    Utf16(Utf16Order),
    /// Not text: shown as a description, never dumped.
    Binary(FileType),
}

/// A detected file type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileType {
    /// A short human name (`PNG image`).
    pub(crate) description: &'static str,
    /// Its MIME type.
    pub(crate) mime: &'static str,
    /// Whether it is an image a vision model could be shown.
    pub(crate) is_image: bool,
}

const fn file_type(description: &'static str, mime: &'static str, is_image: bool) -> FileType {
    FileType {
        description,
        mime,
        is_image,
    }
}

const UNKNOWN_BINARY: FileType = file_type("binary data", "application/octet-stream", false);
const UTF32: FileType = file_type("UTF-32 text", "text/plain", false);
const NOT_UTF8: FileType = file_type(
    "data that is not valid UTF-8 text",
    "application/octet-stream",
    false,
);

/// Classifies a file by its first bytes. `complete` says `start` is the whole file (so a UTF-8
/// sequence cut at its end is an error, not a sniffing artefact).
pub(crate) fn classify(start: &[u8], complete: bool) -> Content {
    match Bom::sniff(start) {
        Some(Bom::Utf8) => {
            return if text_check(&start[UTF8_BOM.len()..], complete) {
                Content::Utf8 { bom: true }
            } else {
                Content::Binary(NOT_UTF8)
            };
        }
        Some(Bom::Utf16Le) => return Content::Utf16(Utf16Order::Little),
        Some(Bom::Utf16Be) => return Content::Utf16(Utf16Order::Big),
        Some(Bom::Utf32Le | Bom::Utf32Be) => return Content::Binary(UTF32),
        None => {}
    }
    if let Some(kind) = magic(start) {
        return Content::Binary(kind);
    }
    if start.contains(&0) {
        return Content::Binary(UNKNOWN_BINARY);
    }
    if text_check(start, complete) {
        Content::Utf8 { bom: false }
    } else {
        Content::Binary(NOT_UTF8)
    }
}

/// Valid UTF-8, allowing a sequence cut by the end of an incomplete sniff window.
fn text_check(bytes: &[u8], complete: bool) -> bool {
    match std::str::from_utf8(bytes) {
        Ok(_) => true,
        Err(error) => !complete && error.error_len().is_none(),
    }
}

/// Known binary formats by their magic bytes.
fn magic(bytes: &[u8]) -> Option<FileType> {
    let at = |offset: usize, signature: &[u8]| {
        bytes.get(offset..offset + signature.len()) == Some(signature)
    };
    let found = if let Some(kind) = ImageKind::from_magic(bytes) {
        file_type(kind.description(), kind.mime(), true)
    } else if at(0, b"II*\0") || at(0, b"MM\0*") {
        file_type("TIFF image", "image/tiff", true)
    } else if at(0, b"\0\0\x01\0") {
        file_type("ICO image", "image/x-icon", true)
    } else if at(4, b"ftypavif") || at(4, b"ftypheic") {
        file_type("AVIF/HEIF image", "image/avif", true)
    } else if at(0, b"%PDF-") {
        file_type("PDF document", "application/pdf", false)
    } else if at(0, b"PK\x03\x04") || at(0, b"PK\x05\x06") {
        file_type("ZIP archive", "application/zip", false)
    } else if at(0, b"\x1F\x8B") {
        file_type("gzip archive", "application/gzip", false)
    } else if at(0, b"BZh") && bytes.get(3).is_some_and(u8::is_ascii_digit) {
        file_type("bzip2 archive", "application/x-bzip2", false)
    } else if at(0, b"\xFD7zXZ\0") {
        file_type("xz archive", "application/x-xz", false)
    } else if at(0, b"\x28\xB5\x2F\xFD") {
        file_type("zstd archive", "application/zstd", false)
    } else if at(0, b"7z\xBC\xAF\x27\x1C") {
        file_type("7-Zip archive", "application/x-7z-compressed", false)
    } else if at(0, b"Rar!\x1A\x07") {
        file_type("RAR archive", "application/vnd.rar", false)
    } else if at(257, b"ustar") {
        file_type("tar archive", "application/x-tar", false)
    } else if at(0, b"\x7FELF") {
        file_type("ELF executable", "application/x-executable", false)
    } else if at(0, b"\xCF\xFA\xED\xFE") || at(0, b"\xCE\xFA\xED\xFE") || at(0, b"\xCA\xFE\xBA\xBE")
    {
        file_type("Mach-O executable", "application/x-mach-binary", false)
    } else if at(0, b"MZ") && bytes.contains(&0) {
        file_type(
            "Windows executable",
            "application/vnd.microsoft.portable-executable",
            false,
        )
    } else if at(0, b"\0asm") {
        file_type("WebAssembly module", "application/wasm", false)
    } else if at(0, b"SQLite format 3\0") {
        file_type("SQLite database", "application/vnd.sqlite3", false)
    } else if at(0, b"OggS") {
        file_type("Ogg media", "audio/ogg", false)
    } else if at(0, b"fLaC") {
        file_type("FLAC audio", "audio/flac", false)
    } else if at(0, b"RIFF") && at(8, b"WAVE") {
        file_type("WAV audio", "audio/wav", false)
    } else if at(0, b"ID3") {
        file_type("MP3 audio", "audio/mpeg", false)
    } else if at(4, b"ftyp") {
        file_type("MP4 media", "video/mp4", false)
    } else {
        return None;
    };
    Some(found)
}

/// Decodes a UTF-16 file (BOM included in `bytes`, dropped here); unpaired surrogates and a
/// trailing odd byte become U+FFFD.
pub(crate) fn decode_utf16(bytes: &[u8], order: Utf16Order) -> String {
    let body = bytes.get(2..).unwrap_or_default();
    let units = body.chunks_exact(2).map(|pair| match order {
        Utf16Order::Little => u16::from_le_bytes([pair[0], pair[1]]),
        Utf16Order::Big => u16::from_be_bytes([pair[0], pair[1]]),
    });
    let mut text: String = char::decode_utf16(units)
        .map(|unit| unit.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect();
    if body.len() % 2 == 1 {
        text.push(char::REPLACEMENT_CHARACTER);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_boms_and_binaries_are_told_apart() {
        assert_eq!(classify(b"hello\n", true), Content::Utf8 { bom: false });
        assert_eq!(
            classify(b"\xEF\xBB\xBFhi", true),
            Content::Utf8 { bom: true }
        );
        assert_eq!(
            classify(b"\xFF\xFEh\0", true),
            Content::Utf16(Utf16Order::Little)
        );
        assert_eq!(
            classify(b"\xFE\xFF\0h", true),
            Content::Utf16(Utf16Order::Big)
        );
        assert_eq!(classify(b"a\0b", true), Content::Binary(UNKNOWN_BINARY));
        // `FF FE 00 00` is UTF-32LE's mark, not UTF-16LE text starting with a NUL.
        assert_eq!(
            classify(b"\xFF\xFE\0\0h\0\0\0", true),
            Content::Binary(UTF32)
        );
        assert_eq!(
            classify(b"\0\0\xFE\xFF\0\0\0h", true),
            Content::Binary(UTF32)
        );
        assert_eq!(classify(b"caf\xE9", true), Content::Binary(NOT_UTF8));
        let png = classify(b"\x89PNG\r\n\x1a\n\0\0", true);
        assert!(matches!(png, Content::Binary(t) if t.mime == "image/png" && t.is_image));
    }

    #[test]
    fn a_character_cut_by_the_sniff_window_is_still_text() {
        // "é" is C3 A9; the window ended after C3.
        assert_eq!(classify(b"caf\xC3", false), Content::Utf8 { bom: false });
        assert_eq!(classify(b"caf\xC3", true), Content::Binary(NOT_UTF8));
    }

    #[test]
    fn utf16_decodes_both_orders() {
        assert_eq!(decode_utf16(b"\xFF\xFEh\0i\0", Utf16Order::Little), "hi");
        assert_eq!(decode_utf16(b"\xFE\xFF\0h\0i", Utf16Order::Big), "hi");
        assert_eq!(
            decode_utf16(b"\xFF\xFEh\0i", Utf16Order::Little),
            "h\u{FFFD}"
        );
    }
}
