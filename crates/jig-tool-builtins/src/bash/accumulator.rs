//! Bounded memory for any amount of output: the cleaned text is counted in full but only its
//! beginning (a head buffer) and its end (a rolling tail buffer) are kept.
//!
//! Memory: the head holds at most `max_bytes` bytes, the tail less than `8 × max_bytes` (it is
//! cut back to `2 × max_bytes` when it grows past `4 × max_bytes`), plus the cleaner's unfinished line (at most
//! [`LINE_CAP`](super::clean::LINE_CAP)). Nothing else grows with the output.

use jig_truncate::{
    TruncatedBy, TruncationOptions, floor_char_boundary, truncate_head, truncate_tail,
};

use super::clean::{Cleaner, Utf8Decoder};

/// The model's budget for one result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) max_lines: usize,
    pub(crate) max_bytes: usize,
}

/// Decodes, cleans and keeps head and tail of a process's output.
#[derive(Debug)]
pub(crate) struct OutputAccumulator {
    decoder: Utf8Decoder,
    cleaner: Cleaner,
    text: TextStore,
}

impl OutputAccumulator {
    pub(crate) fn new(limits: Limits) -> Self {
        Self {
            decoder: Utf8Decoder::default(),
            cleaner: Cleaner::default(),
            text: TextStore::new(limits),
        }
    }

    /// Adds raw output bytes.
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        let Self {
            decoder,
            cleaner,
            text,
        } = self;
        decoder.decode(chunk, &mut |decoded: &str| {
            cleaner.push(decoded, &mut |clean: &str| text.push(clean));
        });
    }

    /// Ends the stream: flushes an incomplete character and the unfinished line.
    pub(crate) fn finish(&mut self) {
        let Self {
            decoder,
            cleaner,
            text,
        } = self;
        decoder.finish(&mut |decoded: &str| {
            cleaner.push(decoded, &mut |clean: &str| text.push(clean));
        });
        cleaner.finish(&mut |clean: &str| text.push(clean));
    }

    /// The cleaned text seen so far, the unfinished line included (for streaming updates).
    pub(crate) fn snapshot(&self) -> TextStore {
        let mut store = self.text.clone();
        store.push(self.cleaner.pending_line());
        store
    }

    /// The cleaned text (complete after [`finish`](Self::finish)).
    pub(crate) fn text(&self) -> &TextStore {
        &self.text
    }
}

/// Counters plus head and tail of a text stream.
#[derive(Debug, Clone)]
pub(crate) struct TextStore {
    limits: Limits,
    head: String,
    tail: String,
    total_bytes: u64,
    total_newlines: u64,
    ends_with_newline: bool,
}

/// What the model is shown of the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shown {
    /// The output text (whole, or head + marker + tail).
    pub(crate) text: String,
    /// Set when something was left out.
    pub(crate) truncation: Option<Truncation>,
}

/// What was left out, exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Truncation {
    pub(crate) truncated_by: TruncatedBy,
    pub(crate) total_lines: u64,
    pub(crate) total_bytes: u64,
    /// Lines `1..=head_lines` are shown.
    pub(crate) head_lines: u64,
    /// The last `tail_lines` lines are shown (the first of them may be partial).
    pub(crate) tail_lines: u64,
    /// The tail is the end of one line longer than the budget.
    pub(crate) last_line_partial: bool,
    /// Bytes of the shown tail.
    pub(crate) tail_bytes: u64,
    /// Newlines in the omitted middle (= whole lines omitted).
    pub(crate) omitted_lines: u64,
    /// Bytes of the omitted middle.
    pub(crate) omitted_bytes: u64,
}

/// What the caller appends after the shown text; it must fit in the budget too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reserve {
    pub(crate) bytes: usize,
    pub(crate) lines: usize,
}

impl TextStore {
    fn new(limits: Limits) -> Self {
        Self {
            limits,
            head: String::new(),
            tail: String::new(),
            total_bytes: 0,
            total_newlines: 0,
            ends_with_newline: false,
        }
    }

    fn push(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.total_bytes += text.len() as u64;
        self.total_newlines += memchr::memchr_iter(b'\n', text.as_bytes()).count() as u64;
        self.ends_with_newline = text.ends_with('\n');
        let head_room = self.limits.max_bytes.saturating_sub(self.head.len());
        if head_room > 0 {
            self.head
                .push_str(&text[..floor_char_boundary(text, head_room.min(text.len()))]);
        }
        let keep = 2 * self.limits.max_bytes;
        if text.len() > 2 * keep {
            // A huge piece: only its end can matter.
            self.tail.clear();
            let start = floor_char_boundary(text, text.len() - keep);
            self.tail.push_str(&text[start..]);
            self.align_tail();
        } else {
            self.tail.push_str(text);
            if self.tail.len() > 2 * keep {
                let cut = floor_char_boundary(&self.tail, self.tail.len() - keep);
                self.tail.drain(..cut);
                self.align_tail();
            }
        }
    }

    /// After a cut: start the tail at a line start when one is in it. A tail without a newline
    /// is the end of one long line, longer than any budget.
    fn align_tail(&mut self) {
        if let Some(newline) = memchr::memchr(b'\n', self.tail.as_bytes())
            && newline + 1 < self.tail.len()
        {
            self.tail.drain(..=newline);
        }
    }

    /// Lines in the text: a final line without `\n` counts, a trailing `\n` adds none.
    pub(crate) fn total_lines(&self) -> u64 {
        self.total_newlines + u64::from(self.total_bytes > 0 && !self.ends_with_newline)
    }

    /// Bytes of cleaned text.
    pub(crate) fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Bytes retained in memory (head + tail), for tests of the memory bound.
    #[cfg(test)]
    pub(crate) fn retained_bytes(&self) -> usize {
        self.head.capacity() + self.tail.capacity()
    }

    /// Whether the text fits with `reserve` appended.
    pub(crate) fn fits(&self, reserve: Reserve) -> bool {
        self.total_bytes + reserve.bytes as u64 <= self.limits.max_bytes as u64
            && self.total_lines() + reserve.lines as u64 <= self.limits.max_lines as u64
    }

    /// The text to show. When it fits with `whole_reserve` appended it is shown whole;
    /// otherwise head and tail with a marker in between, leaving room for `cut_reserve` (the
    /// caller's notice and status, sized for the largest numbers it may print).
    pub(crate) fn show(&self, whole_reserve: Reserve, cut_reserve: Reserve) -> Shown {
        if self.fits(whole_reserve) {
            return Shown {
                text: self.head.clone(),
                truncation: None,
            };
        }
        let total_lines = self.total_lines();
        let marker_room = marker(total_lines, self.total_bytes).len();
        let budget_bytes = self
            .limits
            .max_bytes
            .saturating_sub(cut_reserve.bytes + marker_room)
            .max(1);
        // The marker is one line.
        let budget_lines = self
            .limits
            .max_lines
            .saturating_sub(cut_reserve.lines + 1)
            .max(1);
        let truncated_by =
            if self.total_bytes + whole_reserve.bytes as u64 > self.limits.max_bytes as u64 {
                TruncatedBy::Bytes
            } else {
                TruncatedBy::Lines
            };

        // Most of the budget goes to the tail, where errors usually are.
        let head_options = TruncationOptions {
            max_lines: budget_lines / 5,
            max_bytes: budget_bytes / 5,
        };
        let head = truncate_head(&self.head, head_options);
        let (head_text, head_lines) = if head.truncated && head.output_lines > 0 {
            (format!("{}\n", head.content), head.output_lines as u64)
        } else {
            (String::new(), 0)
        };
        let tail_options = TruncationOptions {
            max_lines: budget_lines
                .saturating_sub(usize::try_from(head_lines).unwrap_or(usize::MAX))
                .max(1),
            max_bytes: (budget_bytes - head_text.len()).max(1),
        };
        let mut tail = truncate_tail(&self.tail, tail_options);
        // The tail must not reach back into the head (possible only for tiny budgets).
        let head_end = head_text.len() as u64;
        let mut tail_start = self.total_bytes - tail.content.len() as u64;
        if tail_start < head_end {
            let skip = usize::try_from(head_end - tail_start)
                .unwrap_or(usize::MAX)
                .min(tail.content.len());
            let from = jig_truncate::ceil_char_boundary(tail.content, skip);
            tail.content = &tail.content[from..];
            tail.output_lines = jig_truncate::count_lines(tail.content);
            tail_start = self.total_bytes - tail.content.len() as u64;
        }
        let tail_newlines = memchr::memchr_iter(b'\n', tail.content.as_bytes()).count() as u64;
        let omitted_lines = self.total_newlines - head_lines - tail_newlines;
        let omitted_bytes = tail_start - head_end;

        let mut text = head_text;
        text.push_str(&marker(omitted_lines, omitted_bytes));
        text.push_str(tail.content);
        Shown {
            text,
            truncation: Some(Truncation {
                truncated_by,
                total_lines,
                total_bytes: self.total_bytes,
                head_lines,
                tail_lines: tail.output_lines as u64,
                last_line_partial: tail.last_line_partial,
                tail_bytes: tail.content.len() as u64,
                omitted_lines,
                omitted_bytes,
            }),
        }
    }
}

/// The line standing for the omitted middle.
fn marker(lines: u64, bytes: u64) -> String {
    format!("[... {lines} lines ({bytes} bytes) omitted ...]\n")
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use proptest::prelude::*;

    use super::*;

    const NONE: Reserve = Reserve { bytes: 0, lines: 0 };

    fn store(text: &str, max_lines: usize, max_bytes: usize) -> TextStore {
        let mut accumulator = OutputAccumulator::new(Limits {
            max_lines,
            max_bytes,
        });
        accumulator.push(text.as_bytes());
        accumulator.finish();
        accumulator.text().clone()
    }

    #[test]
    fn small_output_is_shown_whole() {
        let shown = store("a\nb\n", 10, 100).show(NONE, NONE);
        assert_eq!(
            shown,
            Shown {
                text: "a\nb\n".into(),
                truncation: None
            }
        );
    }

    #[test]
    fn long_output_keeps_head_and_tail_with_an_exact_marker() {
        let text: String = (1..=100).fold(String::new(), |mut text, n| {
            let _ = writeln!(text, "line {n}");
            text
        });
        let shown = store(&text, 20, 10_000).show(NONE, NONE);
        let truncation = shown.truncation.clone().unwrap();
        assert_eq!(truncation.truncated_by, TruncatedBy::Lines);
        assert_eq!(truncation.head_lines, 3);
        assert_eq!(truncation.tail_lines, 16);
        assert_eq!(truncation.omitted_lines, 100 - 3 - 16);
        assert!(
            shown
                .text
                .starts_with("line 1\nline 2\nline 3\n[... 81 lines ("),
            "{}",
            shown.text
        );
        let tail: String = (85..=100).fold(String::new(), |mut text, n| {
            let _ = writeln!(text, "line {n}");
            text
        });
        assert!(
            shown.text.ends_with(&format!(" omitted ...]\n{tail}")),
            "{}",
            shown.text
        );
        // Marker included, the model gets exactly the line budget.
        assert_eq!(jig_truncate::count_lines(&shown.text), 20);
        // The omitted bytes are exactly the lines 4..=84.
        let omitted: usize = (4..=84).map(|n| format!("line {n}\n").len()).sum();
        assert_eq!(truncation.omitted_bytes, omitted as u64);
    }

    #[test]
    fn one_huge_line_shows_its_end() {
        let text = format!("{}END", "x".repeat(1_000_000));
        let shown = store(&text, 2000, 1000).show(NONE, NONE);
        let truncation = shown.truncation.unwrap();
        assert!(truncation.last_line_partial);
        assert!(shown.text.len() <= 1000);
        assert!(shown.text.ends_with("xxxEND"));
        assert_eq!(truncation.omitted_lines, 0);
        assert_eq!(
            truncation.omitted_bytes + truncation.tail_bytes,
            text.len() as u64
        );
    }

    #[test]
    fn memory_stays_bounded_for_a_gigabyte() {
        let limits = Limits {
            max_lines: 2000,
            max_bytes: 50 * 1024,
        };
        let mut accumulator = OutputAccumulator::new(limits);
        let line = b"0123456789 the quick brown fox jumps over the lazy dog \x1b[1mABC\x1b[0m\r\n";
        let block: Vec<u8> = line.iter().copied().cycle().take(256 * 1024 + 7).collect();
        let mut pushed = 0_u64;
        let mut max_retained = 0;
        while pushed < 1_000_000_000 {
            accumulator.push(&block);
            pushed += block.len() as u64;
            max_retained = max_retained.max(accumulator.text().retained_bytes());
        }
        accumulator.finish();
        // head ≤ max_bytes, tail ≤ 4 × max_bytes (+ one chunk before a cut) — never the output.
        assert!(
            max_retained <= 5 * limits.max_bytes + 512 * 1024,
            "retained {max_retained}"
        );
        let shown = accumulator.text().show(NONE, NONE);
        assert!(shown.text.len() <= limits.max_bytes);
        assert!(accumulator.text().total_bytes() > 800_000_000);
    }

    proptest! {
        #[test]
        fn shown_text_respects_the_budget_and_accounts_for_every_byte(
            lines in proptest::collection::vec("[a-zé]{0,40}", 0..300),
            max_lines in 5usize..50,
            max_bytes in 100usize..2000,
            reserve_bytes in 0usize..60,
        ) {
            let text: String = lines.iter().fold(String::new(), |mut text, line| {
                let _ = writeln!(text, "{line}");
                text
            });
            let store = store(&text, max_lines, max_bytes);
            let reserve = Reserve { bytes: reserve_bytes, lines: 2 };
            let shown = store.show(reserve, reserve);
            prop_assert!(shown.text.len() + reserve_bytes <= max_bytes);
            match shown.truncation {
                None => prop_assert_eq!(&shown.text, &text),
                Some(t) => {
                    prop_assert!(shown.text.len() + reserve_bytes <= max_bytes);
                    prop_assert!(jig_truncate::count_lines(&shown.text) + 2 <= max_lines);
                    let marker_len = marker(t.omitted_lines, t.omitted_bytes).len() as u64;
                    let head_bytes = shown.text.len() as u64 - marker_len - t.tail_bytes;
                    prop_assert_eq!(head_bytes + t.omitted_bytes + t.tail_bytes, text.len() as u64);
                    prop_assert!(text.ends_with(&shown.text[shown.text.len() - usize::try_from(t.tail_bytes).unwrap()..]));
                }
            }
        }
    }
}
