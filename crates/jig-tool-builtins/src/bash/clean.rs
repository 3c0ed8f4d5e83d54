//! Turning a process's raw output into what a model should read.
//!
//! - [`Utf8Decoder`]: streaming UTF-8; a character split across chunks is joined, invalid bytes
//!   become U+FFFD.
//! - [`Cleaner`]: what a terminal would finally show, as plain text. ANSI escape sequences (CSI,
//!   OSC, DCS/SOS/PM/APC strings, two-byte escapes) are removed; a carriage return moves the
//!   cursor to the start of the line so later text overwrites it (`abcdef\rxy` shows `xycdef`;
//!   progress bars become their last state); `CSI K` erases to the end of the line and
//!   `CSI 2K` the whole line; `CSI G` moves the cursor to a column; CRLF becomes LF; every other
//!   C0/C1 control character except tab and newline is removed.
//!
//! Limits: a line longer than [`LINE_CAP`] bytes is passed on in pieces (so the unfinished line
//! never holds more than `LINE_CAP` plus one pushed piece), and a carriage return after that point
//! only overwrites the part not yet passed on. Cursor movement other than
//! `\r` and `CSI G` (up, down, back) is ignored. Columns are characters, not display cells.

/// The longest line kept whole for carriage-return overwrites.
pub(crate) const LINE_CAP: usize = 64 * 1024;

/// Streaming UTF-8 decoder with replacement of invalid bytes.
#[derive(Debug, Default)]
pub(crate) struct Utf8Decoder {
    pending: Vec<u8>,
}

impl Utf8Decoder {
    /// Decodes `chunk`, passing valid text to `out`. An incomplete character at the end is kept
    /// for the next chunk.
    pub(crate) fn decode(&mut self, mut chunk: &[u8], out: &mut impl FnMut(&str)) {
        if !self.pending.is_empty() {
            let extra = chunk.len().min(3);
            let mut joined = std::mem::take(&mut self.pending);
            let pending_len = joined.len();
            joined.extend_from_slice(&chunk[..extra]);
            let consumed = decode_complete(&joined, out);
            if consumed < pending_len {
                // Still incomplete: only possible when the chunk was shorter than 3 bytes.
                self.pending = joined[consumed..].to_vec();
                return;
            }
            chunk = &chunk[consumed - pending_len..];
        }
        let consumed = decode_complete(chunk, out);
        self.pending.extend_from_slice(&chunk[consumed..]);
    }

    /// Flushes an incomplete character at the end of the stream as U+FFFD.
    pub(crate) fn finish(&mut self, out: &mut impl FnMut(&str)) {
        if !self.pending.is_empty() {
            self.pending.clear();
            out("\u{FFFD}");
        }
    }
}

/// Decodes `bytes` up to an incomplete character at the end; returns how many bytes were used.
fn decode_complete(mut bytes: &[u8], out: &mut impl FnMut(&str)) -> usize {
    let total = bytes.len();
    loop {
        match std::str::from_utf8(bytes) {
            Ok(text) => {
                if !text.is_empty() {
                    out(text);
                }
                return total;
            }
            Err(error) => {
                let (valid, rest) = bytes.split_at(error.valid_up_to());
                if let Ok(text) = std::str::from_utf8(valid)
                    && !text.is_empty()
                {
                    out(text);
                }
                match error.error_len() {
                    None => return total - rest.len(),
                    Some(bad) => {
                        out("\u{FFFD}");
                        bytes = &rest[bad..];
                    }
                }
            }
        }
    }
}

/// Escape-sequence parser state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    None,
    /// After ESC.
    Start,
    /// ESC followed by intermediate bytes (`ESC ( B`).
    Intermediate,
    /// Control Sequence Introducer: parameters so far (first numeric parameter).
    Csi {
        param: u32,
    },
    /// OSC, DCS, SOS, PM or APC string, ended by BEL or ESC \.
    Text {
        len: usize,
    },
    /// ESC inside a string: `\` ends it.
    TextEsc,
}

/// Whether `byte` needs more than copying: C0 controls except newline and tab, DEL, and 0xC2
/// (the lead byte of the C1 controls U+0080–U+009F). Branch-free, so a block of bytes is
/// checked with vector instructions.
#[inline]
#[expect(
    clippy::needless_bitwise_bool,
    reason = "no short-circuit branches: the block test must vectorise"
)]
fn is_special(byte: u8) -> bool {
    (byte < 0x20) & (byte != b'\n') & (byte != b'\t') | (byte == 0x7f) | (byte == 0xc2)
}

/// The offset of the first special byte in `bytes`. Output is mostly ordinary text: whole
/// 32-byte blocks are tested at once and only a block with a special byte is searched byte by
/// byte.
fn first_special(bytes: &[u8]) -> Option<usize> {
    const BLOCK: usize = 32;
    let mut offset = 0;
    for block in bytes.chunks_exact(BLOCK) {
        if block
            .iter()
            .fold(false, |any, &byte| any | is_special(byte))
        {
            break;
        }
        offset += BLOCK;
    }
    bytes[offset..]
        .iter()
        .position(|&byte| is_special(byte))
        .map(|position| offset + position)
}

/// An unterminated OSC/DCS string stops swallowing output after this many bytes.
const MAX_ESCAPE_STRING: usize = 4096;

/// Terminal-semantics cleaner. Feed it decoded text; it passes cleaned text to `out`, a line at
/// a time (plus pieces of lines longer than [`LINE_CAP`]).
#[derive(Debug)]
pub(crate) struct Cleaner {
    escape: Escape,
    /// The current (unfinished) line.
    line: String,
    /// Byte offset of the cursor in `line` (always on a character boundary).
    cursor: usize,
}

impl Default for Cleaner {
    fn default() -> Self {
        Self {
            escape: Escape::None,
            line: String::new(),
            cursor: 0,
        }
    }
}

impl Cleaner {
    /// Cleans `text`, passing finished text to `out`.
    pub(crate) fn push(&mut self, text: &str, out: &mut impl FnMut(&str)) {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if self.escape == Escape::None && self.cursor == self.line.len() {
                // Fast path: copy a run of ordinary bytes; whole lines go straight out.
                let run_end = first_special(&bytes[i..]).map_or(bytes.len(), |p| i + p);
                if run_end > i {
                    self.push_plain(&text[i..run_end], out);
                    i = run_end;
                    continue;
                }
            }
            i = self.step(text, i, out);
        }
    }

    /// Appends ordinary text (no specials) at the end of the line.
    fn push_plain(&mut self, run: &str, out: &mut impl FnMut(&str)) {
        match memchr::memrchr(b'\n', run.as_bytes()) {
            Some(last_newline) => {
                let (lines, rest) = run.split_at(last_newline + 1);
                if self.line.is_empty() {
                    out(lines);
                } else {
                    let first_newline = memchr::memchr(b'\n', lines.as_bytes()).unwrap_or(0);
                    self.line.push_str(&lines[..=first_newline]);
                    out(&self.line);
                    self.line.clear();
                    if first_newline + 1 < lines.len() {
                        out(&lines[first_newline + 1..]);
                    }
                }
                self.line.push_str(rest);
            }
            None => self.line.push_str(run),
        }
        self.cursor = self.line.len();
        self.cap_line(out);
    }

    /// Passes on a line that grew past [`LINE_CAP`] (only when the cursor is at its end).
    fn cap_line(&mut self, out: &mut impl FnMut(&str)) {
        if self.line.len() > LINE_CAP && self.cursor == self.line.len() {
            out(&self.line);
            self.line.clear();
            self.cursor = 0;
        }
    }

    /// Handles the character at `i` (slow path); returns the index after it.
    #[expect(
        clippy::too_many_lines,
        reason = "one escape-sequence state machine reads best in one place"
    )]
    fn step(&mut self, text: &str, i: usize, out: &mut impl FnMut(&str)) -> usize {
        let bytes = text.as_bytes();
        let byte = bytes[i];
        match self.escape {
            Escape::None => {}
            Escape::Start => {
                self.escape = match byte {
                    b'[' => Escape::Csi { param: 0 },
                    b']' | b'P' | b'X' | b'^' | b'_' => Escape::Text { len: 0 },
                    0x20..=0x2f => Escape::Intermediate,
                    0x30..=0x7e => Escape::None,
                    // A control character or non-ASCII ends the escape and is handled normally.
                    _ => {
                        self.escape = Escape::None;
                        return i;
                    }
                };
                return i + 1;
            }
            Escape::Intermediate => {
                self.escape = match byte {
                    0x20..=0x2f => Escape::Intermediate,
                    0x30..=0x7e => Escape::None,
                    _ => {
                        self.escape = Escape::None;
                        return i;
                    }
                };
                return i + 1;
            }
            Escape::Csi { param } => {
                match byte {
                    b'0'..=b'9' => {
                        let digit = u32::from(byte - b'0');
                        self.escape = Escape::Csi {
                            param: param.saturating_mul(10).saturating_add(digit),
                        };
                    }
                    0x20..=0x3f => {
                        // Further parameters, separators and intermediates: the first number is
                        // all the handled sequences need; later ones must not change it.
                        self.escape = Escape::Csi {
                            param: param | 0x8000_0000,
                        };
                    }
                    0x40..=0x7e => {
                        self.escape = Escape::None;
                        self.apply_csi(byte, param & 0x7fff_ffff);
                    }
                    _ => {
                        self.escape = Escape::None;
                        return i;
                    }
                }
                return i + 1;
            }
            Escape::Text { len } => {
                match byte {
                    0x07 => self.escape = Escape::None,
                    0x1b => self.escape = Escape::TextEsc,
                    b'\n' => {
                        // A newline ends a runaway string; the newline itself is kept.
                        self.escape = Escape::None;
                        return i;
                    }
                    _ if len >= MAX_ESCAPE_STRING => {
                        self.escape = Escape::None;
                        return i;
                    }
                    _ => self.escape = Escape::Text { len: len + 1 },
                }
                return i + 1;
            }
            Escape::TextEsc => {
                if byte == b'\\' {
                    self.escape = Escape::None;
                    return i + 1;
                }
                // ESC starts a new sequence; the string was cut short.
                self.escape = Escape::Start;
                return i;
            }
        }
        match byte {
            b'\n' => {
                self.line.push('\n');
                out(&self.line);
                self.line.clear();
                self.cursor = 0;
                i + 1
            }
            b'\r' => {
                self.cursor = 0;
                i + 1
            }
            0x1b => {
                self.escape = Escape::Start;
                i + 1
            }
            b'\t' => {
                self.write_char("\t");
                i + 1
            }
            0x00..=0x1f | 0x7f => i + 1,
            0xc2 if matches!(bytes.get(i + 1), Some(0x80..=0x9f)) => i + 2,
            _ => {
                let len = utf8_len(byte);
                self.write_char(&text[i..i + len]);
                self.cap_line(out);
                i + len
            }
        }
    }

    /// Writes one character at the cursor, overwriting what is there.
    fn write_char(&mut self, character: &str) {
        if self.cursor == self.line.len() {
            self.line.push_str(character);
        } else {
            let old = utf8_len(self.line.as_bytes()[self.cursor]);
            self.line
                .replace_range(self.cursor..self.cursor + old, character);
        }
        self.cursor += character.len();
    }

    fn apply_csi(&mut self, final_byte: u8, param: u32) {
        match final_byte {
            // Erase in line: 0 = cursor to end, 1 = start to cursor, 2 = whole line.
            b'K' => match param {
                0 => self.line.truncate(self.cursor),
                1 => {
                    let blanks = " ".repeat(self.line[..self.cursor].chars().count());
                    self.line.replace_range(..self.cursor, &blanks);
                    self.cursor = blanks.len();
                }
                _ => {
                    self.line.clear();
                    self.cursor = 0;
                }
            },
            // Cursor to column `param` (1-based; 0 means 1).
            b'G' => {
                let column = param.saturating_sub(1) as usize;
                self.cursor = self
                    .line
                    .char_indices()
                    .nth(column)
                    .map_or(self.line.len(), |(at, _)| at);
            }
            _ => {}
        }
    }

    /// The unfinished last line as it would show now.
    pub(crate) fn pending_line(&self) -> &str {
        &self.line
    }

    /// Passes on the unfinished last line, if any.
    pub(crate) fn finish(&mut self, out: &mut impl FnMut(&str)) {
        if !self.line.is_empty() {
            out(&self.line);
        }
        self.line.clear();
        self.cursor = 0;
        self.escape = Escape::None;
    }
}

/// Length of the UTF-8 sequence starting with `lead` (1 for anything unexpected).
fn utf8_len(lead: u8) -> usize {
    match lead {
        0xf0..=0xff => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn the_block_scan_finds_the_first_special_byte_anywhere() {
        let specials: Vec<u8> = (0..=255_u8)
            .filter(|&b| (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f || b == 0xc2)
            .collect();
        assert_eq!(specials.len(), 32);
        for len in [0, 1, 31, 32, 33, 64, 100] {
            let plain = vec![b'a'; len];
            assert_eq!(first_special(&plain), None, "length {len}");
            for position in 0..len {
                for &special in &specials {
                    let mut bytes = plain.clone();
                    bytes[position] = special;
                    if position + 1 < len {
                        bytes[len - 1] = 0x1b;
                    }
                    assert_eq!(
                        first_special(&bytes),
                        Some(position),
                        "byte {special:#x} at {position} of {len}"
                    );
                }
            }
        }
        assert_eq!(first_special(b"tab\tand newline\n only"), None);
    }

    fn clean(input: &str) -> String {
        let mut cleaner = Cleaner::default();
        let mut out = String::new();
        cleaner.push(input, &mut |s: &str| out.push_str(s));
        cleaner.finish(&mut |s: &str| out.push_str(s));
        out
    }

    fn decode_chunks(chunks: &[&[u8]]) -> String {
        let mut decoder = Utf8Decoder::default();
        let mut out = String::new();
        for chunk in chunks {
            decoder.decode(chunk, &mut |s: &str| out.push_str(s));
        }
        decoder.finish(&mut |s: &str| out.push_str(s));
        out
    }

    #[test]
    fn carriage_return_overwrites_like_a_terminal() {
        assert_eq!(clean("abcdef\rxy"), "xycdef");
        assert_eq!(clean("abcdef\rxy\n"), "xycdef\n");
        assert_eq!(clean("10%\r50%\r100%\ndone\n"), "100%\ndone\n");
        assert_eq!(clean("héllo\rab"), "abllo");
        assert_eq!(clean("ab\rç"), "çb");
    }

    #[test]
    fn crlf_becomes_lf() {
        assert_eq!(clean("one\r\ntwo\r\n"), "one\ntwo\n");
    }

    #[test]
    fn ansi_and_osc_are_removed() {
        assert_eq!(clean("\x1b[1;31mred\x1b[0m plain"), "red plain");
        assert_eq!(clean("\x1b]0;title\x07text"), "text");
        assert_eq!(clean("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"), "link");
        assert_eq!(clean("\x1b(Bx\x1b=y"), "xy");
        assert_eq!(clean("\x1bPdcs\x1b\\z"), "z");
    }

    #[test]
    fn erase_and_column_sequences_act_on_the_line() {
        assert_eq!(clean("downloading 10%\r\x1b[Kok\n"), "ok\n");
        assert_eq!(clean("long progress line\x1b[2K\rshort\n"), "short\n");
        assert_eq!(clean("abcdef\x1b[1Gxy\n"), "xycdef\n");
        assert_eq!(clean("abcdef\x1b[3G\x1b[K\n"), "ab\n");
    }

    #[test]
    fn control_characters_are_removed_except_tab_and_newline() {
        assert_eq!(
            clean("a\x00b\x07c\x08d\te\x7ff\u{85}g\u{9b}h\u{a0}i\n"),
            "abcd\tef".to_owned() + "gh\u{a0}i\n"
        );
    }

    #[test]
    fn a_runaway_escape_string_ends_at_a_newline() {
        assert_eq!(clean("\x1b]unterminated\nnext line\n"), "\nnext line\n");
    }

    #[test]
    fn split_characters_are_joined_across_chunks() {
        let text = "é€😀";
        let bytes = text.as_bytes();
        for split in 0..=bytes.len() {
            assert_eq!(
                decode_chunks(&[&bytes[..split], &bytes[split..]]),
                text,
                "split at {split}"
            );
        }
        let pieces: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(decode_chunks(&pieces), text);
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        assert_eq!(decode_chunks(&[b"a\xffb"]), "a\u{FFFD}b");
        assert_eq!(decode_chunks(&[b"a\xe2\x82"]), "a\u{FFFD}");
        assert_eq!(decode_chunks(&[b"\xe2", b"\x82", b"x"]), "\u{FFFD}x");
    }

    #[test]
    fn very_long_lines_are_passed_on_in_pieces() {
        let mut cleaner = Cleaner::default();
        let mut pieces = Vec::new();
        let long = "x".repeat(LINE_CAP * 3);
        let mut out = String::new();
        for piece in long.as_bytes().chunks(4096) {
            let piece = std::str::from_utf8(piece).unwrap();
            cleaner.push(piece, &mut |s: &str| {
                pieces.push(s.len());
                out.push_str(s);
            });
            assert!(cleaner.pending_line().len() <= LINE_CAP);
        }
        cleaner.finish(&mut |s: &str| out.push_str(s));
        assert_eq!(out, long);
        assert!(pieces.iter().all(|&len| len <= LINE_CAP + 4096));
    }

    proptest! {
        #[test]
        fn chunking_never_changes_the_result(text in "[a-zé€😀\\r\\n\\t\\x1b\\[0-9;mK]{0,80}", split in 0usize..100) {
            let bytes = text.as_bytes();
            let split = split.min(bytes.len());
            let whole = {
                let mut out = String::new();
                let mut decoder = Utf8Decoder::default();
                let mut cleaner = Cleaner::default();
                decoder.decode(bytes, &mut |s: &str| cleaner.push(s, &mut |c: &str| out.push_str(c)));
                cleaner.finish(&mut |c: &str| out.push_str(c));
                out
            };
            let parts = {
                let mut out = String::new();
                let mut decoder = Utf8Decoder::default();
                let mut cleaner = Cleaner::default();
                for part in [&bytes[..split], &bytes[split..]] {
                    decoder.decode(part, &mut |s: &str| cleaner.push(s, &mut |c: &str| out.push_str(c)));
                }
                cleaner.finish(&mut |c: &str| out.push_str(c));
                out
            };
            prop_assert_eq!(&whole, &parts);
            prop_assert!(!whole.contains('\r'));
            prop_assert!(!whole.contains('\x1b'));
        }
    }
}
