//! Byte-order marks: the Unicode encoding a file's first bytes announce. `read` and `edit` both
//! ask here, so they agree on what a file is.
//!
//! `FF FE 00 00` is the UTF-32LE mark, not UTF-16LE's `FF FE` followed by a NUL character: it is
//! checked first (as the WHATWG and ICU detectors do). Neither tool decodes UTF-32: `read`
//! describes such a file instead of showing it, `edit` refuses it.

/// The UTF-8 byte-order mark.
pub(crate) const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// An encoding announced by a byte-order mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bom {
    /// `EF BB BF`.
    Utf8,
    /// `FF FE` (and not `FF FE 00 00`).
    Utf16Le,
    /// `FE FF`.
    Utf16Be,
    /// `FF FE 00 00`.
    Utf32Le,
    /// `00 00 FE FF`.
    Utf32Be,
}

impl Bom {
    /// The mark `bytes` start with, if any.
    pub(crate) fn sniff(bytes: &[u8]) -> Option<Self> {
        [
            Self::Utf32Le,
            Self::Utf32Be,
            Self::Utf8,
            Self::Utf16Le,
            Self::Utf16Be,
        ]
        .into_iter()
        .find(|bom| bytes.starts_with(bom.bytes()))
    }

    /// The mark's bytes.
    pub(crate) fn bytes(self) -> &'static [u8] {
        match self {
            Self::Utf8 => UTF8_BOM,
            Self::Utf16Le => b"\xFF\xFE",
            Self::Utf16Be => b"\xFE\xFF",
            Self::Utf32Le => b"\xFF\xFE\0\0",
            Self::Utf32Be => b"\0\0\xFE\xFF",
        }
    }

    /// The encoding's name (`UTF-16LE`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Utf8 => "UTF-8",
            Self::Utf16Le => "UTF-16LE",
            Self::Utf16Be => "UTF-16BE",
            Self::Utf32Le => "UTF-32LE",
            Self::Utf32Be => "UTF-32BE",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_mark_is_told_apart_and_utf32le_wins_over_utf16le() {
        assert_eq!(Bom::sniff(b"\xEF\xBB\xBFa"), Some(Bom::Utf8));
        assert_eq!(Bom::sniff(b"\xFF\xFEa\0"), Some(Bom::Utf16Le));
        assert_eq!(Bom::sniff(b"\xFE\xFF\0a"), Some(Bom::Utf16Be));
        assert_eq!(Bom::sniff(b"\xFF\xFE\0\0a\0\0\0"), Some(Bom::Utf32Le));
        assert_eq!(Bom::sniff(b"\0\0\xFE\xFF\0\0\0a"), Some(Bom::Utf32Be));
        assert_eq!(Bom::sniff(b"\xFF\xFE"), Some(Bom::Utf16Le));
        assert_eq!(Bom::sniff(b"plain"), None);
    }
}
