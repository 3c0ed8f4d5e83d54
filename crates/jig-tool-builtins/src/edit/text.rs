//! Line structure of a file's text: line endings, line numbers and the LF-normalised view.
//!
//! Everything here works on the original text without copying it, except [`LfView`], which is
//! only built when a match needs line endings normalised (the text has a `\r` and the `oldText`
//! spans a line break).

use std::borrow::Cow;

use memchr::{memchr_iter, memchr2, memchr2_iter, memrchr2};

/// One of the three line endings a text file can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineEnding {
    /// `\n`
    Lf,
    /// `\r\n`
    CrLf,
    /// `\r` alone (classic Mac OS).
    Cr,
}

impl LineEnding {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Lf => "\n",
            Self::CrLf => "\r\n",
            Self::Cr => "\r",
        }
    }
}

/// The original text, with what is needed to count lines quickly.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Source<'a> {
    pub(crate) text: &'a str,
    /// Whether the text contains a `\r` at all; without one, `\n` is the only line break and
    /// every fast path applies.
    pub(crate) has_cr: bool,
}

impl<'a> Source<'a> {
    #[cfg(test)]
    pub(crate) fn new(text: &'a str) -> Self {
        Self {
            text,
            has_cr: memchr::memchr(b'\r', text.as_bytes()).is_some(),
        }
    }

    /// A source whose `\r` scan was already done (`has_cr` must be exact).
    pub(crate) fn with_cr(text: &'a str, has_cr: bool) -> Self {
        Self { text, has_cr }
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// Line breaks in `text[from..to]`: `\r\n` counts once, a lone `\r` counts.
    pub(crate) fn count_breaks(&self, from: usize, to: usize) -> usize {
        let bytes = self.bytes();
        let slice = &bytes[from..to];
        if !self.has_cr {
            return memchr_iter(b'\n', slice).count();
        }
        memchr2_iter(b'\n', b'\r', slice)
            .filter(|&i| slice[i] == b'\n' || bytes.get(from + i + 1) != Some(&b'\n'))
            .count()
    }

    /// Like `count_breaks`, but stops counting at `limit`.
    pub(crate) fn count_breaks_up_to(&self, from: usize, to: usize, limit: usize) -> usize {
        let bytes = self.bytes();
        memchr2_iter(b'\n', b'\r', &bytes[from..to])
            .filter(|&i| bytes[from + i] == b'\n' || bytes.get(from + i + 1) != Some(&b'\n'))
            .take(limit)
            .count()
    }

    /// Start of the line containing `pos`.
    pub(crate) fn line_start(&self, pos: usize) -> usize {
        memrchr2(b'\n', b'\r', &self.bytes()[..pos]).map_or(0, |i| i + 1)
    }

    /// Where the line containing `pos` ends: the offset of its line break, or the text's length.
    pub(crate) fn line_end(&self, pos: usize) -> usize {
        memchr2(b'\n', b'\r', &self.bytes()[pos..]).map_or(self.text.len(), |i| pos + i)
    }

    /// The length of the line break starting at `pos` (0 at the end or inside a line).
    pub(crate) fn break_len(&self, pos: usize) -> usize {
        match self.bytes().get(pos) {
            Some(b'\r') if self.bytes().get(pos + 1) == Some(&b'\n') => 2,
            Some(b'\n' | b'\r') => 1,
            _ => 0,
        }
    }

    /// The ending of the first line break inside `text[from..to]`.
    pub(crate) fn first_break_in(&self, from: usize, to: usize) -> Option<LineEnding> {
        let bytes = self.bytes();
        let i = from + memchr2(b'\n', b'\r', &bytes[from..to])?;
        Some(match bytes[i] {
            b'\n' => LineEnding::Lf,
            _ if bytes.get(i + 1) == Some(&b'\n') => LineEnding::CrLf,
            _ => LineEnding::Cr,
        })
    }

    /// The ending most lines use (ties prefer LF, then CRLF); LF for a text without breaks.
    pub(crate) fn dominant_ending(&self) -> LineEnding {
        if !self.has_cr {
            return LineEnding::Lf;
        }
        let bytes = self.bytes();
        let (mut lf, mut crlf, mut cr) = (0_usize, 0_usize, 0_usize);
        for i in memchr2_iter(b'\n', b'\r', bytes) {
            if bytes[i] == b'\n' {
                if i > 0 && bytes[i - 1] == b'\r' {
                    crlf += 1;
                } else {
                    lf += 1;
                }
            } else if bytes.get(i + 1) != Some(&b'\n') {
                cr += 1;
            }
        }
        if lf >= crlf && lf >= cr {
            LineEnding::Lf
        } else if crlf >= cr {
            LineEnding::CrLf
        } else {
            LineEnding::Cr
        }
    }
}

/// The text with every line break turned into `\n`, and the way back to original offsets.
///
/// A `\r\n` loses its `\r`; a lone `\r` becomes `\n` in place. `drops` holds, in order, the
/// view offsets of the `\n`s whose `\r` was dropped, so a view offset maps back by adding the
/// number of drops before it. A line break is never split: a view offset just before a `\n`
/// maps to just before the `\r\n`.
#[derive(Debug)]
pub(crate) struct LfView<'a> {
    pub(crate) text: Cow<'a, str>,
    drops: Vec<usize>,
}

impl<'a> LfView<'a> {
    pub(crate) fn new(source: Source<'a>) -> Self {
        if !source.has_cr {
            return Self {
                text: Cow::Borrowed(source.text),
                drops: Vec::new(),
            };
        }
        let text = source.text;
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut drops = Vec::new();
        let mut copied = 0;
        for i in memchr_iter(b'\r', bytes) {
            out.push_str(&text[copied..i]);
            if bytes.get(i + 1) == Some(&b'\n') {
                drops.push(out.len());
            } else {
                out.push('\n');
            }
            copied = i + 1;
        }
        out.push_str(&text[copied..]);
        Self {
            text: Cow::Owned(out),
            drops,
        }
    }

    /// The original offset of view offset `n`.
    pub(crate) fn to_original(&self, n: usize) -> usize {
        n + self.drops.partition_point(|&j| j < n)
    }
}

/// `text` with `\r\n` and lone `\r` turned into `\n` (what `oldText`/`newText` are matched as).
pub(crate) fn normalize_newlines(text: &str) -> Cow<'_, str> {
    if !text.contains('\r') {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
}

/// `text` (LF line breaks) with every `\n` turned into `ending`.
pub(crate) fn apply_ending(text: &str, ending: LineEnding) -> Cow<'_, str> {
    if ending == LineEnding::Lf || !text.contains('\n') {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(text.replace('\n', ending.as_str()))
    }
}

/// Counts `\n` in `text[..to]` incrementally: successive calls must pass non-decreasing `to`.
#[derive(Debug)]
pub(crate) struct LineCounter<'a> {
    text: &'a [u8],
    position: usize,
    breaks: usize,
}

impl<'a> LineCounter<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Self {
            text: text.as_bytes(),
            position: 0,
            breaks: 0,
        }
    }

    /// The 1-based line number of offset `to` (a view in which `\n` is the only break).
    pub(crate) fn line_of(&mut self, to: usize) -> usize {
        if to < self.position {
            self.position = 0;
            self.breaks = 0;
        }
        self.breaks += memchr_iter(b'\n', &self.text[self.position..to]).count();
        self.position = to;
        self.breaks + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lf_view_maps_offsets_back_without_splitting_crlf() {
        let source = Source::new("a\r\nb\rc\r\nd");
        let view = LfView::new(source);
        assert_eq!(view.text, "a\nb\nc\nd");
        // "a" ends at 1 in both; the "\n" (view 1..2) is "\r\n" (original 1..3).
        assert_eq!(view.to_original(1), 1);
        assert_eq!(view.to_original(2), 3);
        // lone CR keeps its offset
        assert_eq!(view.to_original(4), 5);
        assert_eq!(view.to_original(5), 6);
        assert_eq!(view.to_original(6), 8);
        assert_eq!(view.to_original(7), 9);
    }

    #[test]
    fn counts_breaks_of_every_kind() {
        let source = Source::new("a\r\nb\rc\nd");
        assert_eq!(source.count_breaks(0, source.text.len()), 3);
        assert_eq!(source.dominant_ending(), LineEnding::Lf);
        assert_eq!(
            Source::new("a\r\nb\r\nc\n").dominant_ending(),
            LineEnding::CrLf
        );
        assert_eq!(Source::new("abc").dominant_ending(), LineEnding::Lf);
        assert_eq!(source.first_break_in(0, 4), Some(LineEnding::CrLf));
        assert_eq!(source.first_break_in(3, 6), Some(LineEnding::Cr));
        assert_eq!(source.first_break_in(0, 1), None);
    }

    #[test]
    fn line_bounds() {
        let source = Source::new("ab\r\ncd\nef");
        assert_eq!(source.line_start(5), 4);
        assert_eq!(source.line_end(5), 6);
        assert_eq!(source.line_end(7), 9);
        assert_eq!(source.break_len(2), 2);
        assert_eq!(source.break_len(6), 1);
        assert_eq!(source.break_len(9), 0);
    }

    #[test]
    fn newline_helpers() {
        assert_eq!(normalize_newlines("a\r\nb\rc"), "a\nb\nc");
        assert_eq!(apply_ending("a\nb", LineEnding::CrLf), "a\r\nb");
        let mut counter = LineCounter::new("a\nb\nc");
        assert_eq!(counter.line_of(0), 1);
        assert_eq!(counter.line_of(2), 2);
        assert_eq!(counter.line_of(5), 3);
    }
}
